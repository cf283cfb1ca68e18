"""Time building the results database for the released WorldSense results: 87,048 trials x 4 models.

Each run is a fresh Python process running scripts/build_database.py --suite worldsense (whole
wall time, as `make db` pays it), on a copy of the test set that holds only the release's four
results files (GPT3.5, GPT4, Llama2-chat, Llama2-FT+1M: links, not copies), so runs made here
(the random baseline, a model) do not change what is measured. The script's own log splits the
time into reading and scoring (the trials' bzip2 decompression is most of it) and writing
(inserts in one transaction, then the indexes). Medians over --runs; the row counts are checked.

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


def main(argv: list[str] | None = None) -> int:
    parser = cli.make_parser(__doc__)
    parser.add_argument("-t", "--testset", type=Path, default=paths.DATA / "worldsense" / "test_set")
    parser.add_argument("--runs", type=int, default=5, help="runs to take the median of")
    args = parser.parse_args(argv)
    cli.setup_logging(args.loglevel)
    with tempfile.TemporaryDirectory() as scratch:
        data = released_copy(args.testset, Path(scratch) / "data")
        out = Path(scratch) / "results.sqlite"
        runs = [one_run(data, out) for _ in range(args.runs)]
        with closing(sqlite3.connect(out)) as conn:
            counts = {
                t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("items", "answers")
            }
        size = out.stat().st_size
    if counts != {"items": TRIALS, "answers": TRIALS * len(RELEASED)}:
        raise SystemExit(f"unexpected row counts: {counts}")
    median = {k: statistics.median(r[k] for r in runs) for k in ("wall", "read", "write")}
    print(f"released WorldSense results: {TRIALS:,} trials x {len(RELEASED)} models, {args.runs} runs")
    print(f"  rows: {counts['items']:,} items, {counts['answers']:,} answers; file {size / 1e6:.0f} MB")
    split = f"read and score {median['read']:.1f} s, write {median['write']:.1f} s"
    print(f"  median wall {median['wall']:.1f} s ({split})")
    walls = ", ".join(f"{run['wall']:.1f}" for run in runs)
    print(f"  every run: {walls} s")
    return 0


if __name__ == "__main__":
    sys.exit(cli.run_main(main))
