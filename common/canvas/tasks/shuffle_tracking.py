"""Shuffle tracking: shapes in a column from bottom to top, then swaps, then
"What shape is second from the top?".

The task owns the description. It needs every shape of the canvas above the previous one by
the relation rule (else "from bottom to top" would not be justified), so it places its canvases
as a column: each shape above the previous one by the smallest integer step beyond the margin,
the spare height spread at random (sorted random cut points), inside the border, then random x
positions (no touching). Shapes that cannot fit in one column make the request impossible.
Balanced over two independent axes: the position asked (0 = bottom; positions below the middle
are asked from the bottom, the others from the top) and the offset d from it to the position
where the answer started (0..N-1, cyclic). The answer started at the asked position (d = 0)
in exactly one item of N, as often as a random pick among the N shapes is right, so "ignore the
swaps and answer from the first line-up" does not beat chance; the swaps are drawn at random
until they carry the shape from the start position to the asked one (bounded). The answer is an
identity: "Large Blue Square".
"""

import itertools
import math
import random

from common.canvas import describe
from common.canvas.relations import vertical
from common.canvas.shapes import Geometry, Shape, bounding_box, fits, margin, title
from common.canvas.tasks.base import Impossible, Questions, Task

ORDINALS = [
    "first",
    "second",
    "third",
    "fourth",
    "fifth",
    "sixth",
    "seventh",
    "eighth",
    "ninth",
    "tenth",
    "eleventh",
    "twelfth",
    "thirteenth",
    "fourteenth",
    "fifteenth",
    "sixteenth",
    "seventeenth",
    "eighteenth",
    "nineteenth",
    "twentieth",
    "twenty-first",
    "twenty-second",
    "twenty-third",
    "twenty-fourth",
]


def position_question(position: int, n: int) -> str:
    """Return the question for 0-based ``position`` from the bottom of ``n`` shapes."""
    if position < (n - 1) / 2:
        return f"What shape is {ORDINALS[position]} from the bottom?"
    return f"What shape is {ORDINALS[n - 1 - position]} from the top?"


class ShuffleTrackingTask(Task):
    """Which shape is at this position after the swaps? Balanced over positions."""

    name = "shuffle_tracking"
    owned_description = "shuffle"
    instruction = 'Answer with the shape\'s size, colour and kind, such as "Large Blue Square".'
    min_shapes = 3
    swaps = 3

    swap_attempts = 2000  # random swap sequences tried per question

    def answer_strata(self, num_shapes: int) -> list[str]:
        """Return the positions ``"0"`` (bottom) .. ``"N-1"`` (top)."""
        return [str(p) for p in range(num_shapes)]

    def strata(self, num_shapes: int) -> list[list[str]]:
        """Return two axes: the position asked, and the offset to where its answer started."""
        return [self.answer_strata(num_shapes), [str(d) for d in range(num_shapes)]]

    def unsupported(self, num_shapes: int, stratum: str | None = None) -> str | None:
        """Return why a stratum cannot be asked: without swaps every shape stays where it started."""
        if stratum is not None and self.swaps == 0 and stratum.split("|")[1] != "0":
            return "without swaps no shape moves"
        return super().unsupported(num_shapes, stratum)

    def place(self, rng: random.Random, identities: list[tuple[str, str, str]],
              geometry: Geometry) -> list[Shape]:
        """Return the shapes in a column, bottom to top in the given order; raise Impossible if they
        do not fit."""
        column = [Shape(*identity, 0, 0) for identity in identities]
        gaps = [math.floor(margin(a, b, 1, geometry)) + 1 for a, b in itertools.pairwise(column)]
        low = math.floor(-geometry.half - bounding_box(column[0], geometry)[1]) + 1
        high = math.ceil(geometry.half - bounding_box(column[-1], geometry)[3]) - 1
        slack = high - low - sum(gaps)
        if slack < 0:
            raise Impossible(f"{len(column)} shapes do not fit in one column")
        cuts = sorted(rng.randint(0, slack) for _ in column)  # spare height below each shape
        ys = [low + cuts[0]]
        for gap, before, cut in zip(gaps, cuts[:-1], cuts[1:], strict=True):
            ys.append(ys[-1] + gap + cut - before)
        placed: list[Shape] = []
        for shape, y in zip(column, ys, strict=True):
            for _ in range(geometry.place_attempts):
                x = rng.randint(-geometry.half, geometry.half)
                candidate = Shape(shape.size, shape.colour, shape.kind, x, y)
                if fits(candidate, placed, geometry):
                    placed.append(candidate)
                    break
            else:
                raise Impossible(f"no room for a {shape.name} at height {y}")
        return placed

    def generate_questions(self, shapes: list[Shape], rng: random.Random, geometry: Geometry,
                           selected: str | None = None, examples: int = 2) -> Questions:
        """Return the line-up and swaps, a question about position ``selected``, and examples on
        other positions.

        Raises Impossible when the shapes are not all vertically apart by the relation rule.
        """
        column = sorted(shapes, key=lambda s: (s.y, s.name))
        if any(vertical(a, b, geometry) != "Above" for a, b in itertools.pairwise(column)):
            raise Impossible("the shapes are not one above the other by the relation rule")
        start = [s.name for s in column]
        position, offset = (int(label) for label in self.pick_stratum(rng, len(shapes), selected).split("|"))
        origin = (position + offset) % len(start)
        for _ in range(self.swaps and self.swap_attempts):
            swaps = [tuple(rng.sample(range(len(start)), 2)) for _ in range(self.swaps)]
            order = list(start)
            for i, j in swaps:
                order[i], order[j] = order[j], order[i]
            if order[position] == start[origin]:
                break
        else:
            swaps, order = [], list(start)
            if self.swaps or origin != position:
                raise Impossible(f"no {self.swaps} swaps found moving position {origin} to {position}")
        sentences = [describe.line_up(len(shapes), start)]
        current = list(start)
        for i, j in swaps:
            sentences.append(describe.swap(current[i], current[j]))
            current[i], current[j] = current[j], current[i]
        others = [p for p in range(len(order)) if p != position]
        # examples leave at least two shapes unnamed: naming all others would give the answer by elimination
        chosen = [position, *rng.sample(others, max(0, min(examples, len(others) - 1)))]
        pairs = [(position_question(p, len(order)), title(tuple(order[p].split()))) for p in chosen]
        vocabulary = [title(s.identity) for s in sorted(shapes, key=lambda s: s.identity)]
        return Questions(pairs, vocabulary, description=" ".join(sentences),
                         facts={"final_order": order, "start": origin})
