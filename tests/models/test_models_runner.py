"""The runner against a real server: parallel answers, resume, failures, stops, metadata, progress."""

import json
import time

import pytest
from model_helpers import SENTINEL_KEY, make_config, make_items, run_items

import common.progress
from common import run_identity
from common.models.base import Counters, ModelError
from common.models.client import HTTPModel
from common.models.config import config_from_mapping
from common.results import metadata_path, read_results, run_stamps
from common.trials.baselines import OracleAnswer
from tests.timing import timeout


def keys_in(path):
    """Return the Keys of a results file in line order, parsing every line strictly."""
    return [json.loads(line)["Key"] for line in path.read_text(encoding="utf-8").splitlines()]


def test_many_workers_write_every_key_once(server, tmp_path):
    out = tmp_path / "basic___stub___results.jsonl"
    summary = run_items(HTTPModel(make_config(server, concurrency=16)), make_items(200), out)
    assert sorted(keys_in(out)) == list(range(200))
    assert (summary.answered, summary.failed, summary.status) == (200, 0, "complete")
    assert {record["resp"] for record in read_results(out)} == {"TRUE"}


def test_a_restarted_run_asks_only_what_is_missing(server, tmp_path):
    out = tmp_path / "basic___stub___results.jsonl"
    model = HTTPModel(make_config(server, concurrency=4))
    run_items(model, make_items(50), out)
    summary = run_items(model, make_items(120), out)
    assert (summary.already_done, summary.answered, len(server.requests)) == (50, 70, 120)
    assert sorted(keys_in(out)) == list(range(120))


def test_failed_items_are_not_written_and_the_next_run_asks_them(server, tmp_path):
    out = tmp_path / "basic___stub___results.jsonl"
    model = HTTPModel(make_config(server, concurrency=1, max_retries=0))
    server.script("500", "500")
    summary = run_items(model, make_items(10), out)
    assert (summary.answered, summary.failed, summary.status) == (8, 2, "incomplete")
    assert sorted(keys_in(out)) == list(range(2, 10))
    assert summary.failures[0]["Key"] == 0 and "HTTP 500" in summary.failures[0]["error"]
    assert run_items(model, make_items(10), out).answered == 2
    assert sorted(keys_in(out)) == list(range(10))


def test_a_refused_request_stops_the_run_and_keeps_what_was_answered(server, tmp_path):
    out = tmp_path / "basic___stub___results.jsonl"
    model = HTTPModel(make_config(server, concurrency=4))
    server.script(*["ok"] * 10, "403")
    with pytest.raises(ModelError, match="HTTP 403"):
        run_items(model, make_items(100), out)
    assert 10 <= len(keys_in(out)) < 30  # only what was in flight when it stopped
    runs = json.loads(metadata_path(out).read_text())["runs"]
    assert runs[-1]["status"].startswith("stopped: ModelError") and "HTTP 403" in runs[-1]["status"]
    run_items(model, make_items(100), out)
    assert sorted(keys_in(out)) == list(range(100))


def test_metadata_has_settings_totals_tokens_and_cost_but_no_key(server, tmp_path, monkeypatch):
    monkeypatch.setenv("STUB_KEY", SENTINEL_KEY)
    out = tmp_path / "basic___stub___results.jsonl"
    config = make_config(server, api_key_env="STUB_KEY", price_per_1k_tokens={"input": 1.0, "output": 2.0})
    run_items(HTTPModel(config), make_items(10), out, labels={"prompting": "basic"})
    meta = json.loads(metadata_path(out).read_text())
    assert metadata_path(out).name == "basic___stub___results.meta.json"
    run = meta["runs"][0]
    assert (run["prompting"], run["answered"], run["requests"], run["retries"]) == ("basic", 10, 10, 0)
    # each question is 9 words, each answer 1 (the stub counts words as tokens)
    assert (run["prompt_tokens"], run["completion_tokens"], run["cost_usd"]) == (90, 10, 0.11)
    assert run["model"]["api_key_env"] == "STUB_KEY" and run["model"]["max_tokens"] == 256
    assert SENTINEL_KEY not in metadata_path(out).read_text() and SENTINEL_KEY not in out.read_text()


