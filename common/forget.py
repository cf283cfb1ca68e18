"""Taking a model's results, or a set, out of the report (``scripts/forget_model.py``, ``make forget``).

Results are raw data that ``make clean`` keeps; a model tried by mistake, or under a name that
is now wrong, needs a way out that loses nothing: its files move to ``results/forgotten/<UTC
time>/`` under their relative path, its ``make all MODEL=...`` stamps go, and so do the scoring
stamps (``.scored``) of the sets it answered, so that make rescores those sets (the database
drops the rows of files that are gone) and rebuilds their analyses and the report: nothing else
is redone.

A set (``forget_set``) goes the same way: its config, its data and its results directory move to
``results/forgotten/<time>/``, its section and figures are deleted (made from them), and its rows
leave the results database. A set whose config was removed by hand leaves the database at the
next report (``removed_sets``, ``prune``: make's report step), as it leaves the report.
"""

import datetime
import shutil
import sqlite3
from pathlib import Path

from common import database, paths, suites
from common.errors import UserError
from common.results import SEPARATOR, SUFFIX, check_label, run_files
from common.suite import SetRef

FORGOTTEN = paths.RESULTS / "forgotten"


def forgotten_root() -> Path:
    """Return the directory this forgetting moves files to: results/forgotten/<UTC time>/."""
    return FORGOTTEN / datetime.datetime.now(datetime.UTC).strftime("%Y%m%dT%H%M%SZ")


def model_results(model: str) -> list[tuple[SetRef, Path]]:
    """Return every (set, results file) of ``model`` (any prompting label), in every set of every
    suite (``Suite.results_files``), sorted by file."""
    pattern = f"{SEPARATOR}{check_label(model)}{SUFFIX}"
    found = [
        (ref, file)
        for suite in suites.all_suites()
        for ref in suite.refs()
        for file in suite.part("results_files")(ref)
        if file.name.endswith(pattern) and file.name.count(SEPARATOR) == 2
    ]
    return sorted(found, key=lambda pair: pair[1])


def forget_model(
    model: str, dry_run: bool = False, root: Path | None = None
) -> list[tuple[Path, Path | None]]:
    """Move ``model``'s results files and their runs' files to ``root`` (default: a new
    ``forgotten_root``), and remove the stamps of the steps that read them (None as target);
    return the (source, target) pairs."""
    target_root = root or forgotten_root()
    moves: dict[Path, Path | None] = {}
    for ref, results in model_results(model):
        for file in run_files(results):
            moves[file] = target_root / file.relative_to(paths.ROOT)
        moves[paths.RESULTS / ref.suite / ref.name / ".scored"] = None
    if moves:
        for tag in (f"{model}-*", f"{model}.limit*", f"test_{model}_model*"):
            for stamp in (".done", ".pending"):  # a step done, or waiting for its batches
                moves.update({path: None for path in sorted(paths.RESULTS.glob(f"runs/*/{tag}{stamp}"))})
    return _move(
        [(source, target) for source, target in moves.items() if target or source.is_file()], dry_run
    )


def forget_set(key: str, dry_run: bool = False, root: Path | None = None) -> list[tuple[Path, Path | None]]:
    """Move the set ``key`` (``<suite>/<set>``) out of the project: its config, its data directory
    and its results directory to ``root`` (default: a new ``forgotten_root``) under their paths,
    and remove its section and figures (made from them; None as target); return the (source,
    target) pairs, empty when nothing of it is left. Raises UserError for an unknown suite or a
    set the suite fetches (released data, not a config's)."""
    suite_name, _, name = key.partition("/")
    suite = suites.get(suite_name)
    if not name or "/" in name:
        raise UserError(f"{key!r}: name a set as <suite>/<set> (suites: {', '.join(suites.names())})")
    if name in suite.fetched_sets:
        raise UserError(
            f"{key} is the released data of {suite_name}, not a set made from a config: nothing to forget "
            "(a model's results on it: make forget MODEL=<name>)"
        )
    target_root = root or forgotten_root()
    ref = suite.ref(name)
    kept = [suite.config_dir() / f"{name}.yaml", ref.data, ref.results]
    made = [
        paths.RESULTS / "sections" / suite_name / f"{name}.json",
        paths.RESULTS / "figures" / suite_name / name,
    ]
    pairs = [(path, target_root / path.relative_to(paths.ROOT)) for path in kept if path.exists()]
    pairs += [(path, None) for path in made if path.exists()]
    return _move(pairs, dry_run)


def _move(pairs: list[tuple[Path, Path | None]], dry_run: bool) -> list[tuple[Path, Path | None]]:
    """Move each source to its target, or delete it (a file or a directory) for None; return
    ``pairs`` (nothing is done with ``dry_run``)."""
    for source, target in [] if dry_run else pairs:
        if target is not None:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(source, target)
        elif source.is_dir():
            shutil.rmtree(source)
        else:
            source.unlink(missing_ok=True)
    return pairs


def removed_sets(conn: sqlite3.Connection, found: dict[str, list[str]] | None = None) -> list[str]:
    """Return the sets (``<suite>/<set>``) the database holds that are no longer found: a set of a
    suite whose sets come from configs, without its config (removed, or forgotten). A suite's
    fetched sets stay (released data), and so does a set made from fetched data, whose data
    directory says so (``FETCHED``: e.g. a paper's released answers as runs of a set of their own).
    ``found``: the set names of each suite (default: those of ``Suite.set_names``)."""
    gone = []
    for suite_name, name in conn.execute("SELECT suite, set_name FROM sets ORDER BY suite, set_name"):
        suite = suites.get(suite_name)
        names = found[suite_name] if found is not None else suite.set_names()
        fetched = name in suite.fetched_sets or (suite.ref(name).data / FETCHED).is_file()
        if suite.generated and not fetched and name not in names:
            gone.append(f"{suite_name}/{name}")
    return gone


FETCHED = ".fetched"  # in a set's data directory: the set is made from fetched data, not a config


def prune(conn: sqlite3.Connection, keys: list[str] | None = None) -> list[str]:
    """Delete from the database the sets ``keys`` (default: ``removed_sets``), their runs, items,
    answers and texts no other row uses; return the sets deleted."""
    keys = removed_sets(conn) if keys is None else keys
    return [key for key in keys if database.delete_set(conn, *key.split("/", 1))]
