"""Coordinate: "Where is the large green triangle relative to the small red square?" -> "Below Right".

Answers are the relation rule's words: one of Above, Below, Left, Right, or a vertical word then
a horizontal one.

The invariant: the answer is drawn first, and every surface choice independently of it. Every
shape but the subject is placed at random, and the reference is drawn among them, before the
answer is used; the canvas is kept only if the subject could take each of the eight answers (an
integer centre for it that fits, in every direction from the reference), so whether a canvas
is kept does not depend on the answer either. Then the subject's centre is drawn uniformly among
the centres giving the stratum's answer, and it takes a random place in the description's
order. So the reference's centre (its quadrant, how far it is from each border), the other
shapes, the order of the sentences and where the subject and the reference are named are the
same for every answer: "towards the canvas centre from the reference" (a partial skill) is right
one time in eight. What stays tied to the answer, besides the two centres together, is the
subject's own centre: a subject is beyond the reference, so its side of the canvas leans the
answer's way. No design can avoid that on a bounded canvas (if neither centre's mean depended
on the answer, neither would their difference); it is reported as the partial skill "from the
canvas centre to the subject".

Same-canvas examples ask about pairs of other shapes: one about the subject ("Where is the
subject relative to X?") tells where the subject lies, and so hints at the answer; a canvas of 3
shapes has no such pair, and that few-shot style is skipped there.

The task owns the ``coordinates`` description (the centres, the sizes and the rule), as in the
original: the ``full`` and ``partial`` descriptions state the relation of every pair in a
sentence, so with them the question is answered by finding that sentence (a lookup, 100% by the
``shortcut-coordinate-stated`` rule), not by relating positions.
"""

import random

import numpy as np

from common.canvas import describe
from common.canvas.relations import answer
from common.canvas.shapes import Geometry, Shape, bounding_box, circumradius, margin
from common.canvas.tasks.base import Impossible, Questions, Task

ANSWERS = ["Above", "Below", "Left", "Right", "Above Left", "Above Right", "Below Left", "Below Right"]


def answer_grid(subject: Shape, placed: list[Shape], reference: Shape, geometry: Geometry) -> np.ndarray:
    """Return, for every integer centre of the canvas (a ``(2 half + 1)^2`` array indexed
    ``[y + half, x + half]``), the index in ``ANSWERS`` of the answer ``subject`` would have
    relative to ``reference`` there, or -1 where it does not fit (out of the border, touching or
    within the margin of a placed shape on both axes: ``shapes.fits``)."""
    half = geometry.half
    axis = np.arange(-half, half + 1)
    xs, ys = np.meshgrid(axis, axis)
    box = bounding_box(Shape(subject.size, subject.colour, subject.kind, 0, 0), geometry)
    fit = (xs + box[0] > -half) & (ys + box[1] > -half) & (xs + box[2] < half) & (ys + box[3] < half)
    radius = circumradius(subject, geometry)
    for other in placed:
        dx, dy = xs - other.x, ys - other.y
        fit &= np.hypot(dx, dy) > radius + circumradius(other, geometry)
        fit &= (np.abs(dx) > margin(subject, other, 0, geometry)) | (
            np.abs(dy) > margin(subject, other, 1, geometry)
        )
    dx, dy = xs - reference.x, ys - reference.y
    mx, my = margin(reference, subject, 0, geometry), margin(reference, subject, 1, geometry)
    vertical = np.where(dy > my, 1, np.where(dy < -my, 2, 0))  # 0 none, 1 Above, 2 Below
    horizontal = np.where(dx > mx, 2, np.where(dx < -mx, 1, 0))  # 0 none, 1 Left, 2 Right
    codes = np.full(xs.shape, -1)
    for index, words in enumerate(ANSWERS):
        v = 1 if "Above" in words else 2 if "Below" in words else 0
        h = 1 if "Left" in words else 2 if "Right" in words else 0
        codes[(vertical == v) & (horizontal == h)] = index
    return np.where(fit, codes, -1)


class CoordinateTask(Task):
    """Where is one shape relative to another? Balanced over the eight answers."""

    name = "coordinate"
    owned_description = "coordinates"
    instruction = (
        "Answer with one of Above, Below, Left, Right, or a vertical and a horizontal word "
        'such as "Below Right".'
    )
    min_shapes = 2

    def answer_strata(self, num_shapes: int) -> list[str]:
        """Return the eight answers."""
        return list(ANSWERS)

    def generate_questions(
        self,
        shapes: list[Shape],
        rng: random.Random,
        geometry: Geometry,
        selected: str | None = None,
        examples: int = 2,
    ) -> Questions:
        """Return a question answered ``selected`` about a shape placed anew for it (the canvas of
        ``shapes`` with one shape moved: ``Questions.shapes``) and examples on pairs of other shapes.

        Raises Impossible when the subject could not take every answer on this canvas.
        """
        stratum = self.pick_stratum(rng, len(shapes), selected)
        moved = rng.randrange(len(shapes))
        placed = shapes[:moved] + shapes[moved + 1 :]
        reference = rng.choice(placed)
        grid = answer_grid(shapes[moved], placed, reference, geometry)
        if len(np.unique(grid[grid >= 0])) < len(ANSWERS):
            raise Impossible("the subject could not take every answer on this canvas")
        ys, xs = np.nonzero(grid == ANSWERS.index(stratum))
        pick = rng.randrange(len(xs))
        old = shapes[moved]
        subject = Shape(
            old.size, old.colour, old.kind, int(xs[pick]) - geometry.half, int(ys[pick]) - geometry.half
        )
        assert answer(reference, subject, geometry) == stratum
        canvas = [*placed]
        canvas.insert(rng.randrange(len(canvas) + 1), subject)
        ordered = [(a, b) for a in canvas for b in canvas if a != b]
        others = [(a, b) for a, b in ordered if not {a, b} & {reference, subject}]
        chosen = [(reference, subject), *rng.sample(others, min(examples, len(others)))]
        pairs = [
            (f"Where is the {b.name} relative to the {a.name}?", answer(a, b, geometry)) for a, b in chosen
        ]
        return Questions(
            pairs,
            list(ANSWERS),
            description=describe.coordinates(canvas, geometry),
            facts={"subject": subject.name, "reference": reference.name},
            unseen=describe.rule(geometry),
            shapes=canvas,
        )
