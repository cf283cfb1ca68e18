"""Shuffle tracking: shapes in a column from bottom to top, then swaps, then
"What shape is second from the top?".

The task owns the description. It needs every shape of the canvas above the previous one by
the relation rule (else "from bottom to top" would not be justified), so it places its canvases
as a column: each shape above the previous one by the smallest integer step beyond the margin,
the spare height spread at random (sorted random cut points), inside the border, then random x
positions (no touching). Shapes that cannot fit in one column make the request impossible.

The answer is drawn first (``_random_swaps``): the swaps other than the decisive one (the last
swap touching the asked position, which brings the answer there) are drawn at random, the
answer uniformly among the shapes, and the decisive swap goes at a random slot after which no
other swap names the answer and before which some swap has touched the position. So what a
reader sees without the decisive swap is drawn apart from the answer (the ablation check reads
that view). No two swaps cancel (the same two shapes swapped again with no swap touching either
in between) unless the set's ``cancelling_swaps`` allows it.

Balanced besides over two independent axes of N labels (``strata``): the position asked (0 =
bottom; positions below the middle are asked from the bottom, the others from the top), and
which rules without full tracking (``RULES``) give the answer: "ignore the swaps", "stop after
the first swap", "the shape named last", "the first shape of the last swap", "the shape named
first", "the most-swapped shape", and one partial skill, "apply the swaps in reverse order"
(with an odd number of swaps on 3 shapes it is the skill itself: hence 4 swaps by default). A
label of the second axis names the rules right on the item, exactly one label of N naming each
rule, so each is right exactly as often as a random pick among the N shapes: ``rule_groups``
finds the finest such grouping the swaps allow (rules always right together share a label),
from the rule sets drawn swaps make (fewer than 4 swaps allow none, nor an odd number on 3
shapes). Draws are repeated until the rules right are those of the label (bounded). "Stop
before the last swap" tracks every swap but one and is right when the last swap misses the
asked position (a partial skill). The answer is an identity: "Large Blue Square".

No same-canvas examples: a question about another position names a shape that is not the
answer, so examples would narrow the answer by elimination (from N shapes to N - 2 with two
examples); other-canvas examples carry no such hint.
"""

import functools
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


RULES = ["initial", "first-swap", "last-named", "last-swap-first", "first-named", "most-swapped", "reverse"]


def cancels(swaps: list[tuple[int, int]]) -> bool:
    """Return whether some swap repeats an earlier one (the same two positions) with no swap in
    between touching either position: the two cancel out."""
    for later, pair in enumerate(swaps):
        for earlier in range(later - 1, -1, -1):
            if set(swaps[earlier]) == set(pair):
                return True
            if set(swaps[earlier]) & set(pair):
                break
    return False


def _random_swaps(
    rng: random.Random, n: int, count: int, position: int, cancelling: bool
) -> list[tuple[int, int]]:
    """Return ``count`` swaps (index pairs) drawn answer first, or [] when the draw failed.

    The swaps other than the decisive one are drawn at random, and the answer uniformly among the
    shapes; then the decisive swap, which brings the answer to ``position`` (swapping it with the
    shape there), is put at a random slot after which the other swaps never name the answer (so
    it stays there) and before which some swap has touched the position (so the shape it
    displaces is not simply the one first there). What a reader sees without the decisive swap is
    thus drawn before, and apart from, the answer. [] when no slot fits, or two swaps cancel and
    ``cancelling`` is False."""
    if count < 2:
        return []
    order, rest = list(range(n)), []
    for _ in range(count - 1):
        i, j = rng.randrange(n), rng.randrange(n - 1)
        j += j >= i  # two different positions
        rest.append((order[i], order[j]))  # the swap as the two shapes it names
        order[i], order[j] = order[j], order[i]
    answer = rng.randrange(n)
    slots, order, touched = [], list(range(n)), False
    for slot in range(count):  # the decisive swap before rest[slot]
        later = rest[slot:]
        if touched and order[position] != answer and all(answer not in pair for pair in later):
            slots.append((slot, order[position]))
        if slot < count - 1:
            touched = touched or order[position] in rest[slot]
            _exchange(order, *rest[slot])
    if not slots:
        return []
    slot, displaced = rng.choice(slots)
    decisive = (answer, displaced) if rng.random() < 0.5 else (displaced, answer)
    order, swaps = list(range(n)), []
    for a, b in [*rest[:slot], decisive, *rest[slot:]]:
        swaps.append((order.index(a), order.index(b)))
        _exchange(order, a, b)
    return [] if not cancelling and cancels(swaps) else swaps


def _exchange(order: list, a, b) -> None:
    """Swap the places of ``a`` and ``b`` in ``order`` (in place)."""
    i, j = order.index(a), order.index(b)
    order[i], order[j] = b, a


