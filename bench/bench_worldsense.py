"""Time the WorldSense analysis, cold (empty cache) and warm (cache filled), against the release's script.

Each run is a fresh Python process (whole-process wall time, as a user sees it); inside it,
the time is split into imports, loading (parse + join) and computing (statistics + tables).
Variants run interleaved, so machine noise hits them alike; medians over --runs are reported,
with the speed-up as median anchor time / median our time, and "paired" as the median of the
per-run ratios (each run's anchor and ours ran back to back: steadier on a noisy machine).
The single-threaded bzip2 decompression of the trials (what the release pays; ours uses every
core) is timed alone too. The anchor is the release's own code (facebookresearch/worldsense:
analyse_results.py and the worldsense/ package), which is not part of this repository: pass a
directory holding a copy with --anchor. Its tables and ours must be identical (compared line
by line).

$ python bench/bench_worldsense.py -t data/worldsense/test_set --anchor /tmp/worldsense-release
$ python bench/bench_worldsense.py --runs 3          # ours only, cold vs warm
"""

try:  # first: bench/_project_env.py puts the project on sys.path and explains a missing .venv
    import _project_env  # noqa: F401
except ModuleNotFoundError:  # a copy of this script outside bench/: the installed package serves
    pass

import argparse
import contextlib
import io
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from measure import load_line, spread

from common import cli

RULE = "-" * 74


def child(variant: str, testset: str, cache_dir: str, anchor: str | None, out: str) -> dict[str, float]:
    """Run one analysis in this process; write its tables to ``out``; return phase times (s)."""
    t0 = time.perf_counter()
    if variant == "bzip2":  # the decompression every cold run pays, alone
        import bz2

        raw = (Path(testset) / "trials.jsonl.bz2").read_bytes()
        t1 = time.perf_counter()
        bz2.decompress(raw)
        return {"import": 0.0, "load": time.perf_counter() - t1, "compute": 0.0}
    if variant == "anchor":
        sys.path.insert(0, anchor)
        import pandas as pd
        from worldsense import benchmark, dataloading

        pd.set_option("display.width", 10_000)  # the release was run in a wide terminal
        pd.set_option("display.max_columns", None)
        t1 = time.perf_counter()
        files = dataloading.find_files_ending_in(str(Path(testset) / "results"), "___results.jsonl")
        with contextlib.redirect_stdout(io.StringIO()):
            trials = str(Path(testset) / "trials.jsonl.bz2")
            df = dataloading.load_and_assemble_trials_and_results(trials, files)
        t2 = time.perf_counter()
        buffer = io.StringIO()
        with contextlib.redirect_stdout(buffer):
            benchmark.analyse_results_df(df)
        text = buffer.getvalue()
    else:  # the set scored into a results database in cache_dir (cold: empty; warm: up to date)
        from common import analysis as shared
        from common.report import render_text
        from common.worldsense import analysis, report

        t1 = time.perf_counter()
        Path(cache_dir).mkdir(parents=True, exist_ok=True)
        _, scored = shared.load(testset, suite="worldsense", db=Path(cache_dir) / "results.sqlite")
        df = analysis.results_frame(scored)
        t2 = time.perf_counter()
        tables = report.release_tables(analysis.analyse_results_df(df))
        text = render_text(f"ANALYSING RESULTS OF TESTSET {testset}", tables)
    Path(out).write_text(text)
    return {"import": t1 - t0, "load": t2 - t1, "compute": time.perf_counter() - t2}


def tables(text: str) -> list[str]:
    """Return the table part of a report (from the first rule on), trailing spaces removed."""
    lines = [line.rstrip() for line in text.splitlines()]
    return [line for line in lines[lines.index(RULE) :] if line] if RULE in lines else []


def run(variant: str, args, cache_dir: str, out: Path) -> dict[str, float]:
    """Run ``variant`` in a fresh process; return its wall time and phase times."""
    cmd = [
        sys.executable,
        __file__,
        "--child",
        variant,
        "-t",
        args.testset,
        "--cache-dir",
        cache_dir,
        "--out",
        str(out),
        *(["--anchor", args.anchor] if args.anchor else []),
    ]
    start = time.perf_counter()
    done = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return {"wall": time.perf_counter() - start, **json.loads(done.stdout.splitlines()[-1])}


