"""Check plans against the true problem under two rules, with diagnostics.

- ``lenient`` (the paper's): steps that do not parse and moves that are not applicable are
  skipped; the plan succeeds if the goal holds after the remaining moves.
- ``strict`` (VAL-like): the first step that does not parse or is not applicable fails the
  plan; otherwise it succeeds if the goal holds at the end.

A plan is a list of ``Step`` (from ``nlplan.parse_plan``) or of ``Move`` (from a planner).
"""

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from common.blocks.nlplan import Step
from common.blocks.state import Move, apply_move, canonical, goal_holds, is_applicable, move_english


@dataclass
class PlanCheck:
    """The verdicts and diagnostics of one plan."""

    lenient: bool  # the paper's rule
    strict: bool  # VAL-like rule
    plan_length: int  # non-empty lines (or moves) in the plan
    parsed: int  # steps that state a move of known items
    parse_rate: float  # parsed / plan_length (1.0 for an empty plan)
    valid_prefix: int  # leading steps that parse and apply in turn
    applied: int  # moves applied under the lenient rule
    goal_held_initially: bool  # the empty plan would succeed
    optimal_length: int | None = None
    optimality_gap: int | None = None  # applied - optimal, for plans that succeed (lenient)
    first_error: str | None = None  # why the strict rule failed (None if it succeeded)

    def as_dict(self) -> dict[str, Any]:
        """Return the fields as a plain dict (for a results row)."""
        return asdict(self)


def _as_steps(plan: Iterable[Step | Move]) -> list[Step]:
    """Return ``plan`` as Steps (Moves are wrapped with their sentence as text)."""
    return [step if isinstance(step, Step) else Step(move_english(step), step) for step in plan]


def check_plan(
    plan: Iterable[Step | Move],
    init_board: Iterable[Sequence[str]],
    goal: Iterable[Sequence],
    optimal_length: int | None = None,
) -> PlanCheck:
    """Return the PlanCheck of ``plan`` run from ``init_board`` towards the ``goal`` relations."""
    steps = _as_steps(plan)
    goal = [tuple(r) for r in goal]
    state = canonical(init_board)
    held = goal_holds(state, goal)
    applied = 0
    prefix_ok = True
    valid_prefix = 0
    first_error = None
    for index, step in enumerate(steps, start=1):
        if step.move is not None and is_applicable(state, step.move):
            state = apply_move(state, step.move)
            applied += 1
            valid_prefix += prefix_ok
            continue
        if prefix_ok:
            reason = step.error or f"not applicable: {step.text!r}"
            first_error = f"step {index}: {reason}"
            prefix_ok = False
    lenient = goal_holds(state, goal)
    strict = prefix_ok and lenient
    if prefix_ok and not lenient:
        first_error = "goal does not hold at the end"
    parsed = sum(step.move is not None for step in steps)
    gap = applied - optimal_length if lenient and optimal_length is not None else None
    return PlanCheck(
        lenient=lenient,
        strict=strict,
        plan_length=len(steps),
        parsed=parsed,
        parse_rate=parsed / len(steps) if steps else 1.0,
        valid_prefix=valid_prefix,
        applied=applied,
        goal_held_initially=held,
        optimal_length=optimal_length,
        optimality_gap=gap,
        first_error=None if strict else first_error,
    )
