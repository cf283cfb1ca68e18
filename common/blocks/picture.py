"""A blocks problem as a picture for a model, and the same picture read back from its pixels.

The picture has two panels. Left, under the heading "Initially": the initial stacks standing on
the table (a grey bar), in the board's order, each block a box labelled with its name. Right,
under "Goal": the goal relations, drawn as pieces of stacks (``goal_pieces``): blocks drawn one
on another must be so; a piece standing on a grey bar must stand on the table; a crossed box
above a block means nothing may be on it; a piece drawn without a bar may stand on anything;
blocks the goal does not name are not drawn. ``LEGEND`` says so in the prompt's words. Names are
drawn in the fixed font (``common.pictures.glyphs``), wrapped at spaces into lines of at most
LINE_CHARS characters. No colour carries meaning: every block looks alike.

``read_picture`` recovers the initial board and the goal relations from the pixels alone: boxes
are the regions of the block colour, a name is read cell by cell against the font's glyphs,
stacks are boxes that share a column, the bar and the crossed box by their colours below and
above a piece. The tests read every picture of whole sets this way and re-derive each problem
from it.
"""

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np
from PIL import Image, ImageDraw

from common.blocks.problems import View
from common.blocks.state import Relation
from common.pictures import glyphs
from common.pictures.glyphs import colour_code, colour_codes
from common.pictures.store import picture_name

LEGEND = (
    "Each problem is shown as a picture: on the left, the initial stacks standing on the table (the "
    "grey bar); on the right, the goal. In the goal, blocks drawn on one another must end up so, a "
    "block standing on a grey bar must end up on the table, a crossed box above a block means nothing "
    "may end up on it, and anything the goal does not show may be anywhere."
)
LINE_CHARS = 10  # a name is wrapped at spaces into lines of at most this many characters
PAD = 5  # pixels between a box's outline and its label
GAP = 12  # between two stacks
MARGIN = 16
FLOAT = 14  # a goal piece not on the table stands this far above the bar's level
BAR = 8  # the table's thickness
MARK = 16  # the height of the crossed box
BACKGROUND = (255, 255, 255)
FILL = (236, 226, 198)
OUTLINE = (70, 70, 70)
TABLE = (150, 150, 150)
CROSS = (112, 48, 160)
DIVIDER = (190, 190, 190)
HEADINGS = ("Initially", "Goal")


def scene(view: View) -> dict[str, Any]:
    """Return what the picture of ``view`` shows: its initial board and goal relations."""
    return {"init": [list(stack) for stack in view.init_board], "goal": [list(r) for r in view.goal]}


def name_of(view: View) -> str:
    """Return the picture's name (``store.picture_name`` of its scene)."""
    return picture_name("blocks", scene(view))


def goal_pieces(goal: Sequence[Relation]) -> list[tuple[list[str], bool, bool]]:
    """Return the goal as pieces of stacks ``(blocks bottom to top, on the table, clear on top)``:
    each chain of "on" relations, with whether its bottom must rest on the table and its top be
    clear; in the order the goal first names them."""
    below = {top: bottom for kind, top, bottom in goal if kind == "mid"}
    above = {bottom: top for kind, top, bottom in goal if kind == "mid"}
    table = {top for kind, top, _ in goal if kind == "bot"}
    clear = {bottom for kind, _, bottom in goal if kind == "top"}
    named = [name for relation in goal for name in relation[1:] if name]
    pieces, placed = [], set()
    for name in dict.fromkeys(named):
        if name in placed:
            continue
        bottom = name
        while bottom in below:
            bottom = below[bottom]
        chain = [bottom]
        while chain[-1] in above:
            chain.append(above[chain[-1]])
        placed.update(chain)
        pieces.append((chain, chain[0] in table, chain[-1] in clear))
    return pieces


def wrap(name: str) -> list[str]:
    """Return ``name`` wrapped at spaces into lines of at most LINE_CHARS characters (a longer
    word keeps a line of its own)."""
    lines: list[str] = []
    for word in name.split(" "):
        if lines and len(lines[-1]) + 1 + len(word) <= LINE_CHARS:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines


