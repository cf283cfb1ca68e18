"""Parse natural-language plans: "Move the writing pad onto the keyboard." / "... onto the table."

The parser is case-insensitive, treats spaces and hyphens in names alike, tolerates a missing
final period and takes "to" or "on" for "onto" (real replies say "Move the tablet to the
table."; none of the paper's 300 released plans does), but it never guesses: a line that is
not a move sentence is ``unparseable``, and a move naming something that is not an item of the
problem is reported as an ``unknown object`` with the name as written. ``render_plan`` writes
plans in the exact sentence form of the prompts.
"""

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from common.blocks.pddl import object_key
from common.blocks.state import Move, move_english

# "onto", or the "to" and "on" of real replies ("Move the tablet to the table."): the same move
_MOVE = re.compile(
    r"^\s*move\s+the\s+(?P<item>.+?)\s+(?:onto|on\s+to|to|on)\s+the\s+(?P<dest>.+?)\s*\.?\s*$", re.IGNORECASE
)
STOP_MARKER = "Initially:"  # the paper's stop sequence for planning completions
# a line opening another problem's section: a completion that writes one without "Initially:"
# (a base model inventing the next example) has ended its plan there
_NEXT_PROBLEM = re.compile(r"^\s*(?:Initially|Goal|Actions):", re.MULTILINE)


@dataclass(frozen=True)
class Step:
    """One non-empty line of a plan: the move it states, or why it states none."""

    text: str
    move: Move | None = None
    error: str | None = None  # "unparseable: ..." or "unknown object: ..."

    def __repr__(self) -> str:
        return f"<Step {self.move!r}>" if self.move else f"<Step error {self.error}>"


def cut_completion(text: str, stop: str = STOP_MARKER) -> str:
    """Return ``text`` up to (not including) the first ``stop`` marker, or the first line that
    opens a section of another problem ("Goal:", "Actions:"), whichever comes first."""
    index = text.find(stop)
    text = text if index < 0 else text[:index]
    first_line_end = text.find("\n", len(text) - len(text.lstrip()))  # it may open with "Actions:"
    section = _NEXT_PROBLEM.search(text, first_line_end + 1) if first_line_end >= 0 else None
    return text if section is None else text[: section.start()]


def parse_line(line: str, objects: dict[str, str]) -> Step:
    """Return the Step of one line; ``objects`` maps ``object_key(name)`` to the item name."""
    match = _MOVE.match(line)
    if not match:
        return Step(line, error="unparseable: not 'Move the <item> onto the <item or table>.'")
    item_text, dest_text = match.group("item"), match.group("dest")
    item = objects.get(object_key(item_text))
    if item is None:
        return Step(line, error=f"unknown object: {item_text!r}")
    if object_key(dest_text) == "table" and "table" not in objects:
        return Step(line, Move(item, None))
    dest = objects.get(object_key(dest_text))
    if dest is None:
        return Step(line, error=f"unknown object: {dest_text!r}")
    return Step(line, Move(item, dest))


def parse_plan(text: str, objects: Iterable[str]) -> list[Step]:
    """Return one Step per non-empty line of ``text``, resolving names against ``objects``."""
    names = {object_key(name): name for name in objects}
    return [parse_line(line.strip(), names) for line in text.splitlines() if line.strip()]


def render_plan(moves: Sequence[Move]) -> str:
    """Return the plan as prompt sentences, one per line, each ending with a newline."""
    return "".join(move_english(move) + "\n" for move in moves)
