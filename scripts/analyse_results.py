"""Analyse the results of any set of any suite: tables with 95% intervals, figures, tidy statistics.

-t names the set as every script does (``worldsense/test_set``, ``canvas/standard``, a set name
that only one suite has, or a path); a suite's name analyses all its sets that have results
together (Already Said That's report section does). The set's results files are scored into the
results database first (the score stage, common/scoring.py: each file once per content and
scorer, so after make's scoring step nothing is read again), and the section is computed from
those scored rows, read from the database by the suite's report module (common/<suite>/report.py, its
numbers from common/<suite>/analysis.py). WorldSense: the release's three tables (average
accuracy, accuracy per problem, bias per problem) and the answers per model; each tuple of
dependent trials counts once, problem sizes and problems weigh equally; partial results files
are analysed with a warning (incomplete tuples are left out). Blocks: success by view and run
with Wilson intervals, lenient and strict, needs-a-move and optimal-length splits, invalid and
refused counts, exact paired (McNemar) tests between runs, and for the paper's sets the
published table next to the re-scored release. Canvas: strict accuracy per task and number of
shapes, intervals clustered by item, the shortcut baselines against chance, the validity checks,
exact paired tests. Already Said That: the original's metrics with intervals, Kaplan-Meier
survival, log-rank and paired tests, error rates per question type. A validity gate that fails
(canvas's audit) makes the script exit with 1 after writing everything; a check not met that does
not stop it (a canvas shortcut off chance) is a warning; the report opens the suite with both.

$ python scripts/analyse_results.py -t worldsense/test_set
$ python scripts/analyse_results.py -t worldsense/test_set --by problemsize --markdown /tmp/report.md
$ python scripts/analyse_results.py -t worldsense/test_set --csv /tmp/stats.csv --plot /tmp/acc.png
$ python scripts/analyse_results.py -t blocks/cogsci_problems --figures /tmp/blocks-figures
$ python scripts/analyse_results.py -t canvas/standard --figures /tmp/canvas-figures
$ python scripts/analyse_results.py -t already_said_that --figures /tmp/asat-figures
"""

try:  # first: scripts/_project_env.py puts the project on sys.path and explains a missing .venv
    import _project_env  # noqa: F401
except ModuleNotFoundError:  # a copy of this script outside scripts/: the installed package serves
    pass

import argparse
import logging
import shutil
import sys
import tempfile
from pathlib import Path

from common import analysis, cli, filehashes, render, report, scoring, suites
from common.jsonl import write_text

log = logging.getLogger("analyse_results")


def _parser() -> argparse.ArgumentParser:
    """Return the command line: the set, the outputs, and the options some suites read."""
    parser = cli.make_parser(__doc__)
    parser.add_argument("path", nargs="?", help="the set (as -t)")
    cli.add_set_option(
        parser, default=suites.first_set(), help="the set: a set name, <suite>/<set>, a path, or a suite"
    )
    parser.add_argument("--suite", choices=suites.names(), help="look the set up in this suite only")
    parser.add_argument("--out", metavar="TXT", help="also write the printed report to this file")
    parser.add_argument("--csv", metavar="CSV", help="write every statistic as a tidy CSV file")
    parser.add_argument("--markdown", metavar="MD", help="write the tables as Markdown")
    parser.add_argument("--figures", metavar="DIR", type=Path, help="write the suite's figures (PNG) here")
    parser.add_argument("--plot", metavar="PNG", type=Path, help="write the suite's main figure to this file")
    parser.add_argument(
        "--section",
        metavar="JSON",
        type=Path,
        help="save the analysis for the report (scripts/build_report.py); needs --figures",
    )
    parser.add_argument("--quiet", action="store_true", help="print nothing (write the files only)")
    parser.add_argument(
        "--set-reports",
        metavar="PATTERN",
        help="with several sets (-t <suite>), also write each set's own report text to PATTERN, "
        "its {set} replaced by the set's name (e.g. 'results/<suite>/{set}/report.txt')",
    )
    parser.add_argument(
        "--results-dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="the set's results are in DIR/<set>/ (as the scripts that ask models write them with it)",
    )
    parser.add_argument(
        "--database",
        type=Path,
        default=None,
        metavar="FILE",
        help="the results database (default: results/results.sqlite)",
    )
    parser.add_argument(
        "--require-complete",
        action="store_true",
        help="refuse (exit 2) when results are partial, instead of warning",
    )
    for suite in suites.all_suites():  # a group of options per suite whose analysis has its own
        if suite.analysis_options:
            group = parser.add_argument_group(suite.title)
            for flag, keywords in suite.analysis_options.items():
                group.add_argument(flag, **keywords)
    return parser


def _suite_options(args: argparse.Namespace) -> dict[str, object]:
    """Return the suites' own analysis options as given (or their defaults), by name: what
    ``analysis.section`` passes on to a suite's section (each takes those it knows)."""
    flags = [flag for suite in suites.all_suites() for flag in suite.analysis_options]
    return {name: getattr(args, name) for name in (f.lstrip("-").replace("-", "_") for f in flags)}


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    cli.setup_logging(args.loglevel)
    if args.path:
        args.testset = args.path
    if args.section and not args.figures:
        parser.error("--section needs --figures DIR (the report embeds the figures from there)")

    with tempfile.TemporaryDirectory() as scratch:
        figures_dir = args.figures or (Path(scratch) if args.plot else None)
        options = {**_suite_options(args), "require_complete": args.require_complete, "db": args.database}
        refs, scored = scoring.score_and_load(args.testset, args.suite, args.database, args.results_dir)
        section = analysis.section(refs, scored, figures_dir, **options)
        if args.plot and section.figures:
            args.plot.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(section.figures[0][1], args.plot)
    text = report.section_text(section)
    if not args.quiet:
        print(text, end="")
    if args.section:
        report.save_section(section, args.section, filehashes.digests(section.inputs, args.database))
    for ref in refs if args.set_reports else []:  # each set's own report, from the same scored rows
        one = analysis.section([ref], scored.of_set(ref.name), None, **options)
        write_text(args.set_reports.format(set=ref.name), report.section_text(one))
    if args.out:
        write_text(args.out, text)
    if args.csv:
        write_text(args.csv, analysis.tidy_data(section).to_csv(index=False, lineterminator="\n"))
    if args.markdown:
        write_text(args.markdown, render.section_markdown(section))
    for note in section.notes:
        log.warning("%s", note)
    log.info("analysed %s: %s", args.testset, "; ".join(section.summary) or section.title)
    for missed in section.missed:
        log.warning("%s", missed)
    for failed in section.failed:
        log.error("%s", failed)
    return 1 if section.failed else 0


if __name__ == "__main__":
    sys.exit(cli.run_main(main))
