"""The canvas reader against real replies of small models, each graded by hand.

tests/canvas/real_replies.jsonl holds replies of SmolLM2-135M-Instruct and gemma-3-270m (the
engine configs, basic and cot promptings) to trials of the standard set: the task, the
question, the answers the trial allows, the gold answer, the reply, ``reads`` (what a careful
grader reads in it: one of the answers, or null when it gives none, hedges or contradicts
itself) and ``reader`` (what ``scoring.extract`` read when the reply was first graded, before
the reader was rewritten: the rows where the two differ were its misreads then). Every row is
asserted: the reader must now read each reply as the grader does.
"""

import json
from pathlib import Path

import pytest

from common.canvas.scoring import extract

ROWS = [json.loads(line) for line in (Path(__file__).parent / "real_replies.jsonl").read_text().splitlines()]


def test_the_table_holds_a_hundred_real_replies_of_both_models_and_promptings():
    assert len(ROWS) >= 100
    assert {row["model"] for row in ROWS} == {"smollm2-135m", "gemma3-270m"}
    assert {row["prompting"] for row in ROWS} == {"basic", "cot"}
    assert sum(row["reader"] != row["reads"] for row in ROWS) > 0  # the table holds the old misreads


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r["reply"][:40])
def test_the_reader_reads_every_real_reply_as_the_grader_does(row):
    assert extract(row["reply"], row["options"], row["question"]) == row["reads"]
