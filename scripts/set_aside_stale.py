"""After a set is (re)generated: set aside the results of items it changed or no longer has.

Answers to an item whose prompt changed, or that is gone (a blocks view the config dropped, a
canvas trial or an Already Said That conversation generated anew), are moved to
``stale/<UTC time>/`` beside their results file, not deleted, and each move is printed; the
rest stay, and a rerun asks only the new items (common/stale.py). make runs it after
generating a set.

$ python scripts/set_aside_stale.py canvas data/canvas/standard
"""

try:  # first: scripts/_project_env.py puts the project on sys.path and explains a missing .venv
    import _project_env  # noqa: F401
except ModuleNotFoundError:  # a copy of this script outside scripts/: the installed package serves
    pass

import sys
from pathlib import Path

from common import cli
from common.stale import ITEMS, set_aside_stale


def main(argv: list[str] | None = None) -> int:
    parser = cli.make_parser(__doc__)
    parser.add_argument("suite", choices=sorted(ITEMS), help="the set's suite")
    parser.add_argument("set_dir", type=Path, help="the set directory (data/<suite>/<set>)")
    parser.add_argument(
        "--results-dir", type=Path, default=None, help="results root (default: results/<suite>)"
    )
    args = parser.parse_args(argv)
    cli.setup_logging(args.loglevel)
    for message in set_aside_stale(args.suite, args.set_dir, args.results_dir):
        print(message)
    return 0


if __name__ == "__main__":
    sys.exit(cli.run_main(main))
