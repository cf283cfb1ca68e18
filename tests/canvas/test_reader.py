"""The canvas reader against a table of graded replies, ``graded_replies.jsonl``: each reply's
answer as a careful human grader reads it (null: invalid), graded by reading the reply, never
by running the reader. One case a line, a JSON object:

- ``task``: the canvas task asked (``common.canvas.tasks.TASKS``);
- ``options``: the trial's vocabulary (``expectedresp``); needed for count and shuffle tracking,
  whose vocabularies depend on the canvas; the other tasks' fixed one when left out;
- ``question``: the trial's question, where the reader needs it (a relation stated the other
  way round, the asked position, the asked shape); left out, the reply is read without it;
- ``reply``: the model's reply; ``grade``: the option a careful grader reads, or null;
- ``note`` (optional): why a tricky case is graded as it is.
"""

import json
from pathlib import Path

import pytest

from common.canvas import reader
from common.canvas.reader import extract
from common.canvas.shapes import IDENTITIES, title
from common.canvas.tasks import TASKS, coordinate, existence, existence_tracking, transitivity

TABLE = Path(__file__).with_name("graded_replies.jsonl")
FIXED = {
    "existence": existence.ANSWERS,
    "existence_tracking": existence_tracking.ANSWERS,
    "coordinate": coordinate.ANSWERS,
    "transitivity": transitivity.ANSWERS,
}
FIELDS = {"task", "options", "question", "reply", "grade", "note"}


def load_table() -> list[tuple[int, dict]]:
    """Return the table's cases with their line numbers, each with its vocabulary in ``options``."""
    cases = []
    for number, line in enumerate(TABLE.read_text(encoding="utf-8").splitlines(), 1):
        case = json.loads(line)
        assert set(case) <= FIELDS and {"task", "reply", "grade"} <= set(case), f"{TABLE.name}:{number}"
        case.setdefault("options", FIXED.get(case["task"]))
        cases.append((number, case))
    return cases


CASES = load_table()
IDS = [f"line {number}" for number, _ in CASES]


def test_the_table_is_well_formed_and_covers_every_task():
    keys = set()
    for number, case in CASES:
        where = f"{TABLE.name}:{number}"
        assert case["task"] in TASKS, where
        assert case["options"], f"{where}: a {case['task']} case needs its options"
        assert case["grade"] is None or case["grade"] in case["options"], where
        key = (case["task"], tuple(case["options"]), case.get("question"), case["reply"])
        assert key not in keys, f"{where}: a second copy of a case"
        keys.add(key)
    tasks = [case["task"] for _, case in CASES]
    assert len(CASES) >= 200 and all(tasks.count(task) >= 25 for task in TASKS)
    assert sum(case["grade"] is None for _, case in CASES) >= 60  # both verdicts, many of each
    assert sum(str(case.get("note", "")).startswith("issue 41") for _, case in CASES) >= 9


@pytest.mark.parametrize("number, case", CASES, ids=IDS)
def test_a_graded_reply_is_read_as_the_grader_reads_it(number, case):
    assert extract(case["reply"], case["options"], case.get("question")) == case["grade"], case.get("note")


@pytest.mark.parametrize("number, case", CASES, ids=IDS)
def test_the_runner_reprompts_exactly_what_the_reader_cannot_read(number, case):
    """The canvas runner's re-prompt decision is the reader's, given the question of the prompt: a
    reply the score credits is never re-prompted (and its answer is the record's ``resp``), any
    other is."""
    from common.canvas.run import answer
    from common.models.base import Reply

    class Scripted:
        def __init__(self):
            self.replies = [case["reply"], "whatever"]

        def complete(self, messages, item):
            return Reply(self.replies[len(messages) // 2])

    prompt = f"A canvas.\n\nQuestion: {case['question']}\nAnswer." if case.get("question") else "Question?"
    record = answer(Scripted(), {"Key": 1, "text": prompt, "expectedresp": case["options"]})
    assert (len(record["raw"]) == 1) == (case["grade"] is not None)
    assert record["raw"][0] == case["reply"] and record["resp"] == (case["grade"] or "")


VOCABULARIES = [
    *FIXED.values(),
    [str(k) for k in range(25)],
    [title(identity) for identity in IDENTITIES],
]


@pytest.mark.parametrize("vocabulary", VOCABULARIES, ids=lambda v: f"{len(v)} options")
def test_an_option_alone_is_itself_with_or_without_the_short_cut(vocabulary):
    """The reader answers a reply that is an option itself without reading it sentence by sentence
    (the built-in models' replies); reading it fully gives the same answer, in any case and with
    the marks the short cut strips."""
    for option in vocabulary:
        for reply in (option, option.upper(), f"{option}.", f"**{option}**", f" {option.lower()}!\n"):
            assert extract(reply, vocabulary) == option == reader.read_fully(reply, vocabulary, None)
