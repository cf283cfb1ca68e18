"""Time the scoring stage (scripts/score_results.py) against the anchor's whole-database build.

Three measures, each the median CPU time (user + system, of the process and its children) over
--runs fresh processes, printed side by side with the anchor's where it has one:

- full build: every results file of every suite scored into an empty database. This checkout
  runs scripts/score_results.py over its own results; the anchor (--anchor: a checkout of the
  code before issue 30, with its own `make all` done) runs its scripts/build_database.py over
  its own. The ratio is per build and per answer (the two checkouts need not hold the same runs);
- after one canvas config change: a copy of the full database in which canvas/standard's data
  fingerprint differs (what regenerating the set from an edited config leaves), updated: the
  set's items are read again and each of its runs rescored, nothing else. Target: at most 10%
  of a full build;
- nothing changed: the up-to-date database updated again (every file's size and time checked);
- the floor (``build_floor.py``): every file the full build opened under data/ and results/
  (traced with an audit hook) read, decompressed and parsed, and every row of the database it
  wrote inserted into an empty one, with no scoring. The anchor's time over the floor is the most
  any build that reads every input and writes every row with json, bz2 and sqlite3 could gain.

Then the database's shape: answers, runs, file size, and texts stored more than once (0: each
distinct text is a row of ``texts`` that items and answers refer to).

$ python bench/bench_database.py
$ python bench/bench_database.py --anchor ../anchor --runs 3
"""

try:  # first: bench/_project_env.py puts the project on sys.path and explains a missing .venv
    import _project_env  # noqa: F401
except ModuleNotFoundError:  # a copy of this script outside bench/: the installed package serves
    pass

import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
from contextlib import closing
from pathlib import Path

from measure import load_line, run_timed, spread  # bench/measure.py

from common import cli, paths

CHANGED_SET = ("canvas", "standard")


def cpu_seconds(command: list[str], cwd: Path) -> float:
    """Run ``command`` in ``cwd`` (``measure.run_timed``, without RESULTS_DATABASE); return its CPU time."""
    env = {k: v for k, v in os.environ.items() if k != "RESULTS_DATABASE"}
    return run_timed(command, cwd, env)[0]


def python_of(checkout: Path) -> str:
    """Return the Python of a checkout's environment (its .venv), or this one's."""
    venv = checkout / ".venv" / "bin" / "python"
    return str(venv) if venv.exists() else sys.executable


def full_build(checkout: Path, database: Path, anchor: bool) -> float:
    """Build ``database`` from nothing with ``checkout``'s code and results; return the CPU time."""
    database.unlink(missing_ok=True)
    if anchor:
        script = ["scripts/build_database.py", "--out", str(database)]
        script += ["--metadata", str(database.with_suffix(".json"))]
    else:
        script = ["scripts/score_results.py", "--database", str(database)]
    return cpu_seconds([python_of(checkout), *script], checkout)


TRACE = """
import os, runpy, sys
out, root, database = sys.argv[1], os.path.realpath(sys.argv[2]), os.path.realpath(sys.argv[3])
inside = tuple(os.path.join(root, d) + os.sep for d in ("data", "results"))
opened = {}
WRITE = os.O_WRONLY | os.O_RDWR


def hook(event, args):
    if event != "open" or not isinstance(args[0], (str, os.PathLike)):
        return
    path, mode, flags = args
    if (mode is None and flags & WRITE) or (mode is not None and set(str(mode)) & set("wax+")):
        return
    real = os.path.realpath(path)
    if real.startswith(inside) and not real.startswith(database) and os.path.isfile(real):
        opened.setdefault(real, None)


sys.addaudithook(hook)
sys.argv = ["scripts/score_results.py", "--database", database]
try:
    runpy.run_path("scripts/score_results.py", run_name="__main__")
except SystemExit as exc:
    if exc.code:
        raise
with open(out, "w", encoding="utf-8") as handle:
    handle.write("".join(path + "\\n" for path in opened))
"""


def build_inputs(database: Path, listing: Path) -> int:
    """Build ``database`` from nothing once more (untimed), writing to ``listing`` every file under
    data/ and results/ the build opened to read, in the order first opened; return how many."""
    database.unlink(missing_ok=True)
    command = [python_of(paths.ROOT), "-c", TRACE, str(listing), str(paths.ROOT), str(database)]
    run_timed(command, paths.ROOT, {k: v for k, v in os.environ.items() if k != "RESULTS_DATABASE"})
    return len(listing.read_text(encoding="utf-8").splitlines())


def floor(database: Path, listing: Path) -> float:
    """Return the CPU seconds of ``build_floor.py`` (reading the inputs, inserting the rows)."""
    command = [python_of(paths.ROOT), str(Path(__file__).with_name("build_floor.py"))]
    with tempfile.TemporaryFile(mode="w+") as output:
        subprocess.run(
            [*command, "--inputs", str(listing), "--database", str(database)], check=True, stdout=output
        )
        output.seek(0)
        lines = dict(line.split() for line in output if line.strip())
    return float(lines["floor"])


