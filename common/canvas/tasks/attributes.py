"""Attribute queries shared by the existence and count tasks: "red", "large circle", "large green circle".

A query fixes any non-empty subset of (size, colour, kind); a shape matches when it agrees on
every fixed attribute. Queries are enumerated in a fixed order (never from a set).
"""

import itertools

from common.canvas.shapes import COLOURS, IDENTITIES, KINDS, SIZES

Query = tuple[str | None, str | None, str | None]  # (size, colour, kind); None: any

MASKS = [mask for mask in itertools.product((False, True), repeat=3) if any(mask)]  # 7 query types


def mask_name(mask: tuple[bool, bool, bool]) -> str:
    """Return a query type's label: ``colour``, ``size+kind``, ``size+colour+kind``."""
    return "+".join(name for name, fixed in zip(("size", "colour", "kind"), mask, strict=True) if fixed)


MASK_NAMES = {mask_name(mask): mask for mask in MASKS}


def mask_of(query: Query) -> tuple[bool, bool, bool]:
    """Return which attributes ``query`` fixes."""
    return tuple(value is not None for value in query)  # type: ignore[return-value]


def queries_of_type(mask: tuple[bool, bool, bool]) -> list[Query]:
    """Return every query fixing the attributes of ``mask`` (size, colour, kind), in a fixed order."""
    options = [
        values if fixed else (None,) for fixed, values in zip(mask, (SIZES, COLOURS, KINDS), strict=True)
    ]
    return list(itertools.product(*options))


def matches(query: Query, identity: tuple[str, str, str]) -> bool:
    """Return whether an identity has every attribute the query fixes."""
    return all(q is None or q == v for q, v in zip(query, identity, strict=True))


def count(query: Query, identities: list[tuple[str, str, str]]) -> int:
    """Return how many of ``identities`` match ``query``."""
    return sum(matches(query, identity) for identity in identities)


def universe_count(query: Query) -> int:
    """Return how many of the 24 identities match ``query``."""
    return count(query, list(IDENTITIES))


def shares_value(a: Query, b: Query) -> bool:
    """Return whether two queries fix the same value of some attribute (then one may hint at the other)."""
    return any(x is not None and x == y for x, y in zip(a, b, strict=True))


def singular(query: Query) -> str:
    """Return the query as a singular noun phrase: ``large green circle``, ``shape that is red``."""
    size, colour, kind = query
    adjectives = [word for word in (size, colour) if word]
    if kind:
        return " ".join([*adjectives, kind])
    return "shape that is " + " and ".join(adjectives)


def plural_question(query: Query) -> str:
    """Return the count question: ``How many large green triangles are there?``,
    ``How many shapes are red?``."""
    size, colour, kind = query
    adjectives = [word for word in (size, colour) if word]
    if kind:
        return f"How many {' '.join([*adjectives, kind + 's'])} are there?"
    return f"How many shapes are {' and '.join(adjectives)}?"
