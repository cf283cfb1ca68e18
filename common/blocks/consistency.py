"""Consistency of sets of relations: can a goal be reached, does a set of facts describe a state?

Both checks return a list of human-readable conflicts (empty when consistent) instead of
raising, so that callers can record the reason of a failure (e.g. the planner finding no plan
because a model wrote an impossible goal) next to the result.
"""

from collections.abc import Iterable, Sequence

from common.blocks.state import Board, Relation, pddl_name, relation_pddl


def goal_conflicts(relations: Iterable[Sequence], items: Iterable[str] | None = None) -> list[str]:
    """Return why no state satisfies all ``relations`` (empty list when some state does).

    Checked: unknown items (when ``items`` is given), an item on itself, an item with two
    supports, two items on one item, ``clear`` of an item that has something on it, and cycles
    of ``on``. With none of these, putting every unconstrained item on the table satisfies the
    goal, so the list is empty exactly when the goal is reachable from every state.
    """
    relations = [tuple(r) for r in relations]
    problems: list[str] = []
    if items is not None:
        known = set(items)
        for relation in relations:
            for name in relation[1:]:
                if name is not None and name not in known:
                    problems.append(f"{relation_pddl(relation)} names an unknown object {name!r}")
    support: dict[str, Relation] = {}
    above: dict[str, Relation] = {}
    clear: dict[str, Relation] = {}
    for relation in relations:
        kind, top, bottom = relation
        if kind == "mid" and top == bottom:
            problems.append(f"{relation_pddl(relation)} puts an item on itself")
            continue
        if kind in ("bot", "mid"):
            _claim(support, top, relation, "has two supports", problems)
        if kind == "mid":
            _claim(above, bottom, relation, "has two items on it", problems)
        if kind == "top":
            clear[bottom] = relation
    for name in sorted(set(clear) & set(above)):
        problems.append(f"{relation_pddl(clear[name])} contradicts {relation_pddl(above[name])}")
    problems.extend(_cycles(support))
    return problems


def _claim(slot: dict[str, Relation], key: str, relation: Relation, what: str, problems: list[str]) -> None:
    """Record ``relation`` under ``key``; on a clash with a different relation, add a problem."""
    previous = slot.get(key)
    if previous is not None and previous != relation:
        problems.append(f"{key!r} {what}: {relation_pddl(previous)} and {relation_pddl(relation)}")
    else:
        slot[key] = relation


def _cycles(support: dict[str, Relation]) -> list[str]:
    """Return one message per cycle of ``on`` relations (a on b on ... on a)."""
    problems = []
    reported: set[str] = set()
    for start in sorted(support):
        seen = []
        name: str | None = start
        while name is not None and name not in seen and name not in reported:
            seen.append(name)
            relation = support.get(name)
            name = relation[2] if relation and relation[0] == "mid" else None
        if name is not None and name in seen:
            cycle = seen[seen.index(name) :]
            problems.append("cycle of on facts: " + " on ".join([*cycle, name]))
        reported.update(seen)
    return problems


def state_from_relations(
    relations: Iterable[Sequence], items: Iterable[str]
) -> tuple[Board | None, list[str]]:
    """Return ``(board, conflicts)`` for facts meant to describe a whole state of ``items``.

    A consistent description gives every item exactly one support (the table or one item), at
    most one item on each item, no cycles, and ``clear`` facts that agree with the ``on`` facts
    (an item is clear exactly when nothing is on it). ``board`` is None when there are conflicts.
    """
    items = sorted(set(items))
    relations = [tuple(r) for r in relations]
    problems = goal_conflicts(relations, items)
    support = {r[1]: r[2] for r in relations if r[0] in ("bot", "mid")}
    covered = {r[2] for r in relations if r[0] == "mid"}
    stated_clear = {r[2] for r in relations if r[0] == "top"}
    for name in items:
        if name not in support:
            problems.append(
                f"{name!r} has no support: neither (ontable {pddl_name(name)}) nor (on {pddl_name(name)} ...)"
            )
        elif name not in covered and name not in stated_clear:
            problems.append(f"{name!r} has nothing on it but no (clear {pddl_name(name)}) fact")
    if problems:
        return None, problems
    above = {bottom: top for top, bottom in support.items() if bottom is not None}
    stacks = []
    for bottom in (name for name in items if support[name] is None):
        stack = [bottom]
        while stack[-1] in above:
            stack.append(above[stack[-1]])
        stacks.append(tuple(stack))
    return tuple(sorted(stacks)), []
