"""Descriptions of a canvas in words; every relation sentence comes from ``relations``.

Shared types (any task may use them): ``full`` (for each shape, one sentence per other shape),
``partial`` (each pair once: a shape is related only to the shapes named after it) and
``coordinates`` (each shape's centre). Task-owned sentences live here too, so that all the
wording is in one place: the transitivity chain, the shuffle line and swaps, and the
existence-tracking events.
"""

from common.canvas.relations import phrase
from common.canvas.shapes import Geometry, Shape

SHARED = ("full", "partial", "coordinates")


def intro(n: int) -> str:
    """Return the first sentence of every description."""
    return f"There are {n} shapes in a canvas."


def full(shapes: list[Shape], geometry: Geometry) -> str:
    """Return the ``full`` description: every shape, then where each other shape is relative to it."""
    return _relational(shapes, geometry, each_pair_once=False)


def partial(shapes: list[Shape], geometry: Geometry) -> str:
    """Return the ``partial`` description: every pair once, later shapes relative to earlier ones."""
    return _relational(shapes, geometry, each_pair_once=True)


def _relational(shapes: list[Shape], geometry: Geometry, each_pair_once: bool) -> str:
    """Return an intro plus "There is a {s}..." and "A {t} is <phrase> this {s}." sentences."""
    sentences = [intro(len(shapes))]
    for i, s in enumerate(shapes):
        sentences.append(f"There is a {s.name} in the canvas.")
        others = shapes[i + 1 :] if each_pair_once else shapes[:i] + shapes[i + 1 :]
        sentences += [f"A {t.name} is {phrase(s, t, geometry)} this {s.name}." for t in others]
    return " ".join(sentences)


def coordinates(shapes: list[Shape], geometry: Geometry) -> str:
    """Return the ``coordinates`` description: each shape's centre as ``(x, y)``."""
    return " ".join([intro(len(shapes))] + [f"There is a {s.name} at ({s.x}, {s.y})." for s in shapes])


DESCRIBERS = {"full": full, "partial": partial, "coordinates": coordinates}


def describe(kind: str, shapes: list[Shape], geometry: Geometry) -> str:
    """Return the shared description ``kind`` of a canvas; raise KeyError for an unknown kind."""
    return DESCRIBERS[kind](shapes, geometry)


# ---- task-owned sentences ----
def chain(n: int, pivot: Shape, sides: list[tuple[str, list[Shape]]]) -> str:
    """Return a transitivity-chain description: the pivot, then per side each shape after the previous.

    ``sides`` is ``[(word, shapes), ...]`` with word one of Left/Right/Above/Below: "Below the
    {previous} is a {shape}." The shapes of a side are listed going away from the pivot.
    """
    sentences = [intro(n), f"There is a {pivot.name} in the canvas."]
    for word, shapes in sides:
        previous = pivot
        for shape in shapes:
            preposition = {"Left": "Left of", "Right": "Right of"}.get(word, word)
            sentences.append(f"{preposition} the {previous.name} is a {shape.name}.")
            previous = shape
    return " ".join(sentences)


def line_up(n: int, names: list[str]) -> str:
    """Return the shuffle description's start: "From bottom to top, the shapes are a x, a y, and a z."."""
    items = [f"a {name}" for name in names]
    listed = (
        items[0]
        if len(items) == 1
        else f"{', '.join(items[:-1])}{',' if len(items) > 2 else ''} and {items[-1]}"
    )
    return f"{intro(n)} From bottom to top, the shapes are {listed}."


def swap(a: str, b: str) -> str:
    """Return a swap sentence of the shuffle description."""
    return f"The {a} and the {b} swap positions."


def added(name: str) -> str:
    """Return an existence-tracking event: a shape is added."""
    return f"A {name} is added to the canvas."


def removed(name: str) -> str:
    """Return an existence-tracking event: a shape is removed."""
    return f"The {name} is removed from the canvas."
