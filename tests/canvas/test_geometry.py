"""Canvas geometry and the relation rule: symmetry, transitivity, margins, placement, clear errors."""

import itertools
import math
import random

import pytest

from common.canvas.relations import answer, horizontal, phrase, relation, vertical
from common.canvas.shapes import (
    IDENTITIES,
    CanvasError,
    Geometry,
    Shape,
    bounding_box,
    circumradius,
    random_canvas,
    sample_identities,
)

G = Geometry()


def random_shapes(rng, n):
    return [Shape(*rng.choice(IDENTITIES), rng.randint(-32, 32), rng.randint(-32, 32)) for _ in range(n)]


def test_margin_is_half_the_larger_width():
    small = Shape("small", "red", "square", 0, 0)  # width 2: margin 1 with another small square
    assert horizontal(small, Shape("small", "blue", "square", 1, 0), G) is None
    assert horizontal(small, Shape("small", "blue", "square", 2, 0), G) == "Right"
    big = Shape("large", "red", "circle", 0, 0)  # width 8: margin 4 with anything smaller
    assert horizontal(big, Shape("small", "blue", "square", -4, 0), G) is None
    assert horizontal(big, Shape("small", "blue", "square", -5, 0), G) == "Left"
    # a large triangle is 4 * sqrt(3) / 2 = 3.46 high: margin 1.73 with a small square
    tri = Shape("large", "red", "triangle", 0, 0)
    assert vertical(tri, Shape("small", "blue", "square", 0, -1), G) is None
    assert vertical(tri, Shape("small", "blue", "square", 0, -2), G) == "Below"
    assert answer(small, Shape("large", "green", "triangle", 9, -9), G) == "Below Right"


def test_rule_is_symmetric_and_transitive_along_each_axis():
    rng = random.Random(3)
    opposite = {"Left": "Right", "Right": "Left", "Above": "Below", "Below": "Above", None: None}
    shapes = random_shapes(rng, 40)
    for a, b in itertools.permutations(shapes, 2):
        assert horizontal(a, b, G) == opposite[horizontal(b, a, G)]
        assert vertical(a, b, G) == opposite[vertical(b, a, G)]
    for a, b, c in itertools.permutations(shapes[:25], 3):
        for rel in (horizontal, vertical):
            if rel(a, b, G) is not None and rel(a, b, G) == rel(b, c, G):
                assert rel(a, c, G) == rel(a, b, G)


def test_phrases():
    a = Shape("large", "red", "circle", 0, 0)
    assert phrase(a, Shape("small", "blue", "square", 10, 10), G) == "to the above right of"
    assert phrase(a, Shape("small", "blue", "square", -10, 0), G) == "left of"
    assert phrase(a, Shape("small", "blue", "square", 0, -10), G) == "below"
    with pytest.raises(ValueError, match="within the margin"):
        phrase(a, Shape("small", "blue", "square", 1, 1), G)
    assert relation(a, Shape("small", "blue", "square", 1, 1), G) == ()


@pytest.mark.parametrize("n", [3, 8, 16, 24])
def test_random_canvases_are_inside_apart_and_related(n):
    rng = random.Random(n)
    for _ in range(5):
        shapes = random_canvas(rng, sample_identities(rng, n), G)
        assert len({s.identity for s in shapes}) == n
        for s in shapes:
            xmin, ymin, xmax, ymax = bounding_box(s, G)
            assert xmin > -32 and xmax < 32 and ymin > -32 and ymax < 32
            assert isinstance(s.x, int) and isinstance(s.y, int)
        for a, b in itertools.combinations(shapes, 2):
            assert math.dist((a.x, a.y), (b.x, b.y)) > circumradius(a, G) + circumradius(b, G)
            assert relation(a, b, G)


def test_triangle_geometry_centroid_at_centre():
    tri = Shape("large", "red", "triangle", 0, 0)
    xmin, ymin, xmax, ymax = bounding_box(tri, G)
    height = 4 * math.sqrt(3) / 2
    assert (xmin, xmax) == (-2, 2)
    assert ymin == pytest.approx(-height / 3) and ymax == pytest.approx(2 * height / 3)
    assert circumradius(tri, G) == pytest.approx(2 * height / 3)


def test_impossible_canvas_is_a_clear_error():
    tiny = Geometry(half=6, place_attempts=50)
    with pytest.raises(CanvasError, match=r"could not place .* after 50 attempts"):
        random_canvas(random.Random(0), list(IDENTITIES), tiny)
    with pytest.raises(CanvasError, match="1 to 24 shapes"):
        sample_identities(random.Random(0), 25)