def rule_groups(num_shapes: int, swaps: int, cancelling: bool = False) -> tuple[tuple[str, ...], ...]:
    """Return the rules right together on the items of each of the ``num_shapes`` labels of the
    rule axis (``()``: none right); every rule is in exactly one group. The grouping is the finest
    whose every group is a set of rules right, exactly, after some swaps (``_achievable``). Raises
    Impossible when there is none (e.g. 3 shapes and an odd number of swaps: "reverse" is always
    right)."""
    seen = _achievable(min(num_shapes, 2 * swaps), swaps, cancelling)
    best: list[list[str]] | None = None
    for blocks in _partitions(RULES):
        fits = len(blocks) <= num_shapes and (len(blocks) == num_shapes or frozenset() in seen)
        if fits and all(frozenset(b) in seen for b in blocks) and (best is None or len(blocks) > len(best)):
            best = blocks
    if best is None:
        raise Impossible(f"no balanced rule labels with {swaps} swaps of {num_shapes} shapes")
    groups = sorted(
        (tuple(r for r in RULES if r in block) for block in best), key=lambda g: RULES.index(g[0])
    )
    return tuple(groups) + ((),) * (num_shapes - len(groups))


@functools.cache
def _achievable(positions: int, swaps: int, cancelling: bool) -> frozenset[frozenset[str]]:
    """Return the sets of rules right together (exactly) after the swaps of 20,000 random sequences
    (fixed seed) on ``positions`` shapes. The rules only see the positions the swaps touch, at most
    twice the number of swaps, so more shapes than that allow no other sets."""
    rng = random.Random(f"rule-groups:{positions}:{swaps}:{cancelling}")
    start = [str(i) for i in range(positions)]
    seen = set()
    for _ in range(20000):
        position = rng.randrange(positions)
        drawn = _random_swaps(rng, positions, swaps, position, cancelling)
        if drawn:
            seen.add(frozenset(rules_right(start, drawn, position)))
    return frozenset(seen)


def _partitions(items: list[str]):
    """Yield every partition of ``items`` into blocks (lists), in a fixed order."""
    if not items:
        yield []
        return
    for rest in _partitions(items[1:]):
        for i in range(len(rest)):
            yield [*rest[:i], [items[0], *rest[i]], *rest[i + 1 :]]
        yield [[items[0]], *rest]


def rule_label(group: tuple[str, ...], index: int) -> str:
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
    backwards = list(start)  # the named swaps applied last first
    for a, b in reversed(list(zip(named[::2], named[1::2], strict=True))):
        i, j = backwards.index(a), backwards.index(b)
        backwards[i], backwards[j] = b, a
    answers = {"initial": start[position], "first-swap": (after_first or order)[position]}
    answers["reverse"] = backwards[position]
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
    swaps = 4
    cancelling_swaps = False  # whether two swaps may cancel out (see the module docstring)
    no_same_canvas = "same-canvas examples would narrow the answer by elimination"

    swap_attempts = 20000  # random swap sequences tried per question

    def answer_strata(self, num_shapes: int) -> list[str]:
        """Return the positions ``"0"`` (bottom) .. ``"N-1"`` (top)."""
        return [str(p) for p in range(num_shapes)]

    def strata(self, num_shapes: int) -> list[list[str]]:
        """Return the axes: the position asked, and the label of the rules right (``rule_groups``;
        a single ``unbalanced`` label when the swaps allow no grouping, see ``unsupported``)."""
        try:
            groups = rule_groups(num_shapes, self.swaps, self.cancelling_swaps)
        except Impossible:
            return [self.answer_strata(num_shapes), ["unbalanced"]]
        return [self.answer_strata(num_shapes), [rule_label(g, i) for i, g in enumerate(groups)]]

    def unsupported(self, num_shapes: int, stratum: str | None = None) -> str | None:
        """Return why no item can be asked: too few shapes, or swaps that allow no balanced labels."""
        reason = super().unsupported(num_shapes, stratum)
        if reason is None and num_shapes >= self.min_shapes:
            try:
                rule_groups(num_shapes, self.swaps, self.cancelling_swaps)
            except Impossible as exc:
                return str(exc)
        return reason

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
        """Return ``self.swaps`` random swaps (index pairs, touching ``position``, none cancelling
        unless allowed) after which exactly the ``wanted`` rules give the shape at ``position``;
        raise Impossible when none were found."""
        for _ in range(self.swap_attempts):
            swaps = _random_swaps(rng, len(start), self.swaps, position, self.cancelling_swaps)
            if swaps and rules_right(start, swaps, position) == wanted:
                return swaps
        raise Impossible(f"no {self.swaps} swaps found with the rules {wanted or 'none'} right")
