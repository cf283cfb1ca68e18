"""Count: "How many large green triangles are there?", "How many shapes are red?" -> 0..N.

Identities are distinct, so a full identity counts 0 or 1; larger counts come from queries on
one or two attributes. To balance the answers over 0..N the canvas draw is biased: for a
requested count k, a query type that can match exactly k of N shapes is chosen and k matching
and N-k other identities are drawn. Counts no query can reach (e.g. N = 24 of a kind) are
impossible and skipped by the generator. On a 24-shape canvas every identity is present, so a
query's count is fixed by its wording: the task does not run at that size.
"""

import random

from common.canvas.shapes import IDENTITIES, Geometry, Shape, sample_identities
from common.canvas.tasks import attributes as attr
from common.canvas.tasks.base import Questions, Task
from common.canvas.tasks.existence import example_queries, pick_query


def _feasible(num_shapes: int, k: int) -> list[attr.Query]:
    """Return the queries that can match exactly ``k`` of ``num_shapes`` distinct identities."""
    return [q for mask in attr.MASKS for q in attr.queries_of_type(mask)
            if attr.universe_count(q) >= k and len(IDENTITIES) - attr.universe_count(q) >= num_shapes - k]


class CountTask(Task):
    """How many shapes have these attributes? Balanced over 0..N."""

    name = "count"
    instruction = "Answer with a number."

    def answer_strata(self, num_shapes: int) -> list[str]:
        """Return ``["0", ..., "N"]``."""
        return [str(k) for k in range(num_shapes + 1)]

    def unsupported(self, num_shapes: int, stratum: str | None = None) -> str | None:
        """Return why a count of ``stratum`` among ``num_shapes`` shapes cannot be asked (no query
        reaches it)."""
        if num_shapes >= len(IDENTITIES):
            return "every identity is on the canvas: a query's count is fixed by its wording"
        if stratum is not None and not _feasible(num_shapes, int(stratum)):
            return f"no query matches exactly that many of {num_shapes} distinct shapes"
        return super().unsupported(num_shapes, stratum)

    def identities(
        self, rng: random.Random, num_shapes: int, stratum: str | None
    ) -> list[tuple[str, str, str]]:
        """Return identities holding exactly ``stratum`` matches of some query when possible,
        else random ones."""
        if stratum is None:
            return sample_identities(rng, num_shapes)
        k = int(stratum)
        feasible = _feasible(num_shapes, k)
        if not feasible:
            return sample_identities(rng, num_shapes)  # generate_questions will find it impossible
        query = rng.choice(feasible)
        inside = [i for i in IDENTITIES if attr.matches(query, i)]
        outside = [i for i in IDENTITIES if not attr.matches(query, i)]
        chosen = rng.sample(inside, k) + rng.sample(outside, num_shapes - k)
        rng.shuffle(chosen)
        return chosen

    def generate_questions(self, shapes: list[Shape], rng: random.Random, geometry: Geometry,
                           selected: str | None = None, examples: int = 2) -> Questions:
        """Return a count question answered ``selected`` and examples on attribute-disjoint queries."""
        identities = [s.identity for s in shapes]
        stratum = self.pick_stratum(rng, len(shapes), selected)
        test = pick_query(rng, identities, int(stratum))
        pairs = [
            (attr.plural_question(q), str(attr.count(q, identities)))
            for q in [test, *example_queries(rng, test, examples)]
        ]
        return Questions(pairs, self.answer_strata(len(shapes)), facts={"query": list(test)})
