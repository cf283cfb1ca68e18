"""Run the tests that start processes or servers again and again beside a CPU load.

A shared machine is often loaded, and a test that starts a process or a server is the kind that
passes on an idle machine and fails on a busy one (a fixed sleep, a timeout in seconds, a race
its author never saw). This finds those tests by what they do (``tests/process_tests.py`` notes
every fast test that starts a process or opens a socket), starts --load busy loops (``python -c
'while True: pass'``, each wanting a whole core), then runs the tests found --reps times in a
row, split into --shards pytest processes that run side by side (each shard's tests still run
in a row, in their usual order). It prints one line per repetition (passed, failed, seconds,
load average) and, at the end, every test that failed and how often; exit 1 when any did. Logs
of the failing shards are kept under --out.

$ make test-stress                       # 20 repetitions under a load of 8
$ .venv/bin/python tests/stress.py --reps 3 --load 8 -k cache
$ .venv/bin/python tests/stress.py --tests found.txt --reps 20 --shards 4
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FAST = "not slow and not integration"  # what `make test` runs


def find_tests(out: Path, keyword: str | None) -> list[str]:
    """Run the fast tests once (idle: no load yet) with the noting plugin; return the node ids of
    those that started a process or opened a socket, in the order they ran."""
    found = out / "process_tests.txt"
    command = [sys.executable, "-m", "pytest", "-q", "-p", "tests.process_tests"]
    command += ["-m", FAST, *(["-k", keyword] if keyword else [])]
    print(f"finding the tests that start processes or servers: {' '.join(command[1:])}", flush=True)
    done = subprocess.run(
        command, cwd=ROOT, env={**os.environ, "PROCESS_TESTS_OUT": str(found)}, capture_output=True, text=True
    )
    if done.returncode != 0 or not found.is_file():
        sys.stdout.write(done.stdout[-4000:])
        raise SystemExit("the tests fail without any load: fix them first")
    return read_ids(found)


def read_ids(path: Path) -> list[str]:
    """Return the node ids of a file, one per line (an id may hold spaces: its parameters)."""
    return [line for line in path.read_text().splitlines() if line.strip()]


def start_load(load: int) -> list[subprocess.Popen]:
    """Start ``load`` busy loops; return them (the caller stops them)."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(load)]


def run_rep(tests: list[str], shards: int, out: Path, rep: int) -> tuple[list[str], list[str]]:
    """Run ``tests`` once, split round-robin into ``shards`` pytest processes side by side; return
    the node ids that passed and those that failed (or errored), reading each shard's JUnit XML."""
    running = []
    for shard in range(shards):
        part = tests[shard::shards]
        if not part:
            continue
        xml, log = out / f"rep{rep}-shard{shard}.xml", out / f"rep{rep}-shard{shard}.log"
        command = [sys.executable, "-m", "pytest", "-q", f"--junitxml={xml}", *part]
        with log.open("w") as sink:
            process = subprocess.Popen(command, cwd=ROOT, stdout=sink, stderr=subprocess.STDOUT)
        running.append((process, part, xml, log))
    passed, failed = [], []
    for process, part, xml, log in running:
        code = process.wait()
        ok, bad = read_junit(xml) if xml.is_file() else ([], [])
        if code not in (0, 1) or len(ok) + len(bad) != len(part):  # not every test ran
            bad.append(f"{log.name}: pytest exit {code}, {len(ok) + len(bad)} of {len(part)} ran")
        passed += ok
        failed += bad
        if not bad:
            log.unlink()
    return passed, failed


def read_junit(xml: Path) -> tuple[list[str], list[str]]:
    """Return the tests of a JUnit XML report that passed (or were skipped) and those that failed."""
    passed, failed = [], []
    for case in ET.parse(xml).getroot().iter("testcase"):
        name = f"{case.get('classname')}::{case.get('name')}"
        bad = case.find("failure") is not None or case.find("error") is not None
        (failed if bad else passed).append(name)
    return passed, failed


def load_average() -> str:
    """Return the 1, 5 and 15 minute load averages as text."""
    return " ".join(f"{v:.1f}" for v in os.getloadavg())


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--reps", type=int, default=20, help="times to run the tests in a row (20)")
    parser.add_argument("--load", type=int, default=8, help="busy loops beside them (8)")
    parser.add_argument("--shards", type=int, default=1, help="pytest processes side by side (1)")
    parser.add_argument("--tests", type=Path, help="node ids to run, one per line (default: found now)")
    parser.add_argument("-k", dest="keyword", help="only the tests pytest's -k selects")
    parser.add_argument("--out", type=Path, help="where logs go (default: a new temporary directory)")
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="stress-"))
    out.mkdir(parents=True, exist_ok=True)
    tests = read_ids(args.tests) if args.tests else find_tests(out, args.keyword)
    print(
        f"{len(tests)} tests, {args.reps} repetitions, {args.load} busy loops on {os.cpu_count()} cores, "
        f"{args.shards} shard(s); logs in {out}",
        flush=True,
    )
    failures: Counter[str] = Counter()
    busy = start_load(args.load)
    try:
        time.sleep(5)  # let the load average climb before the first repetition
        for rep in range(1, args.reps + 1):
            before, start = load_average(), time.monotonic()
            passed, failed = run_rep(tests, args.shards, out, rep)
            failures.update(failed)
            took = time.monotonic() - start
            print(
                f"rep {rep:>2}: {len(passed)} passed, {len(failed)} failed in {took:.0f} s; "
                f"load {before} -> {load_average()}",
                flush=True,
            )
            for name in failed:
                print(f"  FAILED {name}", flush=True)
    finally:
        for process in busy:
            process.kill()
            process.wait()
    if failures:
        print(f"{len(failures)} tests failed at least once (logs in {out}):")
        for name, times in failures.most_common():
            print(f"  {times}/{args.reps}  {name}")
        return 1
    print(f"all {len(tests)} tests passed {args.reps} times in a row under {args.load} busy loops")
    return 0


if __name__ == "__main__":
    sys.exit(main())
