"""Read PDDL facts written by a model, e.g. ``(ontable phone)\\n(on plate phone)``, into relations.

``read_facts`` accepts a sequence of ground atoms of the simple-blocks domain (``;`` comments
allowed) and returns relations ``(type, top, bottom)`` in the item names of the problem. It
raises ``FactError`` whose ``kind`` is one of ``syntax``, ``unknown predicate``,
``undeclared object`` or ``arity``, and whose message gives the line and column. ``read_state``
also checks that the facts describe one consistent state and returns the board.
``problem_pddl`` writes a problem for an external planner (the benchmark runs pyperplan on it).
"""

import re
from collections.abc import Iterable, Sequence

from common.blocks.consistency import state_from_relations
from common.blocks.state import Board, Relation, board_relations, pddl_name, relation_pddl

# predicate -> (arity, relation type or None for facts that carry no state, e.g. noteq)
PREDICATES: dict[str, tuple[int, str | None]] = {
    "ontable": (1, "bot"),
    "on": (2, "mid"),
    "clear": (1, "top"),
    "noteq": (2, None),
}
ERROR_KINDS = ("syntax", "unknown predicate", "undeclared object", "arity", "inconsistent state")
_TOKEN = re.compile(r"\s+|;[^\n]*|\(|\)|[^\s()]+")


class FactError(ValueError):
    """Model-written facts that cannot be read; ``kind`` (one of ERROR_KINDS) says which rule was broken."""

    def __init__(self, kind: str, message: str):
        if kind not in ERROR_KINDS:
            raise ValueError(f"unknown fact error kind {kind!r}")  # a bug here, not in the facts
        super().__init__(f"{kind}: {message}")
        self.kind = kind


def object_key(name: str) -> str:
    """Return the matching key of an object name: lower case, hyphens for spaces."""
    return pddl_name(name.lower().replace("-", " "))


def _tokens(text: str) -> list[tuple[str, int, int]]:
    """Return ``(token, line, column)`` for each parenthesis and word (comments and space dropped)."""
    tokens = []
    line, line_start = 1, 0
    for match in _TOKEN.finditer(text):
        token = match.group()
        if not token.isspace() and not token.startswith(";"):
            tokens.append((token, line, match.start() - line_start + 1))
        newlines = token.count("\n")
        if newlines:
            line += newlines
            line_start = match.start() + token.rindex("\n") + 1
    return tokens


def read_atoms(text: str) -> list[tuple[str, list[str], int, int]]:
    """Return ``(predicate, args, line, column)`` for each top-level atom ``(pred arg ...)``.

    Raises FactError(kind="syntax") for text outside parentheses, nested or unbalanced
    parentheses and empty atoms.
    """
    atoms = []
    current: list[str] | None = None
    start = (0, 0)
    for token, line, col in _tokens(text):
        if token == "(":
            if current is not None:
                raise FactError("syntax", f"line {line}, column {col}: nested '(' inside an atom")
            current, start = [], (line, col)
        elif token == ")":
            if current is None:
                raise FactError("syntax", f"line {line}, column {col}: ')' without a matching '('")
            if not current:
                raise FactError("syntax", f"line {line}, column {col}: empty atom '()'")
            atoms.append((current[0].lower(), current[1:], *start))
            current = None
        elif current is None:
            raise FactError("syntax", f"line {line}, column {col}: {token!r} outside parentheses")
        else:
            current.append(token)
    if current is not None:
        raise FactError("syntax", f"line {start[0]}, column {start[1]}: '(' is never closed")
    return atoms


def read_facts(text: str, objects: Iterable[str]) -> list[Relation]:
    """Return the relations stated by ``text``, in the names of ``objects`` (the declared items).

    Object names match case-insensitively with hyphens or spaces; ``noteq`` atoms are checked
    and dropped; a repeated fact is kept once. Raises FactError for any broken rule.
    """
    names = {object_key(name): name for name in objects}
    relations: list[Relation] = []
    for predicate, args, line, col in read_atoms(text):
        where = f"line {line}, column {col}"
        if predicate not in PREDICATES:
            raise FactError(
                "unknown predicate", f"{where}: ({predicate} ...) is not one of {', '.join(PREDICATES)}"
            )
        arity, kind = PREDICATES[predicate]
        if len(args) != arity:
            raise FactError(
                "arity",
                f"{where}: {predicate} takes {arity} argument(s), got {len(args)}: "
                f"({predicate} {' '.join(args)})",
            )
        unknown = [arg for arg in args if object_key(arg) not in names]
        if unknown:
            raise FactError(
                "undeclared object",
                f"{where}: {unknown[0]!r} in ({predicate} {' '.join(args)}) is not an object of the problem",
            )
        resolved = [names[object_key(arg)] for arg in args]
        if kind is None:
            continue
        relation: Relation = (
            (kind, resolved[0], None)
            if kind == "bot"
            else (kind, None, resolved[0])
            if kind == "top"
            else (kind, resolved[0], resolved[1])
        )
        if relation not in relations:
            relations.append(relation)
    return relations


_ATOM = re.compile(r"\([^()]*\)")


def read_each_fact(text: str, objects: Iterable[str]) -> tuple[list[Relation], list[str]]:
    """Return ``(relations, unread)``: the facts of ``text`` read one atom at a time, so that a
    bad atom does not hide the good ones (for scoring translation accuracy).

    Every innermost ``( ... )`` group is read on its own (``read_facts``); ``unread`` holds the
    reason for each that fails (unknown predicate, undeclared object, arity, empty). Text
    outside atoms is ignored. Relations are deduplicated in order, ``noteq`` dropped.
    """
    objects = list(objects)
    relations: list[Relation] = []
    unread = []
    for match in _ATOM.finditer(text):
        try:
            found = read_facts(match.group(), objects)
        except FactError as exc:
            unread.append(f"{match.group()}: {exc}")
            continue
        relations += [relation for relation in found if relation not in relations]
    return relations, unread


def read_state(text: str, objects: Iterable[str]) -> Board:
    """Return the board described by ``text`` (see ``read_facts``).

    Raises FactError(kind="inconsistent state") naming every conflict when the facts do not
    give each object exactly one support, at most one object on each, and agreeing ``clear``.
    """
    objects = list(objects)
    board, problems = state_from_relations(read_facts(text, objects), objects)
    if board is None:
        raise FactError("inconsistent state", "; ".join(problems))
    return board


def problem_pddl(board: Iterable[Sequence[str]], goal: Iterable[Sequence], name: str = "blocks") -> str:
    """Return a PDDL problem of the simple-blocks domain: the objects, the initial facts of
    ``board`` with the ``noteq`` facts the domain needs, and the ``goal`` relations."""
    board = [list(stack) for stack in board]
    objects = sorted(pddl_name(item) for stack in board for item in stack)
    init = [relation_pddl(r) for r in board_relations(board)]
    init += [f"(noteq {a} {b})" for a in objects for b in objects if a != b]
    goals = " ".join(relation_pddl(r) for r in goal)
    return (
        f"(define (problem {name}) (:domain simple-blocks)\n  (:objects {' '.join(objects)})\n"
        f"  (:init {' '.join(init)})\n  (:goal (and {goals})))\n"
    )
