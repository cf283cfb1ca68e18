"""Existence: "Is there a shape that is red?", "Is there a large green circle?" -> Yes / No."""

import random

from common.canvas.shapes import IDENTITIES, Geometry, Shape
from common.canvas.tasks import attributes as attr
from common.canvas.tasks.base import Impossible, Questions, Task


def pick_query(
    rng: random.Random, identities: list[tuple[str, str, str]], wanted: int | None, exists: bool | None = None
) -> attr.Query:
    """Return a random query whose match count is ``wanted`` (or, with ``exists``, zero / non-zero).

    The query type (which attributes it fixes) is drawn uniformly among the types that have such
    a query, so full identities (24 of the 56 queries) do not dominate. Raises Impossible if none.
    """

    def ok(query: attr.Query) -> bool:
        found = attr.count(query, identities)
        return found == wanted if wanted is not None else (found > 0) == exists

    by_type = [[q for q in attr.queries_of_type(mask) if ok(q)] for mask in attr.MASKS]
    by_type = [candidates for candidates in by_type if candidates]
    if not by_type:
        raise Impossible("no query with the requested answer on this canvas")
    return rng.choice(rng.choice(by_type))


def example_queries(rng: random.Random, test: attr.Query, examples: int) -> list[attr.Query]:
    """Return up to ``examples`` random queries sharing no attribute value with ``test`` (no hints)."""
    candidates = [
        q for mask in attr.MASKS for q in attr.queries_of_type(mask) if not attr.shares_value(q, test)
    ]
    return rng.sample(candidates, min(examples, len(candidates)))


class ExistenceTask(Task):
    """Is there a shape with these attributes? Balanced over Yes / No."""

    name = "existence"
    instruction = "Answer Yes or No."

    def answer_strata(self, num_shapes: int) -> list[str]:
        """Return ``["Yes", "No"]``."""
        return ["Yes", "No"]

    def unsupported(self, num_shapes: int, stratum: str | None = None) -> str | None:
        """Return why the question cannot be made: "No" is impossible when all 24 identities are drawn."""
        if stratum == "No" and num_shapes == len(IDENTITIES):
            return "every identity is on the canvas: nothing is absent"
        return super().unsupported(num_shapes, stratum)

    def generate_questions(self, shapes: list[Shape], rng: random.Random, geometry: Geometry,
                           selected: str | None = None, examples: int = 2) -> Questions:
        """Return an existence question answered ``selected`` and examples on attribute-disjoint queries."""
        identities = [s.identity for s in shapes]
        stratum = self.pick_stratum(rng, len(shapes), selected)
        test = pick_query(rng, identities, None, exists=stratum == "Yes")
        pairs = [
            (self._ask(q), "Yes" if attr.count(q, identities) else "No")
            for q in [test, *example_queries(rng, test, examples)]
        ]
        return Questions(pairs, ["Yes", "No"], facts={"query": list(test)})

    @staticmethod
    def _ask(query: attr.Query) -> str:
        """Return the question text of a query."""
        return f"Is there a {attr.singular(query)}?"
