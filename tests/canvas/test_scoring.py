"""The canvas scorers: the strict reader on a table of tricky responses, ``contains`` as the
seed's rule, and scored rows with refused records counted apart."""

import pandas as pd
import pytest

from common.canvas.reader import contains, extract
from common.canvas.scoring import response_text, score_rows

YES_NO = ["Yes", "No"]
COUNTS = [str(k) for k in range(9)]
BIG_COUNTS = [str(k) for k in range(25)]
DIRECTIONS = ["Above", "Below", "Left", "Right", "Above Left", "Above Right", "Below Left", "Below Right"]
CHAIN = ["Left", "Right", "Above", "Below"]
SHAPES = ["Small Red Square", "Large Red Square", "Large Blue Triangle"]

TRICKY = [
    # directions: order, hyphens, commas, a leading sentence
    ("Below Right", DIRECTIONS, "Below Right"),
    ("Right Below", DIRECTIONS, "Below Right"),
    ("Below, Right", DIRECTIONS, "Below Right"),
    ("below-right", DIRECTIONS, "Below Right"),
    ("It is below and to the right.", DIRECTIONS, "Below Right"),
    ("The triangle is to the right of and below the square.", DIRECTIONS, "Below Right"),
    ("Answer: Below-Right.", DIRECTIONS, "Below Right"),
    ("**Above Left**", DIRECTIONS, "Above Left"),
    ("Left", DIRECTIONS, "Left"),
    ("It is directly below it.", DIRECTIONS, "Below"),
    ("It is not above, it is below.", DIRECTIONS, "Below"),
    ("Let me look at the centres. It is above.", DIRECTIONS, "Above"),
    ("The answer is Above Right. The circle is higher and further right.", DIRECTIONS, "Above Right"),
    ("Above, Below, Left, Right", DIRECTIONS, None),  # a list of options
    ("Above or Below", DIRECTIONS, None),
    ("Below or Right", DIRECTIONS, None),  # a hedge, not a combination
    ("Maybe below right", DIRECTIONS, None),
    ("I am not sure.", DIRECTIONS, None),
    ("Below Right", CHAIN, None),  # the chain's vocabulary has no combinations
    ("left", CHAIN, "Left"),
    ("The small red square is to the left.", CHAIN, "Left"),
    ("Left or Right", CHAIN, None),
    ("Below Right or Right", DIRECTIONS, None),  # a hedge between two answers
    ("Below right? Or below left", DIRECTIONS, None),  # a question, then another answer
    ("Below Right / Below Left", DIRECTIONS, None),
    ("lower right", DIRECTIONS, "Below Right"),
    ("bottom-right", DIRECTIONS, "Below Right"),
    ("Top left", DIRECTIONS, "Above Left"),
    ("down and to the left", DIRECTIONS, "Below Left"),
    ("It ends up below.", DIRECTIONS, "Below"),  # "up" is a direction only before a side
    ("Let me break it down. It is above.", DIRECTIONS, "Above"),
    ("neither above nor below; to the right", DIRECTIONS, "Right"),
    ("Right, not below", DIRECTIONS, "Right"),
    ("It is higher.", CHAIN, "Above"),
    ("Below Left. Wait, actually Below Right.", DIRECTIONS, "Below Right"),  # a retraction: its last answer
    # yes / no
    ("Yes", YES_NO, "Yes"),
    ("yes.", YES_NO, "Yes"),
    ("Answer: Yes.", YES_NO, "Yes"),
    ("Yep", YES_NO, "Yes"),
    ("Nope", YES_NO, "No"),
    ("Nope, there isn't one.", YES_NO, "No"),
    ("No, there is no red shape.", YES_NO, "No"),
    ("There is no red shape in the canvas.", YES_NO, "No"),
    ("Yes. There is no large blue square, but there is a large blue circle.", YES_NO, "Yes"),
    ("Yes, there is a large blue square.", YES_NO, "Yes"),
    ("The answer is no.", YES_NO, "No"),
    ("Not", YES_NO, None),  # "not" is not "no"
    ("None", YES_NO, None),
    ("I don't know", YES_NO, None),
    ("Yes and no", YES_NO, None),
    ("Yes/No", YES_NO, None),
    ("Yes or No", YES_NO, None),
    ("Maybe yes", YES_NO, None),
    ("Nothing is there", YES_NO, "No"),  # a statement of absence
    ("Yes? No.", YES_NO, None),  # a question, then the other answer
    ("yes or no? yes", YES_NO, None),
    ("Yes, no doubt.", YES_NO, "Yes"),
    ("The answer is not yes, it's no.", YES_NO, "No"),
    ("There is no large blue circle. But there is a large blue square, so yes.", YES_NO, "Yes"),
    ("No, yes", YES_NO, None),
    ("Yes. Sorry, I mean no.", YES_NO, "No"),
    ("", YES_NO, None),
    # counts
    ("2", COUNTS, "2"),
    ("two", COUNTS, "2"),
    ("There are two.", COUNTS, "2"),
    ("Zero", COUNTS, "0"),
    ("There are 3 large green triangles.", COUNTS, "3"),
    ("10", COUNTS, None),  # "10" is not "0" (nor "1"), and not an option here
    ("10", BIG_COUNTS, "10"),
    ("twenty-one", BIG_COUNTS, "21"),
    ("1 or 2", COUNTS, None),
    ("0 1 2 3 4 5 6 7 8", COUNTS, None),
    ("None", COUNTS, "0"),  # "How many ...?" "None." means zero
    ("There are none.", COUNTS, "0"),
    ("There are no large green triangles.", COUNTS, "0"),
    ("There are no red shapes, so 0.", COUNTS, "0"),
    ("zero", COUNTS, "0"),
    ("Answer: 4. I counted the red ones: 1, 2, 3, 4.", COUNTS, "4"),
    ("2.5", COUNTS, None),
    ("The answer is 3, not 2", COUNTS, "3"),  # a negated number is not an answer
    ("3 (not 2)", COUNTS, "3"),
    ("There are 2 large green triangles, at (3, -4) and (10, 12).", COUNTS, "2"),  # coordinates left out
    ("It's 2. Wait, actually 3.", COUNTS, "3"),  # corrected: the last answer
    ("2, maybe 3", COUNTS, None),
    ("How many large green triangles are there? 2", COUNTS, "2"),  # the question echoed first
    ("No, there are 2.", COUNTS, "2"),
    # shape identities
    ("Large Red Square", SHAPES, "Large Red Square"),
    ("the small red square.", SHAPES, "Small Red Square"),
    ("large-red-square", SHAPES, "Large Red Square"),
    ("It is the large blue triangle.", SHAPES, "Large Blue Triangle"),
    ("Small Red Square or Large Red Square", SHAPES, None),
    ("Small Red Square, Large Red Square, Large Blue Triangle", SHAPES, None),
    ("A red square", SHAPES, None),
    ("red large square", SHAPES, "Large Red Square"),  # any order of the three words
    ("Large Red Square, not Small Red Square", SHAPES, "Large Red Square"),  # a negated option dropped
    ("Large Blue Triangle? No, Small Red Square.", SHAPES, "Small Red Square"),
    ("small red squares", SHAPES, None),
    # negations of several directions read as the one direction left
    ("Left (not above or below)", DIRECTIONS, "Left"),
    ("Left (not above or below)", CHAIN, "Left"),
    ("Above, not to the left or right.", DIRECTIONS, "Above"),
    ("Below, neither left nor right.", DIRECTIONS, "Below"),
    ("Right, and not above nor below", DIRECTIONS, "Right"),
    ("Below, not left, not right", DIRECTIONS, "Below"),
    # "down" and "up" alone are directions; inside a phrase they are not
    ("Down.", DIRECTIONS, "Below"),
    ("Down.", CHAIN, "Below"),
    ("up", CHAIN, "Above"),
    ("**Up**", DIRECTIONS, "Above"),
    ("Let me write it down: above.", DIRECTIONS, "Above"),
    # a shape pointed at is not a second number; alone it is the count
    ("There are 2: one at (3, 4) and one at (5, 6).", COUNTS, "2"),
    ("Two of them, one at (3, 4) and the other at (-1, 2).", COUNTS, "2"),
    ("There is one at (3, 4).", COUNTS, "1"),
    # hedges are no commitment
    ("at least 2", COUNTS, None),
    ("about 2", COUNTS, None),
    ("There are roughly 3.", COUNTS, None),
    ("2 or so", COUNTS, None),
    ("right-ish", CHAIN, None),
    ("Roughly to the left.", CHAIN, None),
    ("About above right.", DIRECTIONS, None),
    ("Yes, there is at least one.", YES_NO, "Yes"),  # not a hedge of the Yes
    # the final answer: retractions count their last answer, second live answers and hedges nothing
    ("Yes. Hmm, no.", YES_NO, "No"),
    ("Left. No, right.", CHAIN, "Right"),
    ("Left. No, right.", DIRECTIONS, "Right"),
    ("2; 3.", COUNTS, None),  # two live answers
    ("Yes. On reflection, no.", YES_NO, "No"),
    ("Yes.\nNo.", YES_NO, None),
    ("Above. Below.", CHAIN, None),
    (
        "2. Let me re-check: the red ones are the small red square and the large red circle. So 2.",
        COUNTS,
        "2",
    ),
    ("3. Let me recount. There are only 2.", COUNTS, None),  # a second bare-ish answer, no retraction word
    ("Probably yes", YES_NO, None),
    ("Most likely left", CHAIN, None),
    ("I guess 3", COUNTS, None),
    ("It might be the large red square.", SHAPES, None),
    ("I think the answer is yes.", YES_NO, "Yes"),
    ("Yes. I went through the events to answer this: it was removed and then added back.", YES_NO, "Yes"),
    ("Answer: No. Reasoning: the large red circle was added, then removed, then nothing else.", YES_NO, "No"),
    ("First the circle is added, then removed. So the answer is no.", YES_NO, "No"),
    ("Yes, because it was added back after the removal.", YES_NO, "Yes"),
    ("It is not in the canvas.", YES_NO, "No"),
    ("It's no longer there.", YES_NO, "No"),
    ("It is still in the canvas.", YES_NO, "Yes"),
    ("There isn't one.", YES_NO, "No"),
    ("It was on the canvas at first.", YES_NO, None),  # the past: not an answer
    ("It was removed, so it is not on the canvas.", YES_NO, "No"),
    ("No, it was removed.", YES_NO, "No"),
    ("No, yes.", YES_NO, None),  # in a Yes/No vocabulary "No," is an answer, not a retraction
    ("Yes. No, wait, it was removed, so no.", YES_NO, "No"),
    ("There are 8 shapes; 3 of them are red.", COUNTS, "3"),  # the total restated
    ("Out of 8 shapes, 2 are red.", COUNTS, "2"),
    ("Of the 8 shapes, two are large.", COUNTS, "2"),
    ("There are 8 shapes in total and 5 of them are small.", COUNTS, "5"),
    ("2.0", COUNTS, "2"),
    ("Answer: 3.0", COUNTS, "3"),
    ("2.5", BIG_COUNTS, None),
    ("There are 2 red shapes: the small red square at (3, 4) and the large red circle.", COUNTS, "2"),
    ("I count 4. Final answer: 4", COUNTS, "4"),
    ("I count 4. Final answer: 5", COUNTS, "5"),  # a concluding answer replaces the earlier one
    ("Final answer: 4. Final answer: 5.", COUNTS, "5"),
    ("South", DIRECTIONS, "Below"),
    ("south-east", DIRECTIONS, "Below Right"),
    ("Northwest", DIRECTIONS, "Above Left"),
    ("West", CHAIN, "Left"),
    ("The large blue triangle (it swapped with the small red square last).", SHAPES, "Large Blue Triangle"),
    ("Large Blue Triangle, which took the place of the small red square.", SHAPES, "Large Blue Triangle"),
    (
        (
            "The small red square and the large blue triangle swap last, so the answer is the large "
            "blue triangle."
        ),
        SHAPES,
        "Large Blue Triangle",
    ),
    (
        "Large Red Square. It started at the bottom and the small red square moved up.",
        SHAPES,
        "Large Red Square",
    ),
    ("Large Red Square. Large Blue Triangle.", SHAPES, None),
    ("Absolutely not.", YES_NO, "No"),
    ("Certainly.", YES_NO, "Yes"),
    ("Below. Right.", DIRECTIONS, None),  # two live answers, not one combined
    ("Small Red Square? Or Large Red Square?", SHAPES, None),
]
ASKED = "Where is the small red square relative to the large blue triangle?"
POSITION = "What shape is second from the top?"

