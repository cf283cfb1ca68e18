"""The natural-language plan parser: exact sentence form, lenient spelling, no guessing."""

from common.blocks.nlplan import cut_completion, parse_plan, render_plan
from common.blocks.state import Move

OBJECTS = ["writing pad", "keyboard", "tennis racket"]


def test_parses_the_prompt_form_case_insensitively_with_hyphens():
    steps = parse_plan(
        "Move the writing pad onto the keyboard.\n\nmove THE Writing-Pad onto the TABLE\n"
        "  Move the tennis  racket onto the writing-pad. \n",
        OBJECTS,
    )
    assert [s.move for s in steps] == [
        Move("writing pad", "keyboard"),
        Move("writing pad", None),
        Move("tennis racket", "writing pad"),
    ]
    assert all(s.error is None for s in steps)


def test_reports_unknown_objects_and_unparseable_lines_instead_of_guessing():
    steps = parse_plan(
        "Move the writing onto the keyboard.\nMove the keyboard onto the tennis.\n"
        "Put the keyboard on the table.\nMove the keyboard.\n",
        OBJECTS,
    )
    assert [s.move for s in steps] == [None, None, None, None]
    assert steps[0].error == "unknown object: 'writing'"
    assert steps[1].error == "unknown object: 'tennis'"
    assert steps[2].error.startswith("unparseable") and steps[3].error.startswith("unparseable")


def test_render_and_cut():
    plan = [Move("writing pad", "keyboard"), Move("keyboard", None)]
    assert render_plan(plan) == "Move the writing pad onto the keyboard.\nMove the keyboard onto the table.\n"
    assert [s.move for s in parse_plan(render_plan(plan), OBJECTS)] == plan
    assert cut_completion("Move the a onto the b.\n\nInitially:\nThe a ...") == "Move the a onto the b.\n\n"
