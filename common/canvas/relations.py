"""The one relation rule every description sentence and gold answer is derived from.

B is right of A when B's centre x exceeds A's by more than the pair's margin on x; left when it
is lower by more than the margin; likewise above / below with y. The margin of a pair on an
axis is ``margin_scale`` (default 0.5) times the larger of the two shapes' extents on that axis
(width for x, height for y): half the larger shape's width. Closer than the margin on an axis,
the pair has no relation on that axis.

By construction the rule is symmetric (A left of B exactly when B right of A: the margin does
not depend on the order) and transitive along an axis: if B is right of A and C right of B then
x_C - x_A > m_AB + m_BC >= s*w_A + s*w_C >= s*max(w_A, w_C) = m_AC.
"""

from common.canvas.shapes import Geometry, Shape, margin


def horizontal(a: Shape, b: Shape, geometry: Geometry) -> str | None:
    """Return ``"Right"`` or ``"Left"`` for where ``b`` is relative to ``a`` on x (None: within
    the margin)."""
    dx = b.x - a.x
    m = margin(a, b, 0, geometry)
    return "Right" if dx > m else "Left" if dx < -m else None


def vertical(a: Shape, b: Shape, geometry: Geometry) -> str | None:
    """Return ``"Above"`` or ``"Below"`` for where ``b`` is relative to ``a`` on y (None: within
    the margin)."""
    dy = b.y - a.y
    m = margin(a, b, 1, geometry)
    return "Above" if dy > m else "Below" if dy < -m else None


def relation(a: Shape, b: Shape, geometry: Geometry) -> tuple[str, ...]:
    """Return where ``b`` is relative to ``a``: vertical word first, e.g. ``("Below", "Right")``;
    empty within the margin on both axes."""
    return tuple(word for word in (vertical(a, b, geometry), horizontal(a, b, geometry)) if word)


def answer(a: Shape, b: Shape, geometry: Geometry) -> str:
    """Return the coordinate-task answer for ``b`` relative to ``a``: ``"Below Right"``, ``"Left"``, ..."""
    return " ".join(relation(a, b, geometry))


def phrase(a: Shape, b: Shape, geometry: Geometry) -> str:
    """Return the description phrase for ``b`` relative to ``a``: ``to the above right of``,
    ``left of``, ``above``.

    Raises ValueError for an unrelated pair (random canvases never have one).
    """
    words = relation(a, b, geometry)
    if not words:
        raise ValueError(f"{b.name} and {a.name} are within the margin on both axes")
    if len(words) == 2:
        return f"to the {words[0].lower()} {words[1].lower()} of"
    return {"Left": "left of", "Right": "right of", "Above": "above", "Below": "below"}[words[0]]
