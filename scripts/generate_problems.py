"""Generate a problem set of any suite from its config: configs/<suite>/<set>.yaml -> data/<suite>/<set>/.

Every suite's sets are generated the same way: -t names the set (its name, <suite>/<set>, or its
config file), the suite's generator writes its data (blocks: the problems and every view's
few-shot prompts; canvas: the trials; Already Said That: the word samples and distractors), and
answers to items the new set changed or dropped are set aside in stale/ beside their results
file (common/stale.py), each said on the terminal. A wrong config stops with file:line: field
before anything is written.

$ python scripts/generate_problems.py -t blocks/cogsci_problems
$ python scripts/generate_problems.py -t canvas/standard --seed 3 --out /tmp/standard_seed3
$ python scripts/generate_problems.py -t already_said_that/mixed --set samples=20 --out /tmp/mixed_small
$ python scripts/generate_problems.py --suite canvas -t /tmp/mine.yaml --out /tmp/mine
"""

try:  # first: scripts/_project_env.py puts the project on sys.path and explains a missing .venv
    import _project_env  # noqa: F401
except ModuleNotFoundError:  # a copy of this script outside scripts/: the installed package serves
    pass

import dataclasses
import logging
import sys
import time
from pathlib import Path

from common import cli, generation, paths, suites
from common.config import parse_overrides
from common.errors import UserError

log = logging.getLogger("generate_problems")


def main(argv: list[str] | None = None) -> int:
    parser = cli.make_parser(__doc__)
    cli.add_set_option(parser, help="the set to generate: its name, <suite>/<set>, or its config file")
    parser.add_argument("--suite", choices=suites.names(), help="the suite of a config kept elsewhere")
    parser.add_argument("--out", type=Path, help="the set directory to write (default: data/<suite>/<set>)")
    parser.add_argument("--seed", type=int, default=None, help="random seed (default: the config's `seed`)")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a config setting (repeatable), e.g. --set items=4",
    )
    args = parser.parse_args(argv)
    cli.setup_logging(args.loglevel)

    ref = suites.resolve_set(args.testset, suite=args.suite)
    if ref.config is None:
        raise UserError(f"{ref.key} is not generated from a config (its data is fetched: `make data`)")
    if args.out:
        ref = dataclasses.replace(ref, data=args.out, results=args.out / "results")
    start = time.monotonic()
    for message in generation.generate(ref, args.seed, parse_overrides(args.set)):
        log.warning("%s", message)
    log.info("generated %s in %s in %.1f s", ref.key, paths.shown(ref.data), time.monotonic() - start)
    return 0


if __name__ == "__main__":
    sys.exit(cli.run_main(main))
