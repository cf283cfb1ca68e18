"""Shuffle tracking: shapes in a column from bottom to top, then swaps, then
"What shape is second from the top?".

The task owns the description. It needs every shape of the canvas above the previous one by
the relation rule (else "from bottom to top" would not be justified), so it places its canvases
as a column: each shape above the previous one by the smallest integer step beyond the margin,
the spare height spread at random (sorted random cut points), inside the border, then random x
positions (no touching). Shapes that cannot fit in one column make the request impossible.

Balanced over two independent axes of N labels (``strata``): the position asked (0 = bottom;
positions below the middle are asked from the bottom, the others from the top), and which
shortcut rules (``RULES``) give the answer: each rule ignores the tracking in its own way
("ignore the swaps", "stop after the first swap", "the shape named last", "the first shape of
the last swap", "the shape named first", "the most-swapped shape"), and a label of the second
axis names the rules that are right on the item, exactly one label of N naming each rule, so
each rule is right exactly as often as a random pick among the N shapes. With N >= 5 the labels
are the rules alone (the shape named first and the most-swapped shape together: a shape named
first that is the answer is named again or ends where the first swap put it) and N - 5
``none``; fewer shapes group more rules per label (``rule_groups``). The swaps are drawn at
random until the rules right are those of the label (bounded). The whole balance needs three
swaps; with fewer, only "ignore the swaps" is balanced. "Stop before the last swap" is not a
rule without skill (it tracks every swap but one) and is right when the last swap misses the
asked position: 1 - 2/N, as with unbalanced random swaps. The answer is an identity: "Large
Blue Square".

No same-canvas examples: a question about another position names a shape that is not the
answer, so examples would narrow the answer by elimination (from N shapes to N - 2 with two
examples); other-canvas examples carry no such hint.
"""

import itertools
import math
import random

from common.canvas import describe
from common.canvas.relations import vertical
from common.canvas.shapes import Geometry, Shape, bounding_box, fits, margin, title
from common.canvas.tasks.base import Impossible, Questions, Task

ORDINALS = [
    "first",
    "second",
    "third",
    "fourth",
    "fifth",
    "sixth",
    "seventh",
    "eighth",
    "ninth",
    "tenth",
    "eleventh",
    "twelfth",
    "thirteenth",
    "fourteenth",
    "fifteenth",
    "sixteenth",
    "seventeenth",
    "eighteenth",
    "nineteenth",
    "twentieth",
    "twenty-first",
    "twenty-second",
    "twenty-third",
    "twenty-fourth",
]


def position_question(position: int, n: int) -> str:
    """Return the question for 0-based ``position`` from the bottom of ``n`` shapes."""
    if position < (n - 1) / 2:
        return f"What shape is {ORDINALS[position]} from the bottom?"
    return f"What shape is {ORDINALS[n - 1 - position]} from the top?"


RULES = ["initial", "first-swap", "last-named", "last-swap-first", "first-named", "most-swapped"]


def rule_groups(num_shapes: int, swaps: int) -> list[list[str]]:
    """Return the rules right together on the items of each label of the rule axis, one list per
    label (``[]``: none right); every rule is in exactly one list (see the module docstring)."""
    if swaps < 3:
        return [["initial"]] + [[]] * (num_shapes - 1)
    if num_shapes >= 5:
        return [
            ["initial"],
            ["first-swap"],
            ["last-named"],
            ["last-swap-first"],
            ["first-named", "most-swapped"],
        ] + [[]] * (num_shapes - 5)
    if num_shapes == 4:
        return [
            ["initial", "first-swap"],
            ["last-named"],
            ["last-swap-first"],
            ["first-named", "most-swapped"],
        ]
    return [["initial", "first-swap", "last-named"], ["last-swap-first", "first-named", "most-swapped"], []]


def rule_label(group: list[str], index: int) -> str:
    """Return the label of a rule group: its rules joined with ``+``, or ``none-<index>``."""
    return "+".join(group) or f"none-{index}"


def rules_right(start: list[str], swaps: list[tuple[int, int]], position: int) -> list[str]:
    """Return the ``RULES`` whose answer is the shape at ``position`` after ``swaps`` (index pairs,
    the shape at the first index named first) from the line-up ``start``."""
    order, named, after_first = list(start), [], None
    for i, j in swaps:
        named += [order[i], order[j]]
        order[i], order[j] = order[j], order[i]
        after_first = after_first or list(order)
    answers = {"initial": start[position], "first-swap": (after_first or order)[position]}
    if named:
        answers |= {
            "last-named": named[-1],
            "last-swap-first": named[-2],
            "first-named": named[0],
            "most-swapped": max(dict.fromkeys(named), key=named.count),
        }
    return [rule for rule in RULES if answers.get(rule) == order[position]]


