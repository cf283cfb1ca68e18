"""Already Said That against the stub server (common/models/stub_server.py): the decoding
defaults, the max_tokens warning, and the original's solvers as --prompting: cot (reasons, then
replies; earlier reasoning never shown again) and hhh (a base model continuing a transcript)."""

import logging
import threading

import pytest

from common.already_said_that import cost
from common.already_said_that.generate import load_set
from common.already_said_that.prompting import COT_PROMPT, EXTRACT_PROMPT, HHH_HEADER
from common.already_said_that.run import read_turns, run_paths
from common.already_said_that.wording import wording_of
from common.cli import run_main
from common.models.stub_server import StubServer
from common.results import read_results
from tests.already_said_that.fixtures import write_set
from tests.already_said_that.test_run import load_main, stub_config


def run(tmp_path, set_dir, config, *extra, out="out"):
    """Run the script on ``set_dir`` with the model config ``config``; return its exit code."""
    argv = ["-t", str(set_dir), "--model", str(config), "--no-cache", "--results-dir", str(tmp_path / out)]
    return load_main()([*argv, "--loglevel", "WARNING", *extra])


def test_decoding_defaults_are_the_originals_and_config_or_set_override_them(tmp_path):
    set_dir = write_set(tmp_path / "distractorless", "distractorless", samples=1)
    with StubServer(answer=lambda prompt: "[answer: no]") as server:
        cases = [
            ({}, [], (1.0, 512)),  # the original's
            ({"max_tokens": 64}, [], (1.0, 64)),  # the config's own
            ({"max_tokens": 64}, ["--set", "temperature=0", "--set", "max_tokens=100"], (0, 100)),
        ]
        for index, (settings, extra, wanted) in enumerate(cases):
            server.requests.clear()
            config = stub_config(tmp_path, server, **settings)
            assert run(tmp_path, set_dir, config, *extra, out=f"out{index}") == 0
            bodies = [r["body"] for r in server.requests]
            assert bodies and {(b["temperature"], b["max_tokens"]) for b in bodies} == {wanted}
            assert not any("seed" in b for b in bodies)  # no seed sent, as the original


def test_a_max_tokens_below_the_longest_gold_reply_is_warned_of(tmp_path, caplog):
    data = load_set(write_set(tmp_path / "reverse_sort", "reverse_sort", samples=1))
    needed, reply = cost.reply_tokens_needed(data)
    assert reply == "[answer: cherry, banana, apple]" and needed == 11  # 32 characters / 3
    assert cost.max_tokens_warning(data, 11) is None and cost.max_tokens_warning(data, None) is None
    assert "max_tokens 10 is below" in cost.max_tokens_warning(data, 10)
    with (
        StubServer(answer=lambda prompt: "[answer: no]") as server,
        caplog.at_level(logging.WARNING, logger="already_said_that"),
    ):
        assert run(tmp_path, data.path, stub_config(tmp_path, server, max_tokens=8)) == 0
    assert "max_tokens 8 is below what the longest correct reply of reverse_sort needs" in caplog.text
    assert "--set max_tokens=512" in caplog.text


def thinking_model():
    """Return a stub answer function for one conversation at a time: every odd request is a
    turn's reasoning (numbered, with a wrong answer in it), every even one the reply."""
    calls = iter(range(1, 10_000))
    lock = threading.Lock()

    def answer(prompt):
        with lock:
            call = next(calls)
        return f"reasoning {call // 2 + 1}: maybe [answer: yes]" if call % 2 else "[answer: no]"

    return answer


