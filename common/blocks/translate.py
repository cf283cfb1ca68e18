"""The LLM + planner method, offline part: read translated facts, plan, check on the true problem.

``solve_from_facts`` takes a model's PDDL facts for the initial state and the goal, plans
from them with the optimal planner, and runs the plan on the TRUE problem. Like the paper, a
reading error, an inconsistent initial state or a goal the planner cannot reach is a failure,
and its reason is kept. The object list comes from the true problem (the paper's choice; a
caller that wants a stricter protocol passes the objects named in the English description).
"""

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from common.blocks.check import PlanCheck, check_plan
from common.blocks.consistency import goal_conflicts
from common.blocks.pddl import FactError, read_each_fact, read_facts, read_state
from common.blocks.planner import optimal_plan
from common.blocks.problems import View
from common.blocks.state import Move, Relation, relation_pddl

_SENTENCES = (  # the three goal-constraint sentences of the prompts, most specific first
    ("top", re.compile(r"There is nothing on the (?P<bottom>.+?)\.?", re.IGNORECASE)),
    ("bot", re.compile(r"The (?P<top>.+?) rests on the table\.?", re.IGNORECASE)),
    ("mid", re.compile(r"The (?P<top>.+?) is on the (?P<bottom>.+?)\.?", re.IGNORECASE)),
)


@dataclass
class TranslationOutcome:
    """What became of one translated problem."""

    plan: list[Move] | None  # the planner's plan (None: no plan)
    check: PlanCheck | None  # the plan run on the true problem (None: no plan)
    reason: str | None  # why there is no plan
    init_facts: list[Relation] | None = None
    goal_facts: list[Relation] | None = None
    errors: dict[str, str] = field(default_factory=dict)  # part ("init", "goal") -> why it failed

    @property
    def lenient(self) -> bool:
        """Return the paper's verdict: a plan that reaches the true goal (lenient rule)."""
        return self.check is not None and self.check.lenient

    @property
    def strict(self) -> bool:
        """Return the strict verdict (every planned move applicable on the true problem)."""
        return self.check is not None and self.check.strict


def solve_from_facts(
    view: View, init_text: str, goal_text: str, objects: Iterable[str] | None = None
) -> TranslationOutcome:
    """Return the outcome of planning from model-written facts for ``view`` (see module doc)."""
    objects = view.items if objects is None else list(objects)
    init_facts = goal = board = None
    errors = {}  # why there is no plan, by the part to blame; the initial state is reported first
    try:
        init_facts = read_facts(init_text, objects)
        board = read_state(init_text, objects)
    except FactError as exc:
        errors["init"] = f"initial facts: {exc}"
    try:
        goal = read_facts(goal_text, objects)
    except FactError as exc:
        errors["goal"] = f"goal facts: {exc}"
    if errors:  # the facts read so far are kept for their accuracy
        return TranslationOutcome(None, None, next(iter(errors.values())), init_facts, goal, errors)
    conflicts = goal_conflicts(goal, objects)
    if conflicts:
        reason = "planner found no plan: " + "; ".join(conflicts)
        return TranslationOutcome(None, None, reason, init_facts, goal, {"goal": reason})
    plan = optimal_plan(board, goal)
    if plan is None:  # cannot happen for a consistent goal; kept for safety
        reason = "planner found no plan"
        return TranslationOutcome(None, None, reason, init_facts, goal, {"goal": reason})
    return TranslationOutcome(plan, check_plan(plan, view.init_board, view.goal), None, init_facts, goal)


def fact_accuracy(
    predicted: list[Relation] | None, truth: list[Relation], unread: int = 0
) -> tuple[float, float]:
    """Return ``(precision, recall)`` of predicted facts against the true ones (0, 0 if none).

    ``unread`` atoms (written, but naming an unknown object or predicate) count as wrong facts
    in the precision; they cannot be right.
    """
    written = len(predicted or []) + unread
    if not written:
        return 0.0, 0.0
    true_set = {tuple(r) for r in truth}
    hits = sum(1 for r in predicted or [] if tuple(r) in true_set)
    return hits / written, hits / len(true_set) if true_set else 0.0


def facts_accuracy(text: str, objects: Iterable[str], truth: list[Relation]) -> dict[str, Any]:
    """Return the accuracy of model-written facts read atom by atom (``pddl.read_each_fact``): one
    unreadable fact does not zero the others. Keys ``precision``, ``recall``, ``unread`` (the
    reasons of the atoms that could not be read)."""
    relations, unread = read_each_fact(text, objects)
    precision, recall = fact_accuracy(relations, truth, len(unread))
    return {"precision": precision, "recall": recall, "unread": unread}


def rule_translate(text: str) -> str:
    """Return the PDDL facts of the English template sentences in ``text`` (one per line, a
    leading ";" allowed), in order; other lines are ignored. This is the built-in translation
    "model": it reads the templates perfectly, an upper bound for the LLM + planner method."""
    facts = []
    for line in text.splitlines():
        sentence = line.strip().lstrip(";").strip()
        for kind, pattern in _SENTENCES:
            match = pattern.fullmatch(sentence)
            if match:
                names = match.groupdict()
                facts.append(relation_pddl((kind, names.get("top"), names.get("bottom"))))
                break
    return "".join(fact + "\n" for fact in facts)


def described_objects(text: str) -> list[str]:
    """Return the item names the English template sentences of ``text`` mention, sorted: the
    objects a model could know from the description alone (the stricter protocol)."""
    names: dict[str, None] = {}
    for line in text.splitlines():
        sentence = line.strip().lstrip(";").strip()
        for _, pattern in _SENTENCES:
            match = pattern.fullmatch(sentence)
            if match:
                names.update(dict.fromkeys(n for n in match.groupdict().values() if n))
                break
    return sorted(names)
