"""Take models' results, or sets, out of the report: moved to results/forgotten/<UTC time>/, not deleted.

Every results file of each model named (any prompting label), with its run's other files
(metadata, turn log), in every set of every suite, moves to results/forgotten/<time>/ under the
same relative path; its `make all MODEL=...` stamps go, and so do the scoring stamps of the sets
it answered, so that make rescores those sets and rebuilds their analyses and the report without
it. A set named with --set <suite>/<set> moves there whole (its config, its data, its results
directory: every model's answers to it), its section and figures are deleted and its rows leave
the results database. `make forget MODEL="<name> ..." SET="<suite>/<set> ..."` runs it, then
rebuilds the report. Prints every move.

$ python scripts/forget_model.py my-model --dry-run
$ python scripts/forget_model.py --set canvas/mine --dry-run
"""

try:  # first: scripts/_project_env.py puts the project on sys.path and explains a missing .venv
    import _project_env  # noqa: F401
except ModuleNotFoundError:  # a copy of this script outside scripts/: the installed package serves
    pass

import sys

from common import cli, database, paths
from common.forget import forget_model, forget_set, forgotten_root, prune
from common.models.resolve import model_name


def main(argv: list[str] | None = None) -> int:
    parser = cli.make_parser(__doc__)
    parser.add_argument(
        "models",
        nargs="*",
        metavar="model",
        help="a model's name, as in its results files (<prompting>___<model>___...)",
    )
    parser.add_argument(
        "--set", action="append", default=[], metavar="SUITE/SET", help="a set to take out (repeatable)"
    )
    parser.add_argument("--dry-run", action="store_true", help="print what would move; move nothing")
    args = parser.parse_args(argv)
    cli.setup_logging(args.loglevel)
    if not args.models and not args.set:
        parser.error("name a model, or a set with --set <suite>/<set>")
    root = forgotten_root()
    for name in [model_name(model) for model in args.models]:
        _say(forget_model(name, dry_run=args.dry_run, root=root), f"model {name!r}")
    for key in args.set:
        _say(forget_set(key, dry_run=args.dry_run, root=root), f"set {key}")
        path = database.default_path()
        if not args.dry_run and path.is_file():
            with database.connection(path) as conn:
                if prune(conn, [key]):
                    print(f"{key}: its rows deleted from {paths.shown(path)}")
    return 0


def _say(moves: list, what: str) -> None:
    """Print each move (a removal as such), or that nothing of ``what`` was found."""
    for source, target in moves:
        print(f"{paths.shown(source)} -> {paths.shown(target) if target else '(removed: rebuilt by make)'}")
    if not any(target for _, target in moves):
        print(f"nothing of {what} found")


if __name__ == "__main__":
    sys.exit(cli.run_main(main))
