"""Score results files into the results database, each once: the scoring stage of every suite.

Reads the results files of the sets named (-t, repeatable: a set name, <suite>/<set>, a path,
or a suite's name for all its sets; default: every set of every suite), each only when its
content or its suite's scoring code changed since it was scored, scores it with its suite's
scorer and writes its rows into results/results.sqlite (schema: docs/database.md); with
--metadata, the Datasette metadata of the explorer's canned queries too (make explore). The
results files stay the source of truth; everything downstream (analyses, report, explorer)
reads these rows. Scoring every set (no -t), or with --prune alone, it also deletes the sets
that are no longer found (a set whose config was removed: common/forget.py), as the report drops
them.

$ python scripts/score_results.py
$ python scripts/score_results.py --prune
$ python scripts/score_results.py -t canvas/standard
$ python scripts/score_results.py -t worldsense --database /tmp/worldsense.sqlite
"""

try:  # first: scripts/_project_env.py puts the project on sys.path and explains a missing .venv
    import _project_env  # noqa: F401
except ModuleNotFoundError:  # a copy of this script outside scripts/: the installed package serves
    pass

import logging
import sys
import time
from pathlib import Path

from common import cli, database, forget, paths, queries, suites
from common.jsonl import write_json

log = logging.getLogger("score_results")


def main(argv: list[str] | None = None) -> int:
    parser = cli.make_parser(__doc__)
    parser.add_argument(
        "-t",
        "--testset",
        action="append",
        metavar="SET",
        help="a set to score (repeatable; default: every set)",
    )
    parser.add_argument(
        "--results-dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="the sets' results are in DIR/<set>/ (default: results/<suite>/<set>/, or the set's results/)",
    )
    parser.add_argument("--database", type=Path, default=None, metavar="FILE", help="the database to update")
    parser.add_argument(
        "--metadata",
        type=Path,
        help="also write Datasette's metadata with the canned queries here (make explore)",
    )
    parser.add_argument(
        "--prune",
        action="store_true",
        help="only delete the sets no longer found (their config removed), scoring nothing (the report step)",
    )
    parser.add_argument(
        "--metadata-only",
        action="store_true",
        help="write --metadata for the database as it is, scoring nothing (make explore EXPLORE_DB=...)",
    )
    args = parser.parse_args(argv)
    cli.setup_logging(args.loglevel)

    start = time.monotonic()
    refs = (
        [ref for spec in args.testset for ref in sets_of(spec, args.results_dir)]
        if args.testset
        else every_set()
    )
    path = args.database or database.default_path()
    if args.metadata_only:
        with database.connection(path, readonly=True) as conn:
            write_json(args.metadata, queries.datasette_metadata(conn))
        return 0
    with database.connection(path) as conn:
        if args.prune or not args.testset:  # every set: the database holds the sets there are
            for key in forget.prune(conn):
                log.warning("%s: no set any more (its config is gone): its rows deleted from %s", key, path)
        if args.prune:
            return 0
        counts = database.update(conn, refs)
        if args.metadata:
            write_json(args.metadata, queries.datasette_metadata(conn))
    log.info("%s: %s in %.1f s", paths.shown(path), counts, time.monotonic() - start)
    return 0


def sets_of(spec: str, results_root: Path | None = None) -> list:
    """Return the sets ``spec`` names: for a suite's name, every set of the suite whose data is there."""
    if spec in suites.names():
        suite = suites.get(spec)
        return [ref for ref in suite.refs() if ref.data.exists()]
    return [suites.resolve_set(spec, results_root=results_root)]


def every_set() -> list:
    """Return every set of every suite whose data is there (a set without results has no runs)."""
    return [ref for suite in suites.all_suites() for ref in suite.refs() if ref.data.exists()]


if __name__ == "__main__":
    sys.exit(cli.run_main(main))
