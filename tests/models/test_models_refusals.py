"""Requests refused for one item are recorded and the run goes on; whole-run errors still stop it.

Against a real local server that refuses over-long requests the way llama.cpp's and vLLM's
servers do (HTTP 400, an OpenAI-style error body with code ``context_length_exceeded``).
"""

import json

import pytest
from model_helpers import make_config, make_items, run_items
from test_ask_model import ask, results_of, write_config

from common.models.base import ModelError, RequestRefused
from common.models.client import HTTPModel
from common.models.responses import classify_refusal
from common.models.stub_server import StubServer
from common.results import metadata_path, read_results

LONG = [3, 7, 8]  # the items whose question is too long for the stub's context


def items_with_long_ones(n: int = 12) -> list[dict]:
    """Return ``n`` trials; those in LONG have a 60-word question (the others 9 words)."""
    items = make_items(n)
    for key in LONG:
        items[key]["text"] = "word " * 60 + items[key]["text"]
    return items


@pytest.fixture
def short_context():
    """A stub server with a 40-word context: 9-word questions plus max_tokens 8 fit, long ones do not."""
    with StubServer(max_context=40) as stub:
        yield stub


# ---- telling a per-request refusal from a whole-run error, as real servers word them ----------
CASES = [
    # OpenAI, and llama-cpp-python's server
    (
        400,
        {
            "error": {
                "message": "This model's maximum context length is 2048 tokens. However, you "
                "requested 2314 tokens",
                "type": "invalid_request_error",
                "code": "context_length_exceeded",
            }
        },
        "context_length_exceeded",
    ),
    # llama.cpp's own server (llama-server)
    (
        400,
        {
            "error": {
                "code": 400,
                "message": "the request exceeds the available context size, try increasing it",
                "type": "exceed_context_size_error",
                "n_prompt_tokens": 2100,
                "n_ctx": 2048,
            }
        },
        "context_length_exceeded",
    ),
    # vLLM: the code is the status, only the message tells
    (
        400,
        {
            "object": "error",
            "message": "This model's maximum context length is 4096 tokens. However, "
            "you requested 5000 tokens (4744 in the messages, 256 in the "
            "completion).",
            "type": "BadRequestError",
            "param": None,
            "code": 400,
        },
        "context_length_exceeded",
    ),
    # TGI answers 422
    (
        422,
        {
            "error": "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 2048. "
            "Given: 2000 `inputs` tokens and 100 `max_new_tokens`",
            "error_type": "validation",
        },
        "context_length_exceeded",
    ),
    (413, {"error": {"message": "Request Entity Too Large"}}, "context_length_exceeded"),
    # llama-cpp-python's chat endpoint when prompt + max_tokens overflow the KV cache; other 500s retry
    (
        500,
        {"error": {"message": "llama_decode returned 1", "type": "internal_server_error"}},
        "context_length_exceeded",
    ),
    (500, {"error": {"message": "llama_decode returned -3", "type": "internal_server_error"}}, None),
    (500, {"error": {"message": "Internal Server Error"}}, None),
    # Azure OpenAI's content filter, OpenAI's policy refusal and a prompt the server cannot tokenize
    (
        400,
        {
            "error": {
                "message": "The response was filtered due to the prompt triggering Azure OpenAI's "
                "content management policy.",
                "code": "content_filter",
            }
        },
        "content_filter",
    ),
    (
        400,
        {
            "error": {
                "message": "Invalid prompt: your prompt was flagged as potentially violating our usage "
                "policy.",
                "code": "invalid_prompt",
            }
        },
        "invalid_prompt",
    ),
    (400, {"error": {"message": "The prompt could not be tokenized: invalid UTF-8"}}, "invalid_prompt"),
    # whole-run errors: every request would get them
    (
        400,
        {
            "error": {
                "message": "max_tokens is too large: 100000. This model supports at most 4096 "
                "completion tokens",
                "code": None,
            }
        },
        None,
    ),
    (400, {"error": {"message": "Unrecognized request argument supplied: temprature"}}, None),
    (404, {"error": {"message": "The model `gpt-5-turbo` does not exist", "code": "model_not_found"}}, None),
    (401, {"error": {"message": "Incorrect API key provided", "code": "invalid_api_key"}}, None),
    (403, {"error": {"message": "content filter", "code": "content_filter"}}, None),  # 403: never per item
]


@pytest.mark.parametrize(("status", "body", "kind"), CASES)
def test_refusals_are_told_apart_from_whole_run_errors(status, body, kind):
    error = body.get("error", body)
    message = error.get("message", "") if isinstance(error, dict) else str(error)
    message = message or body.get("message", "")
    assert classify_refusal(status, body, message) == kind


