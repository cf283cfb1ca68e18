"""Batch mode against the stub server's Batch API: the same records as a live run, round by round,
partial failures, expiry, refusals, an offline engine's files, kill -9 while polling."""

import json
import os
import signal
import subprocess
import sys

import pytest
import yaml
from model_helpers import FAST, SENTINEL_KEY, make_config, make_items, run_items, write_testset

from common.models.batch import BatchOptions
from common.models.batch_files import state_path
from common.models.cache import ResponseCache
from common.models.client import HTTPModel
from common.models.stub_batch import BatchStore
from common.models.stub_replies import respond
from common.models.stub_server import StubServer
from common.models.summary import BATCH_PENDING_EXIT
from common.paths import ROOT
from common.results import metadata_path, read_results
from tests.timing import wait_for

TIMING = ("latency_s", "run")  # the only fields in which a batch run's records differ from a live run's


def answer(prompt: str) -> str:
    """Answers that need a re-prompt now and then (Question 3, 13, ...): a second round."""
    if prompt.startswith("Only respond"):
        return "FALSE"
    return "maybe" if prompt.split(":")[0].endswith("3") else "TRUE"


def records(path):
    """Return the records of a results file by (Key, draw), without timing fields."""
    rows = read_results(path, all_draws=True)
    return {(r["Key"], r.get("draw", 0)): {k: v for k, v in r.items() if k not in TIMING} for r in rows}


def live_and_batch(tmp_path, server, items, **settings):
    """Run ``items`` live, then in batch mode with --wait, each with its own cache; return both files."""
    live = tmp_path / "basic___live___results.jsonl"
    run_items(
        HTTPModel(make_config(server, **settings), cache=ResponseCache(tmp_path / "live.sqlite")), items, live
    )
    model = HTTPModel(
        make_config(server, batch_poll_s=0.01, **settings), cache=ResponseCache(tmp_path / "b.sqlite")
    )
    out = tmp_path / "basic___batch___results.jsonl"
    summary = run_items(model, items, out, batch=BatchOptions(wait=True))
    return live, out, summary


def test_a_batch_run_writes_the_records_of_a_live_run_round_by_round(tmp_path):
    with StubServer(answer=answer) as server:
        live, out, summary = live_and_batch(tmp_path, server, make_items(30), samples=2, temperature=0.7)
        live_requests = sum(1 for r in server.requests if r["path"].endswith("/completions"))
    assert records(out) == records(live) and len(records(out)) == 60
    assert (summary.status, summary.answered, summary.deferred) == ("complete", 60, 0)
    assert live_requests == 60 + 6  # the batch run sent no request of its own
    assert server.batches.lines_answered == 66  # and each of its requests once: 60, then 6 re-prompts
    state = json.loads(state_path(out).read_text())
    assert [r["requests"] for r in state["done"]] == [60, 6] and state["pending"] is None
    first = (tmp_path / "basic___batch___results.batch1.input.jsonl").read_text().splitlines()
    line = json.loads(first[0])
    assert line["method"] == "POST" and line["url"] == "/v1/chat/completions" and line["body"]["model"]
    assert len({json.loads(x)["custom_id"] for x in first}) == 60 and line["custom_id"].split("-")[-2] == "r1"
    meta = json.loads(metadata_path(out).read_text())["runs"][-1]
    assert meta["batch"]["batches"] == ["batch_1", "batch_2"] and meta["batch_requests"] == 66


@pytest.mark.parametrize(
    "store",
    [BatchStore(fail_every=4), BatchStore(outcome="expired", bad_batches=2)],
    ids=["partial", "expired"],
)
def test_what_a_batch_failed_or_let_expire_is_asked_by_the_next_round_and_nothing_twice(tmp_path, store):
    with StubServer(answer=answer, batches=store) as server:
        live, out, summary = live_and_batch(tmp_path, server, make_items(24))
    assert records(out) == records(live) and summary.status == "complete"
    assert store.lines_answered == 24 + 3  # every answer once, whatever failed on the way
    assert len(store.batches) > 2  # the failed or expired requests went into later rounds


