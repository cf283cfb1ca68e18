"""Re-score the released raw outputs of the CogSci 2022 blocks-world paper and print the report.

Prints the published table (codex 99 / 92 / 72, gpt 40 / 19 / 0) re-scored with the paper's
lenient rule, beside the strict (VAL-like) numbers, the empty-plan baseline and the split by
problems that need a move, each with a 95% Wilson interval, and an exact McNemar test codex vs
gpt per view. Exits 1 if a re-scored verdict differs from the flag recorded in the release.
With --runs, writes the release's answers as runs of the set `released` instead (the paper's
prompts for the release's problems in data/blocks/released, results files in
results/blocks/released/), which the score stage scores into the results database, where the
paper's sets read the paper's table (make does both: results/blocks/released/.scored).

$ python scripts/reproduce_blocks.py
$ python scripts/reproduce_blocks.py --runs && python scripts/score_results.py -t data/blocks/released
$ python scripts/reproduce_blocks.py --release data/cogsci22_blocks --per-problem results/blocks/rescored.csv
"""

try:  # first: scripts/_project_env.py puts the project on sys.path and explains a missing .venv
    import _project_env  # noqa: F401
except ModuleNotFoundError:  # a copy of this script outside scripts/: the installed package serves
    pass

import logging
import sys
from pathlib import Path

from common import cli, paths
from common.blocks import SUITE
from common.blocks.items import RELEASED
from common.blocks.release import RELEASE
from common.blocks.release_runs import write_prompts, write_runs
from common.blocks.reproduce import disagreements, format_report, rescore, summary
from common.jsonl import atomic_write

log = logging.getLogger("reproduce_blocks")


def main(argv: list[str] | None = None) -> int:
    parser = cli.make_parser(__doc__)
    parser.add_argument("--release", default=str(RELEASE), help="the release directory (`make data`)")
    parser.add_argument("--per-problem", default=None, help="also write a CSV row per method, view, problem")
    parser.add_argument("--summary", default=None, help="also write the summary table as CSV")
    parser.add_argument(
        "--runs",
        action="store_true",
        help="write the release's answers as runs of the set `released` (to score) instead of the report",
    )
    args = parser.parse_args(argv)
    cli.setup_logging(args.loglevel)

    if not Path(args.release).is_dir():
        raise FileNotFoundError(2, "No release directory (run `make data`)", args.release)
    if args.runs:
        ref = SUITE.ref(RELEASED)
        write_prompts(ref.data, args.release)
        files = write_runs(ref.data, ref.results, args.release)
        log.info("the release's %d runs in %s", len(files), paths.shown(ref.results))
        return 0
    rows = rescore(args.release)
    print(format_report(rows), end="")
    for path, table in ((args.per_problem, rows), (args.summary, summary(rows))):
        if path:
            with atomic_write(path) as handle:
                table.to_csv(handle, index=False, lineterminator="\n")
            log.info("wrote %s", path)
    bad = disagreements(rows)
    if len(bad):
        log.error("%d re-scored verdicts differ from the recorded flags:\n%s", len(bad), bad.to_string())
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(cli.run_main(main))
