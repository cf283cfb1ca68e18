"""The plan checker: the paper's lenient rule against the strict (VAL-like) rule, with diagnostics."""

from common.blocks.check import check_plan
from common.blocks.nlplan import parse_plan
from common.blocks.state import Move

INIT = [["mouse pad", "newspaper", "writing pad"], ["keyboard"]]
GOAL = [("top", None, "newspaper")]
OBJECTS = ["mouse pad", "newspaper", "writing pad", "keyboard"]


def check(text, goal=GOAL, optimal=1):
    return check_plan(parse_plan(text, OBJECTS), INIT, goal, optimal_length=optimal)


def test_a_clean_optimal_plan_passes_both_rules():
    result = check("Move the writing pad onto the keyboard.\n")
    assert (result.lenient, result.strict, result.valid_prefix, result.optimality_gap) == (True, True, 1, 0)
    assert result.first_error is None and result.parse_rate == 1.0


def test_junk_lines_are_skipped_by_lenient_and_fail_strict():
    result = check("Move the writing pad onto the keyboard.\nI am done!\n")
    assert result.lenient and not result.strict
    assert result.first_error == "step 2: unparseable: not 'Move the <item> onto the <item or table>.'"
    assert (result.plan_length, result.parsed, result.parse_rate, result.valid_prefix) == (2, 1, 0.5, 1)


def test_inapplicable_moves_are_skipped_by_lenient_and_fail_strict():
    result = check("Move the newspaper onto the keyboard.\nMove the writing pad onto the table.\n")
    assert result.lenient and not result.strict
    assert result.first_error == "step 1: not applicable: 'Move the newspaper onto the keyboard.'"
    assert (result.valid_prefix, result.applied, result.optimality_gap) == (0, 1, 0)


def test_unknown_objects_fail_strict_only():
    result = check("Move the writing-pad onto the keyboard.\nMove the laptop onto the table.\n")
    assert result.lenient and not result.strict and "unknown object: 'laptop'" in result.first_error


def test_goal_not_reached_fails_both_and_goal_already_held_is_flagged():
    result = check("Move the keyboard onto the writing pad.\n")
    assert not result.lenient and not result.strict and result.first_error == "goal does not hold at the end"
    trivial = check("", goal=[("bot", "keyboard", None)], optimal=0)
    assert trivial.lenient and trivial.strict and trivial.goal_held_initially and trivial.parse_rate == 1.0


def test_a_plan_that_passes_the_goal_and_undoes_it_fails():
    result = check("Move the writing pad onto the keyboard.\nMove the writing pad onto the newspaper.\n")
    assert not result.lenient and not result.strict


def test_moves_from_a_planner_are_accepted():
    plan = [Move("writing pad", None), Move("newspaper", "keyboard")]
    result = check_plan(plan, INIT, GOAL, optimal_length=1)
    assert result.lenient and result.strict and result.optimality_gap == 1
