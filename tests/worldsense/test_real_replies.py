"""The WorldSense reader against real replies of small models, each graded by hand.

tests/worldsense/real_replies.jsonl holds replies of SmolLM2-135M-Instruct and gemma-3-270m
(the engine configs, basic and cot promptings) to trials of the official test set: the options
the trial allows, the reply, ``reads`` (the option a careful grader reads in it, null when it
gives none or contradicts itself) and ``release_rule`` (what the release's rule read: a reply
that is an option, or exactly one option named as a whole word). A row marked ``residual`` is a
reply the reader still misreads (its reading would need the sense of the words).
"""

import json
from pathlib import Path

import pytest

from common.worldsense.reader import extract_answer

ROWS = [json.loads(line) for line in (Path(__file__).parent / "real_replies.jsonl").read_text().splitlines()]


def test_the_table_holds_a_hundred_real_replies_of_both_models_and_promptings():
    assert len(ROWS) >= 100
    assert {row["model"] for row in ROWS} == {"smollm2-135m", "gemma3-270m"}
    assert {row["prompting"] for row in ROWS} == {"basic", "cot"}
    assert len({(row["reply"], tuple(row["options"])) for row in ROWS}) == len(ROWS)


@pytest.mark.parametrize("row", [r for r in ROWS if not r.get("residual")], ids=lambda r: r["reply"][:40])
def test_the_reader_reads_a_real_reply_as_the_grader_does(row):
    assert extract_answer(row["reply"], row["options"]) == row["reads"]


def test_the_replies_it_still_misreads_are_the_ones_marked():
    misread = [row["reply"] for row in ROWS if extract_answer(row["reply"], row["options"]) != row["reads"]]
    assert misread == [row["reply"] for row in ROWS if row.get("residual")]
    release = [row for row in ROWS if row["release_rule"] != row["reads"]]
    assert len(misread) < len(release) / 4  # what the mended reader gains on these replies