def test_a_batch_that_fails_three_times_fails_its_items_and_the_next_run_asks_them(tmp_path):
    with StubServer(batches=BatchStore(outcome="failed")) as server:
        model = HTTPModel(make_config(server, batch_poll_s=0.01), cache=ResponseCache(tmp_path / "c.sqlite"))
        out = tmp_path / "basic___batch___results.jsonl"
        summary = run_items(model, make_items(5), out, batch=BatchOptions(wait=True))
        assert (summary.failed, summary.answered, summary.status) == (5, 0, "incomplete")
        assert len(server.batches.batches) == 3
        server.batches.outcome = "completed"
        again = run_items(model, make_items(5), out, batch=BatchOptions(wait=True))
    assert (again.answered, again.status) == (5, "complete")


def test_a_request_the_batch_refuses_is_recorded_as_refused_as_live(tmp_path):
    with StubServer(answer=answer, max_context=30) as server:
        items = [*make_items(4), {**make_items(1, 4)[0], "text": "long " * 40}]
        live, out, summary = live_and_batch(tmp_path, server, items, max_tokens=8)
    assert records(out) == records(live) and summary.refused == 1
    assert records(out)[(4, 0)]["refused"] == "context_length_exceeded"


def test_without_wait_a_run_submits_and_the_next_collects_with_the_batch_price(tmp_path):
    price = {"input": 1.0, "output": 2.0}
    with StubServer(answer=answer) as server:
        model = HTTPModel(
            make_config(server, price_per_1k_tokens=price), cache=ResponseCache(tmp_path / "c.sqlite")
        )
        out = tmp_path / "basic___batch___results.jsonl"
        first = run_items(model, make_items(3), out, batch=BatchOptions())
        assert (first.deferred, first.answered, first.batch["pending"]["batch_id"]) == (3, 0, "batch_1")
        second = run_items(model, make_items(3), out, batch=BatchOptions())  # batch_1 moves on: in progress
        assert second.deferred == 3 and len(server.batches.batches) == 1
        third = run_items(model, make_items(3), out, batch=BatchOptions())  # in: imported and written
    assert (third.answered, third.deferred, third.status) == (3, 0, "complete")
    run = json.loads(metadata_path(out).read_text())["runs"][-1]
    assert run["cost_usd"] == pytest.approx(
        (run["prompt_tokens"] * 1.0 + run["completion_tokens"] * 2.0) / 2000
    )


def test_without_a_batch_api_the_file_is_for_an_offline_engine_and_its_output_is_imported(tmp_path):
    with StubServer(answer=answer, batch_api=False) as server:
        live = tmp_path / "basic___live___results.jsonl"
        run_items(
            HTTPModel(make_config(server), cache=ResponseCache(tmp_path / "live.sqlite")), make_items(8), live
        )
        model = HTTPModel(make_config(server), cache=ResponseCache(tmp_path / "c.sqlite"))
        out = tmp_path / "basic___batch___results.jsonl"
        for round_number in (1, 2):
            waiting = run_items(model, make_items(8), out, batch=BatchOptions())
            assert waiting.deferred > 0 and waiting.batch["pending"]["mode"] == "offline"
            engine(tmp_path / f"basic___batch___results.batch{round_number}.input.jsonl", server)
        done = run_items(model, make_items(8), out, batch=BatchOptions())
    assert done.status == "complete" and records(out) == records(live)


def engine(input_path, stub):
    """Answer a batch input file as an offline engine would (vLLM's run_batch), beside it."""
    lines = []
    for line in input_path.read_text().splitlines():
        request = json.loads(line)
        status, body = respond(stub, request["body"], request["url"])
        response = {"status_code": status, "request_id": "r", "body": body}
        lines.append({"id": "x", "custom_id": request["custom_id"], "response": response, "error": None})
    output = input_path.with_name(input_path.name.replace(".input.", ".output."))
    output.write_text("".join(json.dumps(line) + "\n" for line in lines))


def ask(testset, config, *args):
    """Return the command of ask_model.py in batch mode on ``testset`` with ``config``, and ``args``."""
    options = ["-t", str(testset), "--model", str(config), "--cache-file", str(testset / "cache.sqlite")]
    return [sys.executable, str(ROOT / "scripts" / "ask_model.py"), *options, "--batch", *args]