# (response, vocabulary, question, the answer): what needs the question to be read
WITH_QUESTION = [
    (
        "The large blue triangle is above and to the left of the small red square.",
        DIRECTIONS,
        ASKED,
        "Below Right",
    ),
    ("The triangle is above the square.", DIRECTIONS, ASKED, "Below"),
    ("The small red square is below the large blue triangle.", DIRECTIONS, ASKED, "Below"),
    ("The square is below and to the right of the triangle.", DIRECTIONS, ASKED, "Below Right"),
    ("Relative to the large blue triangle, the square is below.", DIRECTIONS, ASKED, "Below"),
    ("It is below it.", DIRECTIONS, ASKED, "Below"),
    ("The large blue triangle is left of the small red square.", CHAIN, ASKED, "Right"),
    ("Below. The triangle is above the square.", DIRECTIONS, ASKED, "Below"),
    (
        "Large Red Square is second from the top, and the small red square is third.",
        SHAPES,
        POSITION,
        "Large Red Square",
    ),
    (
        "The small red square is third; the large red square is second from the top.",
        SHAPES,
        POSITION,
        "Large Red Square",
    ),
    ("Large Red Square and Small Red Square", SHAPES, POSITION, None),
]


@pytest.mark.parametrize("response, vocabulary, expected", TRICKY)
def test_strict_extraction(response, vocabulary, expected):
    assert extract(response, vocabulary) == expected


