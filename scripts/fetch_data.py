"""Fetch a public data release into data/, verifying the pinned SHA-256 of every file.

With DATA_MIRROR set, files are copied from $DATA_MIRROR/<mirror>/ instead of downloaded.
The stamp file (the Make target) is written last, listing what was verified.

$ python scripts/fetch_data.py configs/data/worldsense.yaml --group test_set training_set \\
      --stamp data/worldsense/.fetched-core
$ DATA_MIRROR=../shared python scripts/fetch_data.py configs/data/cogsci22_blocks.yaml
$ python scripts/fetch_data.py configs/data/worldsense.yaml --group other_tests --skip-offline \\
      --stamp data/worldsense/.fetched-other     # optional data: a warning, not a failure, offline
"""

try:  # first: scripts/_project_env.py puts the project on sys.path and explains a missing .venv
    import _project_env  # noqa: F401
except ModuleNotFoundError:  # a copy of this script outside scripts/: the installed package serves
    pass

import logging
import os
import sys

from common import cli, fetch
from common.errors import ConfigError, OfflineError
from common.jsonl import write_text

log = logging.getLogger("fetch_data")


def main(argv: list[str] | None = None) -> int:
    parser = cli.make_parser(__doc__)
    parser.add_argument("source", help="data source config, e.g. configs/data/<source>.yaml")
    parser.add_argument("--group", nargs="*", default=[], help="groups to fetch (default: all)")
    parser.add_argument("--stamp", help="file to write when every file is verified")
    parser.add_argument("--retries", type=int, default=3, help="retries per download")
    parser.add_argument(
        "--skip-offline",
        action="store_true",
        help="when the host cannot be reached, warn, write the stamp saying so and exit 0 (for optional "
        "data: make is done with it; removing the stamp, as the data's own make target does, tries again)",
    )
    args = parser.parse_args(argv)
    cli.setup_logging(args.loglevel)

    spec, pinned = fetch.load_source(args.source)
    unknown = [g for g in args.group if g not in spec.groups]
    if unknown:
        raise ConfigError(
            f"{args.source}: unknown group(s) {', '.join(unknown)} (known: {', '.join(spec.groups)})"
        )
    prefixes = [p for g in args.group for p in spec.groups[g]]
    files = fetch.select(pinned, prefixes)
    log.info("%s: %s", spec.name, spec.description)
    if args.skip_offline:  # an unreachable host is expected here: no warning per retry
        logging.getLogger("urllib3").setLevel(logging.ERROR)
    try:
        paths = fetch.fetch(spec, files, retries=args.retries)
    except OfflineError as exc:
        if not args.skip_offline:
            raise
        mirror = " and DATA_MIRROR does not hold these files" if os.environ.get("DATA_MIRROR") else ""
        log.warning(
            "%s %s: skipped: %s cannot be reached%s (optional data); files verified so far "
            "are kept; with network, the data's own make target (`make help` lists it) tries again",
            spec.name,
            " ".join(args.group) or "(all)",
            exc.host,
            mirror,
        )
        if args.stamp:  # done for make: offline, it is not asked again at every run
            write_text(args.stamp, f"offline: {exc.host} could not be reached; not fetched\n")
        return 0
    if args.stamp:
        write_text(args.stamp, "".join(f"{h}  {p}\n" for p, h in files.items()))
    log.info("%s: %d files verified under %s", spec.name, len(paths), spec.dest)
    return 0


if __name__ == "__main__":
    sys.exit(cli.run_main(main))
