"""Shuffle tracking: shapes in a column from bottom to top, then swaps, then
"What shape is second from the top?".

The task owns the description. It needs every shape of the canvas above the previous one by
the relation rule (else "from bottom to top" would not be justified), so it places its canvases
as a column: each shape above the previous one by the smallest integer step beyond the margin,
the spare height spread at random (sorted random cut points), inside the border, then random x
positions (no touching). Shapes that cannot fit in one column make the request impossible.

The answer is drawn first: the position asked comes from its own balanced schedule (0 = bottom;
positions below the middle are asked from the bottom, the others from the top), and the swaps
are drawn apart from it, so the answer, the shape that ends at that position, is a uniform pick
among the shapes whatever the swaps say: no rule reading the swaps without the position asked
("the shape named last", "the most-swapped shape", "a shape never named is not the answer", any
count of mentions) can beat 1/N, in expectation. The rules that do use the position without
tracking every swap are right at as many positions as the swaps leave in place for them:
"ignore the swaps" at the positions the swaps fix, "stop after the first swap" at those the
other swaps fix, and the partial skill "apply the swaps in reverse order" at those in cycles of
one or two. Each swap sequence has these three counts (its ``agreements``); the set balances
over a mix of them averaging one each (``agreement_mix``: most often exactly one each), so each
rule is right at 1/N in expectation. That needs enough swaps to move nearly every shape: a
prompt has ``max(swaps, N)`` swaps (4 on 3 shapes: with an odd number there, the reverse order is
the skill itself). No two swaps cancel (the same two shapes swapped again with no swap touching
either in between) unless the set's ``cancelling_swaps`` allows it. The answer is an identity:
"Large Blue Square".

Every item is asked as a contrast pair over the swaps: its twin has the same line-up, the same
question and the same swaps but one (at a random place in the sequence), changed so that another
shape ends at the asked position; both sequences have the item's agreement signature, so the
balance above holds for every member. A rule that does not read that swap (ignoring the swaps,
stopping early, skipping the last) reads the two alike and gets at most one of the two right.

No same-canvas examples: a question about another position names a shape that is not the
answer, so examples would narrow the answer by elimination (from N shapes to N - 2 with two
examples); other-canvas examples carry no such hint.
"""

import functools
import itertools
import math
import random
from collections import Counter

from common.canvas import describe
from common.canvas.relations import vertical
from common.canvas.shapes import Geometry, Shape, bounding_box, fits, margin, title
from common.canvas.tasks.base import Impossible, Member, Questions, Task

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
    last: dict[int, int] = {}  # position -> the index of the last swap touching it
    for index, (i, j) in enumerate(swaps):
        if i in last and last.get(j) == last[i]:
            return True
        last[i] = last[j] = index
    return False


def random_swaps(rng: random.Random, n: int, count: int, cancelling: bool) -> list[tuple[int, int]]:
    """Return ``count`` random swaps of two different positions among ``n``, or [] when two of them
    cancel and ``cancelling`` is False."""
    swaps = []
    for _ in range(count):
        i, j = rng.randrange(n), rng.randrange(n - 1)
        swaps.append((i, j + (j >= i)))
    return [] if not cancelling and cancels(swaps) else swaps


def agreements(n: int, swaps: list[tuple[int, int]]) -> tuple[int, int, int]:
    """Return at how many of the ``n`` positions "ignore the swaps", "stop after the first swap"
    and "apply the swaps in reverse order" give the shape that ends there (``rules_right``)."""
    order, named = list(range(n)), []  # order[p]: the shape (its first position) at p
    for i, j in swaps:
        named.append((order[i], order[j]))
        order[i], order[j] = order[j], order[i]
    first = list(range(n))
    if swaps:
        i, j = swaps[0]
        first[i], first[j] = first[j], first[i]
    backwards, where = list(range(n)), list(range(n))  # where[shape]: its position
    for a, b in reversed(named):
        i, j = where[a], where[b]
        backwards[i], backwards[j] = b, a
        where[a], where[b] = j, i
    return (
        sum(order[p] == p for p in range(n)),
        sum(order[p] == first[p] for p in range(n)),
        sum(order[p] == backwards[p] for p in range(n)),
    )


