"""Canvas twins: a canvas with some shapes' attributes changed and every position kept.

The existence and count tasks vary the canvas of an item by changing one shape's attribute (or,
where the query has several words, by swapping one attribute between two shapes, so every word
keeps its frequency). The twin is a valid canvas of its own only if the changed shapes still fit
where they are and every relation a description could state is unchanged: then the two canvases'
descriptions differ in the changed attribute words alone (``same_layout``).
"""

from common.canvas.relations import relation
from common.canvas.shapes import Geometry, Shape, fits

ATTRIBUTES = ("size", "colour", "kind")


def with_value(shape: Shape, attribute: int, value: str) -> Shape:
    """Return ``shape`` with attribute ``attribute`` (0 size, 1 colour, 2 kind) set to ``value``."""
    identity = list(shape.identity)
    identity[attribute] = value
    return Shape(*identity, shape.x, shape.y)  # type: ignore[arg-type]


def swapped(shapes: list[Shape], i: int, j: int, attribute: int) -> list[Shape]:
    """Return ``shapes`` with attribute ``attribute`` of shapes ``i`` and ``j`` swapped."""
    out = list(shapes)
    out[i] = with_value(shapes[i], attribute, shapes[j].identity[attribute])
    out[j] = with_value(shapes[j], attribute, shapes[i].identity[attribute])
    return out


def changed(shapes: list[Shape], i: int, attribute: int, value: str) -> list[Shape]:
    """Return ``shapes`` with attribute ``attribute`` of shape ``i`` set to ``value``."""
    out = list(shapes)
    out[i] = with_value(shapes[i], attribute, value)
    return out


def same_layout(before: list[Shape], after: list[Shape], geometry: Geometry) -> bool:
    """Return whether ``after`` (``before`` with some attributes changed, positions kept) is a
    valid canvas whose every pair has the same relation as in ``before``, with distinct
    identities: then any description of the two differs in the changed words alone."""
    moved = [i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b]
    if len({s.identity for s in after}) != len(after):
        return False
    for i in moved:
        others = after[:i] + after[i + 1 :]
        if not fits(after[i], others, geometry):
            return False
        for j in range(len(after)):
            if j != i and relation(before[i], before[j], geometry) != relation(after[i], after[j], geometry):
                return False
    return True
