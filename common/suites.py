"""The one list of suites, and the one meaning of ``-t``: a set name, ``<suite>/<set>``, or a path.

A fifth suite is a new package under ``common/`` exporting ``SUITE`` (``common.suite.Suite``)
and one line in ``PACKAGES``; nothing else in the shared layer names a suite (docs/suites.md
builds a toy one).
"""

from __future__ import annotations

import importlib
from pathlib import Path

from common import paths
from common.errors import UserError
from common.suite import SetRef, Suite

# the suites, in the report's order; detection of a directory tries them in this order too
PACKAGES = [
    "common.worldsense",
    "common.blocks",
    "common.canvas",
    "common.already_said_that",
]


def all_suites() -> list[Suite]:
    """Return every suite of ``PACKAGES`` (each package's ``SUITE``), in order."""
    return [importlib.import_module(package).SUITE for package in PACKAGES]


def get(name: str) -> Suite:
    """Return the suite called ``name``; raise UserError listing the suites for an unknown one."""
    for suite in all_suites():
        if suite.name == name:
            return suite
    raise UserError(f"unknown suite {name!r}: choose one of {', '.join(names())}")


def first_set() -> str:
    """Return ``<suite>/<set>`` of the first default set of the first suite: what a script that
    analyses any set shows when given none (the WorldSense release's script shows its test set)."""
    suite = all_suites()[0]
    return suite.ref(suite.set_names()[0]).key


def names() -> list[str]:
    """Return the names of the suites, in order."""
    return [suite.name for suite in all_suites()]


def claimant(path: Path) -> Suite | None:
    """Return the suite whose set the directory ``path`` is: every suite is asked (``Suite.claims``);
    of those that claim it, the first that recognises marks of its own, else the first whose detect
    recognises a shared format (``Suite.detect_shared``: a trial set no suite claims as its own);
    None when none claims it. No suite needs to know another's data."""
    claims = [suite for suite in all_suites() if suite.claims(path)]
    own = [suite for suite in claims if not suite.detect_shared]
    return (own or claims or [None])[0]


def writer_of(records: list[dict]) -> Suite | None:
    """Return the suite whose results records look like ``records``: of those whose fields
    (``Suite.record_fields``) the first record has, the one with the most; None for no records or
    none that fits. How a scorer names a results file another suite wrote."""
    first = records[0] if records else {}
    fits = [s for s in all_suites() if s.record_fields and all(f in first for f in s.record_fields)]
    return max(fits, key=lambda s: len(s.record_fields), default=None)


def resolve_set(spec: str | Path, suite: str | None = None, results_root: Path | None = None) -> SetRef:
    """Return the set ``-t spec`` names, in every script the same way:

    - ``<suite>/<set>`` (``canvas/standard``);
    - a set name (``standard``), looked up among ``suite``'s sets when the script has one suite,
      else among every suite's (a name two suites share must be given as ``<suite>/<set>``);
    - a path: a set's data directory, its results directory, or its config file, of any set a
      suite knows; else a directory a suite recognises as one of its sets (``Suite.detect``),
      wherever it is (its results then go to ``results_root/<name>``, default the suite's); else
      a config file elsewhere of a generated suite (``suite``, or the name of the directory it is
      in), a new set named after the file.

    ``results_root`` (``--results-dir``) puts the set's results under ``<results_root>/<set>/``.
    Raises UserError naming what was looked for and the sets there are.
    """
    candidates = [get(suite)] if suite else all_suites()
    text = str(spec)
    found = _by_name(text, candidates)
    if found is None:
        found = _by_path(Path(text), candidates)
    if found is None and suite is not None:  # another suite's set given to one suite's script
        other = _by_path(Path(text), [s for s in all_suites() if s.name != suite])
        if other is not None:
            raise UserError(
                f"{text}: holds {other[0].name} data, not {suite} data; give it without --suite {suite} "
                f"(`scripts/analyse_results.py -t {text}`), or to {', '.join(other[0].run_scripts)}"
            )
    if found is None:
        raise UserError(_not_found(text, candidates))
    suite_of, name, data, *config = found
    return suite_of.ref(name, data=data, results_root=results_root, config=config[0] if config else None)


def require_built(ref: SetRef) -> SetRef:
    """Return ``ref`` when its data is there; raise UserError naming the sets of its suite that are
    built and how to build this one (what a script that asks a model or analyses a set needs)."""
    if ref.data.is_dir():
        return ref
    suite = get(ref.suite)
    built = [other.key for other in suite.refs() if other.data.is_dir()]
    how = f"`make {ref.key}`" if ref.config else "`make data`"
    raise UserError(
        f"{ref.key} is not built (no {shown(ref)}): build it with {how}; "
        f"sets built: {', '.join(built) or 'none'}"
    )


def _by_name(text: str, candidates: list[Suite]) -> tuple[Suite, str, Path | None] | None:
    """Return the (suite, set name, no data override) that ``text`` names as ``<suite>/<set>``
    or as a set name; None when it names none; UserError when a bare name is ambiguous."""
    head, sep, tail = text.partition("/")
    if sep and "/" not in tail:
        for suite in candidates:
            if suite.name == head and tail in suite.set_names():
                return suite, tail, None
    if "/" in text:
        return None
    owners = [suite for suite in candidates if text in suite.set_names()]
    if len(owners) > 1:
        raise UserError(
            f"{text!r} is a set of several suites ({', '.join(s.name for s in owners)}): "
            f"say which, e.g. -t {owners[0].name}/{text}"
        )
    return (owners[0], text, None) if owners else None


def _by_path(path: Path, candidates: list[Suite]) -> tuple[Suite, str, Path | None] | None:
    """Return the (suite, set name, data directory) of a path: a known set's data, results or
    config; else a directory a suite's ``detect`` recognises (a set kept elsewhere)."""
    if not path.exists():
        return None
    resolved = path.resolve()
    for suite in candidates:
        for ref in suite.refs():
            places = [ref.data, ref.results, *([ref.config] if ref.config else [])]
            if any(resolved == place.resolve() for place in places):
                return suite, ref.name, None
    if path.is_dir():
        owner = claimant(path)
        if owner is not None and owner.name in {suite.name for suite in candidates}:
            return owner, resolved.name, resolved
    if path.is_file() and path.suffix in (".yaml", ".yml"):  # a config kept elsewhere
        owners = [
            s for s in candidates if s.generated and (len(candidates) == 1 or s.name == path.parent.name)
        ]
        if owners:
            return owners[0], path.stem, None, resolved
    return None


def _not_found(text: str, candidates: list[Suite]) -> str:
    """Return the message for a ``-t`` that names no set: what exists, and how to name one."""
    known = ", ".join(ref.key for suite in candidates for ref in suite.refs()) or "none"
    return (
        f"no set {text!r}: not a set name, <suite>/<set>, nor a set's directory or config "
        f"(sets: {known}; a new one is a configs/<suite>/<set>.yaml, then `make <suite>/<set>`)"
    )


def shown(ref: SetRef) -> str:
    """Return how messages name a set's data directory (relative to the project)."""
    return paths.shown(ref.data)
