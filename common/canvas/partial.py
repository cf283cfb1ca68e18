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
- count, the largest group of the query's attribute type (its value ignored): the description
  fixes the counts of every value of the type, so this guesses among at most as many values as
  the type has (two for size); it differs whenever the asked value is not the largest group.
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


def _words_anywhere(prompt: str) -> str | None:
    """Existence: Yes when every word of the query occurs somewhere in the description."""
    words = _query(prompt, r"Is there an? .*\?")
    if words is None:
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


@dataclass(frozen=True)
class PartialSkill:
    """One partial skill: its name, task, what it does, and its rule (a prompt -> an answer, or
    None for a prompt of another question)."""

    name: str
    task: str
    about: str
    rule: Callable[[str], str | None]


PARTIAL_SKILLS = [
    PartialSkill("reverse-order", "shuffle_tracking", "the swaps applied in reverse order", _reverse),
    PartialSkill("all-but-last", "shuffle_tracking", "every swap tracked but the last", _all_but_last),
    PartialSkill(
        "words-anywhere", "existence", "Yes when every query word occurs in the description", _words_anywhere
    ),
    PartialSkill(
        "largest-group",
        "count",
        "the largest group of the query's attribute type (value ignored)",
        _largest_group,
    ),
]
