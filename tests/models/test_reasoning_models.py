"""Reasoning models against a real local server that answers as each kind of server does: the
thinking kept apart from the answer, a reply cut while thinking scored as no answer (and kept),
the settings OpenAI's reasoning models refuse, reasoning and cached tokens counted and priced."""

import json

import pytest
from model_helpers import make_config, make_items, run_items

from common.models.base import ModelError
from common.models.cache import ResponseCache
from common.models.client import HTTPModel
from common.models.config import load_model_config
from common.models.resolve import MODEL_CONFIGS
from common.models.responses import split_reasoning
from common.models.stub_server import THOUGHT, StubServer
from common.results import read_results, token_use
from common.trials.protocol import CUT_WHILE_THINKING

ASK = [{"role": "user", "content": "Is it so? Answer TRUE or FALSE."}]
SHOWN = ("reasoning_content", "reasoning", "inline")  # where servers put the thinking they return


@pytest.mark.parametrize(
    "text, answer, reasoning",
    [
        ("TRUE", "TRUE", ""),  # no tags: unchanged, not even stripped
        (" TRUE\n", " TRUE\n", ""),
        ("<think>maybe FALSE</think>\n\nTRUE", "TRUE", "maybe FALSE"),
        ("maybe FALSE\n</think>\nTRUE", "TRUE", "maybe FALSE"),  # the chat template opened the block
        ("<think>a</think>TRUE<think>b</think>", "TRUE", "a\n\nb"),
        ("<think>maybe FALSE, or", "", "maybe FALSE, or"),  # cut while thinking: no answer
        ("TRUE <think>on second thought", "", "on second thought"),  # an answer is not half a reply
        ("<think></think>TRUE", "TRUE", ""),
    ],
)
def test_split_reasoning_keeps_the_thinking_out_of_the_answer(text, answer, reasoning):
    assert split_reasoning(text) == (answer, reasoning)


@pytest.mark.parametrize("thinking", SHOWN)
def test_each_servers_reasoning_field_is_kept_apart_from_the_answer(thinking):
    with StubServer(think_words=12, thinking=thinking) as server:
        reply = HTTPModel(make_config(server)).complete(ASK)
    assert (reply.text, reply.finish_reason) == ("TRUE", "stop")
    assert reply.reasoning == " ".join(THOUGHT[i % len(THOUGHT)] for i in range(12))
    assert "FALSE" in reply.reasoning  # an answer read from the thinking would be wrong
    assert (reply.completion_tokens, reply.reasoning_tokens) == (13, 12)


def test_hidden_reasoning_is_counted_though_not_shown():
    with StubServer(think_words=40, thinking="hidden") as server:
        reply = HTTPModel(make_config(server)).complete(ASK)
    assert (reply.text, reply.reasoning, reply.completion_tokens, reply.reasoning_tokens) == (
        "TRUE",
        "",
        41,
        40,
    )


def test_reasoning_tokens_are_estimated_when_the_server_reports_none():
    # llama.cpp without a reasoning parser: inline think blocks, no completion_tokens_details
    with StubServer(answer=lambda prompt: "<think>one two three</think> TRUE") as server:
        reply = HTTPModel(make_config(server)).complete(ASK)
    # 4 words of completion, of which the reasoning has 13 of 17 characters
    assert (reply.text, reply.reasoning, reply.reasoning_tokens) == (
        "TRUE",
        "one two three",
        round(4 * 13 / 17),
    )


@pytest.mark.parametrize("thinking", SHOWN)
def test_a_reply_cut_while_thinking_has_no_answer(thinking):
    with StubServer(think_words=12, thinking=thinking) as server:
        reply = HTTPModel(make_config(server, max_tokens=5)).complete(ASK)
    assert (reply.text, reply.finish_reason, reply.cut_while_thinking) == ("", "length", True)
    assert reply.reasoning == "first guess FALSE but let"  # what it thought, never the answer


def test_a_cut_reply_is_scored_wrong_kept_and_asked_again_only_when_told(tmp_path):
    def ask(server, path, max_tokens=5, **options):
        model = HTTPModel(
            make_config(server, max_tokens=max_tokens),
            cache=ResponseCache(tmp_path / "cache.sqlite"),
            reask_truncated=options.get("retry_truncated", False),
        )
        try:
            return run_items(model, make_items(3), tmp_path / path, **options)
        finally:
            model.close()

    with StubServer(think_words=12, thinking="inline") as server:
        summary = ask(server, "a.jsonl")
        assert (summary.answered, summary.invalid, len(server.requests)) == (3, 3, 3)  # no re-prompt
        first = read_results(tmp_path / "a.jsonl")
        assert {(r["resp"], r["error"]) for r in first} == {("", CUT_WHILE_THINKING)}
        assert first[0]["finish_reason"] == ["length"] and first[0]["raw"] == [""]
        assert first[0]["reasoning"] == ["first guess FALSE but let"]
        assert token_use(first) == {"replies": 3, "cut": 3, "reasoning_tokens": 15, "answer_tokens": 0}

        # a rerun asks nothing; another results file gets the cut replies from the cache
        ask(server, "a.jsonl")
        ask(server, "b.jsonl")
        assert len(server.requests) == 3

        # --retry-truncated after raising the budget: asked again, answered
        again = ask(server, "a.jsonl", max_tokens=64, retry_truncated=True)
        assert (again.retried, again.answered, again.invalid, len(server.requests)) == (3, 3, 0, 6)
        assert {r["resp"] for r in read_results(tmp_path / "a.jsonl")} == {"TRUE"}

        # --retry-truncated at the same budget does not take the cut reply from the cache
        ask(server, "b.jsonl", retry_truncated=True)
        assert len(server.requests) == 9


