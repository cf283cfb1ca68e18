"""Audit a canvas set's generator (the set's gate), or measure the gate's power on planted leaks.

The audit draws fresh items from the set's config (its seed, size and modalities aside), fits
strong learners on 3,000 of them per task with one input the skill needs blinded at a time, and
tests them on 2,000 others: each view must stay at chance (common/canvas/audit.py). It also scores
the suite's shortcut rules and partial skills on those fresh trials. The table is cached by the
generator's settings and code (the default sets' recorded in common/canvas/audited/, --ship; any
other under .cache/canvas), and written to data/canvas/<set>/audit.json.
With --power, each leak of common/canvas/power.py is planted in the default generator at a few
strengths and the view that should see it is run: data/canvas/power.json.

$ python scripts/audit_canvas.py -t canvas/standard
$ python scripts/audit_canvas.py --power
"""

try:  # first: scripts/_project_env.py puts the project on sys.path and explains a missing .venv
    import _project_env  # noqa: F401
except ModuleNotFoundError:  # a copy of this script outside scripts/: the installed package serves
    pass

import logging
import sys
from pathlib import Path

from common import cli, paths, suites
from common.canvas import audit, power
from common.errors import UserError

log = logging.getLogger("audit_canvas")


def main(argv: list[str] | None = None) -> int:
    parser = cli.make_parser(__doc__)
    parser.add_argument("-t", "--testset", metavar="SET", help="the canvas set whose generator to audit")
    parser.add_argument("--power", action="store_true", help="measure the gate's power on planted leaks")
    parser.add_argument("--out", type=Path, help="the file to write (default: audit.json in the set's data)")
    parser.add_argument(
        "--ship", action="store_true", help="also record it with the code, in common/canvas/audited/"
    )
    args = parser.parse_args(argv)
    cli.setup_logging(args.loglevel)
    if args.power:
        out = args.out or paths.DATA / "canvas" / "power.json"
        table = power.write_power(out, paths.CACHE / "canvas", args.ship)
        log.info(
            "planted leaks caught: %d of %d -> %s", int(table["caught"].sum()), len(table), paths.shown(out)
        )
        return 0
    if not args.testset:
        raise UserError("name the set to audit (-t canvas/<set>), or give --power")
    ref = suites.resolve_set(args.testset, suite="canvas")
    if ref.suite != "canvas" or ref.config is None:
        raise UserError(f"{ref.key} is not a canvas set made from a config")
    out = args.out or ref.data / "audit.json"
    table = audit.write_audit(ref.config, out, paths.CACHE / "canvas", args.ship)
    failed = audit.failures(table, ref.name)
    for message in failed:
        log.warning("%s", message)
    log.info(
        "%s: %d views, %d failed -> %s", ref.key, int(table["gated"].sum()), len(failed), paths.shown(out)
    )
    return 0


if __name__ == "__main__":
    sys.exit(cli.run_main(main))
