"""Built-in planners that stand in for models: ``noop``, ``random`` and ``oracle``.

Each is a plain function ``plan(view, rng) -> list[Move]`` (``PLANNERS`` maps names to them);
a later step wraps them in the common model interface. ``random`` never looks at the goal: it
makes applicable moves at random, so it measures how often blind activity reaches a goal.
"""

import random
from collections.abc import Callable

from common.blocks.planner import optimal_plan
from common.blocks.problems import View
from common.blocks.state import Move, applicable_moves, apply_move, canonical


def noop_plan(view: View, rng: random.Random) -> list[Move]:
    """Return the empty plan (succeeds exactly when the goal already holds)."""
    return []


def random_plan(view: View, rng: random.Random, length: int | None = None) -> list[Move]:
    """Return ``length`` random applicable moves (default: as many as there are items),
    each drawn uniformly from the moves applicable at that point. Uses only ``rng``."""
    board = canonical(view.init_board)
    steps = len(view.items) if length is None else length
    plan = []
    for _ in range(steps):
        moves = applicable_moves(board)
        if not moves:
            break
        move = moves[rng.randrange(len(moves))]
        board = apply_move(board, move)
        plan.append(move)
    return plan


def oracle_plan(view: View, rng: random.Random) -> list[Move]:
    """Return a shortest plan (empty when the goal cannot be reached, which never happens for
    generated problems)."""
    return optimal_plan(view.init_board, view.goal) or []


PLANNERS: dict[str, Callable[[View, random.Random], list[Move]]] = {
    "noop": noop_plan,
    "random": random_plan,
    "oracle": oracle_plan,
}
