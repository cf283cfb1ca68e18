"""Build the one report of every suite from saved sections: results/report.html and report.md.

Each section is the JSON that `scripts/analyse_results.py --section` wrote for one suite (its
tables with 95% intervals, figures, the paper's numbers next to the reproduced ones). Each
section also shows a few examples under the paired tests it prints (with many runs, chosen by
a rule its table states: common/leaderboard.py) and a few failures of each run, from the
results database (results/results.sqlite) whose scored rows the sections were computed from.
The HTML stands alone (images embedded, no network); the Markdown links the figures. Prints
where the report is and one summary line per section.

$ python scripts/build_report.py results/sections/worldsense/test_set.json \\
      --html results/report.html --markdown results/report.md --summary results/report.txt
$ python scripts/build_report.py results/sections/*/*.json results/sections/*.json \\
      --html /tmp/report.html --markdown /tmp/report.md
"""

try:  # first: scripts/_project_env.py puts the project on sys.path and explains a missing .venv
    import _project_env  # noqa: F401
except ModuleNotFoundError:  # a copy of this script outside scripts/: the installed package serves
    pass

import logging
import sys
from pathlib import Path

from common import cli, database, examples, leaderboard, paths, render, report
from common.jsonl import write_text
from common.provenance import provenance, token_budget_lines

log = logging.getLogger("build_report")


def main(argv: list[str] | None = None) -> int:
    parser = cli.make_parser(__doc__)
    parser.add_argument("sections", nargs="+", type=Path, help="saved sections, in report order")
    parser.add_argument("--html", type=Path, required=True, help="the HTML report to write")
    parser.add_argument("--markdown", type=Path, required=True, help="the Markdown report to write")
    parser.add_argument(
        "--database", type=Path, default=None, help="the results database (default: results/results.sqlite)"
    )
    parser.add_argument(
        "--summary",
        type=Path,
        help="also write the printed lines here (`make all` shows them without rebuilding)",
    )
    args = parser.parse_args(argv)
    cli.setup_logging(args.loglevel)

    sections = [leaderboard.choose_pairs(report.load_section(path)) for path in args.sections]
    with database.connection(args.database, readonly=True) as conn:
        prov = provenance(sections, conn)
        sections = [examples.attach(section, conn) for section in sections]
    links = report.figure_copies(sections, args.markdown.resolve().parent)
    write_text(args.markdown, render.render_markdown(sections, prov, links))
    write_text(args.html, render.render_html(sections, prov))
    lines = [
        f"Report: {paths.shown(args.html)} (and {paths.shown(args.markdown)})",
        *[f"  {line}" for line in report.summary_lines(sections) + token_budget_lines(prov)],
    ]
    if args.summary:
        write_text(args.summary, "\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(cli.run_main(main))