def main(argv: list[str] | None = None) -> int:
    parser = cli.make_parser(__doc__)
    parser.add_argument("-t", "--testset", default="data/worldsense/test_set", help="test set directory")
    parser.add_argument("--runs", type=int, default=5, help="runs per variant (median reported)")
    parser.add_argument("--anchor", help="directory with the release's analyse_results.py and worldsense/")
    parser.add_argument("--child", choices=["anchor", "cold", "warm", "bzip2"], help=argparse.SUPPRESS)
    parser.add_argument("--cache-dir", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child, args.testset, args.cache_dir, args.anchor, args.out)))
        return 0
    if not (Path(args.testset) / "results").is_dir():
        raise FileNotFoundError(2, "No such test set directory", args.testset)
    if args.anchor and not (Path(args.anchor) / "worldsense" / "dataloading.py").is_file():
        raise FileNotFoundError(2, "No release worldsense/ package in the anchor directory", args.anchor)
    variants = (["anchor"] if args.anchor else []) + ["cold", "warm", "bzip2"]
    times: dict[str, list[dict[str, float]]] = {v: [] for v in variants}
    load_before = load_line()
    with tempfile.TemporaryDirectory(prefix="bench_worldsense.") as tmp:
        warm_cache = str(Path(tmp) / "warm")
        run("cold", args, warm_cache, Path(tmp) / "fill.txt")  # fill the warm cache once
        for i in range(args.runs):
            for variant in variants:
                cache_dir = warm_cache if variant == "warm" else str(Path(tmp) / f"cold{i}")
                times[variant].append(run(variant, args, cache_dir, Path(tmp) / f"{variant}.txt"))
            walls = "  ".join(f"{v} {times[v][-1]['wall']:.2f}s" for v in variants)
            print(f"run {i + 1}/{args.runs}: {walls}", file=sys.stderr)
        outputs = {v: tables((Path(tmp) / f"{v}.txt").read_text()) for v in variants if v != "bzip2"}
    print(f"WorldSense analysis of {args.testset}: median of {args.runs} runs (seconds)")
    print(load_before)
    print(f"{'variant':<22}{'wall':>8}{'import':>8}{'load':>8}{'compute':>9}{'speed-up':>10}{'paired':>8}")
    medians = {v: {k: statistics.median(t[k] for t in times[v]) for k in times[v][0]} for v in variants}
    labels = {
        "anchor": "release (anchor)",
        "cold": "ours, cold cache",
        "warm": "ours, warm cache",
        "bzip2": "bz2.decompress alone",
    }
    for variant, label in labels.items():
        if variant in medians:
            m = medians[variant]
            compared = args.anchor and variant != "bzip2"
            ratio = f"{medians['anchor']['wall'] / m['wall']:.1f}x" if compared else "-"
            paired = (
                statistics.median(
                    a["wall"] / t["wall"] for a, t in zip(times["anchor"], times[variant], strict=True)
                )
                if compared
                else 0
            )
            paired_text = f"{paired:.1f}x" if compared else "-"
            print(
                f"{label:<22}{m['wall']:8.2f}{m['import']:8.2f}{m['load']:8.2f}{m['compute']:9.2f}"
                f"{ratio:>10}{paired_text:>8}"
            )
    if args.anchor:  # the release decompresses on one core; what is left is the rest of its work
        print(f"release minus its bzip2 time: {medians['anchor']['wall'] - medians['bzip2']['load']:.2f}")
        for variant in ("cold", "warm"):
            paired = [a["wall"] / t["wall"] for a, t in zip(times["anchor"], times[variant], strict=True)]
            print(f"speed-up of {labels[variant]} per run: {spread(paired, '{:.1f}x')}")
    print(load_line())
    same = all(outputs[v] == outputs["cold"] and outputs[v] for v in outputs)
    print("identical tables:", "yes" if same else "NO")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(cli.run_main(main))
