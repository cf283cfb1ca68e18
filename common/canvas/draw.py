"""A PNG picture of a canvas (matplotlib, Agg backend: no display needed)."""

import math
from pathlib import Path

from matplotlib import patches

from common.canvas.shapes import Geometry, Shape, circumradius
from common.figures import pyplot, save_png

COLOURS = {"red": "#d62728", "blue": "#1f77b4", "yellow": "#e6c229", "green": "#2ca02c"}


def _patch(shape: Shape, geometry: Geometry) -> patches.Patch:
    """Return the matplotlib patch of a shape, its outline as the geometry defines it."""
    colour = COLOURS[shape.colour]
    if shape.kind == "circle":
        return patches.Circle((shape.x, shape.y), geometry.circle_radius[shape.size], color=colour)
    side = geometry.side[shape.size]
    if shape.kind == "square":
        return patches.Rectangle((shape.x - side / 2, shape.y - side / 2), side, side, color=colour)
    # equilateral, pointing up, centroid at the centre: orientation 0 puts a vertex straight up
    return patches.RegularPolygon(
        (shape.x, shape.y), 3, radius=circumradius(shape, geometry), orientation=0, color=colour
    )


def draw_canvas(shapes: list[Shape], geometry: Geometry, path: str | Path, title: str = "") -> None:
    """Write a PNG of the canvas to ``path`` (atomically): shapes, their names, the border and a grid."""
    fig, ax = pyplot().subplots(figsize=(6, 6), dpi=100)
    half = geometry.half
    ax.set_xlim(-half, half)
    ax.set_ylim(-half, half)
    ax.set_aspect("equal")
    ax.grid(True, linewidth=0.3)
    for shape in shapes:
        ax.add_patch(_patch(shape, geometry))
        offset = circumradius(shape, geometry) + 0.8
        ax.annotate(shape.name, (shape.x, shape.y - offset), ha="center", va="top", fontsize=6)
    if title:
        ax.set_title(title if len(title) < 90 else title[:87] + "...", fontsize=8)
    ax.set_xticks(range(-half, half + 1, max(1, math.ceil(half / 4))))
    ax.set_yticks(range(-half, half + 1, max(1, math.ceil(half / 4))))
    save_png(fig, path, dpi=100)
