"""Make WordNet 3.0 loadable by nltk offline and write the stamp data/nltk_data/.wordnet-ok.

Uses, in order: the project's data/nltk_data if it already loads; a WordNet nltk finds on its
own search path (NLTK_DATA, ~/nltk_data, ...), as it is; else Debian's wordnet-base and
wordnet-sense-index packages (apt-get installed when missing; needs root), whose files are
copied into data/nltk_data/corpora/wordnet/ with the lexnames file Debian leaves out. Prints the
number of alphabetic lemmas (77,503 for WordNet 3.0).

$ python scripts/setup_wordnet.py
$ python scripts/setup_wordnet.py --no-install   # never run apt-get: fail with the fix instead
"""

try:  # first: scripts/_project_env.py puts the project on sys.path and explains a missing .venv
    import _project_env  # noqa: F401
except ModuleNotFoundError:  # a copy of this script outside scripts/: the installed package serves
    pass

import logging
import sys

from common import cli
from common.already_said_that import wordnet

log = logging.getLogger("setup_wordnet")


def main(argv: list[str] | None = None) -> int:
    parser = cli.make_parser(__doc__)
    parser.add_argument(
        "--no-install",
        action="store_true",
        help="do not apt-get install the Debian packages when WordNet is missing",
    )
    args = parser.parse_args(argv)
    cli.setup_logging(args.loglevel)
    stamp = wordnet.ensure_wordnet(install=not args.no_install)
    log.info(
        "WordNet %s loads from NLTK_DATA=%s: %s alphabetic lemmas",
        stamp["version"],
        stamp["nltk_data"],
        f"{stamp['words']:,}",
    )
    return 0


if __name__ == "__main__":
    sys.exit(cli.run_main(main))
