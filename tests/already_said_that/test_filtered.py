"""A content filter, against a real local server that sends it: the original's OpenAI solver
raised on a refusal other than a context overflow (Azure's content_filter, OpenAI's
invalid_prompt) and on a reply withheld by the filter (no content: its parser failed on it), which
ended its run. A run here stops too, saying where and what to do, and keeps what it wrote; with
--filtered-as-violations it plays on as the original's Gemini and Together solvers did (the error
is the reply: a violation)."""

import pytest

from common.already_said_that.run import read_turns, run_paths
from common.models.stub_server import StubServer
from common.results import read_results
from tests.already_said_that.fixtures import write_set
from tests.already_said_that.test_reproduction import run
from tests.already_said_that.test_run import stub_config


def requests_of_first(tmp_path, set_dir, config) -> int:
    """Play the set once against the server without a filter; return how many requests its first
    conversation (Key 0) took (the runs below replay the same conversations: greedy stub, seeded
    schedule, one conversation at a time)."""
    assert run(tmp_path, set_dir, config, "--no-cache", out="clean") == 0
    return len(read_turns(run_paths(set_dir.name, "stub", tmp_path / "clean")["turns"], keys={0}))


@pytest.mark.parametrize(
    ("behaviour", "said"),
    [
        (
            "content_filter",
            "content_filter (HTTP 400: The response was filtered due to the prompt triggering",
        ),
        ("invalid_prompt", "invalid_prompt (HTTP 400: Invalid prompt: your prompt was flagged"),
        ("filtered", "content_filter (finish_reason content_filter: the reply withheld). The original"),
    ],
)
def test_a_content_filter_stops_the_run_keeping_what_it_wrote(tmp_path, capsys, behaviour, said):
    set_dir = write_set(tmp_path / "sets" / "heavier", "which_is_heavier", samples=3, turns=6)
    with StubServer(answer=lambda prompt: "[answer: no]") as server:
        config = stub_config(tmp_path, server, concurrency=1)
        first = requests_of_first(tmp_path, set_dir, config)
        clean = len(server.requests)
        capsys.readouterr()
        server.script(*["ok"] * first, behaviour)  # the first request of conversation 1
        assert run(tmp_path, set_dir, config, "--no-cache") == 2
        sent = len(server.requests)
    error = capsys.readouterr().err
    assert (
        f"a content filter stopped the run at turn 1 of conversation 1 of heavier (seed 0), {said}" in error
    )
    assert "run again with --filtered-as-violations" in error
    files = run_paths("heavier", "stub", tmp_path / "results")
    assert [r["Key"] for r in read_results(files["results"])] == [0]  # kept; nothing after the stop
    assert {t["Key"] for t in read_turns(files["turns"])} == {0}
    assert sent == clean + first + 1  # conversation 0, then the filtered request: no other was sent


def test_played_on_the_filter_is_the_reply_a_violation(tmp_path):
    set_dir = write_set(tmp_path / "sets" / "heavier", "which_is_heavier", samples=3, turns=6)
    with StubServer(answer=lambda prompt: "[answer: no]") as server:
        config = stub_config(tmp_path, server, concurrency=1)
        first = requests_of_first(tmp_path, set_dir, config)
        server.script(*["ok"] * first, "content_filter")
        assert run(tmp_path, set_dir, config, "--no-cache", "--filtered-as-violations") == 0
    files = run_paths("heavier", "stub", tmp_path / "results")
    records = {r["Key"]: r for r in read_results(files["results"])}
    assert sorted(records) == [0, 1, 2] and records[1]["refused_turns"] == 1
    [line] = [t for t in read_turns(files["turns"]) if t["Key"] == 1 and t["turn"] == 1]
    assert line["refused"] == "content_filter" and "content management policy" in line["error"]
    if line["kind"] == "main":  # as a refused main-task turn: the conversation ends, a violation
        assert records[1]["ended"] == "refused" and records[1]["violation_occurred"]
    else:  # a distractor turn: the error message is the reply, a format violation, the game goes on
        assert line["violation"] and records[1]["turns"] > 1
