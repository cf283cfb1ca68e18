"""The canvas scorers: ``contains`` as the seed's rule, and scored rows with refused records
counted apart (the reader has its table of graded replies: ``test_reader.py``)."""

import pandas as pd

from common.canvas.reader import contains
from common.canvas.scoring import response_text, score_rows

YES_NO = ["Yes", "No"]
COUNTS = [str(k) for k in range(9)]


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
