"""Count: "How many large green triangles are there?", "How many shapes are red?" -> 0..N.

Every item is asked as a contrast pair over the canvas: the same question about a canvas C and
its twin C', which differs in one shape's attribute, so the count differs by one. For a one-word
query ("red") one matching shape changes colour; for a query of several words, one attribute is
swapped between a matching shape S and a shape T that differs from the query in another word
too, so every word keeps its frequency in the description. A rule that does not bind the words
to the shapes (word frequencies, the sizes of the description's groups) reads C and C' alike and
gets at most one of the two right. C' keeps every position and every relation a description
states (``twins.same_layout``).

A query's wording bounds its count: a full identity counts 0 or 1, a colour at most 6 (of 24
identities), and on a canvas of N distinct shapes a query matching u identities counts between
max(0, N - (24 - u)) and min(u, N) (for several words at most N - 1: a swap needs a shape that
does not match). The asked counts (``asked_counts``) are that range cut into pairs {c, c + 1}
from its bottom, its top left out when the range has an odd number of values; each stratum is
one pair and one query type, balanced across the set, and the pair's two counts are C's and C''s.
So every asked count is as frequent as any other of its query type and size, and any rule on the
wording alone is right one time in ``len(asked_counts)``: the task's chance rate. On a 24-shape
canvas every identity is present and a query's count is fixed by its wording: not asked.
"""

import functools
import random

from common.canvas.shapes import IDENTITIES, Geometry, Shape, sample_identities
from common.canvas.tasks import attributes as attr
from common.canvas.tasks import twins
from common.canvas.tasks.base import Impossible, Member, Questions, Task
from common.canvas.tasks.existence import example_queries


@functools.cache
def allowed(mask: tuple[bool, bool, bool], num_shapes: int) -> range:
    """Return the counts a query of type ``mask`` can have on a canvas of ``num_shapes`` distinct shapes
    (remembered: the generator asks for each stratum it draws)."""
    u = attr.universe_count(attr.queries_of_type(mask)[0])  # every query of a type matches as many
    return range(max(0, num_shapes - (len(IDENTITIES) - u)), min(u, num_shapes) + 1)


@functools.cache
def asked_counts(mask: tuple[bool, bool, bool], num_shapes: int) -> range:
    """Return the counts the set asks for a query of type ``mask`` on ``num_shapes`` shapes: the
    allowed range (for several words at most N - 1), its top left out when odd-sized, so that it
    splits into pairs {c, c + 1}."""
    counts = allowed(mask, num_shapes)
    top = counts.stop - 1 if sum(mask) == 1 else min(counts.stop - 1, num_shapes - 1)
    size = max(0, top - counts.start + 1)
    return range(counts.start, counts.start + size - size % 2)


class CountTask(Task):
    """How many shapes have these attributes? Asked as a contrast pair over the canvas."""

    name = "count"
    instruction = "Answer with a number."
    inputs = ("canvas",)

    def answer_strata(self, num_shapes: int) -> list[str]:
        """Return ``"<lower count of a pair>:<query type>"`` for every pair of asked counts."""
        return [
            f"{c}:{attr.mask_name(mask)}" for mask in attr.MASKS for c in asked_counts(mask, num_shapes)[::2]
        ]

    def unsupported(self, num_shapes: int, stratum: str | None = None) -> str | None:
        """Return why a count cannot be asked: on a 24-shape canvas counts are fixed by the wording."""
        if num_shapes >= len(IDENTITIES):
            return "every identity is on the canvas: a query's count is fixed by its wording"
        if stratum is not None:
            low, mask = stratum.split(":")
            if int(low) not in asked_counts(attr.MASK_NAMES[mask], num_shapes):
                return f"no {mask} query can count {low} and {int(low) + 1} on {num_shapes} shapes"
        return super().unsupported(num_shapes, stratum)

    def identities(
        self, rng: random.Random, num_shapes: int, stratum: str | None
    ) -> list[tuple[str, str, str]]:
        """Return identities holding the pair's higher count of matches of a query of the type."""
        if stratum is None:
            return sample_identities(rng, num_shapes)
        low, mask = int(stratum.split(":")[0]), attr.MASK_NAMES[stratum.split(":")[1]]
        if low not in asked_counts(mask, num_shapes):
            return sample_identities(rng, num_shapes)  # generate_questions will find it impossible
        query = rng.choice(attr.queries_of_type(mask))
        inside = [i for i in IDENTITIES if attr.matches(query, i)]
        outside = [i for i in IDENTITIES if not attr.matches(query, i)]
        chosen = rng.sample(inside, low + 1) + rng.sample(outside, num_shapes - low - 1)
        rng.shuffle(chosen)
        return chosen

    def generate_questions(
        self,
        shapes: list[Shape],
        rng: random.Random,
        geometry: Geometry,
        selected: str | None = None,
        examples: int = 2,
        twins: bool = True,
    ) -> Questions:
        """Return the pair of stratum ``selected`` (the item first, C or C' at random) and examples
        counting alike on both canvases. Raises Impossible when no query of the type counts the
        pair's higher count here with a twin that keeps every stated relation."""
        low, mask_name = self.pick_stratum(rng, len(shapes), selected).split(":")
        mask = attr.MASK_NAMES[mask_name]
        query, other = self._pair(shapes, mask, int(low) + 1, rng, geometry)
        identities = [s.identity for s in shapes]
        question = attr.plural_question(query)
        members = [
            Member(question, str(attr.count(query, identities)), facts={"query": list(query)}),
            Member(
                question,
                str(attr.count(query, [s.identity for s in other])),
                ("canvas",),
                shapes=other,
                facts={"query": list(query)},
            ),
        ]
        if rng.random() < 0.5:
            members = [members[1], members[0]]
            members[0].varies, members[1].varies = (), ("canvas",)
        if not twins:
            members = members[:1]
        shown = example_queries(rng, [query], [identities, [s.identity for s in other]], examples)
        pairs = [(attr.plural_question(q), str(attr.count(q, identities))) for q in shown]
        return Questions(members, [str(n) for n in range(len(shapes) + 1)], examples=pairs)

    @staticmethod
    def _pair(
        shapes: list[Shape], mask: tuple[bool, bool, bool], count: int, rng: random.Random, geometry: Geometry
    ) -> tuple[attr.Query, list[Shape]]:
        """Return a query of type ``mask`` counting ``count`` here and the twin canvas counting one
        less: a matching shape changed (one word) or swapped with a shape of another value that
        differs from the query in another word too (several words)."""
        identities = [s.identity for s in shapes]
        queries = [q for q in attr.queries_of_type(mask) if attr.count(q, identities) == count]
        rng.shuffle(queries)
        fixed = [a for a in range(3) if mask[a]]
        for query in queries:
            changes = []
            for i, s in enumerate(identities):
                if not attr.matches(query, s):
                    continue
                for a in fixed:
                    if len(fixed) == 1:
                        changes += [twins.changed(shapes, i, a, v) for v in attr.VALUES[a] if v != s[a]]
                        continue
                    for j, t in enumerate(identities):
                        if t[a] != s[a] and any(t[b] != query[b] for b in fixed if b != a):
                            changes.append(twins.swapped(shapes, i, j, a))
            rng.shuffle(changes)
            for other in changes:
                if twins.same_layout(shapes, other, geometry):
                    return query, other
        raise Impossible(f"no {attr.mask_name(mask)} query counting {count} with a twin on this canvas")