@functools.cache
def agreement_mix(n: int, swaps: int, cancelling: bool = False) -> tuple[tuple[int, int, int], ...]:
    """Return the agreements (``agreements``) the set's swap sequences take in turn: the fewest,
    among the 30 most frequent in 5,000 random sequences (fixed seed), whose mean is one at each
    rule (a single (1, 1, 1) when it occurs). Raises Impossible when none average one."""
    rng = random.Random(f"agreements:{n}:{swaps}:{cancelling}")
    seen: Counter = Counter()
    for _ in range(5000):
        drawn = random_swaps(rng, n, swaps, cancelling)
        if drawn:
            seen[agreements(n, drawn)] += 1
    common = [signature for signature, _ in seen.most_common(30)]
    for size in (1, 2, 3):
        for mix in itertools.combinations_with_replacement(common, size):
            if all(sum(s[i] for s in mix) == size for i in range(3)):
                return mix
    raise Impossible(f"no mix of {swaps} swaps of {n} shapes leaves each rule right at one position")


def mix_label(signature: tuple[int, int, int], index: int) -> str:
    """Return the stratum label of an agreement signature: ``1-1-1`` (``#i`` for repeats)."""
    return "-".join(map(str, signature)) + (f"#{index}" if index else "")


def _final(n: int, swaps: list[tuple[int, int]]) -> list[int]:
    """Return which starting position ends at each position after ``swaps``."""
    order = list(range(n))
    for i, j in swaps:
        order[i], order[j] = order[j], order[i]
    return order


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
    """Which shape is at this position after the swaps? Balanced over positions and over how many
    positions each rule without full tracking is right at."""

    name = "shuffle_tracking"
    owned_description = "shuffle"
    instruction = 'Answer with the shape\'s size, colour and kind, such as "Large Blue Square".'
    min_shapes = 3
    swaps = 6  # at least; a column of N shapes gets max(swaps, N)
    cancelling_swaps = False  # whether two swaps may cancel out (see the module docstring)
    no_same_canvas = "same-canvas examples would narrow the answer by elimination"
    inputs = ("swaps",)

    swap_attempts = 20000  # random swap sequences tried per question

    def count(self, num_shapes: int) -> int:
        """Return the number of swaps of a prompt about ``num_shapes`` shapes."""
        return max(self.swaps, num_shapes)

    def answer_strata(self, num_shapes: int) -> list[str]:
        """Return the positions ``"0"`` (bottom) .. ``"N-1"`` (top)."""
        return [str(p) for p in range(num_shapes)]

    def strata(self, num_shapes: int) -> list[list[str]]:
        """Return the axes: the position asked, and the agreement signature of the swaps
        (``agreement_mix``; a single ``unbalanced`` label when none fits, see ``unsupported``)."""
        try:
            mix = agreement_mix(num_shapes, self.count(num_shapes), self.cancelling_swaps)
        except Impossible:
            return [self.answer_strata(num_shapes), ["unbalanced"]]
        labels = [mix_label(s, mix[:i].count(s)) for i, s in enumerate(mix)]
        return [self.answer_strata(num_shapes), labels]

    def unsupported(self, num_shapes: int, stratum: str | None = None) -> str | None:
        """Return why no item can be asked: too few shapes, or swaps that allow no balanced mix."""
        reason = super().unsupported(num_shapes, stratum)
        if reason is None:
            try:
                agreement_mix(num_shapes, self.count(num_shapes), self.cancelling_swaps)
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
        twins: bool = True,
    ) -> Questions:
        """Return the line-up and swaps, a question about the position of stratum ``selected`` and
        its twin with one swap changed (no examples: ``no_same_canvas``).

        Raises Impossible when the shapes are not all vertically apart by the relation rule, or no
        swaps (or no twin) were found with the stratum's agreements.
        """
        column = sorted(shapes, key=lambda s: (s.y, s.name))
        if any(vertical(a, b, geometry) != "Above" for a, b in itertools.pairwise(column)):
            raise Impossible("the shapes are not one above the other by the relation rule")
        start = [s.name for s in column]
        n = len(start)
        asked, label = self.pick_stratum(rng, n, selected).split("|")
        position = int(asked)
        wanted = tuple(int(a) for a in label.split("#")[0].split("-"))
        sequences = [self._swaps(rng, n, wanted)]
        if twins:
            sequences.append(self._twin(rng, n, sequences[0], position, self._twin_agreements(n, label)))
        question = position_question(position, n)
        members = []
        for i, swaps in enumerate(sequences):
            order = list(start)
            sentences = [describe.line_up(n, start)]
            for a, b in swaps:
                sentences.append(describe.swap(order[a], order[b]))
                order[a], order[b] = order[b], order[a]
            facts = {
                "final_order": order,
                "rules_right": rules_right(start, swaps, position),
                "agreements": mix_label(agreements(n, swaps), 0),
            }
            members.append(
                Member(
                    question,
                    title(tuple(order[position].split())),
                    () if i == 0 else ("swaps",),
                    description=" ".join(sentences),
                    unseen=" ".join(sentences[1:]),
                    facts=facts,
                )
            )
        vocabulary = [title(s.identity) for s in sorted(shapes, key=lambda s: s.identity)]
        item = members[0]
        return Questions(members, vocabulary, description=item.description, unseen=item.unseen)

    def _twin_agreements(self, n: int, label: str) -> list[tuple[int, ...]]:
        """Return the agreements the twin of an item whose swaps have the signature ``label`` may
        have, in the order to try: the next label's of the mix first (the last's: the first's), so
        that over the set the twins' signatures follow the mix as the items' do, then the others."""
        labels = self.strata(n)[1]
        start = labels.index(label) + 1
        ordered = [labels[(start + i) % len(labels)] for i in range(len(labels))]
        return list(dict.fromkeys(tuple(int(a) for a in t.split("#")[0].split("-")) for t in ordered))

    def _twin(
        self,
        rng: random.Random,
        n: int,
        swaps: list[tuple[int, int]],
        position: int,
        wanted: list[tuple[int, ...]],
    ) -> list[tuple[int, int]]:
        """Return ``swaps`` with one swap changed (the place and the new pair at random) so that
        another shape ends at ``position``, with the agreements ``wanted`` (``_twin_agreements``),
        its last swap moving the asked position exactly when the item's does (else a change of
        the last swap, which must move it, would make twins end there more often) and no two
        swaps cancelling unless allowed; raise Impossible when none does."""
        ending = _final(n, swaps)[position]
        options = [
            (index, (i, j)) for index in range(len(swaps)) for i in range(n) for j in range(n) if i != j
        ]
        rng.shuffle(options)
        found: dict[tuple[int, ...], list[tuple[int, int]]] = {}
        for index, pair in options:
            if pair == swaps[index]:
                continue
            changed = [*swaps[:index], pair, *swaps[index + 1 :]]
            if _final(n, changed)[position] == ending or (not self.cancelling_swaps and cancels(changed)):
                continue
            if (position in changed[-1]) != (position in swaps[-1]):  # as often as the items, no more
                continue
            signature = agreements(n, changed)
            if signature == wanted[0]:
                return changed
            if signature in wanted:
                found.setdefault(signature, changed)
        for signature in wanted:
            if signature in found:
                return found[signature]
        raise Impossible(f"no swap could be changed keeping the agreements of the mix {wanted}")

    def _swaps(self, rng: random.Random, n: int, wanted: tuple[int, ...]) -> list[tuple[int, int]]:
        """Return ``count(n)`` random swaps (none cancelling unless allowed) with the agreements
        ``wanted``, drawn without regard to the position asked; raise Impossible when none were
        found."""
        for _ in range(self.swap_attempts):
            swaps = random_swaps(rng, n, self.count(n), self.cancelling_swaps)
            if swaps and agreements(n, swaps) == wanted:
                return swaps
        raise Impossible(f"no {self.count(n)} swaps found with the agreements {wanted}")
