"""Draw the original Already Said That eval's plots from the runs on the original_* sets.

The original's make_plots.py drew, for every metric, each model's mean over its three seeds on
each of its five variants, with a standard error bar (population SD / sqrt 3). This draws the
same from every run of the five original_* sets (played, as the original's runs, with seeds 1, 2
and 3, the 250 conversations each seed picks): OUT/already_said_that_paper.png (a panel per
metric: avg_num_turns, avg_num_distractors, avg_distractor_accuracy, false_positive_rate,
false_negative_rate, violation_rate) and OUT/numbers.csv (per set, model and metric: each
seed's value, the mean, the original's SE and the sample SD's), and prints the numbers (also
in OUT/numbers.txt). The report (make all) shows the same figure. `make asat-paper
MODEL=<config>` plays a model on the five sets first, then runs this.

$ python scripts/already_said_that_paper.py
$ python scripts/already_said_that_paper.py --out /tmp/asat-paper
"""

try:  # first: scripts/_project_env.py puts the project on sys.path and explains a missing .venv
    import _project_env  # noqa: F401
except ModuleNotFoundError:  # a copy of this script outside scripts/: the installed package serves
    pass

import logging
import sys
from pathlib import Path

from common import cli, paths, scoring
from common.already_said_that import SUITE, paper, report
from common.errors import UserError
from common.jsonl import write_text
from common.report import render_text

log = logging.getLogger("already_said_that_paper")
OUT = paths.RESULTS / SUITE.name / "paper"
FIGURE = "already_said_that_paper.png"


def main(argv: list[str] | None = None) -> int:
    parser = cli.make_parser(__doc__)
    parser.add_argument("--out", type=Path, default=OUT, help="where to write the figure and numbers.csv")
    parser.add_argument(
        "--results-dir",
        type=Path,
        metavar="DIR",
        help="the sets' results are in DIR/<set>/ (default: results/)",
    )
    parser.add_argument(
        "--data-dir", type=Path, metavar="DIR", help="the sets' data are in DIR/<set>/ (default: data/...)"
    )
    parser.add_argument(
        "--database", type=Path, metavar="FILE", help="the results database to read and update"
    )
    args = parser.parse_args(argv)
    cli.setup_logging(args.loglevel)

    data = args.data_dir or paths.DATA / SUITE.name
    refs = [SUITE.ref(name, data=data / name, results_root=args.results_dir) for name in paper.PAPER_SETS]
    refs = [ref for ref in refs if SUITE.part("results_files")(ref)]
    if not refs:
        raise UserError(
            f"no run on any of the sets {', '.join(paper.PAPER_SETS)} yet: make asat-paper "
            "MODEL=<config> plays a model there (make all plays the built-in baselines)"
        )
    refs, scored = scoring.score_and_load(refs, db=args.database)
    rows = paper.paper_rows(paper.seed_numbers(report.runs_of(scored)))
    if rows.empty:
        raise UserError(
            "no run on those sets played several seeds (each is played with seeds 1-3 unless "
            "--set samples=1 said otherwise): nothing to average over"
        )
    write_text(args.out / "numbers.csv", paper.tidy(rows).to_csv(index=False, lineterminator="\n"))
    _, figure = paper.plot_paper(rows, args.out / FIGURE)
    text = render_text(
        "ALREADY SAID THAT: THE ORIGINAL'S PLOTS", [(report.SEEDS_TITLE, paper.seeds_table(rows))]
    )
    text += (
        f"The original's plots: {paths.shown(figure)}; the numbers: {paths.shown(args.out / 'numbers.csv')}\n"
    )
    write_text(args.out / "numbers.txt", text)
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(cli.run_main(main))
