"""Taking one model's results out of every suite (``scripts/forget_model.py``, ``make forget``).

Results are raw data that ``make clean`` keeps; a model tried by mistake, or under a name that
is now wrong, needs a way out that loses nothing: its files move to ``results/forgotten/<UTC
time>/`` under their relative path, its ``make all MODEL=...`` stamps go, and so do the scoring
stamps (``.scored``) of the sets it answered, so that make rescores those sets (the database
drops the rows of files that are gone) and rebuilds their analyses and the report: nothing else
is redone.
"""

import datetime
import shutil
from pathlib import Path

from common import paths, suites
from common.results import SEPARATOR, SUFFIX, check_label, run_files
from common.suite import SetRef

FORGOTTEN = paths.RESULTS / "forgotten"


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


def forget_model(model: str, dry_run: bool = False) -> list[tuple[Path, Path | None]]:
    """Move ``model``'s results files and their runs' files to results/forgotten/<time>/, and
    remove the stamps of the steps that read them (None as target); return the (source, target)
    pairs."""
    target_root = FORGOTTEN / datetime.datetime.now(datetime.UTC).strftime("%Y%m%dT%H%M%SZ")
    moves: dict[Path, Path | None] = {}
    for ref, results in model_results(model):
        for file in run_files(results):
            moves[file] = target_root / file.relative_to(paths.ROOT)
        moves[paths.RESULTS / ref.suite / ref.name / ".scored"] = None
    if moves:
        for tag in (f"{model}-*", f"{model}.limit*", f"test_{model}_model*"):
            for stamp in (".done", ".pending"):  # a step done, or waiting for its batches
                moves.update({path: None for path in sorted(paths.RESULTS.glob(f"runs/*/{tag}{stamp}"))})
    pairs = [(source, target) for source, target in moves.items() if target or source.is_file()]
    if not dry_run:
        for source, target in pairs:
            if target is None:
                source.unlink(missing_ok=True)
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.move(source, target)
    return pairs
