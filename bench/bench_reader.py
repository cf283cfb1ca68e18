"""Time the canvas reader and the canvas share of the scoring stage, against an anchor checkout.

Two measures, each side by side with the anchor's when --anchor is given (a checkout of older
code whose `make all` is done, or whose data/ and results/ link to this one's), the two taken
alternately (which goes first alternates too), a fresh process each time, the median CPU time
(user + system) of --runs with its spread:

- the reader: every distinct reply of the canvas results files (the reply scored: the last raw
  completion, with its trial's options and question) read once from an empty cache, as a full
  build reads them; then the replies of the graded table (tests/canvas/graded_replies.jsonl:
  long and tricky replies, as real models write them) read 20 times, the cache emptied before
  each pass. The time is the reading alone (the process's CPU around the loop), the same
  replies on both sides; the anchor's reader is ``common.canvas.reader.extract``, or
  ``common.canvas.scoring.extract`` in code from before the reader had a module of its own;
- the scoring stage: every canvas results file scored into an empty results database
  (scripts/score_results.py -t canvas), each checkout with its own code and results.

$ python bench/bench_reader.py
$ python bench/bench_reader.py --anchor ../anchor --runs 5
"""

try:  # first: bench/_project_env.py puts the project on sys.path and explains a missing .venv
    import _project_env  # noqa: F401
except ModuleNotFoundError:  # a copy of this script outside bench/: the installed package serves
    pass

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from measure import load_line, run_timed, spread  # bench/measure.py

from common import cli, paths
from common.canvas.scoring import response_text
from common.canvas.tasks import coordinate, existence, existence_tracking, transitivity
from common.results import find_results_files, read_results
from common.worldsense.data import load_testset

TABLE = paths.ROOT / "tests" / "canvas" / "graded_replies.jsonl"
PASSES = 20  # passes over the graded table (it is read in milliseconds)
FIXED = {  # the vocabularies the table leaves out: the tasks' fixed ones
    "existence": existence.ANSWERS,
    "existence_tracking": existence_tracking.ANSWERS,
    "transitivity": transitivity.ANSWERS,
    "coordinate": coordinate.ANSWERS,
}
READ = """
import json, sys, time
sys.path.insert(0, ".")
try:
    from common.canvas.reader import _read, extract
except ImportError:
    from common.canvas.scoring import _read, extract
cases, passes = json.load(open(sys.argv[1])), int(sys.argv[2])
start = time.process_time()
for _ in range(passes):
    _read.cache_clear()
    for reply, options, question in cases:
        extract(reply, options, question)
print(time.process_time() - start)
"""


def canvas_replies() -> list[tuple[str, list[str], str | None]]:
    """Return every distinct (reply, options, question) of this checkout's canvas results files."""
    found: dict[tuple[str, tuple[str, ...], str | None], None] = {}
    for data in sorted(p for p in (paths.DATA / "canvas").iterdir() if (p / "trials.jsonl.bz2").is_file()):
        trials = load_testset(data)
        questions = trials["question"] if "question" in trials else [None] * len(trials)
        by_key = {
            k: (tuple(o), q) for k, o, q in zip(trials["Key"], trials["expectedresp"], questions, strict=True)
        }
        for file in find_results_files(paths.RESULTS / "canvas" / data.name):
            for record in read_results(file, all_draws=True):
                if record["Key"] in by_key and not record.get("refused"):
                    options, question = by_key[record["Key"]]
                    found[(response_text(record), options, question)] = None
    return [(reply, list(options), question) for reply, options, question in found]


def graded_replies() -> list[tuple[str, list[str], str | None]]:
    """Return the graded table's replies with their options and questions."""
    cases = [json.loads(line) for line in TABLE.read_text(encoding="utf-8").splitlines()]
    return [(c["reply"], c.get("options") or FIXED[c["task"]], c.get("question")) for c in cases]


def python_of(checkout: Path) -> str:
    """Return the Python of a checkout's environment (its .venv), or this one's."""
    venv = checkout / ".venv" / "bin" / "python"
    return str(venv) if venv.exists() else sys.executable


def read_seconds(checkout: Path, cases: Path, passes: int) -> float:
    """Return the CPU seconds ``checkout``'s reader takes over the cases in ``cases``."""
    done = subprocess.run(
        [python_of(checkout), "-c", READ, str(cases), str(passes)],
        cwd=checkout,
        capture_output=True,
        text=True,
    )
    if done.returncode:
        raise SystemExit(f"{checkout}: the reader failed:\n{done.stderr[-2000:]}")
    return float(done.stdout.split()[-1])


def score_seconds(checkout: Path, database: Path) -> float:
    """Return the CPU seconds of scoring every canvas results file into an empty database."""
    database.unlink(missing_ok=True)
    command = [python_of(checkout), "scripts/score_results.py", "-t", "canvas", "--database", str(database)]
    env = {k: v for k, v in os.environ.items() if k != "RESULTS_DATABASE"}
    return run_timed(command, checkout, env)[0]


def main(argv: list[str] | None = None) -> int:
    parser = cli.make_parser(__doc__)
    parser.add_argument("--anchor", type=Path, help="a checkout of older code, its `make all` done")
    parser.add_argument("--runs", type=int, default=3, help="runs to take the median of")
    args = parser.parse_args(argv)
    cli.setup_logging(args.loglevel)
    sides = [("this", paths.ROOT)] + ([("anchor", args.anchor.resolve())] if args.anchor else [])
    with tempfile.TemporaryDirectory() as scratch:
        results, table = Path(scratch) / "results.json", Path(scratch) / "table.json"
        replies = canvas_replies()
        results.write_text(json.dumps(replies), encoding="utf-8")
        table.write_text(json.dumps(graded_replies()), encoding="utf-8")
        print(load_line())
        times: dict[tuple[str, str], list[float]] = {}
        for run in range(args.runs):
            for name, checkout in sides if run % 2 == 0 else reversed(sides):
                database = Path(scratch) / f"{name}.sqlite"
                taken = {
                    "results": read_seconds(checkout, results, 1),
                    "table": read_seconds(checkout, table, PASSES),
                    "scoring": score_seconds(checkout, database),
                }
                for measure, seconds in taken.items():
                    times.setdefault((measure, name), []).append(seconds)
    labels = {
        "results": f"reader, {len(replies):,} distinct replies of the results files",
        "table": f"reader, the graded table x {PASSES}",
        "scoring": "scoring stage, every canvas results file",
    }
    print(f"CPU seconds, median of {args.runs} runs (min to max)")
    for measure, label in labels.items():
        print(f"  {label}")
        for name, _ in sides:
            print(f"    {name:<7} {spread(times[(measure, name)])}")
        if args.anchor:
            ratios = [
                a / t for a, t in zip(times[(measure, "anchor")], times[(measure, "this")], strict=True)
            ]
            print(f"    anchor / this: {spread(ratios, '{:.2f}x')}")
    print(load_line())
    return 0


if __name__ == "__main__":
    sys.exit(cli.run_main(main))
