"""Planners: exact optimality against exhaustive breadth-first search and against A* (the full-goal
method), the 2x bound, the search budget, determinism."""

import itertools
import random
from collections import deque

import pytest

from common.blocks.boards import uniform_board
from common.blocks.fullgoal import full_goal_steps
from common.blocks.planner import (
    SearchBudgetExceeded,
    bfs_plan,
    near_optimal_plan,
    optimal_length,
    optimal_plan,
)
from common.blocks.state import applicable_moves, apply_move, board_relations, canonical, goal_holds


def all_states(items):
    """Every state of ``items``, found by exhaustive search from one stack (the graph is connected)."""
    start = canonical([items])
    seen, queue = {start}, deque([start])
    while queue:
        state = queue.popleft()
        for move in applicable_moves(state):
            child = apply_move(state, move)
            if child not in seen:
                seen.add(child)
                queue.append(child)
    return sorted(seen)


def distances_from(start):
    """Exhaustive BFS: the distance of every state from ``start``."""
    dist, queue = {start: 0}, deque([start])
    while queue:
        state = queue.popleft()
        for move in applicable_moves(state):
            child = apply_move(state, move)
            if child not in dist:
                dist[child] = dist[state] + 1
                queue.append(child)
    return dist


def shortest(dist, relations):
    """The true optimal plan length: the nearest state where the goal holds."""
    return min((d for s, d in dist.items() if goal_holds(s, relations)), default=None)


def random_problem(rng, items):
    """A uniform initial board and a random non-empty prefix of a shuffled uniform goal."""
    start, relations = uniform_board(items, rng), board_relations(uniform_board(items, rng))
    rng.shuffle(relations)
    return start, relations[: rng.randint(1, len(relations))]


def is_valid(start, plan, relations):
    state = canonical(start)
    for move in plan:
        state = apply_move(state, move)  # raises if a move is not applicable
    return goal_holds(state, relations)


@pytest.mark.parametrize("n", [2, 3])
def test_optimal_on_every_pair_of_states_and_every_goal_subset(n):
    items = ["a", "b", "c"][:n]
    states = all_states(items)
    for start in states:
        dist = distances_from(start)
        for goal_board in states:
            relations = board_relations(goal_board)
            for k in range(1, len(relations) + 1):
                for subset in itertools.combinations(relations, k):
                    plan = optimal_plan(start, subset)
                    assert len(plan) == shortest(dist, subset) and is_valid(start, plan, subset)
                    assert len(optimal_plan(start, subset, greedy_first=False)) == len(plan)


def test_optimal_matches_exhaustive_search_on_random_problems_of_4_and_5_items():
    rng = random.Random(11)
    for n in (4, 5):
        items = [f"item {i}" for i in range(n)]
        for _ in range(60):
            start, relations = random_problem(rng, items)
            truth = shortest(distances_from(canonical(start)), relations)
            for plan in (optimal_plan(start, relations), optimal_plan(start, relations, greedy_first=False)):
                assert len(plan) == truth and is_valid(start, plan, relations)
            assert optimal_length(start, relations) == truth


def test_reference_bfs_agrees_on_a_known_problem():
    start = [["sketchbook", "phonebook", "keyboard", "novel"]]
    goal = [("mid", "keyboard", "sketchbook")]  # released problem 000, view one: 4 moves
    assert len(bfs_plan(start, goal)) == len(optimal_plan(start, goal)) == 4


def test_near_optimal_is_valid_and_within_twice_the_optimum():
    rng = random.Random(5)
    for n in (3, 6, 8, 10):
        items = [f"i{i}" for i in range(n)]
        for _ in range(30):
            start, relations = random_problem(rng, items)
            plan, best = near_optimal_plan(start, relations), optimal_plan(start, relations)
            assert is_valid(start, plan, relations) and len(best) <= len(plan) <= 2 * len(best)


def test_near_optimal_handles_100_items():
    rng = random.Random(1)
    items = [f"i{i:03d}" for i in range(100)]
    start, goal_board = uniform_board(items, rng), uniform_board(items, rng)
    plan = near_optimal_plan(start, board_relations(goal_board))
    assert is_valid(start, plan, board_relations(goal_board))


def test_unreachable_goals_have_no_plan():
    start = [["a", "b"], ["c"]]
    assert optimal_plan(start, [("top", None, "a"), ("mid", "b", "a")]) is None  # clear a, b on a
    assert optimal_plan(start, [("mid", "a", "b"), ("mid", "b", "a")]) is None  # cycle
    assert near_optimal_plan(start, [("mid", "a", "z")]) is None  # unknown item
    assert optimal_length(start, [("mid", "a", "z")]) is None


def test_plans_are_deterministic_and_independent_of_stack_order():
    goal = [("mid", "a", "d"), ("bot", "c", None), ("top", None, "b")]
    first = optimal_plan([["c", "a"], ["b", "d"]], goal)
    assert optimal_plan([["b", "d"], ["c", "a"]], goal) == first
    assert optimal_plan([["c", "a"], ["b", "d"]], goal, greedy_first=False) is not None