# ---- the runner ---------------------------------------------------------------------------------
def test_a_refused_item_is_recorded_and_the_run_goes_on(short_context, tmp_path):
    out = tmp_path / "basic___stub___results.jsonl"
    model = HTTPModel(make_config(short_context, concurrency=3, max_tokens=8))
    summary = run_items(model, items_with_long_ones(), out)
    records = {record["Key"]: record for record in read_results(out)}
    lines = out.read_text(encoding="utf-8").splitlines()
    assert sorted(records) == list(range(12)) and len(lines) == 12  # every Key, once
    for key in LONG:
        assert records[key]["resp"] == "" and records[key]["refused"] == "context_length_exceeded"
        assert "maximum context length is 40 tokens" in records[key]["error"]
    assert all(
        records[key]["resp"] == "TRUE" and not records[key].get("refused")
        for key in records
        if key not in LONG
    )
    assert (summary.answered, summary.refused, summary.invalid, summary.failed, summary.status) == (
        12,
        3,
        0,
        0,
        "complete",
    )
    assert model.counters.retries == 0  # a refusal is not retried: it would be refused again
    run = json.loads(metadata_path(out).read_text())["runs"][-1]
    assert (run["answered"], run["refused"], run["status"]) == (12, 3, "complete")


def test_a_rerun_asks_nothing_and_retry_refused_asks_only_the_refused(short_context, tmp_path):
    out = tmp_path / "basic___stub___results.jsonl"
    model = HTTPModel(make_config(short_context, concurrency=2, max_tokens=8))
    run_items(model, items_with_long_ones(), out)
    asked = len(short_context.requests)
    again = run_items(model, items_with_long_ones(), out)
    assert len(short_context.requests) == asked and (again.already_done, again.answered) == (12, 0)
    retried = run_items(model, items_with_long_ones(), out, retry_refused=True)
    assert len(short_context.requests) == asked + len(LONG)
    assert (retried.retried, retried.answered, retried.refused) == (3, 3, 3)
    keys = [json.loads(line)["Key"] for line in out.read_text(encoding="utf-8").splitlines()]
    assert sorted(keys) == list(range(12))  # still one line per Key


def test_a_whole_run_error_still_stops_at_once(short_context, tmp_path):
    out = tmp_path / "basic___stub___results.jsonl"
    model = HTTPModel(make_config(short_context, concurrency=1, max_tokens=8))
    short_context.script("ok", "ok", "401")
    with pytest.raises(ModelError, match=r"Key 2: .*HTTP 401"):
        run_items(model, items_with_long_ones(), out)
    written = sorted(record["Key"] for record in read_results(out))
    assert written[:2] == [0, 1] and 2 not in written and len(written) <= 4  # + what was in flight
    run = json.loads(metadata_path(out).read_text())["runs"][-1]
    assert run["answered"] == len(written) and run["status"].startswith("stopped: ModelError")


def test_the_model_raises_request_refused_with_kind_and_message(short_context):
    model = HTTPModel(make_config(short_context, max_tokens=8))
    with pytest.raises(RequestRefused) as refusal:
        model.complete([{"role": "user", "content": "word " * 50}])
    assert refusal.value.kind == "context_length_exceeded" and "HTTP 400" in refusal.value.message


def test_a_reply_cut_at_max_tokens_is_recorded_as_such(tmp_path):
    with StubServer(answer=lambda prompt: "TRUE because the question says so") as stub:
        out = tmp_path / "basic___stub___results.jsonl"
        run_items(HTTPModel(make_config(stub, max_tokens=3)), make_items(2), out, reprompts=0)
        record = read_results(out)[0]
    assert record["raw"] == ["TRUE because the"] and record["finish_reason"] == ["length"]


# ---- ask_model.py as a real process ---------------------------------------------------------------
def test_ask_model_finishes_a_set_with_refused_trials_and_counts_them_apart(short_context, tmp_path):
    from common.jsonl import write_jsonl

    testset = tmp_path / "set"
    write_jsonl(
        testset / "trials.jsonl",
        [{**item, "problemname": "stub", "tuple_ID": item["Key"]} for item in items_with_long_ones()],
    )
    config = write_config(tmp_path, short_context, max_tokens=8)
    first = ask(testset, config)
    assert first.returncode == 0, first.stderr
    assert "12 written (9 answers, 0 invalid, 3 refused by the server)" in first.stderr
    assert first.stderr.count("refused by the server, recorded") == 3  # one warning per refused Key
    assert all(f"Key {key} refused" in first.stderr for key in LONG)
    asked = len(short_context.requests)
    second = ask(testset, config)
    assert second.returncode == 0 and len(short_context.requests) == asked
    assert "0 written" in second.stderr and "nothing to ask" in second.stderr
    third = ask(testset, config, "--retry-errors", "--no-cache")
    assert third.returncode == 0 and len(short_context.requests) == asked + 3
    assert len(read_results(results_of(testset))) == 12


def test_a_refused_re_prompt_keeps_the_first_answer(tmp_path):
    with StubServer(answer=lambda prompt: "maybe so", max_context=52) as stub:
        out = tmp_path / "basic___stub___results.jsonl"
        items = make_items(1)
        items[0]["text"] = "word " * 30 + items[0]["text"]  # fits once, not with the re-prompt
        summary = run_items(HTTPModel(make_config(stub, max_tokens=8)), items, out)
        record = read_results(out)[0]
    assert record["raw"] == ["maybe so"] and record["refused"] == "context_length_exceeded"
    assert record["error"].startswith("the re-prompt was refused: HTTP 400")
    assert (summary.refused, summary.invalid) == (1, 0)
