"""Every suite's built-in models: one base class, one registry (BASELINES) per suite, read by the
generic layer, the scripts and the Makefile alike; the models layer names no suite."""

import ast
import subprocess
import sys

import pytest

from common import suites
from common.models.builtin import BuiltinModel, baseline_names
from common.paths import ROOT

SUITES = ("worldsense", "blocks", "canvas", "already_said_that")


@pytest.mark.parametrize("suite", SUITES)
def test_each_suite_declares_one_registry_of_builtin_models(suite):
    registry = suites.get(suite).part("baselines")  # WorldSense's is the trials layer's
    assert registry
    for name, factory in registry.items():
        model = factory(3)
        assert isinstance(model, BuiltinModel), name
        assert model.name == name and model.concurrency == 1
        settings = model.settings()
        assert settings["name"] == name and settings["builtin"] is True
        assert settings.get("seed", 3) == 3  # recorded when the answers depend on it
        model.close()


def test_baselines_asks_the_default_builtins_of_the_task():
    from common.already_said_that.baselines import BASELINES as ASAT
    from common.blocks.baselines import BASELINES as BLOCKS
    from common.canvas.baselines import BASELINES as CANVAS
    from common.canvas.shortcuts import SHORTCUTS
    from common.trials.baselines import BASELINES as TRIALS

    assert baseline_names(TRIALS) == ["random", "oracle"]
    assert baseline_names(CANVAS) == ["random", "oracle", *(s.name for s in SHORTCUTS)]
    assert baseline_names(BLOCKS, "nl") == ["noop", "random", "oracle"]
    assert baseline_names(BLOCKS, "pddl") == ["rules"]  # oracle-facts and random-facts: by name only
    assert baseline_names(ASAT) == ["random", "oracle"]  # not human: a person at a terminal
    assert set(BLOCKS) == {"noop", "random", "oracle", "rules", "oracle-facts", "random-facts"}


def test_the_models_layer_imports_no_suite():
    for path in sorted((ROOT / "common" / "models").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                assert not any(node.module.startswith(f"common.{s}") for s in SUITES), (
                    path.name,
                    node.module,
                )
    code = "import sys, common.models, common.cli; print(sorted(m for m in sys.modules if m.count('.') == 1))"
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert not [s for s in SUITES if f"common.{s}" in loaded.stdout], (
        loaded.stdout
    )  # no registering on import


def test_the_makefile_lists_no_builtin_model():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert "--baselines" in makefile
    for name in ("shortcut-", "noop", "oracle random", "random oracle"):
        assert name not in makefile, name