def test_the_first_record_of_each_run_says_which_run_wrote_it_and_counts_as_the_runner_does(
    server, tmp_path, monkeypatch
):
    monkeypatch.setenv("STUB_KEY", SENTINEL_KEY)
    out = tmp_path / "basic___stub___results.jsonl"
    config = make_config(server, api_key_env="STUB_KEY", price_per_1k_tokens={"input": 1.0, "output": 2.0})
    run_items(HTTPModel(config), make_items(10), out, labels={"prompting": "basic", "modelname": "stub"})
    run_items(HTTPModel(config), make_items(15), out, labels={"prompting": "basic", "modelname": "stub"})
    runs = json.loads(metadata_path(out).read_text())["runs"]
    stamps = run_stamps(read_results(out, all_draws=True))
    assert len(stamps) == len(runs) == 2
    assert stamps[-1] == {k: runs[-1][k] for k in ("prompting", "modelname", "commit")} | {
        "model": {k: v for k, v in runs[-1]["model"].items() if v is not None}
    }
    assert stamps[-1]["model"]["api_key_env"] == "STUB_KEY" and SENTINEL_KEY not in out.read_text()
    found = run_identity.recorded(out)  # what the score stage records: the runner's own accounting
    tokens = sum(run["prompt_tokens"] + run["completion_tokens"] for run in runs)
    assert (found["run_count"], found["tokens"]) == (2, tokens) and tokens == 15 * 10
    assert found["cost_usd"] == pytest.approx(sum(run["cost_usd"] for run in runs))


def test_records_carry_diagnostics(server, tmp_path):
    out = tmp_path / "basic___stub___results.jsonl"
    server.script("429:0")
    run_items(HTTPModel(make_config(server, concurrency=1)), make_items(2), out)
    first, second = read_results(out)
    assert (first["Key"], first["resp"], first["raw"], first["attempts"]) == (0, "TRUE", ["TRUE"], 2)
    assert (second["attempts"], second["prompt_tokens"], second["completion_tokens"]) == (1, 9, 1)
    assert first["cached"] is False and first["error"] is None and first["latency_s"] >= 0


def test_progress_bar_shows_retries_errors_and_tokens(server, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(common.progress, "PROGRESS_DELAY_S", 0)  # shown at once (by default only after 2 s)
    counters = Counters()
    model = HTTPModel(make_config(server, concurrency=1), counters=counters)
    server.script("500")
    run_items(model, make_items(3), tmp_path / "p___stub___results.jsonl", show_progress=True)
    final = capsys.readouterr().err.strip().split("\r")[-1]
    assert "3/3" in final and "retries=1 errors=0 refused=0 tokens=30" in final


def test_builtin_models_run_through_the_same_runner(tmp_path):
    out = tmp_path / "basic___oracle___results.jsonl"
    items = make_items(5)
    run_items(OracleAnswer(), items, out)
    assert [record["resp"] for record in read_results(out)] == ["FALSE"] * 5


def test_repeated_keys_in_the_items_are_asked_once(server, tmp_path):
    out = tmp_path / "basic___stub___results.jsonl"
    summary = run_items(HTTPModel(make_config(server, concurrency=4)), make_items(5) + make_items(5), out)
    assert (summary.total, summary.answered, len(server.requests)) == (5, 5, 5)
    assert sorted(keys_in(out)) == list(range(5))


def test_a_server_that_is_down_at_the_start_stops_the_run_in_seconds(server, tmp_path):
    out = tmp_path / "basic___stub___results.jsonl"
    model = HTTPModel(make_config(server, concurrency=8, max_retries=5, backoff_s=2.0, backoff_max_s=60))
    server.stop()
    start = time.monotonic()
    with pytest.raises(
        ModelError,
        match=rf"^no model server answers at {server.url} \(ConnectionError: "
        r"Failed to establish a new connection: .*\)\. Start the server",
    ):
        run_items(model, make_items(50), out)  # the message names the URL, not an item's Key
    assert time.monotonic() - start < timeout(5)  # one check, tried twice a second apart; not 50 backoffs
    assert not out.exists() and not metadata_path(out).exists()  # nothing answered: nothing left


def test_a_server_failing_during_the_run_stops_it_after_a_few_failed_items(server, tmp_path):
    out = tmp_path / "basic___stub___results.jsonl"
    model = HTTPModel(make_config(server, concurrency=2, max_retries=1))
    server.script("ok", "ok", *["503"] * 200)
    with pytest.raises(ModelError, match=r"10 items in a row failed after their retries; is the server up"):
        run_items(model, make_items(50), out)
    run = json.loads(metadata_path(out).read_text())["runs"][-1]
    # 10 in a row; one more when a failure overtook an answer still in flight (two workers)
    assert run["failed"] in (10, 11) and run["answered"] == 2 and run["status"].startswith("stopped")
    assert len(keys_in(out)) == 2


def test_a_bad_url_stops_at_once(tmp_path):
    model = HTTPModel(config_from_mapping({"name": "bad", "base_url": "http://", "model": "m"}))
    with pytest.raises(ModelError, match="not a usable URL"):
        run_items(model, make_items(3), tmp_path / "basic___bad___results.jsonl")