def test_cot_reasons_then_replies_and_later_turns_never_see_the_reasoning(tmp_path):
    set_dir = write_set(tmp_path / "which_is_heavier", "which_is_heavier", samples=3)
    with StubServer(answer=thinking_model()) as server:
        assert run(tmp_path, set_dir, stub_config(tmp_path, server, concurrency=1), "--prompting", "cot") == 0
    files = run_paths("which_is_heavier", "stub", tmp_path / "out", "cot")
    records, turns = read_results(files["results"]), read_turns(files["turns"])
    assert len(server.requests) == 2 * len(turns)  # two requests a turn
    for index, turn in enumerate(turns):
        thinking, replying = (server.requests[2 * index + k]["body"]["messages"] for k in (0, 1))
        assert thinking[-1] == {"role": "system", "content": COT_PROMPT}
        assert thinking[-2] == {"role": "user", "content": turn["message"]}
        assert replying == [
            *thinking,
            {"role": "assistant", "content": turn["cot"]},
            {"role": "system", "content": EXTRACT_PROMPT},
        ]
        assert turn["cot"].startswith(f"reasoning {index + 1}:") and turn["reply"] == "[answer: no]"
        history = thinking[1:-1]  # persistent memory off: questions and replies, no reasoning
        assert not any("reasoning" in m["content"] for m in history)
        assert [m["content"] for m in history if m["role"] == "assistant"] == ["[answer: no]"] * (
            turn["turn"] - 1
        )
        assert turn["answer"] == "no"  # the reply is judged, not the reasoning's "[answer: yes]"
    assert {r["prompting"] for r in records} == {"cot"}
    assert sum(r["completion_tokens"] for r in records) == sum(
        len(t["cot"].split()) + len(t["reply"].split()) for t in turns
    )


def test_hhh_writes_a_transcript_for_a_base_model_and_cuts_its_continuation(tmp_path):
    set_dir = write_set(tmp_path / "distractorless", "distractorless", samples=2)
    rambling = " [answer: no]\nUser: MAIN TASK - zebra\nAssistant: [answer: yes]"
    with StubServer(answer=lambda prompt: rambling) as server:
        config = stub_config(tmp_path, server, api="completions", concurrency=1)
        assert run(tmp_path, set_dir, config, "--prompting", "hhh") == 0
    turns = read_turns(run_paths("distractorless", "stub", tmp_path / "out", "hhh")["turns"])
    assert {(t["reply"], t["raw"]) for t in turns} == {("[answer: no]", rambling)}
    first, later = server.requests[0]["body"], server.requests[1]["body"]
    suite = wording_of({}, None, False)
    assert (
        first["stop"] == suite.stops == ["System:", "User:", "Assistant:", "-----"]
        and "messages" not in first
    )
    assert first["prompt"].startswith(f"System: {HHH_HEADER}\n-----\nUser: ")
    assert "\n-----\nSystem: You will be shown words" in first["prompt"]
    assert first["prompt"].endswith(f"\nUser: {turns[0]['message']}\nAssistant:")
    assert later["prompt"].endswith(
        f"\nUser: {turns[0]['message']}\nAssistant: [answer: no]\nUser: {turns[1]['message']}\nAssistant:"
    )
    assert suite.cut("  [answer: yes] -----\nUser: x") == "[answer: yes]"


@pytest.mark.parametrize(
    ("model", "prompting", "message"),
    [
        ("oracle", "cot", "the built-in 'oracle' answers directly"),
        ("chat", "hhh", "needs api: completions (it has api: chat)"),
    ],
)
def test_a_prompting_the_model_cannot_take_is_refused(tmp_path, capsys, model, prompting, message):
    set_dir = write_set(tmp_path / "distractorless", "distractorless", samples=1)
    with StubServer() as server:
        name = str(stub_config(tmp_path, server)) if model == "chat" else model
        argv = ["-t", str(set_dir), "--model", name, "--prompting", prompting, "--results-dir", str(tmp_path)]
        assert run_main(load_main(), argv) == 2
        assert not server.requests
    assert message in capsys.readouterr().err


def test_the_dry_run_counts_both_cot_requests(tmp_path, capsys):
    set_dir = write_set(tmp_path / "mixed", "mixed", samples=2)
    for prompting in ("direct", "cot", "hhh"):
        assert (
            load_main()(["-t", str(set_dir), "--model", "oracle", "--dry-run", "--prompting", prompting]) == 0
        )
    direct, cot, hhh = capsys.readouterr().out.splitlines()
    assert (
        "at most 200 requests" in direct and "at most 400 requests" in cot and "at most 200 requests" in hhh
    )
    tokens = [int(line.split("~")[1].split(" input")[0].replace(",", "")) for line in (direct, cot, hhh)]
    assert tokens[1] > 2 * tokens[0] and tokens[2] > tokens[0]
