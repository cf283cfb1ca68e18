"""The import graph of the project, read from every module's ``import`` statements (``ast``; imports
inside functions count too): rooms one way. No suite imports another suite (what two suites share
is in the shared layer: ``common/trials/`` for the trial sets), the shared layer imports no suite
(it finds them through ``common.suites``), and no module imports itself round a circle."""

import ast
from pathlib import Path

import pytest

from common import suites
from common.paths import ROOT

SUITES = [package.removeprefix("common.") for package in suites.PACKAGES]


def module_name(path: Path, root: Path) -> str:
    """Return the dotted name of the source file ``path`` under ``root`` (a package's own name for
    its ``__init__.py``)."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_module(name: str, root: Path) -> bool:
    """Return whether ``name`` is a module or package of the project under ``root``."""
    base = root.joinpath(*name.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def imports_of(path: Path, root: Path) -> list[str]:
    """Return the project modules ``path`` imports, in order: ``import a.b`` gives ``a.b``;
    ``from a import b`` gives ``a.b`` when that is a module, else ``a`` (an attribute of it)."""
    package = module_name(path, root).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # from .x import y
                base = ".".join([*package[: len(package) - node.level + 1], *([base] if base else [])])
            for alias in node.names:
                found.append(f"{base}.{alias.name}" if is_module(f"{base}.{alias.name}", root) else base)
    return [name for name in dict.fromkeys(found) if is_module(name, root)]


def import_graph(root: Path, folders: tuple[str, ...] = ("common", "scripts")) -> dict[str, list[str]]:
    """Return {module: the project modules it imports} for every source file in ``folders``."""
    return {
        module_name(path, root): imports_of(path, root)
        for folder in folders
        for path in sorted((root / folder).rglob("*.py"))
    }


def cycles(graph: dict[str, list[str]]) -> list[list[str]]:
    """Return the circles of ``graph``: its strongly connected components of two modules or more
    (or one that imports itself), each sorted (Tarjan's algorithm, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(graph[start]))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            target = next((t for t in edges if t in graph), None)
            if target is not None:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(graph[target])))
                elif target in on_stack:
                    low[node] = min(low[node], index[target])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or node in graph[node]:
                    found.append(sorted(component))
    return found


def suite_of(module: str) -> str | None:
    """Return the suite a module belongs to (its package under common/), or None."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "common" and parts[1] in SUITES else None


def crossings(graph: dict[str, list[str]]) -> list[tuple[str, str]]:
    """Return the imports that cross from one suite into another, or from the shared layer
    (``common`` outside the suites' packages) into a suite."""
    return [
        (module, target)
        for module, targets in graph.items()
        for target in targets
        if module.startswith("common") and suite_of(target) and suite_of(target) != suite_of(module)
    ]


@pytest.fixture(scope="module")
def graph():
    return import_graph(ROOT)


def test_no_suite_imports_another_and_the_shared_layer_imports_none(graph):
    assert "common.trials.protocol" in graph["common.canvas.run"]  # read: a function-level import too
    assert "common.models.resolve" in graph["common.cli"]  # inside a function too
    assert crossings(graph) == []
    # common runs no script: a script's work it needs is a function of common (``Suite.ask``)
    assert [
        (m, t)
        for m, targets in graph.items()
        if m.startswith("common")
        for t in targets
        if t.startswith("scripts")
    ] == []


def test_no_module_imports_itself_round_a_circle(graph):
    assert cycles(graph) == []


def test_the_checks_fail_on_what_they_look_for(tmp_path):
    """Planted: a canvas module importing WorldSense inside a function, the shared layer importing
    a suite, and a circle of three modules through a function-level import."""
    files = {
        "common/__init__.py": "",
        "common/stats.py": "def f():\n    from common.canvas import run\n",
        "common/canvas/__init__.py": "",
        "common/canvas/run.py": "def g():\n    from common.worldsense.reader import extract_answer\n",
        "common/worldsense/__init__.py": "",
        "common/worldsense/reader.py": "import common.a\n",
        "common/a.py": "from common import b\n",
        "common/b.py": "from . import c\n",
        "common/c.py": "def h():\n    from common.a import x\n",
        "scripts/s.py": "from common.canvas import run\nfrom common.worldsense import reader\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    planted = import_graph(tmp_path)
    assert planted["common.b"] == ["common.c"] and planted["common.a"] == ["common.b"]
    assert crossings(planted) == [
        ("common.canvas.run", "common.worldsense.reader"),
        ("common.stats", "common.canvas.run"),
    ]  # a script may use any suite
    assert cycles(planted) == [["common.a", "common.b", "common.c"]]
    assert cycles({"x": ["x"], "y": ["x"]}) == [["x"]]
