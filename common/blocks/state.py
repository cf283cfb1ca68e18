"""The blocks-world state model: stacks, moves, goal relations and their English / PDDL facts.

A state is a tuple of stacks, each a tuple of item names listed bottom to top. ``canonical``
sorts the stacks, so two boards that differ only in the order of their stacks compare equal.
A move takes the top item of a stack to the table (``dest`` None) or onto the top of another
stack. Goal constraints are relations ``(type, top, bottom)`` as in the released problem files:
``("bot", x, None)`` x rests on the table, ``("mid", a, b)`` a is on b, ``("top", None, x)``
nothing is on x.
"""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

Board = tuple[tuple[str, ...], ...]
Relation = tuple[str, str | None, str | None]

RELATION_TYPES = ("bot", "mid", "top")


@dataclass(frozen=True, order=True)
class Move:
    """Move ``item`` (the top of its stack) onto ``dest``, or onto the table when ``dest`` is None."""

    item: str
    dest: str | None = None

    def __repr__(self) -> str:
        return f"<Move {self.item} -> {self.dest or 'table'}>"


def canonical(board: Iterable[Sequence[str]]) -> Board:
    """Return ``board`` as a tuple of non-empty stacks (tuples), sorted by their items."""
    return tuple(sorted(tuple(stack) for stack in board if len(stack)))


def items_of(board: Iterable[Sequence[str]]) -> list[str]:
    """Return the items of ``board`` in sorted order."""
    return sorted(item for stack in board for item in stack)


def supports(board: Iterable[Sequence[str]]) -> dict[str, str | None]:
    """Return ``{item: the item directly below it, or None on the table}``."""
    below: dict[str, str | None] = {}
    for stack in board:
        for index, item in enumerate(stack):
            below[item] = stack[index - 1] if index else None
    return below


def tops(board: Iterable[Sequence[str]]) -> list[str]:
    """Return the clear items (tops of stacks) in the order of the stacks."""
    return [stack[-1] for stack in board if len(stack)]


def is_applicable(board: Board, move: Move) -> bool:
    """Return whether ``move`` can be made in ``board`` (item clear, destination clear and not
    the item itself, and the move changes something: an item already on the table cannot be
    moved to the table)."""
    clear = tops(board)
    if move.item not in clear:
        return False
    if move.dest is None:
        return supports(board)[move.item] is not None
    return move.dest in clear and move.dest != move.item


def apply_move(board: Board, move: Move) -> Board:
    """Return the canonical board after ``move``; raise ValueError if it is not applicable."""
    if not is_applicable(board, move):
        raise ValueError(f"move not applicable: {move!r} in {board!r}")
    stacks = [list(stack) for stack in board]
    for stack in stacks:
        if stack[-1] == move.item:
            stack.pop()
    if move.dest is None:
        stacks.append([move.item])
    else:
        for stack in stacks:
            if stack and stack[-1] == move.dest:
                stack.append(move.item)
    return canonical(stacks)


def applicable_moves(board: Board) -> list[Move]:
    """Return every applicable move in a fixed order: by item name, the table first, then
    destinations by name."""
    clear = sorted(tops(board))
    below = supports(board)
    moves = []
    for item in clear:
        if below[item] is not None:
            moves.append(Move(item, None))
        moves.extend(Move(item, dest) for dest in clear if dest != item)
    return moves


# ---- goal relations -----------------------------------------------------------------------------
def board_relations(board: Iterable[Sequence[str]]) -> list[Relation]:
    """Return the relations that fully specify ``board``, stack by stack: the bottom rests on the
    table, each item is on the one below, nothing is on the top."""
    relations: list[Relation] = []
    for stack in board:
        relations.append(("bot", stack[0], None))
        relations.extend(("mid", stack[i], stack[i - 1]) for i in range(1, len(stack)))
        relations.append(("top", None, stack[-1]))
    return relations


def holds(board: Iterable[Sequence[str]], relation: Sequence) -> bool:
    """Return whether one relation ``(type, top, bottom)`` holds in ``board``."""
    kind, top, bottom = relation
    below = supports(board)
    if kind == "bot":
        return top in below and below[top] is None
    if kind == "mid":
        return top in below and below[top] == bottom
    if kind == "top":
        return bottom in tops(board)
    raise ValueError(f"unknown relation type {kind!r} (known: {', '.join(RELATION_TYPES)})")


def goal_holds(board: Iterable[Sequence[str]], relations: Iterable[Sequence]) -> bool:
    """Return whether every relation holds in ``board``."""
    board = list(board)
    return all(holds(board, relation) for relation in relations)


def rename_relation(relation: Sequence, mapping: dict[str, str]) -> Relation:
    """Return ``relation`` with its items renamed by ``mapping`` (names not in it are kept)."""
    kind, top, bottom = relation
    return (kind, mapping.get(top, top) if top else None, mapping.get(bottom, bottom) if bottom else None)


def rename_board(board: Iterable[Sequence[str]], mapping: dict[str, str]) -> list[list[str]]:
    """Return ``board`` (same stack order) with items renamed by ``mapping``."""
    return [[mapping.get(item, item) for item in stack] for stack in board]


# ---- English and PDDL renderings ----------------------------------------------------------------
def pddl_name(item: str) -> str:
    """Return the PDDL object name of an item: spaces become hyphens."""
    return "-".join(item.split())


ENGLISH = {  # the paper's sentences for the three relation types
    "bot": "The {top} rests on the table.",
    "mid": "The {top} is on the {bottom}.",
    "top": "There is nothing on the {bottom}.",
}
PDDL = {"bot": "(ontable {top})", "mid": "(on {top} {bottom})", "top": "(clear {bottom})"}


def relation_english(relation: Sequence) -> str:
    """Return the English sentence of a relation, as in the paper's prompts."""
    kind, top, bottom = relation
    return ENGLISH[kind].format(top=top, bottom=bottom)


def relation_pddl(relation: Sequence) -> str:
    """Return the PDDL fact of a relation: ``(ontable x)``, ``(on a b)`` or ``(clear x)``."""
    kind, top, bottom = relation
    return PDDL[kind].format(top=top and pddl_name(top), bottom=bottom and pddl_name(bottom))


def move_english(move: Move) -> str:
    """Return the English sentence of a move: "Move the a onto the b." or "... onto the table."."""
    return f"Move the {move.item} onto the {move.dest or 'table'}."


def move_pddl(board: Board, move: Move) -> str:
    """Return the grounded action of the simple-blocks domain that makes ``move`` in ``board``."""
    below = supports(board)[move.item]
    item = pddl_name(move.item)
    if move.dest is None:
        return f"(unstack {item} {pddl_name(below)})"
    if below is None:
        return f"(stackfromtable {item} {pddl_name(move.dest)})"
    return f"(stack {item} {pddl_name(below)} {pddl_name(move.dest)})"
