"""Taking one model's results out of every suite (``scripts/forget_model.py``, ``make forget``).

Results are raw data that ``make clean`` keeps; a model tried by mistake, or under a name that
is now wrong, needs a way out that loses nothing: its files move to ``results/forgotten/<UTC
time>/`` under their relative path, and the derived files that showed it (per-set analyses,
report sections, the report, its make stamps) are removed so that make rebuilds them.
"""

import datetime
import shutil
from pathlib import Path

from common import paths
from common.results import SEPARATOR, SUFFIX, check_label, run_files

FORGOTTEN = paths.RESULTS / "forgotten"


def model_results(model: str) -> list[Path]:
    """Return every results file of ``model`` (any prompting label) under results/ (not in
    results/forgotten/) and in the results/ directories of the WorldSense test sets, sorted."""
    pattern = f"*{SEPARATOR}{check_label(model)}{SUFFIX}"
    found = [p for p in paths.RESULTS.rglob(pattern) if FORGOTTEN not in p.parents]
    found += (paths.DATA / "worldsense").glob(f"*/results/{pattern}")
    found += (paths.DATA / "worldsense").glob(f"other_tests/*/results/{pattern}")
    return sorted(set(found))


def forget_model(model: str, dry_run: bool = False) -> list[tuple[Path, Path | None]]:
    """Move ``model``'s results files and their runs' files to results/forgotten/<time>/, and
    remove what was derived from them (None as target); return the (source, target) pairs."""
    target_root = FORGOTTEN / datetime.datetime.now(datetime.UTC).strftime("%Y%m%dT%H%M%SZ")
    moves: dict[Path, Path | None] = {}
    for results in model_results(model):
        for file in run_files(results):
            moves[file] = target_root / file.relative_to(paths.ROOT)
        moves[_set_report(results)] = None
    if moves:
        stamps = [f"runs/*/{model}.done", f"runs/*/{model}.limit*.done", f"runs/*/test_{model}_model*.done"]
        for pattern in [*stamps, "sections/*", "report.*"]:
            moves.update({path: None for path in sorted(paths.RESULTS.glob(pattern))})
    pairs = [(source, target) for source, target in moves.items() if target or source.is_file()]
    if not dry_run:
        for source, target in pairs:
            if target is None:
                source.unlink(missing_ok=True)
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.move(source, target)
    return pairs


def _set_report(results: Path) -> Path:
    """Return the analysis of the set a results file answers: results/<suite>/<set>/report.txt
    (a WorldSense test set's results/ directory: results/worldsense/<set>/report.txt)."""
    if paths.RESULTS in results.parents:
        suite, set_name = results.relative_to(paths.RESULTS).parts[:2]
        return paths.RESULTS / suite / set_name / "report.txt"
    return paths.RESULTS / "worldsense" / results.parent.parent.name / "report.txt"
