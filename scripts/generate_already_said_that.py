r"""Write an Already Said That set directory from its config: samples.jsonl, distractors.jsonl
and manifest.json (written last: the mark of a finished set).

The word samples depend only on the seed and the word source, so every variant built with the
same seed asks about the same words (paired comparisons). WordNet words need
`make data/nltk_data/.wordnet-ok`; `words: original` or `distractors: original` need
`make asat-original`.

$ python scripts/generate_already_said_that.py --config configs/already_said_that/mixed.yaml \
    --out data/already_said_that/mixed
$ python scripts/generate_already_said_that.py --config configs/already_said_that/first_letters.yaml \
    --out /tmp/small --set samples=5
"""

try:  # first: scripts/_project_env.py puts the project on sys.path and explains a missing .venv
    import _project_env  # noqa: F401
except ModuleNotFoundError:  # a copy of this script outside scripts/: the installed package serves
    pass

import logging
import sys
import time
from pathlib import Path

from common import cli
from common.already_said_that.generate import load_set_config, validate, write_set
from common.config import Source, apply_overrides, parse_overrides

log = logging.getLogger("generate_already_said_that")


def main(argv: list[str] | None = None) -> int:
    parser = cli.make_parser(__doc__)
    parser.add_argument("--config", required=True, help="configs/already_said_that/<set>.yaml")
    parser.add_argument("--out", required=True, type=Path, help="the set directory to write")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a config setting (repeatable), e.g. --set samples=5",
    )
    args = parser.parse_args(argv)
    cli.setup_logging(args.loglevel)

    settings = load_set_config(args.config)
    if args.set:
        name = settings.name
        settings = apply_overrides(settings, parse_overrides(args.set))
        settings.name = name
        validate(settings, Source("<command line>"))
    start = time.monotonic()
    manifest = write_set(settings, args.out)
    pool = ", ".join(f"{source} {count}" for source, count in manifest["distractors"].items())
    log.info(
        "%s: %d samples, distractors: %s; wrote %s in %.1f s",
        settings.name,
        manifest["samples"],
        pool or "none",
        args.out,
        time.monotonic() - start,
    )
    return 0


if __name__ == "__main__":
    sys.exit(cli.run_main(main))
