"""Analyse the results of any suite: tables with 95% intervals, figures, tidy statistics.

The suite is recognised from the directory (or named with --suite); each suite's section comes
from common/<suite>/report.py (its numbers from common/<suite>/analysis.py). WorldSense: the
release's three tables (average accuracy, accuracy per problem, bias per problem) and the
answers per model; each tuple of dependent trials counts once, problem sizes and problems weigh
equally; partial results files are analysed with a warning (incomplete tuples are left out);
parsed columns are cached under .cache/worldsense. Blocks (results/blocks/<set>): success by
view and run with Wilson intervals, lenient and strict, needs-a-move and optimal-length splits,
invalid and refused counts, exact paired (McNemar) tests between runs, and for the paper's sets
the published table next to the re-scored release. Canvas (a set with manifest.json): strict
accuracy per task and number of shapes, intervals clustered by item, the shortcut baselines
against chance, the audit (its gate: exit 1 when a blinded view beats chance), exact paired
tests. Already Said That (results/already_said_that[/<set>]): the
original's metrics with intervals, Kaplan-Meier survival, log-rank and paired tests, error rates
per question type.

$ python scripts/analyse_results.py -t data/worldsense/test_set
$ python scripts/analyse_results.py -t data/worldsense/test_set --by problemsize --markdown /tmp/report.md
$ python scripts/analyse_results.py -t data/worldsense/test_set --csv /tmp/stats.csv --plot /tmp/acc.png
$ python scripts/analyse_results.py results/blocks/cogsci_problems --figures /tmp/blocks-figures
$ python scripts/analyse_results.py -t data/canvas/standard --figures /tmp/canvas-figures
$ python scripts/analyse_results.py results/already_said_that --figures /tmp/asat-figures
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

from common import analysis, cli, paths, render, report
from common.jsonl import write_text

log = logging.getLogger("analyse_results")


def _parser() -> argparse.ArgumentParser:
    """Return the command line: the path, the outputs, and the options some suites read."""
    parser = cli.make_parser(__doc__)
    parser.add_argument("path", nargs="?", help="a suite's test set or results directory (as -t)")
    parser.add_argument(
        "-t", "--testset", default="data/worldsense/test_set", help="a suite's test set or results directory"
    )
    parser.add_argument("--suite", choices=list(analysis.SUITES), help="the suite (default: recognised)")
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
        "--results",
        action="append",
        default=[],
        type=Path,
        metavar="DIR",
        help="also read the results files in DIR (answers to the same items kept elsewhere, "
        "e.g. the models' answers beside a canvas set); repeatable",
    )
    parser.add_argument(
        "--require-complete",
        action="store_true",
        help="refuse (exit 2) when results are partial, instead of warning",
    )
    group = parser.add_argument_group("WorldSense")
    group.add_argument(
        "--by",
        nargs="+",
        default=["problemname"],
        metavar="FIELD",
        help="trial fields to group accuracy and bias by (e.g. problemsize, skin)",
    )
    group.add_argument("--no-cache", action="store_true", help="parse every file again; read/write no cache")
    group.add_argument(
        "--cache-dir",
        default=".cache/worldsense",
        help="where parsed columns are cached (relative to the project root)",
    )
    return parser


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
        section = analysis.analyse(
            args.testset,
            suite=args.suite,
            figures_dir=figures_dir,
            by=args.by,
            cache_dir=None if args.no_cache else paths.ROOT / args.cache_dir,
            require_complete=args.require_complete,
            extra_results=args.results,
        )
        if args.plot and section.figures:
            args.plot.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(section.figures[0][1], args.plot)
    text = report.section_text(section)
    if not args.quiet:
        print(text, end="")
    if args.section:
        report.save_section(section, args.section)
    if args.out:
        write_text(args.out, text)
    if args.csv:
        write_text(args.csv, analysis.tidy_data(section).to_csv(index=False, lineterminator="\n"))
    if args.markdown:
        write_text(args.markdown, render.section_markdown(section))
    for note in section.notes:
        log.warning("%s", note)
    log.info("analysed %s: %s", args.testset, "; ".join(section.summary) or section.title)
    return _gate(section)


def _gate(section: analysis.Section) -> int:
    """Return 1 when the suite's gate fails on what was analysed (its report module's optional
    ``gate_failures``: the canvas audit), after logging each reason; else 0. The outputs are
    written first, so the failing figures can be read."""
    check = getattr(analysis.suite_module(section.suite), "gate_failures", None)
    reasons = check(section) if check else []
    for reason in reasons:
        log.error("%s", reason)
    return 1 if reasons else 0


if __name__ == "__main__":
    sys.exit(cli.run_main(main))