def update(database: Path, change: bool) -> float:
    """Update a copy of the full ``database``: after changing canvas/standard's data fingerprint
    when ``change``; return the CPU time."""
    copy = database.with_name("update.sqlite")
    shutil.copyfile(database, copy)
    if change:
        with closing(sqlite3.connect(copy)) as conn, conn:
            done = conn.execute(
                "UPDATE sets SET fingerprint = 'edited config' WHERE suite = ? AND set_name = ?", CHANGED_SET
            )
            if done.rowcount != 1:
                raise SystemExit(f"{'/'.join(CHANGED_SET)} is not in the database: run `make all` first")
    return cpu_seconds(
        [python_of(paths.ROOT), "scripts/score_results.py", "--database", str(copy)], paths.ROOT
    )


def shape(database: Path, anchor: bool) -> dict[str, float]:
    """Return a database's answers, runs, size in MB and (this checkout's) texts stored twice."""
    with closing(sqlite3.connect(database)) as conn:
        counts = {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("answers", "runs")}
        if not anchor:
            counts["duplicated texts"] = conn.execute(
                "SELECT count(*) - count(DISTINCT text) FROM texts"
            ).fetchone()[0]
    counts["MB"] = database.stat().st_size / 1e6
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = cli.make_parser(__doc__)
    parser.add_argument(
        "--anchor", type=Path, help="a checkout of the anchor's code with its `make all` done"
    )
    parser.add_argument("--runs", type=int, default=3, help="runs to take the median of")
    args = parser.parse_args(argv)
    cli.setup_logging(args.loglevel)
    if args.anchor and not (args.anchor / "scripts" / "build_database.py").is_file():
        raise SystemExit(
            f"{args.anchor} has no scripts/build_database.py: --anchor names the code before issue 30"
        )
    with tempfile.TemporaryDirectory() as scratch:
        ours, theirs = Path(scratch) / "ours.sqlite", Path(scratch) / "anchor.sqlite"
        times: dict[str, list[float]] = {"full": [], "anchor": [], "change": [], "none": [], "floor": []}
        print(load_line())
        listing = Path(scratch) / "opened.txt"
        inputs = build_inputs(ours, listing)
        for run in range(args.runs):  # interleaved (and which goes first alternates): the same load
            sides = [("full", paths.ROOT, ours, False)]
            if args.anchor:
                sides.append(("anchor", args.anchor.resolve(), theirs, True))
            for name, checkout, database, is_anchor in sides if run % 2 == 0 else reversed(sides):
                times[name].append(full_build(checkout, database, anchor=is_anchor))
            times["change"].append(update(ours, change=True))
            times["none"].append(update(ours, change=False))
            times["floor"].append(floor(ours, listing))
        median = {k: statistics.median(v) for k, v in times.items() if v}
        mine = shape(ours, anchor=False)
        anchor = shape(theirs, anchor=True) if args.anchor else None

    print(f"scoring stage, CPU seconds (median of {args.runs} runs; every run in brackets)")
    row = "  {:<28} {:>8.1f} s  [{}]"
    every = {k: ", ".join(f"{t:.1f}" for t in v) for k, v in times.items()}
    print(row.format("full build", median["full"], every["full"]) + f"  {mine['answers']:,} answers")
    if anchor:
        print(
            row.format("full build (anchor)", median["anchor"], every["anchor"])
            + f"  {anchor['answers']:,} answers"
        )
        ratios = [a / f for a, f in zip(times["anchor"], times["full"], strict=True)]
        per = anchor["answers"] and mine["answers"] / anchor["answers"]
        print(f"  {'':<28} anchor / this per build: {spread(ratios, '{:.1f}x')}", end="")
        print(f"; per answer: {statistics.median(ratios) * per:.1f}x")
    print(row.format("floor", median["floor"], every["floor"]), end="")
    print(f"  {inputs} input files read, every row inserted, nothing scored")
    if anchor:
        print(f"  {'':<28} anchor / floor per build: {median['anchor'] / median['floor']:.1f}x", end="")
        print(f"; per answer: {median['anchor'] / median['floor'] * per:.1f}x (the most a build could gain)")
    print(row.format("after a canvas config change", median["change"], every["change"]), end="")
    print(f"  {100 * median['change'] / median['full']:.1f}% of a full build")
    print(row.format("nothing changed", median["none"], every["none"]), end="")
    print(f"  {100 * median['none'] / median['full']:.1f}% of a full build")
    print(
        f"database: {mine['runs']} runs, {mine['MB']:.0f} MB, texts stored twice: {mine['duplicated texts']}",
        end="",
    )
    print(f" (anchor: {anchor['runs']} runs, {anchor['MB']:.0f} MB)" if anchor else "")
    print(load_line())
    return 0


if __name__ == "__main__":
    sys.exit(cli.run_main(main))
