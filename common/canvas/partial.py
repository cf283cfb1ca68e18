"""Partial skills: rules that read the asked facts, but only part of what the question needs.

Unlike the shortcuts (``shortcuts``), which never read the asked fact and should score chance,
these do read it, and are right whenever what they skip does not matter; so they are reported
with the share of items on which they differ from the skill (where what they skip matters), and
the sets are built so that share is large. Each reads the prompt text only (``reading``).

- shuffle tracking, swaps applied in reverse order: the skill exactly when reversing changes
  nothing at the asked position (always so with an odd number of swaps on 3 shapes, hence the
  even default); the set balances it like the shortcuts (``tasks.shuffle_tracking.RULES``);
- shuffle tracking, every swap but the last: right unless the last swap is the decisive one;
- existence, every word of the query somewhere in the description (not necessarily on one
  shape): the skill on one-attribute queries, and the set asks its multi-attribute "No"
  questions about near misses (``tasks.existence``), so it differs on all of those;
- count, the largest group of the query's attribute type (its value ignored; a description-level
  count): the description fixes the counts of every value of the type, so this guesses among at
  most as many values as the type has (two for size); it differs whenever the asked value is not
  the largest group;
- shuffle tracking, stopping after the first swap: balanced like reverse order;
- existence tracking, additions minus removals over all events (a description-level count, no
  shape linked): the asked shape's twin makes the events the same for both answers, so it is at
  chance;
- coordinate, towards the canvas centre from the reference's quadrant: the reference's centre is
  drawn apart from the answer, so it is right one time in eight;
- coordinate, from the canvas centre to the subject: the subject's centre alone (see the task: on
  a bounded canvas it must lean the answer's way);
- transitivity, from the middle of the line to the subject: the subject's place alone, found by
  linking every sentence but ignoring the reference.
"""

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from common.canvas import reading

WORDS = r"small|large|red|blue|yellow|green|square|circle|triangle"
ATTRIBUTE = {
    w: i for i, group in enumerate((("small", "large"), ("red", "blue", "yellow", "green"))) for w in group
}


def _reverse(prompt: str) -> str | None:
    """Shuffle tracking with the swaps applied last first."""
    return reading.after_swaps(prompt, lambda swaps: list(reversed(swaps)))


def _all_but_last(prompt: str) -> str | None:
    """Shuffle tracking of every swap but the last."""
    return reading.after_swaps(prompt, lambda swaps: swaps[:-1])


def _query(prompt: str, pattern: str) -> list[str] | None:
    """Return the attribute words of a question matching ``pattern``, or None."""
    asked = reading.question(prompt)
    if not re.fullmatch(pattern, asked) or asked.endswith(" in the canvas?"):
        return None
    return re.findall(WORDS, asked)


def words_anywhere(prompt: str) -> str | None:
    """Existence, a query of several words: Yes when every word of the query occurs somewhere in
    the description (for one word, reading it is the skill: not read)."""
    words = _query(prompt, r"Is there an? .*\?")
    if words is None or len(words) < 2:
        return None
    named = " ".join(reading.shapes_named(reading.description(prompt))).split()
    return "Yes" if all(w in named for w in words) else "No"


def _largest_group(prompt: str) -> str | None:
    """Count: the largest number of shapes sharing a value of the query's attributes, whatever
    the value ("How many red shapes?": the size of the largest colour group)."""
    words = _query(prompt, r"How many .*\?")
    if words is None:
        return None
    kinds = [ATTRIBUTE.get(w, 2) for w in words]  # 0 size, 1 colour, 2 kind
    shapes = [s.split() for s in reading.shapes_named(reading.description(prompt))]
    groups = Counter(tuple(shape[k] for k in kinds) for shape in shapes)
    return str(max(groups.values(), default=0))


def _first_swap(prompt: str) -> str | None:
    """Shuffle tracking of the first swap only."""
    return reading.after_swaps(prompt, lambda swaps: swaps[:1])


def _net_events(prompt: str) -> str | None:
    """Existence tracking: Yes when the events add more shapes than they remove (whichever)."""
    if not re.fullmatch(rf"Is there a {reading.SHAPE} in the canvas\?", reading.question(prompt)):
        return None
    kinds = [kind for _, kind in reading.events(reading.description(prompt))]
    return "Yes" if kinds.count("add") > kinds.count("remove") else "No"


def _centre(prompt: str, shape: str) -> tuple[int, int] | None:
    """Return the centre the coordinates description gives ``shape``, or None."""
    found = re.search(rf"There is a {shape} at \((-?\d+), (-?\d+)\)", reading.description(prompt))
    return (int(found.group(1)), int(found.group(2))) if found else None


def _towards_centre(prompt: str) -> str | None:
    """Coordinate: the direction from the reference towards the canvas centre (its quadrant's)."""
    try:
        _, reference = reading.relative_pair(reading.question(prompt))
    except ValueError:
        return None
    centre = _centre(prompt, reference)
    if centre is None:
        return None
    return f"{'Below' if centre[1] > 0 else 'Above'} {'Left' if centre[0] > 0 else 'Right'}"


