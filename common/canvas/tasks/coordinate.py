"""Coordinate: "Where is the large green triangle relative to the small red square?" -> "Below Right".

Answers are the relation rule's words: one of Above, Below, Left, Right, or a vertical word then
a horizontal one. Balanced over the eight answers; a single-word answer needs a pair within
the margin on one axis, so some canvases are redrawn for it. Same-canvas examples ask about
pairs of other shapes: one about the subject ("Where is the subject relative to X?") tells
where the subject lies on the canvas, and so hints at the answer; a canvas of 3 shapes has no
such pair, and that few-shot style is skipped there.

The task owns the ``coordinates`` description (the centres, the sizes and the rule), as in the
original: the ``full`` and ``partial`` descriptions state the relation of every pair in a
sentence, so with them the question is answered by finding that sentence (a lookup, 100% by the
``shortcut-coordinate-stated`` rule), not by relating positions.
"""

import random

from common.canvas.relations import answer
from common.canvas.shapes import Geometry, Shape
from common.canvas.tasks.base import Impossible, Questions, Task

ANSWERS = ["Above", "Below", "Left", "Right", "Above Left", "Above Right", "Below Left", "Below Right"]


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
        """Return a question about an ordered pair answered ``selected``, examples on pairs of other
        shapes (an example about the subject or the reference would hint at where it lies).

        Raises Impossible when no pair of this canvas has that answer.
        """
        stratum = self.pick_stratum(rng, len(shapes), selected)
        ordered = [(a, b) for a in shapes for b in shapes if a != b]
        candidates = [(a, b) for a, b in ordered if answer(a, b, geometry) == stratum]
        if not candidates:
            raise Impossible(f"no pair is {stratum} of another")
        reference, subject = rng.choice(candidates)
        others = [(a, b) for a, b in ordered if not {a, b} & {reference, subject}]
        chosen = [(reference, subject), *rng.sample(others, min(examples, len(others)))]
        pairs = [
            (f"Where is the {b.name} relative to the {a.name}?", answer(a, b, geometry)) for a, b in chosen
        ]
        return Questions(pairs, list(ANSWERS), facts={"subject": subject.name, "reference": reference.name})