def test_optimal_on_every_pair_of_4_item_states_with_full_goals():
    states = all_states(["a", "b", "c", "d"])
    for start in states:
        dist = distances_from(start)  # a full goal is one state: its distance is the optimum
        for goal_board in states:
            relations = board_relations(goal_board)
            plan = optimal_plan(start, relations, greedy_first=False)  # the full-goal method
            assert len(plan) == dist[goal_board] and is_valid(start, plan, relations)
            assert len(optimal_plan(start, relations)) == dist[goal_board]
            assert len(optimal_plan(start, relations, greedy_first=False, method="astar")) == dist[goal_board]


def full_problem(rng, items):
    """A uniform initial board and the full goal of a uniform goal board."""
    return uniform_board(items, rng), board_relations(uniform_board(items, rng))


@pytest.mark.parametrize("n", [5, 6, 7, 8, 9])
def test_full_goal_method_matches_astar_on_random_problems(n):
    rng = random.Random(100 + n)
    items = [f"item {i}" for i in range(n)]
    for _ in range(150):
        start, relations = full_problem(rng, items)
        plan = optimal_plan(start, relations, greedy_first=False)
        assert is_valid(start, plan, relations)
        assert len(plan) == len(optimal_plan(start, relations, greedy_first=False, method="astar"))
        supports = [r for r in relations if r[0] != "top"]  # the clear facts follow from them
        assert len(optimal_plan(start, supports, greedy_first=False)) == len(plan)


def test_partial_goals_keep_the_astar_plans():
    rng = random.Random(8)
    for n in (5, 7, 9):
        items = [f"i{i}" for i in range(n)]
        for _ in range(60):
            start, relations = random_problem(rng, items)
            reference = optimal_plan(start, relations, method="astar")
            if sum(kind != "top" for kind, _top, _bottom in relations) == n:  # every support given
                assert len(optimal_plan(start, relations)) == len(reference)  # full: the other method
            else:
                assert optimal_plan(start, relations) == reference


def test_deadlocks_need_a_move_to_the_table_the_item_count_bound_misses():
    # a on c and b on d, goal a on d and b on c: each blocks the other's place, one goes to the table
    start, goal = [["c", "a"], ["d", "b"]], board_relations([["d", "a"], ["c", "b"]])
    assert len(optimal_plan(start, goal)) == 3 == len(bfs_plan(start, goal))
    # three stacks in a ring of such places: one detour breaks the ring
    start = [["p", "a"], ["q", "b"], ["r", "c"]]
    goal = board_relations([["q", "a"], ["r", "b"], ["p", "c"]])
    plan = optimal_plan(start, goal)
    assert len(plan) == 4 == len(bfs_plan(start, goal)) and is_valid(start, plan, goal)
    # two separate rings need one detour each
    start = [["c", "a"], ["d", "b"], ["g", "e"], ["h", "f"]]
    goal = board_relations([["d", "a"], ["c", "b"], ["h", "e"], ["g", "f"]])
    assert len(optimal_plan(start, goal)) == 6 == len(optimal_plan(start, goal, method="astar"))


def test_full_goal_steps_on_integer_boards():
    # items 0..2 in one stack 0 (bottom), 1, 2; goal: 2 on the table, 1 on 2, 0 on 1 (reversal)
    assert full_goal_steps([1, 2, -1], [(0, 1, 2)]) == [(2, -1), (1, 2), (0, 1)]
    # goal 0 on the table, 2 on 0, 1 on 2: 2 cannot go home while 1 is on 0, and 1 cannot go
    # home before 2 is: both go to the table first (4 moves, the per-item bound says 2)
    assert full_goal_steps([-1, 2, 0], [(0, 1, 2)]) == [(2, -1), (1, -1), (2, 0), (1, 2)]


def test_twenty_item_full_goals_are_valid_deterministic_and_between_the_bounds():
    rng = random.Random(20)
    items = [f"item{i:02d}" for i in range(20)]
    for _ in range(25):
        start, relations = full_problem(rng, items)
        plan = optimal_plan(start, relations, greedy_first=False)
        assert is_valid(start, plan, relations)
        assert len(plan) <= len(near_optimal_plan(start, relations))
        assert optimal_plan(start[::-1], relations[::-1], greedy_first=False) == plan
        assert optimal_length(start, relations) == len(plan)


def test_searches_stop_at_their_budget():
    start, goal = [["c", "a"], ["d", "b"]], [("mid", "a", "d"), ("mid", "b", "c")]  # partial: A*
    with pytest.raises(SearchBudgetExceeded, match="more than 1 expansions"):
        optimal_plan(start, goal, max_expansions=1)
    assert len(optimal_plan(start, goal, max_expansions=100)) == 3
    full = board_relations([["d", "a"], ["c", "b"]])  # the same deadlock as a full goal
    with pytest.raises(SearchBudgetExceeded, match="more than 1 deadlock-search steps"):
        optimal_plan(start, full, max_expansions=1)
    assert len(optimal_plan(start, full, max_expansions=3)) == 3


@pytest.mark.slow
@pytest.mark.parametrize("n", [10, 11, 12])
def test_full_goal_method_matches_astar_on_larger_random_problems(n):
    rng = random.Random(1000 + n)
    items = [f"item {i:02d}" for i in range(n)]
    for _ in range(150):
        start, relations = full_problem(rng, items)
        plan = optimal_plan(start, relations, greedy_first=False)
        assert is_valid(start, plan, relations)
        assert len(plan) == len(optimal_plan(start, relations, greedy_first=False, method="astar"))
