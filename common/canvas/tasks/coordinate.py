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

Every item is asked as a contrast pair over the subject's centre: its twin places the subject at
another centre (drawn the same way, uniformly among the centres giving one of the other seven
answers, the reference and every other shape where they were, the subject named at the same
place in the description). A rule that does not read where the subject is reads the two alike
and gets at most one of the two right; the twin's answer is uniform over the other seven, so the
answers of all members stay balanced.
"""

import random

import numpy as np

from common.canvas import describe
from common.canvas.relations import answer
from common.canvas.shapes import Geometry, Shape, bounding_box, circumradius, margin
from common.canvas.tasks.base import Impossible, Member, Questions, Task

ANSWERS = ["Above", "Below", "Left", "Right", "Above Left", "Above Right", "Below Left", "Below Right"]


def _codes() -> np.ndarray:
    """Return the index in ``ANSWERS`` of each (vertical, horizontal) code pair (0 none, 1
    Above / Left, 2 Below / Right), -1 for none on both axes."""
    table = np.full(9, -1)
    for index, words in enumerate(ANSWERS):
        v = 1 if "Above" in words else 2 if "Below" in words else 0
        h = 1 if "Left" in words else 2 if "Right" in words else 0
        table[3 * v + h] = index
    return table


CODES = _codes()


def answer_grid(subject: Shape, placed: list[Shape], reference: Shape, geometry: Geometry) -> np.ndarray:
    """Return, for every integer centre of the canvas (a ``(2 half + 1)^2`` array indexed
    ``[y + half, x + half]``), the index in ``ANSWERS`` of the answer ``subject`` would have
    relative to ``reference`` there, or -1 where it does not fit (out of the border, touching or
    within the margin of a placed shape on both axes: ``shapes.fits``). Each placed shape rules
    out a window around it only, so the cost grows with the shapes' sizes, not the canvas's."""
    half = geometry.half
    axis = np.arange(-half, half + 1)
    box = bounding_box(Shape(subject.size, subject.colour, subject.kind, 0, 0), geometry)
    fit = np.outer(
        (axis + box[1] > -half) & (axis + box[3] < half), (axis + box[0] > -half) & (axis + box[2] < half)
    )
    radius = circumradius(subject, geometry)
    for other in placed:
        reach = radius + circumradius(other, geometry)
        mx, my = margin(subject, other, 0, geometry), margin(subject, other, 1, geometry)
        wide = int(np.ceil(max(reach, mx))) + 1
        tall = int(np.ceil(max(reach, my))) + 1
        x0, x1 = max(other.x - wide, -half), min(other.x + wide, half)
        y0, y1 = max(other.y - tall, -half), min(other.y + tall, half)
        dx = np.arange(x0, x1 + 1) - other.x
        dy = (np.arange(y0, y1 + 1) - other.y)[:, None]
        bad = (np.hypot(dx, dy) <= reach) | ((np.abs(dx) <= mx) & (np.abs(dy) <= my))
        fit[y0 + half : y1 + half + 1, x0 + half : x1 + half + 1] &= ~bad
    mx, my = margin(reference, subject, 0, geometry), margin(reference, subject, 1, geometry)
    dx, dy = axis - reference.x, axis - reference.y
    vertical = np.where(dy > my, 1, np.where(dy < -my, 2, 0))  # 0 none, 1 Above, 2 Below
    horizontal = np.where(dx > mx, 2, np.where(dx < -mx, 1, 0))  # 0 none, 1 Left, 2 Right
    codes = CODES[3 * vertical[:, None] + horizontal[None, :]]
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
    inputs = ("subject",)

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
        twins: bool = True,
    ) -> Questions:
        """Return a question answered ``selected`` about a shape placed anew for it (the canvas of
        ``shapes`` with one shape moved: ``Questions.shapes``), its twin with the subject placed for
        another answer, and examples on pairs of other shapes.

        Raises Impossible when the subject could not take every answer on this canvas.
        """
        stratum = self.pick_stratum(rng, len(shapes), selected)
        moved = rng.randrange(len(shapes))
        placed = shapes[:moved] + shapes[moved + 1 :]
        reference = rng.choice(placed)
        grid = answer_grid(shapes[moved], placed, reference, geometry)
        if len(np.unique(grid[grid >= 0])) < len(ANSWERS):
            raise Impossible("the subject could not take every answer on this canvas")
        twin = rng.choice([a for a in ANSWERS if a != stratum])
        where = rng.randrange(len(placed) + 1)  # the subject's place in the description's order
        canvases = []
        for wanted in [stratum, twin][: 2 if twins else 1]:
            ys, xs = np.nonzero(grid == ANSWERS.index(wanted))
            pick = rng.randrange(len(xs))
            old = shapes[moved]
            subject = Shape(
                old.size, old.colour, old.kind, int(xs[pick]) - geometry.half, int(ys[pick]) - geometry.half
            )
            assert answer(reference, subject, geometry) == wanted
            canvases.append((subject, [*placed[:where], subject, *placed[where:]]))
        subject, canvas = canvases[0]
        ordered = [(a, b) for a in placed for b in placed if a != b]
        others = [(a, b) for a, b in ordered if reference not in (a, b)]
        question = f"Where is the {subject.name} relative to the {reference.name}?"
        members = [
            Member(
                question,
                answer(reference, s, geometry),
                () if i == 0 else ("subject",),
                shapes=c if i else None,
                description=describe.coordinates(c, geometry),
            )
            for i, (s, c) in enumerate(canvases)
        ]
        chosen = rng.sample(others, min(examples, len(others)))
        pairs = [
            (f"Where is the {b.name} relative to the {a.name}?", answer(a, b, geometry)) for a, b in chosen
        ]
        return Questions(
            members,
            list(ANSWERS),
            examples=pairs,
            description=describe.coordinates(canvas, geometry),
            facts={"subject": subject.name, "reference": reference.name},
            unseen=describe.rule(geometry),
            shapes=canvas,
        )