@pytest.mark.parametrize("response, vocabulary, question, expected", WITH_QUESTION)
def test_the_question_turns_a_relation_round_and_picks_the_asked_position(
    response, vocabulary, question, expected
):
    assert extract(response, vocabulary, question) == expected


@pytest.mark.parametrize("response, vocabulary, expected", TRICKY)
def test_the_runner_reprompts_exactly_what_the_strict_reader_cannot_read(response, vocabulary, expected):
    """The canvas runner's re-prompt decision is the strict reader's: a reply the score credits is
    never re-prompted (and its answer is the record's ``resp``), any other is."""
    from common.canvas.run import answer
    from common.models.base import Reply

    class Scripted:
        def __init__(self):
            self.replies = [response, "whatever"]

        def complete(self, messages, item):
            return Reply(self.replies[len(messages) // 2])

    record = answer(Scripted(), {"Key": 1, "text": "Question?", "expectedresp": vocabulary})
    assert (len(record["raw"]) == 1) == (expected is not None)
    assert record["raw"][0] == response and record["resp"] == (expected or "")


def test_the_table_is_large_and_covers_both_verdicts():
    assert len(TRICKY) + len(WITH_QUESTION) >= 150
    assert sum(expected is None for *_, expected in TRICKY) >= 40


def test_contains_is_the_seeds_lenient_rule():
    assert contains("0", "10") == 1  # the original's flaw, kept for comparison
    assert contains("No", "Not sure") == 1
    assert contains("Below", "Below Right") == 1
    assert contains("Yes", "Yes and no") == 1 and contains("No", "Yes and no") == 1
    assert contains("Yes", "no") == 0
    assert contains("Yes", "YES!") == 1


def test_response_text_prefers_the_last_raw_completion():
    assert response_text({"Key": 1, "resp": "Yes", "raw": ["I think", "Yes"]}) == "Yes"
    assert response_text({"Key": 1, "resp": "No"}) == "No"
    assert response_text({"Key": 1, "resp": None}) == ""


def test_score_rows_count_invalid_and_refused_apart():
    trials = pd.DataFrame(
        {
            "Key": [1, 2, 3, 4, 5],
            "item": [0, 1, 1, 2, 2],
            "goldresp": ["0", "Yes", "No", "Yes", "No"],
            "expectedresp": [COUNTS, YES_NO, YES_NO, YES_NO, YES_NO],
            "task": ["count", "existence", "existence", "existence", "existence"],
            "description": ["full"] * 5,
            "fewshot": ["none"] * 5,
            "num_shapes": [3] * 5,
        }
    )
    results = [
        {"Key": 1, "resp": "10"},
        {"Key": 2, "resp": "Yes"},
        {"Key": 3, "resp": "Not"},
        {"Key": 4, "resp": "maybe"},
        {"Key": 5, "resp": "", "refused": "context_length", "error": "too long"},
        {"Key": 99, "resp": "Yes"},
    ]
    scored = score_rows(trials, results)
    assert list(scored["contains"]) == [1, 1, 1, 0, 0] and list(scored["strict"]) == [0, 1, 0, 0, 0]
    assert list(scored["invalid"]) == [True, False, True, True, False]
    assert list(scored["refused"]) == [False, False, False, False, True]
    assert list(scored["item"]) == [0, 1, 1, 2, 2]


def test_refused_trials_count_as_wrong_in_accuracy_so_every_model_has_the_same_denominator():
    from common.canvas.analysis import accuracy

    scored = pd.DataFrame(
        {
            "model": ["m"] * 4,
            "task": ["existence"] * 4,
            "item": [0, 0, 1, 1],
            "strict": [1, 1, 1, 0],
            "contains": [1, 1, 1, 0],
            "invalid": [False] * 4,
            "refused": [False, False, False, True],
        }
    )
    row = accuracy(scored, ["model", "task"]).iloc[0]
    assert row["trials"] == 4 and row["refused"] == 1 and row["strict"] == 0.75
