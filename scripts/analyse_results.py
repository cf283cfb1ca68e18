"""Analyse every model results file of a WorldSense test set: accuracy and bias with 95% intervals.

Prints the release's three tables (average accuracy, accuracy per problem, bias per problem).
Each tuple of dependent trials counts once; problem sizes and problems are weighted equally.
Partial results files are analysed with a warning (incomplete tuples are left out). Parsed
columns are cached under .cache/worldsense, keyed by the files' content hash.

$ python scripts/analyse_results.py -t data/worldsense/test_set
$ python scripts/analyse_results.py -t data/worldsense/test_set --by problemsize --markdown report.md
$ python scripts/analyse_results.py -t data/worldsense/other_tests/ood-size --csv stats.csv --plot acc.png
"""

import logging
import sys

from common import cli, paths
from common.jsonl import write_text
from common.worldsense import analysis, report

log = logging.getLogger("analyse_results")


def main(argv: list[str] | None = None) -> int:
    parser = cli.make_parser(__doc__)
    parser.add_argument("-t", "--testset", default="data/worldsense/test_set",
                        help="test set directory (holds trials.jsonl.bz2 and results/)")
    parser.add_argument("--by", nargs="+", default=["problemname"], metavar="FIELD",
                        help="trial fields to group accuracy and bias by (e.g. problemsize, skin)")
    parser.add_argument("--out", metavar="TXT", help="also write the printed report to this file")
    parser.add_argument("--csv", metavar="CSV", help="write every statistic as a tidy CSV file")
    parser.add_argument("--markdown", metavar="MD", help="write the tables as Markdown")
    parser.add_argument("--plot", metavar="PNG", help="write a bar plot of accuracy per group and model")
    parser.add_argument("--require-complete", action="store_true",
                        help="refuse (exit 2) when a tuple lacks answers, instead of warning")
    parser.add_argument("--no-cache", action="store_true", help="parse every file again; read/write no cache")
    parser.add_argument("--cache-dir", default=".cache/worldsense",
                        help="where parsed columns are cached (relative to the project root)")
    args = parser.parse_args(argv)
    cli.setup_logging(args.loglevel)

    result = analysis.analyse_results_in_testset_dir(
        args.testset, by=args.by, cache_dir=None if args.no_cache else paths.ROOT / args.cache_dir,
        require_complete=args.require_complete)
    text = report.format_report(result, args.testset)
    print(text, end="")
    if args.out:
        write_text(args.out, text)
    if args.csv:
        report.write_csv(result, args.csv)
    if args.markdown:
        report.write_markdown(result, args.testset, args.markdown)
    if args.plot:
        report.plot_accuracy(result, args.plot)
    models = result.tuples.groupby(["prompting", "modelname"], observed=True).ngroups
    log.info("analysed %s tuples of %d model(s)", f"{len(result.tuples):,}", models)
    return 0


if __name__ == "__main__":
    sys.exit(cli.run_main(main))
