"""Benchmark drawing a canvas set's pictures, against generating the set (the anchor).

What an image modality adds to `make all` for a canvas set: every distinct canvas drawn once
into the set's picture store (content-addressed PNGs; the image and text+image modalities
share them). Measured on the standard set (2,424 trials): generating its trials in memory (the
anchor, work `make all` already does), then drawing and writing its pictures into an empty
store, alternating, several repetitions; medians with their spread, the ratio to the anchor,
and the machine's load. For scale, drawing one picture per trial (not per distinct canvas).
Target: at most 60 s for all modalities on an idle machine.

$ python bench/bench_pictures.py
$ python bench/bench_pictures.py --repetitions 7
"""

try:  # first: bench/_project_env.py puts the project on sys.path and explains a missing .venv
    import _project_env  # noqa: F401
except ModuleNotFoundError:  # a copy of this script outside bench/: the installed package serves
    pass

import os
import statistics
import sys
import tempfile
import time

from common import cli
from common.canvas.generate import generate_set, load_config
from common.canvas.picture import draw_picture, name_of
from common.canvas.shapes import shape_from_dict
from common.paths import CONFIGS
from common.pictures.store import png_bytes, save_picture


def draw_store(trials: list[dict], geometry, directory: str) -> int:
    """Draw every distinct canvas of ``trials`` into the store ``directory``; return how many."""
    names = set()
    for trial in trials:
        shapes = [shape_from_dict(shape) for shape in trial["shapes"]]
        name = name_of(shapes, geometry)
        save_picture(directory, name, lambda shapes=shapes: draw_picture(shapes, geometry))
        names.add(name)
    return len(names)


def main(argv: list[str] | None = None) -> int:
    parser = cli.make_parser(__doc__)
    parser.add_argument("--repetitions", type=int, default=5, help="runs of each, alternating")
    parser.add_argument("--set", default="standard", help="canvas set config (configs/canvas/<set>.yaml)")
    args = parser.parse_args(argv)
    cli.setup_logging(args.loglevel)

    config = load_config(CONFIGS / "canvas" / f"{args.set}.yaml")
    anchor, store, pictures = [], [], 0
    load_before = os.getloadavg()[0]
    for _ in range(args.repetitions):
        start = time.perf_counter()
        trials = generate_set(config).trials
        anchor.append(time.perf_counter() - start)
        with tempfile.TemporaryDirectory() as directory:
            start = time.perf_counter()
            pictures = draw_store(trials, config.geometry, directory)
            store.append(time.perf_counter() - start)
    start = time.perf_counter()
    for trial in trials:  # one picture per trial, kept in memory: what a per-request drawing would cost
        png_bytes(draw_picture([shape_from_dict(s) for s in trial["shapes"]], config.geometry))
    per_trial = time.perf_counter() - start
    ratios = [s / a for s, a in zip(store, anchor, strict=True)]

    def spread(values: list[float]) -> str:
        return f"median {statistics.median(values):.2f} [{min(values):.2f}, {max(values):.2f}]"

    load_after = os.getloadavg()[0]
    print(
        f"canvas/{args.set}: {len(trials):,} trials, {pictures:,} distinct canvases; {args.repetitions} runs"
    )
    print(f"  generate the set (anchor): {spread(anchor)} s")
    per_picture = 1000 * statistics.median(store) / pictures
    print(f"  draw its pictures:         {spread(store)} s ({per_picture:.1f} ms a picture)")
    print(f"  ratio to the anchor: {spread(ratios)}")
    print(f"  one picture per trial instead: {per_trial:.2f} s ({len(trials):,} drawings)")
    cpus = os.cpu_count()
    print(f"  load average (1 min) before / after: {load_before:.2f} / {load_after:.2f} on {cpus} CPUs")
    met = "met" if statistics.median(store) <= 60 else "NOT met"
    print(f"  target, at most 60 s for every modality (image and text+image share the store): {met}")
    return 0


if __name__ == "__main__":
    sys.exit(cli.run_main(main))
