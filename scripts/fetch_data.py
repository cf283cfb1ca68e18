"""Fetch a public data release into data/, verifying the pinned SHA-256 of every file.

With DATA_MIRROR set, files are copied from $DATA_MIRROR/<mirror>/ instead of downloaded.
The stamp file (the Make target) is written last, listing what was verified.

$ python scripts/fetch_data.py configs/data/worldsense.yaml --group test_set training_set \
      --stamp data/worldsense/.fetched-core
$ DATA_MIRROR=../shared python scripts/fetch_data.py configs/data/cogsci22_blocks.yaml
"""

import logging
import sys

from common import cli, fetch
from common.errors import ConfigError
from common.jsonl import write_text

log = logging.getLogger("fetch_data")


def main(argv: list[str] | None = None) -> int:
    parser = cli.make_parser(__doc__)
    parser.add_argument("source", help="data source config, e.g. configs/data/worldsense.yaml")
    parser.add_argument("--group", nargs="*", default=[], help="groups to fetch (default: all)")
    parser.add_argument("--stamp", help="file to write when every file is verified")
    parser.add_argument("--retries", type=int, default=3, help="retries per download")
    args = parser.parse_args(argv)
    cli.setup_logging(args.loglevel)

    spec, pinned = fetch.load_source(args.source)
    unknown = [g for g in args.group if g not in spec.groups]
    if unknown:
        raise ConfigError(f"{args.source}: unknown group(s) {', '.join(unknown)} "
                          f"(known: {', '.join(spec.groups)})")
    prefixes = [p for g in args.group for p in spec.groups[g]]
    files = fetch.select(pinned, prefixes)
    log.info("%s: %s", spec.name, spec.description)
    paths = fetch.fetch(spec, files, retries=args.retries)
    if args.stamp:
        write_text(args.stamp, "".join(f"{h}  {p}\n" for p, h in files.items()))
    log.info("%s: %d files verified under %s", spec.name, len(paths), spec.dest)
    return 0


if __name__ == "__main__":
    sys.exit(cli.run_main(main))
