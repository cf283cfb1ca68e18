"""The tests mirror the code: a folder per suite (and one for the models layer), and every module
of common/ is imported by some test, directly or through what it imports.

A suite's stage modules are imported by name when a suite is used (``Suite.part``): a suite's own
tests folder that scores or analyses its sets (``common.analysis``, ``common.database``) reaches
them, so they count as imported by that folder.
"""

import ast
from pathlib import Path

from common import codedeps, paths, suites
from common.canvas.draw import draw_canvas
from common.canvas.shapes import Geometry, Shape

TESTS = paths.ROOT / "tests"
DISPATCHERS = ("common.analysis", "common.database", "common.scoring")  # import a suite's stages by name
# loaded by path by Datasette (make explore's --plugins-dir), with the explorer's extra requirements:
# tests/test_explore_browser.py (integration) serves the explorer with it
PLUGINS = "common/explore_plugins/"


def imports_of(files: list[Path]) -> set[str]:
    """Return the project modules ``files`` import (``from a import b`` gives ``a`` and ``a.b``)."""
    names: set[str] = set()
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module:
                names.add(node.module)
                names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return {name for name in names if name == "common" or name.startswith("common.")}


MAX_LINES = 420  # a module a maintainer can hold in mind; longer ones are split along their jobs


def test_no_module_is_longer_than_a_maintainer_can_hold_in_mind():
    lengths = {
        paths.shown(p): len(p.read_text(encoding="utf-8").splitlines())
        for folder in ("common", "scripts")
        for p in sorted((paths.ROOT / folder).rglob("*.py"))
    }
    assert {name: n for name, n in lengths.items() if n > MAX_LINES} == {}


def test_a_tests_folder_per_suite_and_for_the_models_layer():
    for name in [*suites.names(), "models"]:
        folder = TESTS / name
        assert sorted(folder.glob("test_*.py")), f"tests/{name}/ has no tests"
    stray = [
        p.name for p in TESTS.glob("test_*.py") if any(p.stem.startswith(f"test_{s}") for s in suites.names())
    ]
    assert not stray, f"a suite's tests belong in its folder: {stray}"


def test_every_module_of_common_is_imported_by_some_test():
    files = sorted(TESTS.rglob("*.py"))
    names = imports_of(files)
    for suite in suites.all_suites():
        own = sorted((TESTS / suite.name).rglob("*.py"))
        uses = {
            module
            for module in imports_of(own)
            for dispatcher in DISPATCHERS
            if module.startswith(dispatcher)
        }
        if uses:
            names.update(module for stage in ("generate", "run", "score", "report")
                         for module in suite.stage_modules(stage))  # fmt: skip
    reached = set(codedeps.closure(sorted(names)))
    every = sorted((paths.ROOT / "common").rglob("*.py"))
    missing = [p.relative_to(paths.ROOT).as_posix() for p in every if p not in reached]
    missing = [name for name in missing if not name.startswith(PLUGINS)]
    assert not missing, f"modules no test imports: {missing}"


def test_the_check_sees_a_module_no_test_imports():
    """The check above can fail: a module nothing imports is not in the closure of the tests' imports."""
    orphan = paths.ROOT / "common" / "canvas" / "draw.py"
    names = imports_of([p for p in TESTS.rglob("*.py") if p.name != "test_layout.py"])
    names.discard("common.canvas.draw")
    reached = set(codedeps.closure(sorted(names)))
    assert orphan not in reached  # only this file (and scripts/draw_canvas.py) import it


def test_a_canvas_drawn_for_people_is_the_same_png_each_time(tmp_path):
    shapes = [Shape("large", "red", "circle", -10, 5), Shape("small", "blue", "triangle", 12, -8)]
    first, second = tmp_path / "a.png", tmp_path / "b.png"
    draw_canvas(shapes, Geometry(), first, title="two shapes")
    draw_canvas(shapes, Geometry(), second, title="two shapes")
    assert first.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and first.read_bytes() == second.read_bytes()
