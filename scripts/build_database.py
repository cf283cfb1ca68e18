"""Build the results database: every item of every run in one SQLite file, and its explorer's queries.

Reads every results file of every suite (WorldSense's test set, results/blocks/<set>/,
results/canvas/<set>/, results/already_said_that/<set>/) with the items they answer, scores
them with each suite's own code, and writes results/results.sqlite (schema: docs/database.md)
and the Datasette metadata with the canned queries beside it. The results files stay the
source of truth: the database is rebuilt from them whole (`make db` does it when one changes).

$ python scripts/build_database.py
$ python scripts/build_database.py --suite worldsense --out /tmp/worldsense.sqlite
"""

try:  # first: scripts/_project_env.py puts the project on sys.path and explains a missing .venv
    import _project_env  # noqa: F401
except ModuleNotFoundError:  # a copy of this script outside scripts/: the installed package serves
    pass

import logging
import sqlite3
import sys
import time
from contextlib import closing
from pathlib import Path

from common import cli, database, paths, queries
from common.jsonl import write_json

log = logging.getLogger("build_database")

DEFAULTS = {
    "out": database.DEFAULT_PATH,  # the database written; Datasette's metadata beside it (make explore)
}


def main(argv: list[str] | None = None) -> int:
    parser = cli.make_parser(__doc__)
    parser.add_argument("--out", type=Path, default=DEFAULTS["out"], help="the SQLite database to write")
    parser.add_argument(
        "--metadata",
        type=Path,
        help="Datasette's metadata with the canned queries (default: beside --out, .metadata.json)",
    )
    parser.add_argument(
        "--suite", action="append", choices=list(database.ADAPTERS), help="only this suite (repeatable)"
    )
    parser.add_argument("--results-root", type=Path, default=paths.RESULTS, help="where results/<suite>/ are")
    parser.add_argument("--data-root", type=Path, default=paths.DATA, help="where data/<suite>/ are")
    args = parser.parse_args(argv)
    cli.setup_logging(args.loglevel)

    start = time.monotonic()
    roots = database.Roots(results=args.results_root, data=args.data_root)
    sets = database.collect(roots, args.suite or tuple(database.ADAPTERS))
    read = time.monotonic() - start
    counts = database.build(args.out, sets)
    with closing(sqlite3.connect(f"file:{args.out}?mode=ro", uri=True)) as conn:
        write_json(args.metadata or args.out.with_suffix(".metadata.json"), queries.datasette_metadata(conn))
    shown = ", ".join(f"{n:,} {table}" for table, n in counts.items())
    elapsed = time.monotonic() - start
    log.info("read and scored in %.1f s, written in %.1f s", read, elapsed - read)
    print(f"Database: {paths.shown(args.out)}: {shown} ({elapsed:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(cli.run_main(main))
