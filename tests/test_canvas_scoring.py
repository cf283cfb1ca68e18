"""The two canvas scorers on tricky responses, and the accuracy table."""

import pandas as pd
import pytest

from common.canvas.scoring import accuracy_table, contains, extract, format_table, response_text, score_rows

YES_NO = ["Yes", "No"]
COUNTS = [str(k) for k in range(11)]
DIRECTIONS = ["Above", "Below", "Left", "Right", "Above Left", "Above Right", "Below Left", "Below Right"]


@pytest.mark.parametrize(
    "response, vocabulary, expected",
    [
        ("Answer: Yes.", YES_NO, "Yes"),
        ("yes", YES_NO, "Yes"),
        ("  **No**  ", YES_NO, "No"),
        ("The answer is no", YES_NO, "No"),
        ("Not", YES_NO, None),  # "not" is not "no"
        ("Nothing is there", YES_NO, None),
        ("Yes and no", YES_NO, None),  # two answers: unparseable
        ("10", COUNTS, "10"),  # "10" is not "0"
        ("There are 10 of them.", COUNTS, "10"),
        ("0", COUNTS, "0"),
        ("1 or 2", COUNTS, None),
        ("below right", DIRECTIONS, "Below Right"),
        ("Answer: Below-Right.", DIRECTIONS, "Below Right"),
        ("It is below right of it", DIRECTIONS, "Below Right"),  # "Below" inside "Below Right" does not count
        ("Below", DIRECTIONS, "Below"),
        ("Right Below", DIRECTIONS, None),  # two single words, not the vocabulary's combination
        ("small red square", ["Small Red Square", "Large Red Square"], "Small Red Square"),
        ("", YES_NO, None),
    ],
)
def test_strict_extraction(response, vocabulary, expected):
    assert extract(response, vocabulary) == expected


def test_contains_is_the_lenient_original():
    assert contains("0", "10") == 1  # the original's flaw, kept for comparison
    assert contains("No", "Not sure") == 1
    assert contains("Below", "Below Right") == 1
    assert contains("Yes", "no") == 0
    assert contains("Yes", "YES!") == 1


def test_response_text_prefers_the_last_raw_completion():
    assert response_text({"Key": 1, "resp": "Yes", "raw": ["I think", "Yes"]}) == "Yes"
    assert response_text({"Key": 1, "resp": "No"}) == "No"
    assert response_text({"Key": 1, "resp": None}) == ""


def test_score_rows_and_table_with_wilson_intervals():
    trials = pd.DataFrame(
        {
            "Key": [1, 2, 3, 4],
            "goldresp": ["0", "Yes", "No", "Yes"],
            "expectedresp": [COUNTS, YES_NO, YES_NO, YES_NO],
            "task": ["count", "existence", "existence", "existence"],
            "description": ["full"] * 4,
            "fewshot": ["none"] * 4,
            "num_shapes": [3] * 4,
        }
    )
    results = [
        {"Key": 1, "resp": "10"},
        {"Key": 2, "resp": "Yes"},
        {"Key": 3, "resp": "Not"},
        {"Key": 4, "resp": "maybe"},
        {"Key": 99, "resp": "Yes"},
    ]
    scored = score_rows(trials, results)
    assert list(scored["contains"]) == [1, 1, 1, 0] and list(scored["strict"]) == [0, 1, 0, 0]
    assert list(scored["unparseable"]) == [False, False, True, True]
    table = accuracy_table(scored, ["task"]).set_index("task")
    assert table.loc["existence", "n"] == 3 and table.loc["existence", "unparseable"] == 2
    assert table.loc["existence", "strict_acc"] == pytest.approx(1 / 3)
    # Wilson 95% for 1 of 3, by hand: centre (1/3 + 1.9208/3) / 2.2805 = 0.4269, half 0.3501
    assert table.loc["existence", "strict_lo"] == pytest.approx(0.0615, abs=1e-3)
    assert table.loc["existence", "strict_hi"] == pytest.approx(0.7923, abs=1e-3)
    assert "33.3 [  6.1,  79.2]" in format_table(accuracy_table(scored, ["task"]), ["task"])
