"""The blocks plan reader against real replies of small models, each graded by hand.

tests/blocks/real_replies.jsonl holds planning completions of SmolLM2-135M-Instruct (chat,
the paper's prompts sent as turns) and gemma-3-270m (completions, the paper's prompts as
they are) on the cogsci_problems, pictures and scaling sets: the problem's items, the reply and
``reads``, the moves a careful grader reads in it (each as the prompts' sentence "Move the X
onto the Y.", naming the problem's items; lines that describe a state or name something that
is not an item are not moves), in order. The reader is the completion cut at the paper's stop
marker, then ``nlplan.parse_plan``.
"""

import json
from pathlib import Path

import pytest

from common.blocks.nlplan import cut_completion, parse_plan
from common.blocks.state import move_english

ROWS = [json.loads(line) for line in (Path(__file__).parent / "real_replies.jsonl").read_text().splitlines()]


def moves_read(row: dict) -> list[str]:
    """Return the moves the reader takes from a row's reply."""
    steps = parse_plan(cut_completion(row["reply"]).strip(), row["objects"])
    return [move_english(step.move) for step in steps if step.move]


def test_the_table_holds_a_hundred_real_replies_of_both_models():
    assert len(ROWS) >= 100
    assert {row["model"] for row in ROWS} == {"smollm2-135m", "gemma3-270m"}


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r["reply"][:40])
def test_the_reader_reads_the_moves_a_grader_reads(row):
    assert moves_read(row) == row["reads"]
