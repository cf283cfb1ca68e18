"""LLM + planner scoring from facts: perfect translations succeed, each failure keeps its reason."""

from common.blocks.state import board_relations, relation_pddl
from common.blocks.translate import fact_accuracy, solve_from_facts


def facts(relations):
    return "\n".join(relation_pddl(r) for r in relations) + "\n"


def test_a_perfect_translation_succeeds_on_every_view(released_problems):
    for problem in released_problems.values():
        for name in ("one", "two", "all"):
            view = problem.view(name)
            outcome = solve_from_facts(view, facts(board_relations(view.init_board)), facts(view.goal))
            assert outcome.lenient and outcome.strict and outcome.reason is None


def test_failures_keep_their_reason(released_problems):
    view = released_problems["026"].view("all")
    init = facts(board_relations(view.init_board))
    bad_goal = facts(view.goal) + "(clear chainsaw)\n"
    outcome = solve_from_facts(view, init, bad_goal)
    assert not outcome.lenient and outcome.plan is None
    assert outcome.reason == "planner found no plan: (clear chainsaw) contradicts (on dryer-sheets chainsaw)"
    unknown = solve_from_facts(view, init, "(ontable necktie)").reason
    assert unknown.startswith("goal facts: undeclared object")
    missing = solve_from_facts(view, "(ontable notebook)", facts(view.goal)).reason
    assert missing.startswith("initial facts: inconsistent state: 'brick' has no support")


def test_a_wrong_initial_state_gives_a_plan_that_fails_on_the_true_problem(released_problems):
    view = released_problems["003"].view("two")  # goal: nothing on the ipad, ipad on the tennis racket
    wrong = ("(ontable ipad)(clear ipad)(ontable protractor)(clear protractor)(ontable tablet)(clear tablet)"
             "(ontable tennis-racket)(clear tennis-racket)")
    outcome = solve_from_facts(view, wrong, facts(view.goal))
    assert outcome.plan is not None and not outcome.lenient


def test_fact_accuracy():
    truth = [("bot", "a", None), ("top", None, "a")]
    assert fact_accuracy([("bot", "a", None), ("mid", "b", "a")], truth) == (0.5, 0.5)
    assert fact_accuracy(None, truth) == (0.0, 0.0)
