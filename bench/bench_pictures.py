"""Benchmark generating a canvas set in every modality against generating it in text (the anchor).

What picture modalities add to `make all` for a canvas set: the prompts of every trial in
`image` and `text+image` and every canvas they show (its own and its other-canvas examples')
drawn once into the set's picture store (content-addressed PNGs). Measured on the standard set
(2,424 trials): the generate stage (`common.canvas.generate.generate`, what `make` runs: trials,
manifest, pictures, written into a fresh directory) of the set's config as it is (text, the
anchor) and with `modality: [text, image, text+image]`, alternating, several repetitions;
medians with their spread, the added seconds, the ratio to the anchor, and the machine's load;
also each generation's CPU seconds (one thread: what its wall time is on an idle machine, which
a shared machine seldom is). Target: at most 60 s added on an idle machine.

$ python bench/bench_pictures.py
$ python bench/bench_pictures.py --repetitions 5
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
from pathlib import Path

from common import cli
from common.canvas import shown
from common.canvas.generate import generate
from common.paths import CONFIGS
from common.suite import SetRef

EVERY = "modality: [text, image, text+image]\n"
DRAWING: list[float] = []  # seconds spent drawing and writing the pictures, per generation


def timed_drawing(draw):
    """Return ``draw`` (``shown.draw_pictures``) recording its seconds in DRAWING."""

    def wrapper(*args, **kwargs):
        start = time.perf_counter()
        try:
            return draw(*args, **kwargs)
        finally:
            DRAWING.append(time.perf_counter() - start)

    return wrapper


def generate_once(config_text: str, directory: Path) -> tuple[float, float, int]:
    """Return ``(seconds, cpu_seconds, pictures)``: generating the set of ``config_text`` into
    ``directory``, its wall time and this process's CPU time (one thread: on an idle machine the
    two agree, so the CPU time is what the idle wall time would be on a loaded one)."""
    config = directory / "set.yaml"
    config.write_text(config_text)
    ref = SetRef("canvas", "bench", directory / "data", directory / "results", config)
    start, cpu = time.perf_counter(), time.process_time()
    generate(ref)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    return seconds, cpu, len(list((directory / "data" / "images").glob("*.png")))


def spread(values: list[float]) -> str:
    """Return ``median [min, max]`` of ``values``."""
    return f"median {statistics.median(values):.2f} [{min(values):.2f}, {max(values):.2f}]"


def main(argv: list[str] | None = None) -> int:
    parser = cli.make_parser(__doc__)
    parser.add_argument("--repetitions", type=int, default=3, help="runs of each, alternating")
    parser.add_argument("--set", default="standard", help="canvas set config (configs/canvas/<set>.yaml)")
    args = parser.parse_args(argv)
    cli.setup_logging("WARNING")

    shown.draw_pictures = timed_drawing(shown.draw_pictures)  # generate calls it through the module
    lines = (CONFIGS / "canvas" / f"{args.set}.yaml").read_text().splitlines(keepends=True)
    text = "".join(line for line in lines if not line.startswith("modality:"))  # the set in text
    anchor, every, drawing, pictures = [], [], [], 0
    anchor_cpu, every_cpu = [], []
    load_before = os.getloadavg()[0]
    for _ in range(args.repetitions):
        with tempfile.TemporaryDirectory() as directory:
            seconds, cpu, _ = generate_once(text, Path(directory))
            anchor.append(seconds)
            anchor_cpu.append(cpu)
        with tempfile.TemporaryDirectory() as directory:
            DRAWING.clear()
            seconds, cpu, pictures = generate_once(text + EVERY, Path(directory))
            every.append(seconds)
            every_cpu.append(cpu)
            drawing.append(sum(DRAWING))
    load_after = os.getloadavg()[0]
    added = [e - a for e, a in zip(every, anchor, strict=True)]
    ratios = [e / a for e, a in zip(every, anchor, strict=True)]
    print(f"canvas/{args.set}: generated {args.repetitions} times each, alternating; {pictures:,} pictures")
    print(f"  text only (anchor):   {spread(anchor)} s")
    print(f"  every modality:       {spread(every)} s")
    each = 1000 * statistics.median(added) / pictures
    print(f"  added by the pictures: {spread(added)} s ({each:.1f} ms a picture)")
    print(f"  of which drawing and writing the pictures: {spread(drawing)} s")
    print(f"  ratio to the anchor:  {spread(ratios)}")
    added_cpu = [e - a for e, a in zip(every_cpu, anchor_cpu, strict=True)]
    print(f"  CPU seconds (the idle machine's wall time): text {spread(anchor_cpu)}, every modality")
    print(f"    {spread(every_cpu)}, added {spread(added_cpu)}")
    cpus = os.cpu_count()
    print(f"  load average (1 min) before / after: {load_before:.2f} / {load_after:.2f} on {cpus} CPUs")
    met = "met" if statistics.median(added) <= 60 else "NOT met"
    met_cpu = "met" if statistics.median(added_cpu) <= 60 else "NOT met"
    print(f"  target, at most 60 s added for every modality: {met} in wall time, {met_cpu} in CPU time")
    return 0


if __name__ == "__main__":
    sys.exit(cli.run_main(main))
