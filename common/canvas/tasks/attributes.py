"""Attribute queries shared by the existence and count tasks: "red", "large circle", "large green circle".

A query fixes any non-empty subset of (size, colour, kind); a shape matches when it agrees on
every fixed attribute. Queries are enumerated in a fixed order (never from a set).
"""

import functools
import itertools

from common.canvas.shapes import COLOURS, IDENTITIES, KINDS, SIZES

Query = tuple[str | None, str | None, str | None]  # (size, colour, kind); None: any

VALUES = (SIZES, COLOURS, KINDS)  # each attribute's values, in the order of a query

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


def query_of(identity: tuple[str, str, str], mask: tuple[bool, bool, bool]) -> Query:
    """Return the query of type ``mask`` that ``identity`` matches (its values where ``mask`` fixes one)."""
    return tuple(v if fixed else None for v, fixed in zip(identity, mask, strict=True))  # type: ignore[return-value]


def with_value(query: Query, attribute: int, value: str) -> Query:
    """Return ``query`` with attribute ``attribute`` (0 size, 1 colour, 2 kind) fixed to ``value``."""
    values = list(query)
    values[attribute] = value
    return tuple(values)  # type: ignore[return-value]


def matches(query: Query, identity: tuple[str, str, str]) -> bool:
    """Return whether an identity has every attribute the query fixes."""
    return all(q is None or q == v for q, v in zip(query, identity, strict=True))


def count(query: Query, identities: list[tuple[str, str, str]]) -> int:
    """Return how many of ``identities`` (distinct) match ``query``."""
    return (query_bits(query) & bits(identities)).bit_count()


@functools.cache
def query_bits(query: Query) -> int:
    """Return the identities ``query`` matches as a bit set (bit i: ``IDENTITIES[i]``), remembered:
    counting a query on a canvas is then one AND of two integers."""
    return sum(1 << i for i, identity in enumerate(IDENTITIES) if matches(query, identity))


_INDEX = {identity: i for i, identity in enumerate(IDENTITIES)}


def bits(identities: list[tuple[str, str, str]]) -> int:
    """Return distinct ``identities`` as a bit set (bit i: ``IDENTITIES[i]``)."""
    out = 0
    for identity in identities:
        out |= 1 << _INDEX[identity]
    return out


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
