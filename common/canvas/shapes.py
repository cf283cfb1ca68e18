"""Shapes on a 2-D canvas: the 24 identities, their geometry, and random canvases.

The canvas spans ``-half..half`` on both axes (default 64 x 64, -32..32), y pointing up. A shape
is an identity (size, colour, kind) at an integer centre. Circles have a radius, squares and
triangles a side; triangles are equilateral, pointing up, with their centroid at the centre.

Placement: a shape is redrawn when it would touch another shape or the border, or when it
would be within the relation margin of another shape on both axes (so that every pair of
shapes has a relation on at least one axis and every description is complete). Touching is
tested with circumscribed circles: shapes whose circles are apart cannot touch, a slightly
stricter rule than the exact outlines. Attempts are bounded; running out raises CanvasError.
"""

import functools
import math
import random
from dataclasses import dataclass, field

from common.errors import UserError

SIZES = ("small", "large")
COLOURS = ("red", "blue", "yellow", "green")
KINDS = ("square", "circle", "triangle")
IDENTITIES = tuple((s, c, k) for s in SIZES for c in COLOURS for k in KINDS)  # 24, fixed order


class CanvasError(UserError):
    """A canvas could not be drawn with the requested settings (too many or too large shapes)."""


def _circle_radius() -> dict[str, float]:
    return {"small": 1.0, "large": 4.0}


def _side() -> dict[str, float]:
    return {"small": 2.0, "large": 4.0}


@dataclass
class Geometry:
    """Canvas and shape dimensions; the defaults are the original task's."""

    half: int = 32  # coordinates run from -half to half on both axes
    circle_radius: dict[str, float] = field(default_factory=_circle_radius)  # by size
    side: dict[str, float] = field(default_factory=_side)  # squares, triangles
    margin_scale: float = 0.5  # relation margin: this fraction of the larger shape's extent
    place_attempts: int = 1000  # random centres tried per shape before giving up

    @functools.cached_property
    def sizes(self) -> dict[tuple[str, str], tuple[float, float, float]]:
        """Return ``(width, height, circumradius)`` of each (size, kind), worked out once per
        geometry (placing shapes asks for them millions of times)."""
        out = {}
        for size in SIZES:
            for kind in KINDS:
                if kind == "circle":
                    d = 2 * self.circle_radius[size]
                    out[(size, kind)] = (d, d, d / 2)
                else:
                    side = self.side[size]
                    height = side * math.sqrt(3) / 2 if kind == "triangle" else side
                    radius = side / math.sqrt(3) if kind == "triangle" else side / math.sqrt(2)
                    out[(size, kind)] = (side, height, radius)
        return out


@dataclass(frozen=True)
class Shape:
    """One shape: identity and integer centre."""

    size: str
    colour: str
    kind: str
    x: int
    y: int

    @property
    def name(self) -> str:
        """Return the shape as written in descriptions: ``large red circle``."""
        return f"{self.size} {self.colour} {self.kind}"

    @property
    def identity(self) -> tuple[str, str, str]:
        """Return ``(size, colour, kind)``."""
        return self.size, self.colour, self.kind

    def as_dict(self) -> dict[str, object]:
        """Return the shape as a JSON-ready dict (the form stored in trials)."""
        return {"size": self.size, "colour": self.colour, "kind": self.kind, "x": self.x, "y": self.y}


def shape_from_dict(data: dict[str, object]) -> Shape:
    """Return the Shape stored as ``as_dict`` gave it."""
    return Shape(str(data["size"]), str(data["colour"]), str(data["kind"]), int(data["x"]), int(data["y"]))


def title(identity: tuple[str, str, str]) -> str:
    """Return an identity in answer form: ``Large Blue Square``."""
    return " ".join(word.capitalize() for word in identity)


def extent(shape: Shape, geometry: Geometry) -> tuple[float, float]:
    """Return ``(width, height)`` of a shape's bounding box."""
    width, height, _ = geometry.sizes[(shape.size, shape.kind)]
    return width, height


def bounding_box(shape: Shape, geometry: Geometry) -> tuple[float, float, float, float]:
    """Return ``(xmin, ymin, xmax, ymax)``; a triangle's centroid sits a third of its height up."""
    width, height = extent(shape, geometry)
    below = height / 3 if shape.kind == "triangle" else height / 2
    return shape.x - width / 2, shape.y - below, shape.x + width / 2, shape.y - below + height


def circumradius(shape: Shape, geometry: Geometry) -> float:
    """Return the radius of the smallest circle about the centre holding the shape."""
    return geometry.sizes[(shape.size, shape.kind)][2]


def margin(a: Shape, b: Shape, axis: int, geometry: Geometry) -> float:
    """Return the relation margin of a pair on ``axis`` (0: x, 1: y): a fraction of the larger extent."""
    sizes = geometry.sizes
    return geometry.margin_scale * max(sizes[(a.size, a.kind)][axis], sizes[(b.size, b.kind)][axis])


def fits(shape: Shape, placed: list[Shape], geometry: Geometry) -> bool:
    """Return whether ``shape`` is inside the border, apart from and related to every placed shape."""
    xmin, ymin, xmax, ymax = bounding_box(shape, geometry)
    if xmin <= -geometry.half or ymin <= -geometry.half or xmax >= geometry.half or ymax >= geometry.half:
        return False
    for other in placed:
        if math.dist((shape.x, shape.y), (other.x, other.y)) <= circumradius(shape, geometry) + circumradius(
            other, geometry
        ):
            return False
        if all(
            abs((shape.x, shape.y)[axis] - (other.x, other.y)[axis]) <= margin(shape, other, axis, geometry)
            for axis in (0, 1)
        ):
            return False
    return True


def random_canvas(
    rng: random.Random, identities: list[tuple[str, str, str]], geometry: Geometry
) -> list[Shape]:
    """Return shapes with the given identities at random integer centres, placed one by one.

    Raises CanvasError when a shape finds no place in ``geometry.place_attempts`` draws.
    """
    placed: list[Shape] = []
    for size, colour, kind in identities:
        for _ in range(geometry.place_attempts):
            shape = Shape(
                size,
                colour,
                kind,
                rng.randint(-geometry.half, geometry.half),
                rng.randint(-geometry.half, geometry.half),
            )
            if fits(shape, placed, geometry):
                placed.append(shape)
                break
        else:
            raise CanvasError(
                f"could not place a {size} {colour} {kind} after {geometry.place_attempts} "
                f"attempts beside {len(placed)} shapes: use fewer or smaller shapes"
            )
    return placed


def sample_identities(rng: random.Random, n: int) -> list[tuple[str, str, str]]:
    """Return ``n`` distinct identities in random order; raise CanvasError unless 1 <= n <= 24."""
    if not 1 <= n <= len(IDENTITIES):
        raise CanvasError(f"a canvas holds 1 to {len(IDENTITIES)} shapes (distinct identities), not {n}")
    return rng.sample(IDENTITIES, n)