def _from_centre(prompt: str) -> str | None:
    """Coordinate: the direction from the canvas centre to the subject (its quadrant)."""
    try:
        subject, _ = reading.relative_pair(reading.question(prompt))
    except ValueError:
        return None
    centre = _centre(prompt, subject)
    if centre is None:
        return None
    return f"{'Above' if centre[1] > 0 else 'Below'} {'Right' if centre[0] > 0 else 'Left'}"


def line_place(prompt: str) -> str | None:
    """Transitivity: the direction from the middle of the subject's row (else its column) to the
    subject (the lines found by linking every sentence; the reference ignored)."""
    try:
        subject, _ = reading.relative_pair(reading.question(prompt))
    except ValueError:
        return None
    for up, lines in reading.chain_lines(reading.description(prompt)).items():
        for line in lines:
            if subject in line:
                return up if line.index(subject) >= (len(line) - 1) / 2 else reading.OPPOSITE[up]
    return None


def final_states(prompt: str) -> dict[str, bool] | None:
    """Return whether each shape an existence-tracking prompt names is on the canvas after its
    events (the first description, then each event), or None for another question."""
    if not re.fullmatch(rf"Is there a {reading.SHAPE} in the canvas\?", reading.question(prompt)):
        return None
    text = reading.description(prompt)
    present = {name: True for name in reading.shapes_named(reading.without_events(text))}
    for name, kind in reading.events(text):
        present[name] = kind == "add"
    return present


def _majority_present(prompt: str) -> str | None:
    """Existence tracking: every shape tracked, Yes when most of those named end on the canvas
    (which one is asked ignored)."""
    states = final_states(prompt)
    if states is None:
        return None
    return "Yes" if 2 * sum(states.values()) > len(states) else "No"


def _multi_event_majority(prompt: str) -> str | None:
    """Existence tracking: the shapes named in three or more events tracked (the asked shape is
    often one of them), Yes when most of them end on the canvas (which one is asked ignored; a tie
    or none: not read)."""
    states = final_states(prompt)
    if states is None:
        return None
    named = Counter(name for name, _ in reading.events(reading.description(prompt)))
    tracked = [name for name, count in named.items() if count >= 3]
    present = sum(states[name] for name in tracked)
    if not tracked or 2 * present == len(tracked):
        return None
    return "Yes" if 2 * present > len(tracked) else "No"


def _unswapped_stays(prompt: str) -> str | None:
    """Shuffle tracking: the shape the line-up puts at the asked position stays there when no swap
    names it (other prompts: not read)."""
    try:
        reading.position(reading.question(prompt), 3)
    except ValueError:
        return None
    named = [shape for pair in reading.swaps(reading.description(prompt)) for shape in pair]
    start = reading.line_up(reading.description(prompt))
    shape = start[reading.position(reading.question(prompt), len(start))]
    return None if shape in named else shape.title()


@dataclass(frozen=True)
class PartialSkill:
    """One partial skill: its name, task, what it does, and its rule (a prompt -> an answer, or
    None for a prompt of another question)."""

    name: str
    task: str
    about: str
    rule: Callable[[str], str | None]
    blind_to: tuple[
        str, ...
    ] = ()  # the inputs a twin varies that it does not read (tests/canvas/test_twins.py)


PARTIAL_SKILLS = [
    PartialSkill("reverse-order", "shuffle_tracking", "the swaps applied in reverse order", _reverse),
    PartialSkill("first-swap", "shuffle_tracking", "the first swap tracked, the others ignored", _first_swap),
    PartialSkill("all-but-last", "shuffle_tracking", "every swap tracked but the last", _all_but_last),
    PartialSkill(
        "unswapped-stays",
        "shuffle_tracking",
        "a shape no swap names stays where the line-up puts it (read only then)",
        _unswapped_stays,
    ),
    PartialSkill(
        "words-anywhere",
        "existence",
        "Yes when every query word occurs in the description",
        words_anywhere,
        ("canvas",),
    ),
    PartialSkill(
        "largest-group",
        "count",
        "the largest group of the query's attribute type (value ignored): a description-level count",
        _largest_group,
    ),
    PartialSkill(
        "net-events",
        "existence_tracking",
        "Yes when the events add more shapes than they remove: a description-level count",
        _net_events,
    ),
    PartialSkill(
        "majority-present",
        "existence_tracking",
        "every shape tracked; Yes when most of them end on the canvas (the asked one ignored)",
        _majority_present,
    ),
    PartialSkill(
        "multi-event-majority",
        "existence_tracking",
        "the shapes named in three or more events tracked; Yes when most end on the canvas (none asked)",
        _multi_event_majority,
    ),
    PartialSkill(
        "towards-centre",
        "coordinate",
        "towards the canvas centre from the reference's quadrant",
        _towards_centre,
        ("subject",),
    ),
    PartialSkill(
        "from-centre", "coordinate", "from the canvas centre to the subject (its quadrant)", _from_centre
    ),
    PartialSkill(
        "line-place",
        "transitivity",
        "from the middle of the subject's row (or column) to the subject (reference ignored)",
        line_place,
        ("reference",),
    ),
]
