"""LLM + planner scoring from facts: perfect translations succeed, each failure keeps its reason."""

from common.blocks.state import board_relations, relation_pddl
from common.blocks.translate import fact_accuracy, rule_translate, solve_from_facts


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
    wrong = (
        "(ontable ipad)(clear ipad)(ontable protractor)(clear protractor)(ontable tablet)(clear tablet)"
        "(ontable tennis-racket)(clear tennis-racket)"
    )
    outcome = solve_from_facts(view, wrong, facts(view.goal))
    assert outcome.plan is not None and not outcome.lenient


def test_fact_accuracy():
    truth = [("bot", "a", None), ("top", None, "a")]
    assert fact_accuracy([("bot", "a", None), ("mid", "b", "a")], truth) == (0.5, 0.5)
    assert fact_accuracy(None, truth) == (0.0, 0.0)


def test_rule_translation_of_the_released_prompts_is_an_upper_bound(release):
    from common.blocks.problems import load_problems
    from common.blocks.release import VIEWS, load_records, problems_dir

    problems = {p.id: p for p in load_problems(problems_dir(release))}
    for view_name in VIEWS:
        for record in load_records("codex", view_name, release):
            view = problems[record["id"]].view(view_name)
            init = rule_translate(record["init_prompt"].split("\n\n")[-1])
            goal = rule_translate(record["goal_prompt"].split("\n\n")[-1])
            assert init.count("\n") == len(board_relations(view.init_board))
            assert goal.count("\n") == len(view.goal)
            assert solve_from_facts(view, init, goal).strict, (view_name, record["id"])


def test_rule_translation_reads_only_the_templates():
    text = (
        ";The mouse pad rests on the table.\n;the newspaper IS ON the mouse pad.\nhello\n"
        ";There is nothing on the newspaper."
    )
    assert rule_translate(text) == "(ontable mouse-pad)\n(on newspaper mouse-pad)\n(clear newspaper)\n"
