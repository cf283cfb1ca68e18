"""Text in pictures, in one fixed font, drawn so that it can be read back from the pixels exactly.

The font is DejaVu Sans Mono at FONT_SIZE pixels, the copy matplotlib ships (a pinned
dependency), rendered by the pinned Pillow. Every character is drawn alone in a cell of CELL
pixels (its ink stays inside: checked by the tests), left to right, so a line of text is a row
of cells and a cell holds exactly one character's pixels. Reading (``read_cells``) compares each
cell with the same character drawn in the same colours (``glyph``): equal pixels or no match,
never a guess. Characters outside CHARSET are refused when drawing.
"""

import functools
import os
import string

import numpy as np
from PIL import Image, ImageDraw, ImageFont

FONT_SIZE = 14
CELL = (10, 18)  # width, height of one character's cell in pixels
CHARSET = string.ascii_letters + string.digits + " -'.,()&/+"
INK = (0, 0, 0)


@functools.lru_cache(maxsize=1)
def font() -> ImageFont.FreeTypeFont:
    """Return the fixed font (matplotlib's copy, imported here: most users of this module only read)."""
    import matplotlib

    return ImageFont.truetype(
        os.path.join(matplotlib.get_data_path(), "fonts", "ttf", "DejaVuSansMono.ttf"), FONT_SIZE
    )


@functools.lru_cache(maxsize=4096)
def glyph(char: str, background: tuple[int, int, int], ink: tuple[int, int, int] = INK) -> bytes:
    """Return the RGB bytes of one cell holding ``char`` in ``ink`` on ``background``."""
    cell = Image.new("RGB", CELL, background)
    if char != " ":
        ImageDraw.Draw(cell).text((0, 0), char, font=font(), fill=ink)
    return cell.tobytes()


def draw_text(
    image: Image.Image, x: int, y: int, text: str, background: tuple[int, int, int], ink=INK
) -> None:
    """Draw ``text`` on ``image`` as a row of cells from ``(x, y)`` (the cells' background must be
    ``background``). Raises ValueError for a character outside CHARSET."""
    for index, char in enumerate(text):
        if char not in CHARSET:
            raise ValueError(f"cannot draw {char!r} (in {text!r}): the pictures' characters are {CHARSET!r}")
        cell = Image.frombytes("RGB", CELL, glyph(char, background, ink))
        image.paste(cell, (x + index * CELL[0], y))


def read_cells(pixels: np.ndarray, x: int, y: int, count: int, ink=INK) -> str:
    """Return the text of ``count`` cells from ``(x, y)`` of ``pixels`` (an RGB array, rows
    first), each cell read as the character whose drawing it equals, on the background of the
    cell's top left pixel; "?" for a cell that equals none."""
    width, height = CELL
    chars = []
    for index in range(count):
        left = x + index * width
        cell = pixels[y : y + height, left : left + width]
        background = tuple(int(v) for v in cell[0, 0])
        chars.append(_lookup(background, ink).get(cell.tobytes(), "?"))
    return "".join(chars)


@functools.lru_cache(maxsize=64)
def _lookup(background: tuple[int, int, int], ink: tuple[int, int, int]) -> dict[bytes, str]:
    """Return cell bytes -> character for every character of CHARSET on ``background``."""
    return {glyph(char, background, ink): char for char in reversed(CHARSET)}  # " " last: blank wins


def text_width(text: str) -> int:
    """Return the width in pixels of ``text`` drawn by ``draw_text``."""
    return len(text) * CELL[0]


def colour_codes(pixels: np.ndarray) -> np.ndarray:
    """Return one integer per pixel of an RGB array (``colour_code`` of its colour): comparing a
    picture with a colour is then one comparison per pixel."""
    rgb = pixels.astype(np.int32)
    return (rgb[..., 0] << 16) | (rgb[..., 1] << 8) | rgb[..., 2]


def colour_code(rgb: tuple[int, int, int]) -> int:
    """Return the integer of a colour (``colour_codes``)."""
    return (rgb[0] << 16) | (rgb[1] << 8) | rgb[2]
