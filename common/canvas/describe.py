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
    """Return the ``coordinates`` description: each shape's centre as ``(x, y)``, then the shapes'
    sizes and the relation rule (``rule``), so that every relation is derivable from the prompt."""
    centres = [f"There is a {s.name} at ({s.x}, {s.y})." for s in shapes]
    return " ".join([intro(len(shapes)), *centres, rule(geometry)])


def rule(geometry: Geometry) -> str:
    """Return the sentences stating the shapes' sizes and the relation rule (``relations``) with this
    geometry's numbers: what a reader of centres needs to derive "Left", "Below Right", ..."""
    r, side = geometry.circle_radius, geometry.side
    scale = "half" if geometry.margin_scale == 0.5 else f"{geometry.margin_scale:g} times"
    return (
        f"A small circle has radius {r['small']:g} and a large one radius {r['large']:g}; a small square "
        f"or triangle has side {side['small']:g} and a large one side {side['large']:g} (triangles are "
        "equilateral, point up and are centred on their centroid, so their height is 0.866 times their "
        f"side). A shape is right of another when its centre's x is larger by more than {scale} the "
        "larger of their two widths, and left of it when smaller by as much; above and below "
        "likewise with y and heights. A pair closer than that on an axis has no relation on it."
    )


DESCRIBERS = {"full": full, "partial": partial, "coordinates": coordinates}


def describe(kind: str, shapes: list[Shape], geometry: Geometry) -> str:
    """Return the shared description ``kind`` of a canvas; raise KeyError for an unknown kind."""
    return DESCRIBERS[kind](shapes, geometry)


# ---- task-owned sentences ----
Link = tuple[Shape, str, Shape, bool]  # (a, word, b, inverted): b is `word` (Left/Right/Above/Below) of a


def link(a: Shape, word: str, b: Shape, inverted: bool = False) -> str:
    """Return a sentence saying that ``b`` is ``word`` of ``a``: "Below the {a} is a {b}.", or
    inverted, ``a`` relative to ``b``: "The {a} is above a {b}." (the same fact, the other word)."""
    if inverted:
        return f"The {a.name} is {_PHRASES[OPPOSITE[word]]} a {b.name}."
    preposition = {"Left": "Left of", "Right": "Right of"}.get(word, word)
    return f"{preposition} the {a.name} is a {b.name}."


def chain(n: int, links: list[Link], others: tuple[Shape, ...] = ()) -> str:
    """Return a transitivity description: the intro counting ``n`` shapes, one sentence per link in
    the given order (``link``), then the shapes ``others`` off the line ("There is also a {s} in the
    canvas.")."""
    sentences = [intro(n), *(link(*each) for each in links)]
    sentences += [f"There is also a {shape.name} in the canvas." for shape in others]
    return " ".join(sentences)


OPPOSITE = {"Left": "Right", "Right": "Left", "Above": "Below", "Below": "Above"}
_PHRASES = {"Left": "left of", "Right": "right of", "Above": "above", "Below": "below"}


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
