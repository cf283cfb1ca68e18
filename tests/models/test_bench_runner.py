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
    ]
    run = subprocess.run(command, capture_output=True, text=True, timeout=timeout(120))
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == "requests per second, median of 1 x 60 requests at concurrency 4:"
    assert [line.split()[0] for line in lines[1:5]] == ["runner", "bare", "bare", "bare"]
    assert "runner / bare requests.post" in lines[5] and lines[5].endswith("ratios")
    assert lines[8].startswith(
        "several endpoints: stub servers answering in 10 ms, concurrency 2 per endpoint"
    )
    assert lines[-2].startswith("  two / one: ") and lines[-2].endswith("per-repetition ratios)")
    assert lines[-1].startswith("429 above 2 at once, concurrency 4: limit at the end ")
