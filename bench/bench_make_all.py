"""Time `make all` on a fresh clone of this checkout beside a fresh clone of an anchor revision.

Both clones are made from this repository, each set up untimed (`make env data`: the virtual
environment and the downloads, DATA_MIRROR passed through), then `make all` is timed in each,
alternately (which goes first alternates too), --runs times. Between runs each clone is brought
back to its state after the set-up, file by file: whatever `make all` added is deleted, caches
in directories that were already there included (.cache/: the canvas audit's tables), and what
it changed is copied back, so every run starts from the same fresh state. The time is the CPU
of make and every process it waited for (user and system, os.wait4), which the machine's load
changes far less than the wall time; the wall time is printed for scale. The figure is the
median of the per-run ratios, with their range.

In the measured clone, every parse of a results file is logged (RESULTS_READ_LOG,
``common.results.note_read``): the bench prints how many results files were read and how often
the most read one was, which is 1 when each answer is parsed once per `make all`.

$ python bench/bench_make_all.py --anchor cccdced
$ DATA_MIRROR=../shared python bench/bench_make_all.py --anchor main --runs 3
"""

try:  # first: bench/_project_env.py puts the project on sys.path and explains a missing .venv
    import _project_env  # noqa: F401
except ModuleNotFoundError:  # a copy of this script outside bench/: the installed package serves
    pass

import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from measure import load_line, run_timed, spread  # bench/measure.py

from common import cli, paths
from common.results import READ_LOG


def git(*args: str, cwd: Path) -> str:
    """Run git in ``cwd``; return its output (SystemExit with git's error when it fails)."""
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"git {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout


SKIPPED = (".git", ".venv")  # never touched by make all's recipes (the environment is set up once)


def tree(checkout: Path) -> dict[str, tuple[int, int] | None]:
    """Return every path under ``checkout`` but SKIPPED: a file's (size, modification time in ns),
    None for a directory."""
    found: dict[str, tuple[int, int] | None] = {}
    for top, dirs, files in os.walk(checkout):
        if top == str(checkout):
            dirs[:] = [d for d in dirs if d not in SKIPPED]
        for name in dirs:
            found[os.path.relpath(os.path.join(top, name), checkout)] = None
        for name in files:
            stat = os.lstat(os.path.join(top, name))
            found[os.path.relpath(os.path.join(top, name), checkout)] = (stat.st_size, stat.st_mtime_ns)
    return found


def prepare(revision: str, where: Path) -> dict[str, tuple[int, int] | None]:
    """Clone this repository at ``revision`` into ``where`` and run `make env data` there
    (untimed); keep a copy of the result beside it (``<where>.setup``, without SKIPPED) and return
    its tree: each run starts from that state (``reset``)."""
    git("clone", "--quiet", "--no-local", str(paths.ROOT), str(where), cwd=paths.ROOT)
    git("checkout", "--quiet", revision, cwd=where)
    env = dict(os.environ)
    if env.get("DATA_MIRROR"):  # a relative mirror is relative to this checkout, not to the clone
        env["DATA_MIRROR"] = str((paths.ROOT / env["DATA_MIRROR"]).resolve())
    done = subprocess.run(["make", "-s", "env", "data"], cwd=where, capture_output=True, text=True, env=env)
    if done.returncode:
        raise SystemExit(f"make env data failed in a clone of {revision}:\n{done.stderr[-3000:]}")
    shutil.copytree(where, setup_copy(where), symlinks=True, ignore=shutil.ignore_patterns(*SKIPPED))
    return tree(where)


def setup_copy(checkout: Path) -> Path:
    """Return where ``prepare`` keeps the state of ``checkout`` after its set-up."""
    return checkout.with_name(checkout.name + ".setup")


def reset(checkout: Path, setup: dict[str, tuple[int, int] | None]) -> None:
    """Bring ``checkout`` back to its state after the set-up: what a run added (results, caches
    inside directories that were there, compiled code) deleted, what it changed copied back."""
    now = tree(checkout)
    for name in sorted(now, reverse=True):  # a directory's contents before the directory
        path = checkout / name
        if name not in setup or (setup[name] is None) != (now[name] is None):
            if now[name] is None and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()
    for name, stat in setup.items():
        if stat is not None and now.get(name) != stat:
            (checkout / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(setup_copy(checkout) / name, checkout / name, follow_symlinks=False)
        elif stat is None:
            (checkout / name).mkdir(parents=True, exist_ok=True)


def time_make_all(checkout: Path, read_log: Path | None = None) -> tuple[float, float]:
    """Run `make all` in ``checkout`` (its parses of results files logged to ``read_log`` when
    given); return its CPU seconds (make and its children, user + system) and wall seconds.
    SystemExit with the end of its output when it fails."""
    env = {k: v for k, v in os.environ.items() if k not in ("RESULTS_DATABASE", READ_LOG, "MAKEFLAGS")}
    if read_log:
        env[READ_LOG] = str(read_log)
    return run_timed(["make", "all"], checkout, env)


def reads(read_log: Path) -> tuple[int, int, int]:
    """Return (results files parsed, the most parses of one file, records parsed) from a read log."""
    counts: Counter[str] = Counter()
    records = 0
    for line in read_log.read_text(encoding="utf-8").splitlines():
        path, count = line.rsplit("\t", 1)
        counts[path] += 1
        records += int(count)
    return len(counts), max(counts.values(), default=0), records


def main(argv: list[str] | None = None) -> int:
    parser = cli.make_parser(__doc__)
    parser.add_argument("--anchor", required=True, help="the revision to compare with (a commit, a branch)")
    parser.add_argument("--revision", default="HEAD", help="the revision measured (default: HEAD)")
    parser.add_argument("--runs", type=int, default=2, help="runs of each side to take the median of")
    args = parser.parse_args(argv)
    cli.setup_logging(args.loglevel)
    revisions = {"this": git("rev-parse", args.revision, cwd=paths.ROOT).strip()}
    revisions["anchor"] = git("rev-parse", args.anchor, cwd=paths.ROOT).strip()
    print(load_line())
    with tempfile.TemporaryDirectory(prefix="bench-make-all-") as scratch:
        checkouts = {side: Path(scratch) / side for side in revisions}
        kept = {side: prepare(revisions[side], checkouts[side]) for side in revisions}
        times: dict[str, list[tuple[float, float]]] = {side: [] for side in revisions}
        for run in range(args.runs):
            for side in list(revisions) if run % 2 == 0 else reversed(list(revisions)):
                reset(checkouts[side], kept[side])
                log = Path(scratch) / f"reads-{run}.log" if side == "this" else None
                times[side].append(time_make_all(checkouts[side], log))
                cpu, wall = times[side][-1]
                print(f"run {run + 1}, {side} ({revisions[side][:10]}): {cpu:.1f} s CPU, {wall:.0f} s wall")
                if log:
                    files, most, records = reads(log) if log.exists() else (0, 0, 0)
                    print(
                        f"  results files parsed: {files}, most parses of one: {most}, records: {records:,}"
                    )
    print(f"make all on a fresh clone, CPU seconds (user + system), {args.runs} runs each")
    for side in revisions:
        print(f"  {side:<7} {revisions[side][:10]}  {spread([t[0] for t in times[side]], '{:.1f}')}")
    ratios = [t[0] / a[0] for t, a in zip(times["this"], times["anchor"], strict=True)]
    print(f"  this / anchor: {spread(ratios)}")
    print(load_line())
    return 0


if __name__ == "__main__":
    sys.exit(cli.run_main(main))
