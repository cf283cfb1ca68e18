"""Which of the project's source files a module reads: the import closure of a stage's modules.

Make rebuilds a stage's outputs when its code changes, and the results database rescores a
results file when its suite's scoring code changes. Both need the same answer to "which files
is this stage made of?": the project modules a stage's entry modules import, directly or not,
found by reading their ``import`` statements (``ast``; imports inside functions count too), with
the ``__init__.py`` of every package on the way (Python runs them on import). Modules outside
``common/`` (the standard library, pandas...) are left out: ``requirements.lock`` pins them.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path

from common import paths

PACKAGE = "common"


def module_file(name: str) -> Path | None:
    """Return the source file of the project module ``name`` (a package's ``__init__.py``), or
    None when it is not one of the project's."""
    if name != PACKAGE and not name.startswith(PACKAGE + "."):
        return None
    base = paths.ROOT.joinpath(*name.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


STORE = paths.CACHE / "codedeps.json"  # each file's imports by its size and time (parsing takes long)


@functools.cache
def _imports(path: Path) -> tuple[str, ...]:
    """Return the project modules ``path`` imports (absolute names; ``from a import b`` gives both
    ``a`` and ``a.b``, which may be a module), in order of appearance."""
    return tuple(name for name in _named(path) if module_file(name) is not None)


def _named(path: Path) -> list[str]:
    """Return every name ``path``'s import statements name (``_parse``), as ``STORE`` has them for
    the file's size and modification time, else parsed (and noted for ``_save``)."""
    stat = path.stat()
    key = paths.shown(path)
    entry = _store().get(key)
    if entry and entry[:2] == [stat.st_size, stat.st_mtime_ns]:
        return entry[2]
    names = _parse(path)
    _store()[key] = [stat.st_size, stat.st_mtime_ns, names]
    _unsaved[0] = True
    return names


_unsaved = [False]  # whether a file was parsed since the store was read or saved


@functools.cache
def _store() -> dict[str, list]:
    """Return the stored imports (empty when there are none or the file is unreadable)."""
    try:
        stored = json.loads(STORE.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return stored if isinstance(stored, dict) else {}


def _save() -> None:
    """Write the store when files were parsed (atomically: other processes may read it meanwhile;
    a read-only checkout simply parses again next time)."""
    if not _unsaved[0]:
        return
    _unsaved[0] = False
    try:
        STORE.parent.mkdir(parents=True, exist_ok=True)
        temporary = STORE.with_name(f"{STORE.name}.{os.getpid()}.tmp")
        temporary.write_text(json.dumps(_store(), sort_keys=True), encoding="utf-8")
        os.replace(temporary, STORE)
    except OSError:
        pass


def _parse(path: Path) -> list[str]:
    """Return the names ``path``'s import statements name, in order of appearance (``ast``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found: list[str] = []
    package = _package_of(path)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from .x import y
                parts = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*parts, *([base] if base else [])])
            found.append(base)
            found += [f"{base}.{alias.name}" for alias in node.names]
    return list(dict.fromkeys(found))


def _package_of(path: Path) -> str:
    """Return the dotted package a source file is in (the module itself for an ``__init__.py``)."""
    return ".".join(path.resolve().relative_to(paths.ROOT).parts[:-1])


def closure(modules: Iterable[str]) -> list[Path]:
    """Return the source files of ``modules`` and of every project module they import, directly
    or not, with the packages' ``__init__.py`` on the way; sorted by path."""
    seen: dict[Path, None] = {}
    todo = list(modules)
    while todo:
        name = todo.pop()
        parts = name.split(".")
        for depth in range(1, len(parts) + 1):  # the packages on the way, then the module
            path = module_file(".".join(parts[:depth]))
            if path is None or path in seen:
                continue
            seen[path] = None
            todo += _imports(path)
    _save()
    return sorted(seen)


def fingerprint(files: Iterable[Path]) -> str:
    """Return the hex SHA-256 (first 16 characters) of ``files``' names and bytes: a code
    version, changing when any of them changes."""
    digest = hashlib.sha256()
    for path in sorted(files):
        digest.update(paths.shown(path).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def behaviour_fingerprint(files: Iterable[Path]) -> str:
    """Return the hex SHA-256 (first 16 characters) of ``files``' names and syntax trees with
    comments and docstrings left out: a version of what the code does, which a reworded comment
    or docstring leaves as it was (for results recorded with the code, such as the canvas audits,
    that only a change in behaviour should invalidate)."""
    digest = hashlib.sha256()
    for path in sorted(files):
        tree = ast.parse(path.read_bytes())
        for node in ast.walk(tree):
            body = getattr(node, "body", None)
            if (
                isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                and body
                and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)
            ):
                node.body = body[1:] or [ast.Pass()]
        digest.update(paths.shown(path).encode() + b"\0" + ast.dump(tree).encode() + b"\0")
    return digest.hexdigest()[:16]
