"""Get the original Already Said That data from the evals==3.0.1.post1 wheel (PyPI), checked.

Downloads the wheel once (pip download --no-deps into data/already_said_that_original/wheel/),
checks its SHA-256 and that of the five files it extracts (configs/data/already_said_that_original.sha256),
applies the original eval's clean-ups, re-checks every gold answer and writes
data/already_said_that_original/ (words.jsonl, <source>.jsonl, report.json last). Records whose
gold answer is wrong are left out and listed (warnings here, "rejected" in report.json).

$ python scripts/fetch_already_said_that_original.py
$ python scripts/fetch_already_said_that_original.py --wheel ~/Downloads/evals-3.0.1.post1-py3-none-any.whl
"""

try:  # first: scripts/_project_env.py puts the project on sys.path and explains a missing .venv
    import _project_env  # noqa: F401
except ModuleNotFoundError:  # a copy of this script outside scripts/: the installed package serves
    pass

import logging
import sys
from pathlib import Path

from common import cli
from common.already_said_that import original

log = logging.getLogger("fetch_already_said_that_original")


def main(argv: list[str] | None = None) -> int:
    parser = cli.make_parser(__doc__)
    parser.add_argument("--wheel", type=Path, help="use this copy of the wheel instead of downloading it")
    parser.add_argument("--out", type=Path, default=original.ORIGINAL_DIR, help="where to write the data")
    args = parser.parse_args(argv)
    cli.setup_logging(args.loglevel)
    report = original.build_original(args.out, wheel=args.wheel)
    log.info("%d word samples", report["words"]["samples"])
    for source, counts in report["distractors"].items():
        log.info(
            "%-20s %3d records, %3d kept, %d with a wrong gold answer left out",
            source,
            counts["records"],
            counts["kept"],
            len(counts["rejected"]),
        )
    return 0


if __name__ == "__main__":
    sys.exit(cli.run_main(main))
