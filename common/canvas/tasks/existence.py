"""Existence: "Is there a shape that is red?", "Is there a large green circle?" -> Yes / No.

Every item is asked as a 2 x 2 contrast tuple over the two inputs the skill needs, the query and
the canvas. A query Q (of one of the query types: which attributes it fixes) and its twin Q'
differ in one attribute value; a canvas C and its twin C' differ in that attribute of one shape:

- a one-word query ("red"): C holds exactly one red shape S and no blue one, C' is C with S
  blue; Q asks "red", Q' "blue";
- a query of several words ("large red circle"): C holds exactly one match S of Q and a shape T
  of another colour that differs from Q in some other word too; C' is C with the colours of S
  and T swapped (every word keeps its frequency in the description), and Q' asks S's new
  identity. Every word of Q and of Q' occurs on both canvases.

The four members answer (Q, C) Yes, (Q', C) No, (Q, C') No, (Q', C') Yes. A rule that does not
read the query answers (Q, C) and (Q', C) alike, a rule that does not read the canvas's binding
of words to shapes (word frequencies, "every word of the query occurs somewhere") answers (Q, C)
and (Q, C') alike: each gets at most two of the four right, by construction. C' keeps every
position and every relation a description states (``twins.same_layout``), so the two canvases'
descriptions differ in the changed words alone.

A query of size alone ("Is there a shape that is large?") is not asked: with two sizes, no
canvas of two or more shapes admits both a Yes to "large" and a No to "small" while its twin
admits the opposite. The item's stratum is (its answer, the query type), balanced across the
set; the other three members follow. A canvas of 24 shapes holds every identity: not asked.
"""

import random

from common.canvas.shapes import IDENTITIES, Geometry, Shape, sample_identities
from common.canvas.tasks import attributes as attr
from common.canvas.tasks import twins
from common.canvas.tasks.base import Impossible, Member, Questions, Task

ANSWERS = ["Yes", "No"]
SIZE_ALONE = (True, False, False)
TYPES = [mask for mask in attr.MASKS if mask != SIZE_ALONE]  # the query types asked


def example_queries(
    rng: random.Random, asked: list[attr.Query], canvases: list[list[tuple[str, str, str]]], examples: int
) -> list[attr.Query]:
    """Return up to ``examples`` random queries sharing no attribute value with any ``asked`` query
    and counting alike on every canvas of ``canvases`` (shown with every member, they hint at none)."""
    if examples <= 0:
        return []
    sets = [attr.bits(identities) for identities in canvases]
    candidates = [
        q
        for mask in attr.MASKS
        for q in attr.queries_of_type(mask)
        if not any(attr.shares_value(q, a) for a in asked)
        and len({(attr.query_bits(q) & b).bit_count() for b in sets}) == 1
    ]
    return rng.sample(candidates, min(examples, len(candidates)))


def one_word_canvas(rng: random.Random, n: int, attribute: int) -> list[tuple[str, str, str]] | None:
    """Return identities with exactly one shape of some value of ``attribute`` and none of another
    (a one-word query and its twin), or None when ``n`` shapes cannot avoid two of its values."""
    value, other = rng.sample(attr.VALUES[attribute], 2)
    rest = [i for i in IDENTITIES if i[attribute] not in (value, other)]
    if len(rest) < n - 1:
        return None
    lone = rng.choice([i for i in IDENTITIES if i[attribute] == value])
    chosen = [lone, *rng.sample(rest, n - 1)]
    rng.shuffle(chosen)
    return chosen


def one_word_pairs(shapes: list[Shape], attribute: int) -> list[tuple[int, str, str]]:
    """Return (index of S, value, other): S the only shape with ``value``, no shape with ``other``."""
    values = [s.identity[attribute] for s in shapes]
    return [
        (values.index(value), value, other)
        for value in attr.VALUES[attribute]
        if values.count(value) == 1
        for other in attr.VALUES[attribute]
        if other not in values
    ]


def swap_pairs(shapes: list[Shape], mask: tuple[bool, bool, bool]) -> list[tuple[int, int, int]]:
    """Return (S, T, attribute) for a query of type ``mask`` (several attributes): S the only match
    of its own query, T of another value of ``attribute`` that differs from S in another fixed
    attribute too, and no shape matching S's query with T's value (the twin query)."""
    identities = [s.identity for s in shapes]
    fixed = [a for a in range(3) if mask[a]]
    out = []
    for i, s in enumerate(identities):
        query = attr.query_of(s, mask)
        if attr.count(query, identities) != 1:
            continue
        for j, t in enumerate(identities):
            for a in fixed:
                if t[a] == s[a] or all(t[b] == s[b] for b in fixed if b != a):
                    continue
                twin = attr.with_value(query, a, t[a])
                if attr.count(twin, identities) == 0:
                    out.append((i, j, a))
    return out


