"""The benchmarks' stub server in its own process (common.models.stub_server.server_process), and
bench/bench_runner.py end to end on a few requests, printing the rates and ratios of its two parts."""

import subprocess
import sys

import pytest
import requests

from common.models.stub_server import server_process
from common.paths import ROOT
from tests.timing import timeout


def test_server_process_answers_then_is_gone():
    body = {"model": "stub", "messages": [{"role": "user", "content": "hi"}]}
    with server_process(answer="[answer: no]") as base_url:
        reply = requests.post(base_url + "/chat/completions", json=body, timeout=timeout(10)).json()
        assert reply["choices"][0]["message"]["content"] == "[answer: no]"
    with pytest.raises(requests.ConnectionError):  # killed on leaving the block
        requests.post(base_url + "/chat/completions", json=body, timeout=timeout(10))


@pytest.mark.slow
def test_bench_runner_smoke():
    command = [
        sys.executable,
        str(ROOT / "bench" / "bench_runner.py"),
        "--requests",
        "60",
        "--repetitions",
        "1",
        "--concurrency",
        "4",
        "--latency",
        "0.01",
        "--per-endpoint",
        "2",
        "--throttle",
        "2",
        "--throttle-requests",
        "10",
    ]
    run = subprocess.run(command, capture_output=True, text=True, timeout=timeout(120))
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == "requests per second, median of 1 x 60 requests at concurrency 4:"
    assert lines[1].startswith("  machine load: ") and lines[1].endswith(" cores")
    assert [line.split()[0] for line in lines[2:6]] == ["runner", "bare", "bare", "bare"]
    assert "runner / bare requests.post" in lines[6] and lines[6].endswith(", 1 run)")
    assert lines[10].startswith(
        "several endpoints: stub servers answering in 10 ms, concurrency 2 per endpoint"
    )
    assert lines[14].startswith("  two / one per repetition: ") and lines[14].endswith("1 run)")
    assert lines[16].startswith("429s: a stub server answering in 10 ms")
    assert lines[18].startswith("  N=2, Retry-After 0: mean in flight ") and lines[18].endswith("lost 0")
    assert lines[19].startswith("  N=2, Retry-After 1: mean in flight ") and lines[19].endswith("lost 0")
    assert lines[20].startswith("  N=2, in flight with Retry-After 1 / with 0: ")
    assert lines[-1].startswith("  machine load: ")