def test_kill_9_while_polling_then_the_rerun_collects_the_same_batch(tmp_path):
    testset = write_testset(tmp_path / "set", 20)
    store = BatchStore(polls=10_000)  # in progress until told otherwise
    with StubServer(answer=answer, batches=store) as server:
        config = tmp_path / "stubmodel.yaml"
        config.write_text(
            yaml.safe_dump({"base_url": server.url, "model": "stub-model", **FAST, "batch_poll_s": 0.05})
        )
        waiting = subprocess.run(ask(testset, config), capture_output=True, text=True)
        assert waiting.returncode == BATCH_PENDING_EXIT, waiting.stderr
        assert "run the same command again" in waiting.stderr
        looked = store.looks("batch_1")
        polling = subprocess.Popen(ask(testset, config, "--wait"), stderr=subprocess.DEVNULL)
        wait_for(lambda: store.looks("batch_1") > looked, 60, "the second run to poll batch_1")
        os.kill(polling.pid, signal.SIGKILL)
        polling.wait()
        store.polls = 0
        done = subprocess.run(ask(testset, config, "--wait"), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert list(store.batches) == ["batch_1", "batch_2"]  # the same first batch, then the re-prompts
    out = testset / "results" / "basic___stubmodel___results.jsonl"
    assert sorted(r["Key"] for r in read_results(out)) == list(range(20))
    runs = json.loads(metadata_path(out).read_text())["runs"]
    assert [r["status"] for r in runs] == ["waiting for batch (20 items)", "killed", "complete"]


def test_a_batch_created_but_not_written_down_is_found_again(tmp_path):
    with StubServer(answer=answer) as server:
        model = HTTPModel(make_config(server), cache=ResponseCache(tmp_path / "c.sqlite"))
        out = tmp_path / "basic___batch___results.jsonl"
        run_items(model, make_items(3), out, batch=BatchOptions())
        state = json.loads(state_path(out).read_text())
        state["pending"]["batch_id"] = None  # as if killed between creating the batch and saving its id
        state_path(out).write_text(json.dumps(state))
        for _ in range(3):
            summary = run_items(model, make_items(3), out, batch=BatchOptions())
    assert summary.status == "complete" and list(server.batches.batches) == ["batch_1"]


def test_an_empty_answer_is_given_to_the_protocol_as_live_and_never_cached(tmp_path):
    def empty_first(prompt: str) -> str:
        return "FALSE" if prompt.startswith("Only respond") else ""

    with StubServer(answer=empty_first) as server:
        live, out, summary = live_and_batch(tmp_path, server, make_items(3))
    assert records(out) == records(live) and summary.status == "complete"
    assert {record["resp"] for record in records(out).values()} == {"FALSE"}  # re-prompted after ""
    assert server.batches.lines_answered == 6


def test_an_offline_output_file_named_on_the_command_line_serves_its_round_only(tmp_path):
    with StubServer(answer=answer, batch_api=False) as server:
        model = HTTPModel(make_config(server, batch_poll_s=0.01), cache=ResponseCache(tmp_path / "c.sqlite"))
        out = tmp_path / "basic___batch___results.jsonl"
        run_items(model, make_items(5), out, batch=BatchOptions())
        engine(tmp_path / "basic___batch___results.batch1.input.jsonl", server)
        moved = tmp_path / "engine-output.jsonl"
        (tmp_path / "basic___batch___results.batch1.output.jsonl").rename(moved)
        summary = run_items(model, make_items(5), out, batch=BatchOptions(output=moved))
    assert summary.deferred == 1 and summary.batch["pending"]["round"] == 2  # Key 3's re-prompt
    assert len(read_results(out)) == 4


def test_the_key_goes_in_the_header_only_never_into_a_batch_file_the_state_or_the_logs(tmp_path):
    testset = write_testset(tmp_path / "set", 4)
    with StubServer(answer=answer) as server:
        config = tmp_path / "stubmodel.yaml"
        settings = {"base_url": server.url, "model": "stub-model", **FAST, "api_key_env": "STUB_KEY"}
        config.write_text(yaml.safe_dump({**settings, "batch_poll_s": 0.01}))
        env = {**os.environ, "STUB_KEY": SENTINEL_KEY}
        run = subprocess.run(
            [*ask(testset, config, "--wait"), "--loglevel", "DEBUG"], env=env, capture_output=True
        )
    assert run.returncode == 0, run.stderr
    written = [path.read_bytes() for path in sorted(testset.rglob("*")) if path.is_file()]
    assert any(b"batch1.input" in path.name.encode() for path in testset.rglob("*"))
    for text in [run.stderr, run.stdout, *written]:
        assert SENTINEL_KEY.encode() not in text and b"4f1c9a7e2b" not in text