def test_the_conversation_sent_back_holds_the_answers_not_the_reasoning(tmp_path):
    replies = iter(["<think>maybe FALSE</think>perhaps", "<think>no, surely</think>TRUE"])
    with StubServer(answer=lambda prompt: next(replies)) as server:
        run_items(HTTPModel(make_config(server)), make_items(1), tmp_path / "r.jsonl")
        reprompt = server.requests[1]["body"]["messages"]
    assert reprompt[1] == {"role": "assistant", "content": "perhaps"}
    [record] = read_results(tmp_path / "r.jsonl")
    assert record["raw"] == ["perhaps", "TRUE"] and record["resp"] == "TRUE"
    assert record["reasoning"] == ["maybe FALSE", "no, surely"]


def test_openai_reasoning_models_refusals_name_the_config_field_to_change():
    with StubServer(reasoning_model=True, think_words=20, thinking="hidden") as server:
        with pytest.raises(ModelError, match="token_limit_param: max_completion_tokens"):
            HTTPModel(make_config(server)).complete(ASK)
        fixed = make_config(server, token_limit_param="max_completion_tokens")
        with pytest.raises(ModelError, match=r"temperature: null"):
            HTTPModel(fixed).complete(ASK)
        assert len(server.requests) == 2  # each stopped at the first request
        config = make_config(server, token_limit_param="max_completion_tokens", temperature=None, seed=None)
        reply = HTTPModel(config).complete(ASK)
        body = server.requests[-1]["body"]
    assert (reply.text, reply.reasoning_tokens) == ("TRUE", 20)
    assert body == {"model": "stub-model", "messages": ASK, "max_completion_tokens": 256}


def test_reasoning_effort_and_extra_body_are_sent_as_given(server):
    extra = {"chat_template_kwargs": {"enable_thinking": False}, "top_k": 20, "temperature": 0.6}
    config = make_config(server, reasoning_effort="low", extra_body=extra, max_tokens=None, seed=None)
    HTTPModel(config).complete(ASK)
    assert server.requests[0]["body"] == {
        "model": "stub-model",
        "messages": ASK,
        "reasoning_effort": "low",
        **extra,
    }


def test_reasoning_and_cached_tokens_are_counted_and_priced(tmp_path):
    price = {"input": 1.0, "output": 4.0, "cached_input": 0.25}
    with StubServer(think_words=30, thinking="reasoning", answer=lambda prompt: "perhaps") as server:
        model = HTTPModel(make_config(server, price_per_1k_tokens=price))
        run_items(model, make_items(2), tmp_path / "r.jsonl")  # each: a question, then a re-prompt
    meta = json.loads((tmp_path / "r.meta.json").read_text())["runs"][-1]
    # per item: the question (9 words), then question, answer and re-prompt (9 + 1 + 9), of which
    # the first two messages are in the server's prefix cache; 31 completion tokens per reply,
    # 30 of them reasoning
    assert (meta["prompt_tokens"], meta["cached_tokens"]) == (2 * 28, 2 * 10)
    assert (meta["completion_tokens"], meta["reasoning_tokens"]) == (4 * 31, 4 * 30)
    assert meta["cost_usd"] == pytest.approx(((56 - 20) * 1.0 + 20 * 0.25 + 124 * 4.0) / 1000)


def test_the_shipped_reasoning_configs_send_what_their_servers_take(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    body = {
        name: HTTPModel(load_model_config(MODEL_CONFIGS / f"{name}.yaml")).payload(ASK)
        for name in ("openai-gpt-5-mini", "vllm-qwen3-thinking", "llamacpp-thinking")
    }
    openai = body["openai-gpt-5-mini"]
    assert "max_tokens" not in openai and "temperature" not in openai
    assert openai["max_completion_tokens"] >= 1024 and openai["reasoning_effort"] == "low"
    vllm = body["vllm-qwen3-thinking"]
    assert vllm["chat_template_kwargs"] == {"enable_thinking": True} and vllm["top_k"] == 20
    assert body["llamacpp-thinking"]["chat_template_kwargs"] == {"enable_thinking": True}
