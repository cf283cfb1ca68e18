"""A canvas as a picture for a model, and the same picture read back from its pixels.

Unlike ``draw.py`` (for people: the shapes named, a title), this picture shows only what the
prompt's words would: the shapes, each in its colour, kind and size at its centre, on the
canvas with its axes (a frame, a light grid with the axes through 0 a shade darker, and numbered
ticks). No shape is named or marked, so the shape a question asks about is drawn like any
other. ``SCALE`` pixels a unit (8 on the default 64 x 64 canvas: a small circle is 16 pixels
across), shapes without anti-aliasing (one exact colour each), numbers in the fixed font
(``common.pictures.glyphs``).

``read_picture`` recovers the shapes from the pixels alone: the frame, the tick numbers at its
ends (read against the font's glyphs) for the coordinates, then each region of a shape colour:
its colour, its kind from how much of its bounding box it fills (a square all, a circle pi/4, a
triangle half), its size from its width, its centre from the box (a triangle's a third of its
height up from the base).
"""

import math
from typing import Any

import numpy as np
from PIL import Image, ImageDraw

from common.canvas.shapes import Geometry, Shape, circumradius, extent
from common.pictures import glyphs
from common.pictures.glyphs import colour_code, colour_codes
from common.pictures.store import picture_name

COLOURS = {"red": (214, 39, 40), "blue": (31, 119, 180), "yellow": (230, 194, 41), "green": (44, 160, 44)}
BACKGROUND = (255, 255, 255)
FRAME = (0, 0, 0)
GRID = (228, 228, 228)
AXES = (170, 170, 170)
TICK = 4  # tick marks' length outside the frame
NUMBERS_BELOW = 12  # the x axis's numbers start this far below the frame (clear of the y axis's)
LEFT, TOP, RIGHT, BOTTOM = 48, 12, 24, 36  # margins around the frame (room for the numbers)


