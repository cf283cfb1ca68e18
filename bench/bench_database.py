"""Time building the results database for the released WorldSense results: 87,048 trials x 4 models.

Each run is a fresh Python process running scripts/build_database.py --suite worldsense (whole
wall time, as `make db` pays it), on a copy of the test set that holds only the release's four
results files (GPT3.5, GPT4, Llama2-chat, Llama2-FT+1M: links, not copies), so runs made here
(the random baseline, a model) do not change what is measured. The script's own log splits the
time into reading and scoring (the trials' bzip2 decompression is most of it) and writing
(inserts in one transaction, then the indexes). Medians over --runs; the row counts are checked.

The anchor, in the same runs and alternating with the build: a fresh process that only reads
the build's inputs, decompressing the trials and parsing every line of them and of the four
results files as JSON (what any build of this database must do at least); the build is
reported as a ratio to it, per run, with the spread and the machine's load.

$ python bench/bench_database.py
$ python bench/bench_database.py --runs 3
"""

try:  # first: bench/_project_env.py puts the project on sys.path and explains a missing .venv
    import _project_env  # noqa: F401
except ModuleNotFoundError:  # a copy of this script outside bench/: the installed package serves
    pass

import os
import re
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import closing
from pathlib import Path

from measure import load_line, spread

from common import cli, paths

RELEASED = ("GPT3.5", "GPT4", "Llama2-chat", "Llama2-FT+1M")  # the release's results files
TRIALS = 87_048


def released_copy(testset: Path, root: Path) -> Path:
    """Return a data root holding worldsense/test_set with the trials and the release's four
    results files only (symbolic links)."""
    target = root / "worldsense" / "test_set"
    (target / "results").mkdir(parents=True)
    (target / "trials.jsonl.bz2").symlink_to((testset / "trials.jsonl.bz2").resolve())
    for model in RELEASED:
        name = f"basic___{model}___results.jsonl"
        (target / "results" / name).symlink_to((testset / "results" / name).resolve())
    return root


def one_run(data: Path, out: Path) -> dict[str, float]:
    """Build the database once in a fresh process; return its wall time and the script's split."""
    command = [sys.executable, str(paths.ROOT / "scripts" / "build_database.py"), "--suite", "worldsense"]
    command += ["--data-root", str(data), "--out", str(out), "--metadata", str(out.with_suffix(".json"))]
    start = time.perf_counter()
    done = subprocess.run(
        command, capture_output=True, text=True, check=True, env={**os.environ, "LOGLEVEL": "INFO"}
    )
    wall = time.perf_counter() - start
    read, write = map(float, re.search(r"scored in ([\d.]+) s, written in ([\d.]+) s", done.stderr).groups())
    return {"wall": wall, "read": read, "write": write}


READ_INPUTS = """
import bz2, json, sys
from pathlib import Path
testset = Path(sys.argv[1])
lines = sum(1 for line in bz2.open(testset / "trials.jsonl.bz2", "rt") if json.loads(line))
for results in sorted((testset / "results").glob("*.jsonl")):
    lines += sum(1 for line in results.open() if json.loads(line))
print(lines)
"""


def anchor_run(data: Path) -> float:
    """Read the build's inputs once in a fresh process (``READ_INPUTS``); return its wall time."""
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", READ_INPUTS, str(data / "worldsense" / "test_set")],
        capture_output=True,
        text=True,
        check=True,
    )
    wall = time.perf_counter() - start
    if int(done.stdout) != TRIALS * (1 + len(RELEASED)):
        raise SystemExit(f"the anchor read {done.stdout.strip()} lines")
    return wall


def main(argv: list[str] | None = None) -> int:
    parser = cli.make_parser(__doc__)
    parser.add_argument("-t", "--testset", type=Path, default=paths.DATA / "worldsense" / "test_set")
    parser.add_argument("--runs", type=int, default=5, help="runs to take the median of")
    args = parser.parse_args(argv)
    cli.setup_logging(args.loglevel)
    with tempfile.TemporaryDirectory() as scratch:
        data = released_copy(args.testset, Path(scratch) / "data")
        out = Path(scratch) / "results.sqlite"
        load_before = load_line()
        runs, anchors = [], []
        for run in range(args.runs):  # alternating which goes first
            if run % 2:
                anchors.append(anchor_run(data))
            runs.append(one_run(data, out))
            if not run % 2:
                anchors.append(anchor_run(data))
        with closing(sqlite3.connect(out)) as conn:
            counts = {
                t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("items", "answers")
            }
        size = out.stat().st_size
    if counts != {"items": TRIALS, "answers": TRIALS * len(RELEASED)}:
        raise SystemExit(f"unexpected row counts: {counts}")
    median = {k: statistics.median(r[k] for r in runs) for k in ("wall", "read", "write")}
    print(f"released WorldSense results: {TRIALS:,} trials x {len(RELEASED)} models, {args.runs} runs")
    print(f"  {load_before}")
    print(f"  rows: {counts['items']:,} items, {counts['answers']:,} answers; file {size / 1e6:.0f} MB")
    split = f"read and score {median['read']:.1f} s, write {median['write']:.1f} s"
    print(f"  build: wall {spread([run['wall'] for run in runs], '{:.1f} s')} (medians: {split})")
    print(f"  anchor, reading the inputs alone: wall {spread(anchors, '{:.1f} s')}")
    ratio = [run["wall"] / anchor for run, anchor in zip(runs, anchors, strict=True)]
    print(f"  build / anchor per run: {spread(ratio, '{:.1f}x')}")
    print(f"  {load_line()}")
    return 0


if __name__ == "__main__":
    sys.exit(cli.run_main(main))
