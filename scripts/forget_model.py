"""Take one model's results out of every suite: moved to results/forgotten/<UTC time>/, not deleted.

Every results file of the model (any prompting label), with its run's other files (metadata,
turn log), in every set of every suite, moves to results/forgotten/<time>/ under the same
relative path; its `make all MODEL=...` stamps go, and so do the scoring stamps of the sets it
answered, so that make rescores those sets and rebuilds their analyses and the report without it
(`make forget MODEL=<name>` runs it, then rebuilds the report). Prints every move.

$ python scripts/forget_model.py my-model --dry-run
"""

try:  # first: scripts/_project_env.py puts the project on sys.path and explains a missing .venv
    import _project_env  # noqa: F401
except ModuleNotFoundError:  # a copy of this script outside scripts/: the installed package serves
    pass

import sys

from common import cli, paths
from common.forget import forget_model
from common.models.resolve import model_name


def main(argv: list[str] | None = None) -> int:
    parser = cli.make_parser(__doc__)
    parser.add_argument(
        "model", help="the model's name, as in its results files (<prompting>___<model>___...)"
    )
    parser.add_argument("--dry-run", action="store_true", help="print what would move; move nothing")
    args = parser.parse_args(argv)
    cli.setup_logging(args.loglevel)
    name = model_name(args.model)
    moves = forget_model(name, dry_run=args.dry_run)
    for source, target in moves:
        print(f"{paths.shown(source)} -> {paths.shown(target) if target else '(removed: rebuilt by make)'}")
    if not any(target for _, target in moves):
        print(f"no results of model {name!r} found")
    return 0


if __name__ == "__main__":
    sys.exit(cli.run_main(main))
