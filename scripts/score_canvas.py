"""Score every results file of a canvas set with both scorers; print accuracy tables with 95% Wilson CIs.

Scorers: `contains` (the original's: the expected answer occurs in the response) and `strict`
(exactly one answer extracted; unparseable responses counted apart and scored 0). Tables: per
model and task, then per model, task, description and few-shot style. Re-scoring never asks a model.

$ python scripts/score_canvas.py -t data/canvas/standard
$ python scripts/score_canvas.py -t data/canvas/standard --csv results/canvas/standard/scores.csv \\
      --out results/canvas/standard/report.txt
"""

try:  # first: scripts/_project_env.py puts the project on sys.path and explains a missing .venv
    import _project_env  # noqa: F401
except ModuleNotFoundError:  # a copy of this script outside scripts/: the installed package serves
    pass

import logging
import sys
from pathlib import Path

import pandas as pd

from common import cli
from common.canvas.scoring import accuracy_table, format_table, score_rows
from common.errors import DataError
from common.jsonl import write_text
from common.results import find_results_files, parse_results_filename, read_results
from common.worldsense import load_testset
from common.worldsense.data import RESULTS_DIR

log = logging.getLogger("score_canvas")
TABLES = (["model", "task"], ["model", "task", "description", "fewshot"])


def main(argv: list[str] | None = None) -> int:
    parser = cli.make_parser(__doc__)
    parser.add_argument("-t", "--testset", required=True, type=Path, help="canvas set directory")
    parser.add_argument("--csv", type=Path, help="also write the detailed table as CSV here")
    parser.add_argument("--out", type=Path, help="also write the printed tables to this file")
    parser.add_argument("--allow-partial", action="store_true", help="score files that miss some trials")
    args = parser.parse_args(argv)
    cli.setup_logging(args.loglevel)

    trials = load_testset(args.testset)
    files = find_results_files(args.testset / RESULTS_DIR)
    if not files:
        raise DataError(f"no results files in {args.testset / RESULTS_DIR}: run scripts/ask_model.py first")
    frames = []
    for path in files:
        prompting, model = parse_results_filename(path)
        scored = score_rows(trials, read_results(path))
        missing = len(trials) - len(scored)
        log.info("%s: %s trials scored, %s missing", path.name, f"{len(scored):,}", f"{missing:,}")
        if missing and not args.allow_partial:
            raise DataError(f"{path}: {missing} of {len(trials)} trials unanswered (use --allow-partial)")
        frames.append(scored.assign(model=f"{model} ({prompting})"))
    scored = pd.concat(frames, ignore_index=True)
    text = "\n\n".join(format_table(accuracy_table(scored, by), by) for by in TABLES) + "\n"
    print(text, end="")
    if args.out:
        write_text(args.out, text)
    if args.csv:
        args.csv.parent.mkdir(parents=True, exist_ok=True)
        write_text(args.csv, accuracy_table(scored, TABLES[1]).to_csv(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(cli.run_main(main))
