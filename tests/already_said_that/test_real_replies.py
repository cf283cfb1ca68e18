"""Already Said That's reader against real replies of small models, each graded by hand.

tests/already_said_that/real_replies.jsonl holds the turns SmolLM2-135M-Instruct (direct and
cot) and gemma-3-270m (hhh, the original's base-model prompting) replied in `make all` runs:
the set, the kind of turn, its gold answer, the reply, ``reads`` (what the original eval's rule
takes as the answer, read by eye: the text inside the first "[answer: ...]", stripped and
lower-cased; null when there is none, a format violation) and ``says`` (the answer the reply
gives in plain words, when it gives one, whatever its format: what a lenient grader would
credit and the original's rule does not).
"""

import json
from pathlib import Path

import pytest

from common.already_said_that.prompts import parse_answer

ROWS = [json.loads(line) for line in (Path(__file__).parent / "real_replies.jsonl").read_text().splitlines()]


def test_the_table_holds_a_hundred_real_turns_of_both_models_and_every_prompting():
    assert len(ROWS) >= 100
    assert {row["model"] for row in ROWS} == {"smollm2-135m", "gemma3-270m"}
    assert {row["prompting"] for row in ROWS} == {"direct", "cot", "hhh"}
    assert {row["kind"] for row in ROWS} == {"main", "distractor"}


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r["reply"][:40])
def test_the_reader_takes_what_the_original_takes_from_a_real_reply(row):
    assert parse_answer(row["reply"]) == row["reads"]