class ShuffleTrackingTask(Task):
    """Which shape is at this position after the swaps? Balanced over positions and over which
    shortcut rules give the answer."""

    name = "shuffle_tracking"
    owned_description = "shuffle"
    instruction = 'Answer with the shape\'s size, colour and kind, such as "Large Blue Square".'
    min_shapes = 3
    swaps = 3
    no_same_canvas = "same-canvas examples would narrow the answer by elimination"

    swap_attempts = 20000  # random swap sequences tried per question

    def answer_strata(self, num_shapes: int) -> list[str]:
        """Return the positions ``"0"`` (bottom) .. ``"N-1"`` (top)."""
        return [str(p) for p in range(num_shapes)]

    def strata(self, num_shapes: int) -> list[list[str]]:
        """Return the axes: the position asked, and the label of the rules right (``rule_groups``)."""
        groups = rule_groups(num_shapes, self.swaps)
        return [self.answer_strata(num_shapes), [rule_label(g, i) for i, g in enumerate(groups)]]

    def unsupported(self, num_shapes: int, stratum: str | None = None) -> str | None:
        """Return why a stratum cannot be asked: without swaps every shape stays where it started."""
        if stratum is not None and self.swaps == 0 and "initial" not in stratum.split("|")[1].split("+"):
            return "without swaps no shape moves"
        return super().unsupported(num_shapes, stratum)

    def place(
        self, rng: random.Random, identities: list[tuple[str, str, str]], geometry: Geometry
    ) -> list[Shape]:
        """Return the shapes in a column, bottom to top in the given order; raise Impossible if they
        do not fit."""
        column = [Shape(*identity, 0, 0) for identity in identities]
        gaps = [math.floor(margin(a, b, 1, geometry)) + 1 for a, b in itertools.pairwise(column)]
        low = math.floor(-geometry.half - bounding_box(column[0], geometry)[1]) + 1
        high = math.ceil(geometry.half - bounding_box(column[-1], geometry)[3]) - 1
        slack = high - low - sum(gaps)
        if slack < 0:
            raise Impossible(f"{len(column)} shapes do not fit in one column")
        cuts = sorted(rng.randint(0, slack) for _ in column)  # spare height below each shape
        ys = [low + cuts[0]]
        for gap, before, cut in zip(gaps, cuts[:-1], cuts[1:], strict=True):
            ys.append(ys[-1] + gap + cut - before)
        placed: list[Shape] = []
        for shape, y in zip(column, ys, strict=True):
            for _ in range(geometry.place_attempts):
                x = rng.randint(-geometry.half, geometry.half)
                candidate = Shape(shape.size, shape.colour, shape.kind, x, y)
                if fits(candidate, placed, geometry):
                    placed.append(candidate)
                    break
            else:
                raise Impossible(f"no room for a {shape.name} at height {y}")
        return placed

    def generate_questions(
        self,
        shapes: list[Shape],
        rng: random.Random,
        geometry: Geometry,
        selected: str | None = None,
        examples: int = 2,
    ) -> Questions:
        """Return the line-up and swaps and a question about the position of stratum ``selected``
        (no examples: ``no_same_canvas``).

        Raises Impossible when the shapes are not all vertically apart by the relation rule, or no
        swaps were found for the stratum.
        """
        column = sorted(shapes, key=lambda s: (s.y, s.name))
        if any(vertical(a, b, geometry) != "Above" for a, b in itertools.pairwise(column)):
            raise Impossible("the shapes are not one above the other by the relation rule")
        start = [s.name for s in column]
        n = len(start)
        asked, label = self.pick_stratum(rng, n, selected).split("|")
        position = int(asked)
        wanted = [] if label.startswith("none") else label.split("+")  # in RULES order
        swaps = self._swaps(rng, start, position, wanted)
        order = list(start)
        sentences = [describe.line_up(n, start)]
        for i, j in swaps:
            sentences.append(describe.swap(order[i], order[j]))
            order[i], order[j] = order[j], order[i]
        pairs = [(position_question(position, n), title(tuple(order[position].split())))]
        vocabulary = [title(s.identity) for s in sorted(shapes, key=lambda s: s.identity)]
        return Questions(
            pairs,
            vocabulary,
            description=" ".join(sentences),
            facts={"final_order": order, "rules_right": wanted},
        )

    def _swaps(
        self, rng: random.Random, start: list[str], position: int, wanted: list[str]
    ) -> list[tuple[int, int]]:
        """Return ``self.swaps`` random swaps (index pairs) after which exactly the ``wanted`` rules
        give the shape at ``position``; raise Impossible when none were found."""
        n = len(start)
        balanced = [rule for group in rule_groups(n, self.swaps) for rule in group]
        for _ in range(self.swap_attempts if self.swaps else 1):
            swaps = [tuple(rng.sample(range(n), 2)) for _ in range(self.swaps)]
            if [r for r in rules_right(start, swaps, position) if r in balanced] == wanted:
                return swaps
        raise Impossible(f"no {self.swaps} swaps found with the rules {wanted or 'none'} right")
