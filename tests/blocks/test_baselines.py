"""Built-in planners on the released problems: noop = the empty-plan baseline, oracle = optimal."""

import random

import pytest

from common.blocks.baselines import PLANNERS, random_plan
from common.blocks.check import check_plan
from common.blocks.planner import optimal_length
from common.blocks.release import VIEWS
from common.blocks.state import apply_move, canonical


def run(planner, problems, view, seed=0):
    results = []
    for problem in problems:
        v = problem.view(view)
        plan = PLANNERS[planner](v, random.Random(f"{seed}:{problem.id}"))
        results.append(check_plan(plan, v.init_board, v.goal, optimal_length(v.init_board, v.goal)))
    return results


@pytest.mark.parametrize("view, expected", list(zip(VIEWS, (40, 16, 2), strict=True)))
def test_noop_scores_the_empty_plan_baseline(released_problems, view, expected):
    tests = [p for p in released_problems.values() if p.test]
    assert sum(r.strict for r in run("noop", tests, view)) == expected


@pytest.mark.parametrize("view", VIEWS)
def test_oracle_solves_everything_optimally(released_problems, view):
    results = run("oracle", released_problems.values(), view)
    assert all(r.strict and r.optimality_gap == 0 for r in results)


def test_random_plans_are_applicable_seeded_and_blind(released_problems):
    view = released_problems["004"].view("all")
    plan = random_plan(view, random.Random(3), length=12)
    assert plan == random_plan(view, random.Random(3), length=12)
    assert plan != random_plan(view, random.Random(4), length=12)
    state = canonical(view.init_board)
    for move in plan:
        state = apply_move(state, move)  # raises if a move is not applicable
    assert len(plan) == 12
    tests = [p for p in released_problems.values() if p.test]
    solved = sum(r.lenient for r in run("random", tests, "all", seed=1))
    assert solved < 30  # blind moves rarely build a full goal board
