"""The WorldSense answering protocol: extraction, re-prompts, and "" when no option comes."""

import pytest
from model_helpers import make_config, make_items

from common.models.client import HTTPModel
from common.trials.protocol import reprompt_text
from common.worldsense.reader import extract_answer
from common.worldsense.run import answer

OPTIONS = ["TRUE", "FALSE", "POSSIBLE", "IMPOSSIBLE"]


@pytest.mark.parametrize(
    ("completion", "expected"),
    [
        ("TRUE", "TRUE"),
        (" true.\n", "TRUE"),
        ('"FALSE"', "FALSE"),
        ("**Impossible**", "IMPOSSIBLE"),
        ("The answer is POSSIBLE.", "POSSIBLE"),
        ("It is IMPOSSIBLE, I think", "IMPOSSIBLE"),
        ("TRUE or FALSE", None),
        ("maybe", None),
        ("", None),
        ("UNTRUE", None),
        ("non-TRUE", None),
    ],
)
def test_extract_answer(completion, expected):
    assert extract_answer(completion, OPTIONS) == expected


def test_extract_answer_with_numbered_options():
    assert extract_answer("2", ["1", "2", "3"]) == "2"
    assert extract_answer("Option 3.", ["1", "2", "3"]) == "3"
    assert extract_answer("12", ["1", "2", "3"]) is None


def test_reprompt_text():
    assert reprompt_text(["1", "2", "3"]) == "Only respond with one of these options: 1, 2, 3"


def reluctant(prompt: str) -> str:
    """A stub model that rambles, and answers properly only when told the options."""
    return "FALSE" if prompt.startswith("Only respond with one of these options") else "Let me think."


def test_a_reprompt_rescues_the_answer(server):
    server.answer = reluctant
    record = answer(HTTPModel(make_config(server)), make_items(1)[0], reprompts=1)
    assert record["resp"] == "FALSE" and record["raw"] == ["Let me think.", "FALSE"]
    assert record["attempts"] == 2 and record["error"] is None
    second = server.requests[1]["body"]["messages"]
    assert second[1:] == [
        {"role": "assistant", "content": "Let me think."},
        {"role": "user", "content": "Only respond with one of these options: TRUE, FALSE"},
    ]


@pytest.mark.parametrize("reprompts", [0, 2])
def test_no_valid_option_records_an_empty_answer(server, reprompts):
    server.answer = lambda prompt: "I cannot say."
    record = answer(HTTPModel(make_config(server)), make_items(1)[0], reprompts=reprompts)
    assert record["resp"] == "" and len(record["raw"]) == reprompts + 1 == len(server.requests)
    assert record["error"] == f"no valid option after {reprompts} re-prompt(s)"
