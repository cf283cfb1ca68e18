"""scripts/bench_runner.py runs end to end on a few requests and prints the three rates and ratios."""

import subprocess
import sys

import pytest

from common.paths import ROOT


@pytest.mark.slow
def test_bench_runner_smoke():
    command = [
        sys.executable,
        str(ROOT / "scripts" / "bench_runner.py"),
        "--requests",
        "60",
        "--repetitions",
        "1",
        "--concurrency",
        "4",
    ]
    run = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == "requests per second, median of 1 x 60 requests at concurrency 4:"
    assert [line.split()[0] for line in lines[1:4]] == ["runner", "bare", "bare"]
    assert "runner / bare requests.post" in lines[4] and lines[4].endswith("ratios")
