"""One shape for every suite: the same modules for the same jobs, so that whoever knows one suite
finds everything of another in the same place (see the README's layout)."""

import importlib

import pytest

from common.analysis import SUITES
from common.paths import CONFIGS, ROOT

ROOMS = ("baselines", "run", "analysis", "report")  # every suite's; plus generate where configs make sets


@pytest.mark.parametrize("suite", list(SUITES))
def test_every_suite_has_the_same_rooms(suite):
    package = ROOT / "common" / suite
    rooms = [*ROOMS, *(["generate"] if (CONFIGS / suite).is_dir() else [])]
    assert [room for room in rooms if not (package / f"{room}.py").is_file()] == []
    assert importlib.import_module(f"common.{suite}.baselines").BASELINES
    report = importlib.import_module(f"common.{suite}.report")
    assert callable(report.detect) and callable(report.section)
    assert SUITES[suite] == f"common.{suite}.report"
    assert (package / "prompts.py").is_file() or (package / "tasks").is_dir() or suite == "worldsense"


def test_suite_names_are_the_same_everywhere():
    packages = sorted(p.name for p in (ROOT / "common").iterdir() if (p / "baselines.py").is_file())
    assert packages == sorted(SUITES)
    assert sorted(p.name for p in CONFIGS.iterdir() if p.is_dir() and p.name in SUITES) == sorted(
        s for s in SUITES if s != "worldsense"
    )


def test_every_suite_has_its_adapter_to_the_results_database():
    from common.database import ADAPTERS

    assert sorted(ADAPTERS) == sorted(SUITES)
    for suite, module in ADAPTERS.items():
        assert module == f"common.{suite}.rows" and callable(importlib.import_module(module).sets)
