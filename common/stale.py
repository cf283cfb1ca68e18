"""Results of a regenerated set whose items changed: set aside (moved, never deleted) and said so.

A set is regenerated when its config or the generating code changes (``make <suite>/<set>``).
Answers to items the set no longer has, or whose prompt changed, would otherwise be scored
against the new items (canvas and Already Said That number their items 0, 1, 2, ...) or linger
in the analysis (a blocks view the config dropped). ``set_aside_stale`` compares each results
directory of a set with the set's current items: every item has a fingerprint (a hash of what
the model is asked), and the fingerprints of the set its results answered are kept beside them
(``.items.json``, written whenever the set is generated). Records whose item is gone or changed
are moved to ``stale/<UTC time>/`` in their directory and each file's remaining records
rewritten atomically, holding the results file's lock (a model still answering the set makes
this step stop with that run's message); a blocks view that no longer exists moves there whole.
A directory without fingerprints (results older than this) is taken to match the current set.
"""

import datetime
import hashlib
import json
import logging
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from common import paths
from common.jsonl import atomic_write, write_json
from common.results import ResultsWriter, find_results_files, read_results, run_files

log = logging.getLogger(__name__)

ITEMS_FILE = ".items.json"
STALE_DIR = "stale"


def fingerprint(*parts: Any) -> str:
    """Return the hex SHA-256 (first 16 characters) of ``parts`` as canonical JSON."""
    text = json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def set_aside_stale(suite: str, set_dir: Path, results_root: Path | None = None) -> list[str]:
    """Set aside the results of ``set_dir``'s items that changed since they were answered (see the
    module docstring) and return one message per results directory that had some."""
    root = (results_root or paths.RESULTS / suite) / set_dir.name
    current = dict(ITEMS[suite](set_dir))
    messages = []
    if suite == "blocks" and root.is_dir():  # a view (or prompt type) the set no longer has
        for directory in sorted(d for d in root.iterdir() if d.is_dir() and "___" in d.name):
            if directory.name not in current and find_results_files(directory):
                moved = _stale_dir(directory.parent) / directory.name
                moved.parent.mkdir(parents=True, exist_ok=True)
                shutil.move(directory, moved)
                messages.append(
                    f"{paths.shown(directory)}: the set has no such view now; moved to {paths.shown(moved)}"
                )
    for name, items in current.items():
        directory = root / name if name else root
        message = _check_directory(directory, items)
        if message:
            messages.append(message)
    return messages


def _check_directory(directory: Path, items: dict[Any, str]) -> str | None:
    """Set aside the records of ``directory``'s results files whose items changed; write the
    current fingerprints; return a message when records were moved."""
    known_path = directory / ITEMS_FILE
    try:
        known = {
            int(k) if k.lstrip("-").isdigit() else k: v for k, v in json.loads(known_path.read_text()).items()
        }
    except (OSError, ValueError, AttributeError):
        known = None
    files = find_results_files(directory)
    moved = 0
    if known is not None:
        changed = {key for key, value in known.items() if items.get(key) != value}
        target = _stale_dir(directory)
        for file in files:
            moved += _move_records(file, changed, target)
    write_json(known_path, {str(key): value for key, value in items.items()})  # what the next results answer
    if moved:
        return (
            f"{paths.shown(directory)}: {moved:,} answers to items the regenerated set changed or no "
            f"longer has moved to {paths.shown(_stale_dir(directory))} (a rerun asks the new items)"
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
        stale = [record for record in records if record["Key"] in changed]
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
        (moved if key in changed else kept).append(line)
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target, "a", encoding="utf-8") as handle:
        handle.write("".join(moved))
    with atomic_write(path) as handle:
        handle.write("".join(kept))


# ---- each suite's items: results subdirectory -> {Key: fingerprint} --------------------------------
def _blocks_items(set_dir: Path) -> Iterator[tuple[str, dict[Any, str]]]:
    """Yield each prompts file's results directory (``<type>___<view>``) and its prompts' Keys
    (a Key is already a hash of the prompt)."""
    from common.blocks.run import load_items

    for prompts in sorted((set_dir / "prompts").glob("paper___*___*.jsonl")):
        _, prompt_type, view = prompts.stem.split("___")
        items = load_items(prompts, set_dir / "problems", prompt_type)
        yield f"{prompt_type}___{view}", {item["Key"]: str(item["Key"]) for item in items}


def _canvas_items(set_dir: Path) -> Iterator[tuple[str, dict[Any, str]]]:
    """Yield the set's one results directory and each trial's fingerprint (question, options, gold)."""
    from common.worldsense import load_testset

    trials = load_testset(set_dir)[["Key", "text", "expectedresp", "goldresp"]].to_dict("records")
    yield "", {int(t["Key"]): fingerprint(t["text"], list(t["expectedresp"]), t["goldresp"]) for t in trials}


def _asat_items(set_dir: Path) -> Iterator[tuple[str, dict[Any, str]]]:
    """Yield the set's one results directory and each conversation's fingerprint: its words and
    everything else the set's manifest pins (config, distractors), which all conversations share."""
    manifest = json.loads((set_dir / "manifest.json").read_text(encoding="utf-8"))
    shared = {key: value for key, value in manifest.items() if key not in ("sha256", "samples", "set")}
    if isinstance(shared.get("config"), dict):  # how many conversations there are changes none of them
        shared["config"] = {key: value for key, value in shared["config"].items() if key != "samples"}
    shared["files"] = {k: v for k, v in manifest.get("sha256", {}).items() if k != "samples.jsonl"}
    samples = [
        json.loads(line) for line in (set_dir / "samples.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    yield "", {int(s["sample"]): fingerprint(s["words"], shared) for s in samples}


ITEMS = {"blocks": _blocks_items, "canvas": _canvas_items, "already_said_that": _asat_items}
