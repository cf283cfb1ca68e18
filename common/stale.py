"""Results of a regenerated set whose items changed: set aside (moved, never deleted) and said so.

A set is regenerated when its config or the generating code changes (``make <suite>/<set>``).
Answers to items the set no longer has, or whose prompt changed, would otherwise be scored
against the new items (canvas and Already Said That number their items 0, 1, 2, ...) or linger
in the analysis (a blocks view the config dropped). Every item has a fingerprint (a hash of what
the model is asked), which the suite's generator returns as it writes the set, per results
directory (``Suite.generate``); ``common.generation`` keeps them in the set's ``items.json``.
Results written since the set was last generated answered the fingerprints of that file (or,
for results older than it, those their directory keeps in ``.items.json``). ``set_aside_stale``
moves the records whose item is gone or changed to ``stale/<UTC time>/`` in their directory and
rewrites each file's remaining records atomically, holding the results file's lock (a model
still answering the set makes this step stop with that run's message); a blocks view that no
longer exists moves there whole. No set is read back to do this: the fingerprints come from the
generator.
"""

import datetime
import hashlib
import json
import logging
import shutil
from pathlib import Path
from typing import Any

from common import paths
from common.jsonl import atomic_write
from common.results import ResultsWriter, find_results_files, read_results, run_files

log = logging.getLogger(__name__)

ITEMS_FILE = ".items.json"
STALE_DIR = "stale"


def fingerprint(*parts: Any) -> str:
    """Return the hex SHA-256 (first 16 characters) of ``parts`` as canonical JSON."""
    text = json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def set_aside_stale(
    results: Path, old: dict[str, dict[str, str]] | None, new: dict[str, dict[str, str]]
) -> list[str]:
    """Set aside the results under ``results`` (a set's results directory) whose items changed
    between the fingerprints ``old`` (what they answered; None: unknown, nothing is moved) and
    ``new`` (the set as generated now), each ``{results subdirectory ("" for the directory itself):
    {Key: fingerprint}}``; return one message per directory that had some."""
    messages = []
    if not results.is_dir():
        return messages
    for directory in sorted(d for d in results.iterdir() if d.is_dir() and "___" in d.name):
        if directory.name not in new and find_results_files(directory):  # a view the set no longer has
            moved = _stale_dir(directory.parent) / directory.name
            moved.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(directory, moved)
            messages.append(
                f"{paths.shown(directory)}: the set has no such view now; moved to {paths.shown(moved)}"
            )
    for name, items in new.items():
        directory = results / name if name else results
        before = _known(directory) or (old or {}).get(name)
        message = _check_directory(directory, before, items)
        if message:
            messages.append(message)
    return messages


def _known(directory: Path) -> dict[str, str] | None:
    """Return the fingerprints a results directory keeps (``.items.json``, written by versions that
    kept them there), None when it keeps none."""
    try:
        return json.loads((directory / ITEMS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _check_directory(directory: Path, before: dict[str, str] | None, items: dict[str, str]) -> str | None:
    """Set aside the records of ``directory``'s results files whose items changed from ``before``
    to ``items`` (Keys as strings); return a message when records were moved."""
    (directory / ITEMS_FILE).unlink(missing_ok=True)  # the set's items.json says it from now on
    files = find_results_files(directory)
    if before is None or not files:
        return None
    changed = {key for key, value in before.items() if items.get(key) != value}
    target = _stale_dir(directory)
    moved = sum(_move_records(file, changed, target) for file in files)
    if moved:
        return (
            f"{paths.shown(directory)}: {moved:,} answers to items the regenerated set changed or no "
            f"longer has moved to {paths.shown(target)} (a rerun asks the new items)"
        )
    return None


def _stale_dir(directory: Path) -> Path:
    """Return where this run sets results of ``directory`` aside: ``stale/<UTC time>/``."""
    return directory / STALE_DIR / datetime.datetime.now(datetime.UTC).strftime("%Y%m%dT%H%M%SZ")


def _move_records(file: Path, changed: set[Any], target: Path) -> int:
    """Move the records (and, for a run with one, the turn log lines) of ``changed`` Keys from
    ``file`` and its run's files to ``target``; return how many records moved."""
    if not changed:
        return 0
    with ResultsWriter(file):  # holds the file's lock while it is rewritten
        records = read_results(file, all_draws=True)
        stale = [record for record in records if str(record["Key"]) in changed]
        if not stale:
            return 0
        for path in [file, *(p for p in run_files(file) if p.name.endswith("___turns.jsonl"))]:
            _split_lines(path, changed, target / path.name)
    return len(stale)


def _split_lines(path: Path, changed: set[Any], target: Path) -> None:
    """Rewrite the JSON-lines ``path`` without the lines of ``changed`` Keys, appended to ``target``."""
    kept, moved = [], []
    for line in path.read_text(encoding="utf-8").splitlines(keepends=True):
        try:
            key = json.loads(line).get("Key")
        except ValueError:
            key = None  # a torn line: the next writer repairs it
        (moved if str(key) in changed else kept).append(line)
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target, "a", encoding="utf-8") as handle:
        handle.write("".join(moved))
    with atomic_write(path) as handle:
        handle.write("".join(kept))
