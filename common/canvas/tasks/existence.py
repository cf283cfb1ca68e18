"""Existence: "Is there a shape that is red?", "Is there a large green circle?" -> Yes / No.

Balanced over (answer, query type): every query type (which attributes the query fixes: colour,
size + kind, a full identity, ...) is asked as often with answer Yes as with No, so no rule on
the wording of the question ("a one-attribute query means Yes") beats chance.

The answer is drawn first, then everything the question does not depend on independently of it:
the canvas is drawn the same way for both answers (``canvas``): a query of the type is picked
and the shapes drawn among the identities it does not match, so every canvas admits a No to a
query of its type (and a Yes to another). Only then is the query chosen: a matched one for Yes,
an unmatched one for No. So the canvas alone ("a colour is missing, so No") tells nothing. For
a query of two or three attributes, the canvas is drawn until each word of the unmatched query
occurs in the description (on different shapes), and a No asks such a query: "every word of
the query occurs somewhere in the description" (a partial skill, ``partial``) then says Yes to
every multi-attribute question, wrong on all its No items. A stratum no canvas of that size
allows (no large shape among 16 of the 24 identities) is skipped with its reason; on a 24-shape
canvas every identity is present, so every answer would be Yes and the task does not run.
"""

import random

from common.canvas.shapes import IDENTITIES, Geometry, Shape, sample_identities
from common.canvas.tasks import attributes as attr
from common.canvas.tasks.base import Impossible, Questions, Task

ANSWERS = ["Yes", "No"]


def pick_query(
    rng: random.Random,
    identities: list[tuple[str, str, str]],
    wanted: int | None,
    exists: bool | None = None,
    masks: list[tuple[bool, bool, bool]] | None = None,
) -> attr.Query:
    """Return a random query whose match count is ``wanted`` (or, with ``exists``, zero / non-zero).

    The query type (which attributes it fixes) is drawn uniformly among the types of ``masks``
    (default: all seven) that have such a query, so full identities (24 of the 56 queries) do
    not dominate. Raises Impossible if none.
    """

    def ok(query: attr.Query) -> bool:
        found = attr.count(query, identities)
        return found == wanted if wanted is not None else (found > 0) == exists

    by_type = [[q for q in attr.queries_of_type(mask) if ok(q)] for mask in (masks or attr.MASKS)]
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


def _absent_queries(mask: tuple[bool, bool, bool], num_shapes: int) -> list[attr.Query]:
    """Return the queries of type ``mask`` that some canvas of ``num_shapes`` distinct shapes misses."""
    return [q for q in attr.queries_of_type(mask) if len(IDENTITIES) - attr.universe_count(q) >= num_shapes]


def near_misses(mask: tuple[bool, bool, bool], identities: list[tuple[str, str, str]]) -> list[attr.Query]:
    """Return the queries of type ``mask`` no shape matches; for several attributes only those
    whose every word occurs on some shape (a "No" the query's words alone do not give away)."""
    present = {value for identity in identities for value in identity}
    return [
        q
        for q in attr.queries_of_type(mask)
        if not attr.count(q, identities) and (sum(mask) == 1 or all(v in present for v in q if v))
    ]


def canvas(rng: random.Random, num_shapes: int, mask: tuple[bool, bool, bool], attempts: int = 100):
    """Return the identities of a canvas admitting a No to a query of type ``mask`` (for several
    attributes, a near miss: ``near_misses``): a query missable at this size is picked and the
    shapes drawn among the identities it does not match, redrawn (at most ``attempts`` times)
    until a near miss exists. Raises Impossible when none did (or no query is missable)."""
    queries = _absent_queries(mask, num_shapes)
    for _ in range(attempts if queries else 0):
        query = rng.choice(queries)
        chosen = rng.sample([i for i in IDENTITIES if not attr.matches(query, i)], num_shapes)
        if near_misses(mask, chosen):
            return chosen
    raise Impossible(f"no canvas of {num_shapes} shapes with an unmatched {attr.mask_name(mask)} query")


class ExistenceTask(Task):
    """Is there a shape with these attributes? Balanced over (Yes / No, query type)."""

    name = "existence"
    instruction = "Answer Yes or No."

    def answer_strata(self, num_shapes: int) -> list[str]:
        """Return ``"<answer>:<query type>"`` for both answers and the seven query types."""
        return [f"{answer}:{attr.mask_name(mask)}" for answer in ANSWERS for mask in attr.MASKS]

    def unsupported(self, num_shapes: int, stratum: str | None = None) -> str | None:
        """Return why the question cannot be made: a 24-shape canvas holds every identity (all
        answers Yes); a "No" of a query type every canvas of this size matches."""
        if num_shapes >= len(IDENTITIES):
            return "every identity is on the canvas: every answer would be Yes"
        if stratum is not None:
            answer, mask = stratum.split(":")
            if answer == "No" and not _absent_queries(attr.MASK_NAMES[mask], num_shapes):
                return f"every canvas of {num_shapes} shapes has a match of every {mask} query"
        return super().unsupported(num_shapes, stratum)

    def identities(
        self, rng: random.Random, num_shapes: int, stratum: str | None
    ) -> list[tuple[str, str, str]]:
        """Return the identities of a canvas for a query of the stratum's type, drawn the same way
        whatever the answer (``canvas``)."""
        if stratum is None:
            return sample_identities(rng, num_shapes)
        return canvas(rng, num_shapes, attr.MASK_NAMES[stratum.split(":")[1]])

    def generate_questions(
        self,
        shapes: list[Shape],
        rng: random.Random,
        geometry: Geometry,
        selected: str | None = None,
        examples: int = 2,
    ) -> Questions:
        """Return an existence question of stratum ``selected`` (for No and several attributes, a
        query each of whose words occurs on the canvas) and examples on attribute-disjoint queries."""
        identities = [s.identity for s in shapes]
        answer, mask = self.pick_stratum(rng, len(shapes), selected).split(":")
        if answer == "Yes" or selected is None:
            test = pick_query(rng, identities, None, exists=answer == "Yes", masks=[attr.MASK_NAMES[mask]])
        else:
            near = near_misses(attr.MASK_NAMES[mask], identities)
            if not near:
                raise Impossible("no unmatched query whose words all occur on this canvas")
            test = rng.choice(near)
        pairs = [
            (self._ask(q), "Yes" if attr.count(q, identities) else "No")
            for q in [test, *example_queries(rng, test, examples)]
        ]
        return Questions(pairs, list(ANSWERS), facts={"query": list(test)})

    @staticmethod
    def _ask(query: attr.Query) -> str:
        """Return the question text of a query."""
        return f"Is there a {attr.singular(query)}?"
