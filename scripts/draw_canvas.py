"""Draw the canvas of one trial of a canvas set as a PNG (the shapes, named, on the grid).

A trial is chosen by its Key (a content hash, see the trials file) or by its line in the file.

$ python scripts/draw_canvas.py -t canvas/standard --line 12 --out results/canvas/trial12.png
"""

try:  # first: scripts/_project_env.py puts the project on sys.path and explains a missing .venv
    import _project_env  # noqa: F401
except ModuleNotFoundError:  # a copy of this script outside scripts/: the installed package serves
    pass

import json
import logging
import sys
from pathlib import Path

from common import cli, suites
from common.canvas.draw import draw_canvas
from common.canvas.setconfig import SetConfig
from common.canvas.shapes import Geometry, shape_from_dict
from common.config import Source, build
from common.errors import DataError
from common.jsonl import iter_jsonl
from common.trials.data import trials_path

log = logging.getLogger("draw_canvas")


def main(argv: list[str] | None = None) -> int:
    parser = cli.make_parser(__doc__)
    cli.add_set_option(parser, help="the canvas set: its name, canvas/<set>, or its directory")
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--key", type=int, help="Key of the trial to draw")
    which.add_argument("--line", type=int, help="line number (1 = first) of the trial to draw")
    parser.add_argument("--out", required=True, type=Path, help="PNG file to write")
    args = parser.parse_args(argv)
    cli.setup_logging(args.loglevel)

    testset = suites.resolve_set(args.testset, suite="canvas").data
    path = trials_path(testset)
    wanted = f"Key {args.key}" if args.key is not None else f"on line {args.line}"
    trial = next(
        (
            t
            for i, t in enumerate(iter_jsonl(path), 1)
            if (t.get("Key") == args.key if args.key is not None else i == args.line)
        ),
        None,
    )
    if trial is None or "shapes" not in trial:
        raise DataError(f"{path}: no canvas trial {wanted}")
    manifest = testset / "manifest.json"
    geometry = Geometry()
    if manifest.is_file():  # the set's own shape sizes
        settings = json.loads(manifest.read_text(encoding="utf-8"))["config"]
        geometry = build(SetConfig, settings, Source(str(manifest))).geometry
    draw_canvas(
        [shape_from_dict(s) for s in trial["shapes"]],
        geometry,
        args.out,
        title=f"Key {trial['Key']}: {trial.get('question', '')}",
    )
    log.info("wrote %s (%d shapes)", args.out, len(trial["shapes"]))
    return 0


if __name__ == "__main__":
    sys.exit(cli.run_main(main))