def draw_picture(view: View) -> Image.Image:
    """Return the picture of ``view`` (see the module docstring)."""
    names = [item for stack in view.init_board for item in stack]
    width = max(len(line) for name in names for line in wrap(name)) * glyphs.CELL[0] + 2 * PAD + 2
    height = max(len(wrap(name)) for name in names) * glyphs.CELL[1] + 2 * PAD + 2
    box = (width, height)
    pieces = goal_pieces(view.goal)
    init_w = max(len(view.init_board) * (width + GAP) + GAP, glyphs.text_width(HEADINGS[0]) + GAP)
    goal_w = max(len(pieces) * (width + GAP) + GAP, glyphs.text_width(HEADINGS[1]) + GAP)
    tallest = max(
        max(len(stack) for stack in view.init_board) * height,
        max(len(chain) * height + FLOAT + MARK + 4 for chain, _, _ in pieces) if pieces else 0,
    )
    top = MARGIN + glyphs.CELL[1] + 8
    floor = top + tallest + 4  # the table's top edge
    image = Image.new("RGB", (2 * MARGIN + init_w + 2 + goal_w, floor + BAR + MARGIN), BACKGROUND)
    draw = ImageDraw.Draw(image)
    left, right = MARGIN, MARGIN + init_w + 2
    draw.rectangle([MARGIN + init_w, MARGIN, MARGIN + init_w + 1, floor + BAR], fill=DIVIDER)
    glyphs.draw_text(image, left, MARGIN, HEADINGS[0], BACKGROUND)
    glyphs.draw_text(image, right, MARGIN, HEADINGS[1], BACKGROUND)
    draw.rectangle([left, floor, left + init_w - 1, floor + BAR - 1], fill=TABLE)
    for index, stack in enumerate(view.init_board):
        _stack(image, draw, left + GAP + index * (width + GAP), floor, stack, box)
    for index, (chain, on_table, clear) in enumerate(pieces):
        x = right + GAP + index * (width + GAP)
        base = floor if on_table else floor - FLOAT
        if on_table:
            draw.rectangle([x - GAP // 3, floor, x + width + GAP // 3 - 1, floor + BAR - 1], fill=TABLE)
        _stack(image, draw, x, base, chain, box)
        if clear:
            _cross(draw, x, base - len(chain) * height - 4 - MARK, width)
    return image


def _stack(
    image: Image.Image, draw: ImageDraw.ImageDraw, x: int, base: int, blocks: Sequence[str], box: tuple
) -> None:
    """Draw ``blocks`` (bottom to top) as boxes standing on the row ``base``, from column ``x``."""
    width, height = box
    for level, name in enumerate(blocks):
        y = base - (level + 1) * height
        draw.rectangle([x, y, x + width - 1, y + height - 1], fill=FILL, outline=OUTLINE)
        for row, line in enumerate(wrap(name)):
            glyphs.draw_text(image, x + 1 + PAD, y + 1 + PAD + row * glyphs.CELL[1], line, FILL)


def _cross(draw: ImageDraw.ImageDraw, x: int, y: int, width: int) -> None:
    """Draw the crossed box (nothing may be on the block below it) with its top left at ``(x, y)``."""
    draw.rectangle([x, y, x + width - 1, y + MARK - 1], outline=CROSS)
    draw.line([x, y, x + width - 1, y + MARK - 1], fill=CROSS)
    draw.line([x, y + MARK - 1, x + width - 1, y], fill=CROSS)


# ---- reading a picture back ------------------------------------------------------------------
def read_picture(image: Image.Image) -> tuple[list[list[str]], list[Relation]]:
    """Return ``(initial board, goal relations)`` read from the pixels of a picture drawn by
    ``draw_picture`` (stacks left to right, bottom to top; relations piece by piece: bot, the
    "on" relations upward, top). Raises ValueError when the pixels are not such a picture."""
    pixels = np.asarray(image.convert("RGB"))
    codes = colour_codes(pixels)
    divider = _divider(codes)
    boxes = [_read_box(pixels, box) for box in _regions(codes, FILL) if _is_box(box)]
    table = _regions(codes, TABLE)
    crosses = _regions(codes, CROSS)
    init = [[name for _, name in column] for x, column in _columns(boxes) if x < divider]
    goal: list[Relation] = []
    for x, column in _columns(boxes):
        if x < divider:
            continue
        (bottom_box, bottom), (top_box, top) = column[0], column[-1]
        if any(_touches_below(bottom_box, bar) for bar in table):
            goal.append(("bot", bottom, None))
        goal += [("mid", upper, lower) for (_, lower), (_, upper) in itertools.pairwise(column)]
        if any(_touches_above(top_box, cross) for cross in crosses):
            goal.append(("top", None, top))
    return init, goal


def _divider(codes: np.ndarray) -> int:
    """Return the column of the divider between the panels (the first column of its colour that
    runs down most of the picture)."""
    runs = (codes == colour_code(DIVIDER)).sum(axis=0)
    columns = np.flatnonzero(runs > codes.shape[0] // 2)
    if not len(columns):
        raise ValueError("no divider between the initial and the goal panel: not a blocks picture")
    return int(columns[0])


def _regions(codes: np.ndarray, colour: tuple[int, int, int]) -> list[tuple[int, int, int, int]]:
    """Return the bounding boxes ``(x0, y0, x1, y1)`` (inclusive) of the connected regions of ``colour``."""
    from scipy import ndimage  # here: importing it costs 0.3 s, and most users of this module draw

    labels, _ = ndimage.label(codes == colour_code(colour))
    return [(s[1].start, s[0].start, s[1].stop - 1, s[0].stop - 1) for s in ndimage.find_objects(labels)]


def _is_box(region: tuple[int, int, int, int]) -> bool:
    """Return whether a region of the block colour is a box (not a letter's hole: "o", "e")."""
    return region[2] - region[0] >= glyphs.CELL[0] + 2 * PAD and region[3] - region[1] >= glyphs.CELL[1]


def _read_box(pixels: np.ndarray, region: tuple[int, int, int, int]) -> tuple[tuple, str]:
    """Return ``(region, name)``: a box's fill region and the name written in it (its lines of
    cells read, joined by spaces)."""
    x0, y0, x1, y1 = region
    columns = (x1 - x0 + 1 - 2 * PAD) // glyphs.CELL[0]
    rows = (y1 - y0 + 1 - 2 * PAD) // glyphs.CELL[1]
    lines = [
        glyphs.read_cells(pixels, x0 + PAD, y0 + PAD + row * glyphs.CELL[1], columns).rstrip()
        for row in range(rows)
    ]
    name = " ".join(line for line in lines if line)
    if not name or "?" in name:
        raise ValueError(f"the box at {region[:2]} holds no readable name ({name!r})")
    return region, name


def _columns(boxes: list[tuple[tuple, str]]) -> list[tuple[int, list[tuple[tuple, str]]]]:
    """Return the boxes grouped by column (left to right), each column bottom to top."""
    by_x: dict[int, list] = {}
    for region, name in boxes:
        by_x.setdefault(region[0], []).append((region, name))
    return [(x, sorted(column, key=lambda entry: -entry[0][1])) for x, column in sorted(by_x.items())]


def _touches_below(box: tuple, bar: tuple) -> bool:
    """Return whether the table region ``bar`` lies right under ``box`` (its outline between)."""
    return bar[0] <= box[0] and bar[2] >= box[2] and 0 < bar[1] - box[3] <= 3


def _touches_above(box: tuple, cross: tuple) -> bool:
    """Return whether the crossed box ``cross`` sits right above ``box``."""
    return cross[0] <= box[0] and cross[2] >= box[2] and 0 < box[1] - cross[3] <= 8
