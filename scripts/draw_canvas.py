"""Draw the canvas of one trial of a canvas set as a PNG (the shapes, named, on the grid).

$ python scripts/draw_canvas.py -t data/canvas/standard --key 12 --out results/canvas/trial12.png
"""

try:  # first: scripts/_project_env.py puts the project on sys.path and explains a missing .venv
    import _project_env  # noqa: F401
except ModuleNotFoundError:  # a copy of this script outside scripts/: the installed package serves
    pass

import json
import logging
import sys
from pathlib import Path

from common import cli
from common.canvas.draw import draw_canvas
from common.canvas.generate import SetConfig
from common.canvas.shapes import Geometry, shape_from_dict
from common.config import Source, build
from common.errors import DataError
from common.jsonl import iter_jsonl
from common.worldsense.data import trials_path

log = logging.getLogger("draw_canvas")


def main(argv: list[str] | None = None) -> int:
    parser = cli.make_parser(__doc__)
    parser.add_argument("-t", "--testset", required=True, type=Path, help="canvas set directory")
    parser.add_argument("--key", required=True, type=int, help="Key of the trial to draw")
    parser.add_argument("--out", required=True, type=Path, help="PNG file to write")
    args = parser.parse_args(argv)
    cli.setup_logging(args.loglevel)

    path = trials_path(args.testset)
    trial = next((t for t in iter_jsonl(path) if t.get("Key") == args.key), None)
    if trial is None or "shapes" not in trial:
        raise DataError(f"{path}: no canvas trial with Key {args.key}")
    manifest = args.testset / "manifest.json"
    geometry = Geometry()
    if manifest.is_file():  # the set's own shape sizes
        settings = json.loads(manifest.read_text(encoding="utf-8"))["config"]
        geometry = build(SetConfig, settings, Source(str(manifest))).geometry
    draw_canvas([shape_from_dict(s) for s in trial["shapes"]], geometry, args.out,
                title=f"Key {args.key}: {trial.get('question', '')}")
    log.info("wrote %s (%d shapes)", args.out, len(trial["shapes"]))
    return 0


if __name__ == "__main__":
    sys.exit(cli.run_main(main))
