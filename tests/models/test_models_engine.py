"""The runner against a real inference engine: llama.cpp's OpenAI-compatible server (llama-cpp-python).

Run by `make test-engine` (which installs requirements-engine.txt: llama-cpp-python builds from
source in about 6 minutes) and by `make test-all`; skipped when the engine is not installed.
The model is a tiny random-weight LLaMA the test writes itself, so its answers are nonsense:
the runner must re-prompt, then record "".
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from engine_server import llama_server

from common.jsonl import write_jsonl
from common.paths import DATA, ROOT
from common.results import read_results
from common.trials.data import load_testset
from common.worldsense.reader import extract_answer
from tests.timing import timeout

pytestmark = pytest.mark.integration
TRIALS = 4


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    """The base URL of a llama.cpp server on the tiny model (4k context)."""
    with llama_server(tmp_path_factory.mktemp("engine"), n_ctx=4096) as (url, _log):
        yield url


def worldsense_trials(directory: Path) -> Path:
    """Write the first TRIALS trials of the official test set (gold answers in clear) to ``directory``."""
    if not (DATA / "worldsense" / "test_set").is_dir():
        pytest.skip("needs the WorldSense test set: make data")
    trials = load_testset(DATA / "worldsense" / "test_set").head(TRIALS)
    directory.mkdir()
    write_jsonl(directory / "trials.jsonl", trials.to_dict("records"))
    return directory


@pytest.mark.parametrize("api", ["chat", "completions"])
def test_ask_model_against_llama_cpp(engine, tmp_path, api):
    testset = worldsense_trials(tmp_path / "set")
    config = tmp_path / f"tiny-{api}.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "base_url": engine,
                "model": "tiny-llama",
                "api": api,
                "max_tokens": 8,
                "concurrency": 2,
                "timeout_s": [5, 120],
                "backoff_s": 0.1,
            }
        )
    )
    run = subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts" / "ask_model.py"),
            "-t",
            str(testset),
            "--model",
            str(config),
            "--cache-file",
            str(tmp_path / "cache.sqlite"),
        ],
        capture_output=True,
        text=True,
        timeout=timeout(600),
    )
    assert run.returncode == 0, run.stderr[-3000:]
    records = read_results(testset / "results" / f"basic___tiny-{api}___results.jsonl")
    trials = {trial["Key"]: trial for trial in load_testset(testset).to_dict("records")}
    assert sorted(record["Key"] for record in records) == sorted(trials)
    for record in records:
        options = trials[record["Key"]]["expectedresp"]
        assert record["resp"] in [*options, ""]
        assert (record["resp"] == "") == (record["error"] is not None)
        assert len(record["raw"]) == (1 if extract_answer(record["raw"][0], options) else 2)
        assert record["prompt_tokens"] > 0 and record["attempts"] >= len(record["raw"])
    assert any(record["resp"] == "" for record in records), "random weights should give nonsense"
    meta = json.loads((testset / "results" / f"basic___tiny-{api}___results.meta.json").read_text())
    assert meta["runs"][-1]["status"] == "complete" and meta["runs"][-1]["completion_tokens"] > 0
    print(f"\n{api}: " + "; ".join(f"{r['raw']!r} -> {r['resp']!r}" for r in records))


def test_a_prompt_longer_than_the_context_is_recorded_as_refused(engine, tmp_path):
    testset = worldsense_trials(tmp_path / "set")
    trials = load_testset(testset).to_dict("records")
    trials[1]["text"] = "apple " * 6000 + trials[1]["text"]  # beyond the server's 4096-token context
    write_jsonl(testset / "trials.jsonl", trials)
    config = tmp_path / "tiny.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "base_url": engine,
                "model": "tiny-llama",
                "max_tokens": 8,
                "concurrency": 1,
                "timeout_s": [5, 120],
            }
        )
    )
    command = [
        sys.executable,
        str(ROOT / "scripts" / "ask_model.py"),
        "-t",
        str(testset),
        "--model",
        str(config),
        "--no-cache",
    ]
    run = subprocess.run(command, capture_output=True, text=True, timeout=timeout(600))
    assert run.returncode == 0, run.stderr[-3000:]
    records = {r["Key"]: r for r in read_results(testset / "results" / "basic___tiny___results.jsonl")}
    assert sorted(records) == sorted(t["Key"] for t in trials)
    refused = records[trials[1]["Key"]]
    assert refused["refused"] == "context_length_exceeded" and "context" in refused["error"]
    assert not any(r.get("refused") for key, r in records.items() if key != trials[1]["Key"])
    again = subprocess.run(command, capture_output=True, text=True, timeout=timeout(600))
    assert again.returncode == 0 and "0 written" in again.stderr and "0 requests" in again.stderr


def test_a_thinking_reply_from_llama_cpp_is_split_and_a_cut_one_has_no_answer(engine, tmp_path):
    """A grammar (passed through ``extra_body``, as llama.cpp's server takes it) makes the tiny
    model write a fixed think block and answer; the reasoning names the other option, so an
    answer read from it would be wrong. With a budget that ends inside the block there is no
    answer: recorded with finish_reason "length", not re-prompted, kept on a rerun."""
    testset = worldsense_trials(tmp_path / "set")
    thought = "first guess FALSE, then check"
    grammar = f'root ::= "<think>{thought}</think>" ("TRUE" | "FALSE")'
    for name, budget in (("thinks", 64), ("cut", 12)):
        settings = {"base_url": engine, "model": "tiny-llama", "max_tokens": budget, "concurrency": 1}
        (tmp_path / f"{name}.yaml").write_text(
            yaml.safe_dump({**settings, "extra_body": {"grammar": grammar}})
        )
        command = [sys.executable, str(ROOT / "scripts" / "ask_model.py"), "-t", str(testset)]
        command += ["--model", str(tmp_path / f"{name}.yaml"), "--cache-file", str(tmp_path / "cache.sqlite")]
        run = subprocess.run(command, capture_output=True, text=True, timeout=timeout(600))
        assert run.returncode == 0, run.stderr[-3000:]
        if name == "cut":  # a rerun asks nothing: the cut replies are outcomes
            again = subprocess.run(command, capture_output=True, text=True, timeout=timeout(600))
            assert again.returncode == 0 and "0 requests" in again.stderr
    thinks = read_results(testset / "results" / "basic___thinks___results.jsonl")
    assert len(thinks) == TRIALS
    for record in thinks:  # each reply (a question, maybe a re-prompt) split into thought and answer
        assert all(raw in ("TRUE", "FALSE") for raw in record["raw"]) and record["resp"] in (
            *record["raw"],
            "",
        )
        assert record["reasoning"] == [thought] * len(record["raw"]) and set(record["finish_reason"]) == {
            "stop"
        }
        assert 0 < record["reasoning_tokens"] < record["completion_tokens"]
    cut = read_results(testset / "results" / "basic___cut___results.jsonl")
    assert {(r["resp"], r["raw"][0], r["finish_reason"][0], len(r["raw"])) for r in cut} == {
        ("", "", "length", 1)
    }
    print("\nthinking:", [(r["reasoning"], r["raw"]) for r in thinks[:2]], "cut:", cut[0]["reasoning"])
