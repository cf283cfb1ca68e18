"""Count: "How many large green triangles are there?", "How many shapes are red?" -> 0..N.

A query's wording bounds its count: a full identity counts 0 or 1, a colour at most 6 (of 24
identities), and on a canvas of N distinct shapes a query matching u identities counts between
max(0, N - (24 - u)) and min(u, N). So the set balances over (count, query type) pairs: every
pair a canvas of N shapes allows is one stratum, and each block of the schedule holds each once.
Any rule on the wording alone ("the largest count the query allows", "N u / 24") is then right
exactly as often as a uniform guess within the allowed range: the task's chance rate is the mean
of 1 / (size of that range), not 1 / (N + 1); small counts are more frequent, since every query
type allows them. The canvas draw is biased: a query of the type is chosen and k matching and
N - k other identities drawn. On a 24-shape canvas every identity is present, so a query's count
is fixed by its wording: the task does not run at that size.
"""

import functools
import random

from common.canvas.shapes import IDENTITIES, Geometry, Shape, sample_identities
from common.canvas.tasks import attributes as attr
from common.canvas.tasks.base import Questions, Task
from common.canvas.tasks.existence import example_queries, pick_query


@functools.cache
def allowed(mask: tuple[bool, bool, bool], num_shapes: int) -> range:
    """Return the counts a query of type ``mask`` can have on a canvas of ``num_shapes`` distinct shapes
    (remembered: the generator asks for each stratum it draws)."""
    u = attr.universe_count(attr.queries_of_type(mask)[0])  # every query of a type matches as many
    return range(max(0, num_shapes - (len(IDENTITIES) - u)), min(u, num_shapes) + 1)


class CountTask(Task):
    """How many shapes have these attributes? Balanced over (count, query type)."""

    name = "count"
    instruction = "Answer with a number."

    def answer_strata(self, num_shapes: int) -> list[str]:
        """Return ``"<count>:<query type>"`` for every count each query type allows."""
        return [
            f"{k}:{attr.mask_name(mask)}"
            for k in range(num_shapes + 1)
            for mask in attr.MASKS
            if k in allowed(mask, num_shapes)
        ]

    def unsupported(self, num_shapes: int, stratum: str | None = None) -> str | None:
        """Return why a count cannot be asked: on a 24-shape canvas counts are fixed by the wording."""
        if num_shapes >= len(IDENTITIES):
            return "every identity is on the canvas: a query's count is fixed by its wording"
        if stratum is not None:
            k, mask = stratum.split(":")
            if int(k) not in allowed(attr.MASK_NAMES[mask], num_shapes):
                return f"no {mask} query matches exactly {k} of {num_shapes} distinct shapes"
        return super().unsupported(num_shapes, stratum)

    def identities(
        self, rng: random.Random, num_shapes: int, stratum: str | None
    ) -> list[tuple[str, str, str]]:
        """Return identities holding exactly k matches of a query of the stratum's type."""
        if stratum is None:
            return sample_identities(rng, num_shapes)
        k, mask = int(stratum.split(":")[0]), attr.MASK_NAMES[stratum.split(":")[1]]
        if k not in allowed(mask, num_shapes):
            return sample_identities(rng, num_shapes)  # generate_questions will find it impossible
        query = rng.choice(attr.queries_of_type(mask))
        inside = [i for i in IDENTITIES if attr.matches(query, i)]
        outside = [i for i in IDENTITIES if not attr.matches(query, i)]
        chosen = rng.sample(inside, k) + rng.sample(outside, num_shapes - k)
        rng.shuffle(chosen)
        return chosen

    def generate_questions(
        self,
        shapes: list[Shape],
        rng: random.Random,
        geometry: Geometry,
        selected: str | None = None,
        examples: int = 2,
    ) -> Questions:
        """Return a count question of stratum ``selected`` and examples on attribute-disjoint queries.

        Raises Impossible when no query of that type has that count on this canvas.
        """
        identities = [s.identity for s in shapes]
        k, mask = self.pick_stratum(rng, len(shapes), selected).split(":")
        test = pick_query(rng, identities, int(k), masks=[attr.MASK_NAMES[mask]])
        pairs = [
            (attr.plural_question(q), str(attr.count(q, identities)))
            for q in [test, *example_queries(rng, test, examples)]
        ]
        return Questions(pairs, [str(n) for n in range(len(shapes) + 1)], facts={"query": list(test)})