class ExistenceTask(Task):
    """Is there a shape with these attributes? Asked as a 2 x 2 tuple over the query and the canvas."""

    name = "existence"
    instruction = "Answer Yes or No."
    inputs = ("query", "canvas")

    def answer_strata(self, num_shapes: int) -> list[str]:
        """Return ``"<answer>:<query type>"`` for both answers and the six query types."""
        return [f"{answer}:{attr.mask_name(mask)}" for answer in ANSWERS for mask in TYPES]

    def unsupported(self, num_shapes: int, stratum: str | None = None) -> str | None:
        """Return why the question cannot be made: a 24-shape canvas holds every identity; a one-word
        query needs the shapes to avoid two values of its attribute."""
        if num_shapes >= len(IDENTITIES):
            return "every identity is on the canvas: every answer would be Yes"
        if stratum is not None:
            mask = attr.MASK_NAMES[stratum.split(":")[1]]
            if sum(mask) == 1:
                attribute = mask.index(True)
                room = len(IDENTITIES) * (len(attr.VALUES[attribute]) - 2) // len(attr.VALUES[attribute])
                if num_shapes - 1 > room:
                    return (
                        f"a one-word {attr.mask_name(mask)} query and its twin need a value no shape has: "
                        f"{num_shapes} shapes cannot avoid two {attr.mask_name(mask)}s"
                    )
        return super().unsupported(num_shapes, stratum)

    def identities(
        self, rng: random.Random, num_shapes: int, stratum: str | None
    ) -> list[tuple[str, str, str]]:
        """Return identities admitting a tuple of the stratum's query type (random for several
        attributes, which most canvases admit)."""
        if stratum is not None:
            mask = attr.MASK_NAMES[stratum.split(":")[1]]
            if sum(mask) == 1:
                return one_word_canvas(rng, num_shapes, mask.index(True)) or sample_identities(
                    rng, num_shapes
                )
        return sample_identities(rng, num_shapes)

    def generate_questions(
        self,
        shapes: list[Shape],
        rng: random.Random,
        geometry: Geometry,
        selected: str | None = None,
        examples: int = 2,
        twins: bool = True,
    ) -> Questions:
        """Return the 2 x 2 tuple of stratum ``selected`` on this canvas (the item first) and
        examples counting alike on both canvases. Raises Impossible when the canvas admits no
        tuple of the query type, or its twin canvas would change a stated relation."""
        answer, mask_name = self.pick_stratum(rng, len(shapes), selected).split(":")
        mask = attr.MASK_NAMES[mask_name]
        query, twin, other = self._tuple(shapes, mask, rng, geometry)
        canvases = {"C": shapes, "C'": other}
        cells = [(query, "C"), (twin, "C"), (query, "C'"), (twin, "C'")]  # Yes, No, No, Yes
        if answer == "No":
            cells = [(twin, "C"), (query, "C"), (twin, "C'"), (query, "C'")]
        varies = [(), ("query",), ("canvas",), ("query", "canvas")]
        members = [
            Member(
                self._ask(q),
                "Yes" if attr.count(q, [s.identity for s in canvases[c]]) else "No",
                v,
                shapes=canvases[c] if c == "C'" else None,
                facts={"query": list(q)},
            )
            for (q, c), v in zip(cells, varies, strict=True)
        ]
        if not twins:
            members = members[:1]
        shown = example_queries(
            rng, [query, twin], [[s.identity for s in c] for c in canvases.values()], examples
        )
        examples_shown = [
            (self._ask(q), "Yes" if attr.count(q, [s.identity for s in shapes]) else "No") for q in shown
        ]
        return Questions(members, list(ANSWERS), examples=examples_shown)

    @staticmethod
    def _tuple(
        shapes: list[Shape], mask: tuple[bool, bool, bool], rng: random.Random, geometry: Geometry
    ) -> tuple[attr.Query, attr.Query, list[Shape]]:
        """Return (Q, Q', C'): the query S matches on this canvas, its twin, and the twin canvas."""
        if sum(mask) == 1:
            attribute = mask.index(True)
            options = one_word_pairs(shapes, attribute)
            rng.shuffle(options)
            for i, value, other in options:
                changed = twins.changed(shapes, i, attribute, other)
                if twins.same_layout(shapes, changed, geometry):
                    query = attr.with_value((None, None, None), attribute, value)
                    return query, attr.with_value(query, attribute, other), changed
            raise Impossible(f"no one-word {attr.mask_name(mask)} query with a twin on this canvas")
        options = swap_pairs(shapes, mask)
        rng.shuffle(options)
        for i, j, attribute in options:
            changed = twins.swapped(shapes, i, j, attribute)
            if twins.same_layout(shapes, changed, geometry):
                query = attr.query_of(shapes[i].identity, mask)
                return query, attr.with_value(query, attribute, shapes[j].identity[attribute]), changed
        raise Impossible(f"no {attr.mask_name(mask)} query with a swap twin on this canvas")

    @staticmethod
    def _ask(query: attr.Query) -> str:
        """Return the question text of a query."""
        return f"Is there a {attr.singular(query)}?"