def scale(geometry: Geometry) -> int:
    """Return pixels per canvas unit: a plot of about 512 pixels, at least 4 pixels a unit."""
    return max(4, 256 // geometry.half)


def ticks(geometry: Geometry) -> list[int]:
    """Return the coordinates with a numbered tick (and a grid line): about 9 per axis, 0 among them."""
    step = max(1, math.ceil(geometry.half / 4))
    return sorted({*range(0, geometry.half + 1, step), *range(0, -geometry.half - 1, -step)})


def scene(shapes: list[Shape], geometry: Geometry) -> dict[str, Any]:
    """Return what the picture shows: the shapes and the geometry that sizes and places them."""
    return {
        "shapes": [shape.as_dict() for shape in shapes],
        "half": geometry.half,
        "circle_radius": geometry.circle_radius,
        "side": geometry.side,
    }


def name_of(shapes: list[Shape], geometry: Geometry) -> str:
    """Return the picture's name (``store.picture_name`` of its scene)."""
    return picture_name("canvas", scene(shapes, geometry))


def draw_picture(shapes: list[Shape], geometry: Geometry) -> Image.Image:
    """Return the picture of a canvas (see the module docstring)."""
    unit, half = scale(geometry), geometry.half
    side = 2 * half * unit
    image = Image.new("RGB", (LEFT + side + 1 + RIGHT, TOP + side + 1 + BOTTOM), BACKGROUND)
    draw = ImageDraw.Draw(image)

    def at(x: float, y: float) -> tuple[float, float]:
        return LEFT + (x + half) * unit, TOP + (half - y) * unit

    for value in ticks(geometry):
        colour = AXES if value == 0 else GRID
        x, y = at(value, value)
        draw.line([x, TOP, x, TOP + side], fill=colour)
        draw.line([LEFT, y, LEFT + side, y], fill=colour)
    draw.rectangle([LEFT, TOP, LEFT + side, TOP + side], outline=FRAME)
    for value in ticks(geometry):
        x, y = at(value, value)
        draw.line([x, TOP + side, x, TOP + side + TICK], fill=FRAME)
        draw.line([LEFT - TICK, y, LEFT, y], fill=FRAME)
        text = str(value)
        start = int(x) - len(text) * glyphs.CELL[0] // 2
        glyphs.draw_text(image, start, TOP + side + NUMBERS_BELOW, text, BACKGROUND)
        width = glyphs.text_width(text)
        glyphs.draw_text(image, LEFT - TICK - 2 - width, int(y) - glyphs.CELL[1] // 2, text, BACKGROUND)
    for shape in shapes:
        _shape(draw, shape, geometry, at, unit)
    return image


def _shape(draw: ImageDraw.ImageDraw, shape: Shape, geometry: Geometry, at: Any, unit: int) -> None:
    """Draw one shape, its outline as the geometry defines it (``shapes.extent``)."""
    colour = COLOURS[shape.colour]
    x, y = at(shape.x, shape.y)
    apart = {"fill": colour, "outline": BACKGROUND}  # a hairline: two shapes of a colour never merge
    if shape.kind == "circle":
        r = geometry.circle_radius[shape.size] * unit
        draw.ellipse([x - r, y - r, x + r, y + r], **apart)
    elif shape.kind == "square":
        h = geometry.side[shape.size] * unit / 2
        draw.rectangle([x - h, y - h, x + h, y + h], **apart)
    else:  # equilateral, pointing up, centroid at the centre
        r = circumradius(shape, geometry) * unit
        s = geometry.side[shape.size] * unit
        draw.polygon([(x, y - r), (x - s / 2, y + r / 2), (x + s / 2, y + r / 2)], **apart)


# ---- reading a picture back ------------------------------------------------------------------
def read_picture(image: Image.Image, geometry: Geometry) -> list[Shape]:
    """Return the shapes of a picture drawn by ``draw_picture``, read from its pixels (``geometry``
    gives the sizes a width is matched against: the prompt's words give them too). Shapes are in
    reading order (top to bottom, left to right). Raises ValueError when the pixels are not such
    a picture."""
    from scipy import ndimage  # here: importing it costs 0.3 s, and most users of this module draw

    pixels = np.asarray(image.convert("RGB"))
    codes = colour_codes(pixels)
    left, top, right, bottom = _frame(codes)
    low, high = _end_ticks(pixels, left, right, bottom)
    unit = (right - left) / (high - low)
    plot = codes[top : bottom + 1, left : right + 1]
    shapes = []
    for colour, rgb in COLOURS.items():
        labels, _ = ndimage.label(plot == colour_code(rgb))
        for index, found in enumerate(ndimage.find_objects(labels), start=1):
            region = labels[found] == index
            shapes.append(_shape_of(colour, found, region, (low, high, unit), geometry))
    return sorted(shapes, key=lambda shape: (-shape.y, shape.x))


def _frame(codes: np.ndarray) -> tuple[int, int, int, int]:
    """Return the frame's columns and rows ``(left, top, right, bottom)``: the lines of the frame
    colour longer than half the picture."""
    black = codes == colour_code(FRAME)
    columns = np.flatnonzero(black.sum(axis=0) > codes.shape[0] // 2)
    rows = np.flatnonzero(black.sum(axis=1) > codes.shape[1] // 2)
    if len(columns) < 2 or len(rows) < 2:
        raise ValueError("no frame: not a canvas picture")
    return int(columns[0]), int(rows[0]), int(columns[-1]), int(rows[-1])


def _end_ticks(pixels: np.ndarray, left: int, right: int, bottom: int) -> tuple[int, int]:
    """Return the numbers under the frame's left and right ends (the x axis's first and last tick)."""
    return _number_under(pixels, left, bottom), _number_under(pixels, right, bottom)


def _number_under(pixels: np.ndarray, x: int, bottom: int) -> int:
    """Return the tick number centred under column ``x``: the reading of 1 to 6 cells that is a
    number with blank cells on both sides."""
    y = bottom + NUMBERS_BELOW
    for count in range(1, 7):
        start = x - count * glyphs.CELL[0] // 2
        text = glyphs.read_cells(pixels, start - glyphs.CELL[0], y, count + 2)
        if text[0] == " " and text[-1] == " " and _is_number(text[1:-1]):
            return int(text[1:-1])
    raise ValueError(f"no tick number under column {x}")


def _is_number(text: str) -> bool:
    """Return whether ``text`` is an integer as the ticks write it."""
    return text.lstrip("-").isdigit()


def _shape_of(
    colour: str, found: tuple[slice, slice], region: np.ndarray, axes: tuple, geometry: Geometry
) -> Shape:
    """Return the Shape of one region of a shape colour (its slices in the plot, the frame's inside
    from its top left corner, and its mask); the region is a pixel narrower all round than the
    shape (the hairline)."""
    low, high, unit = axes
    x0, x1 = found[1].start, found[1].stop - 1
    y0, y1 = found[0].start, found[0].stop - 1
    width, height = (x1 - x0 + 1), (y1 - y0 + 1)
    filled = region.sum() / (width * height)
    kind = "square" if filled > 0.92 else "circle" if filled > 0.65 else "triangle"
    sizes = {size: extent(Shape(size, colour, kind, 0, 0), geometry)[0] * unit for size in geometry.side}
    size = min(sizes, key=lambda name: abs(sizes[name] - (width + 1)))
    centre_y = y0 + (y1 - y0) * 2 / 3 if kind == "triangle" else (y0 + y1) / 2
    x = low + (x0 + x1) / 2 / unit
    y = high - centre_y / unit
    return Shape(size, colour, kind, round(x), round(y))
