"""Transitivity: a line of shapes along one axis told as links between neighbours, in a random
order, then a question about two shapes of the line that are not neighbours.

The line: shapes each beyond the previous one by the relation rule along the answer's axis,
built greedily (the next shape is the nearest one beyond, on that axis) from any shape; a line
needs ``LINE`` shapes. The description (owned by the task) states each pair of neighbours once,
in one of four forms drawn at random ("Left of the X is a Y.", "Right of the Y is a X.", "The X
is left of a Y.", "The Y is right of a X.", the same fact), the sentences in a random order,
then the shapes off the line ("There is also a ... in the canvas."), so that the first sentence
counts every shape named. No sentence order follows the line: finding where two shapes stand
needs linking the sentences.

The invariant: the answer is drawn first, and every surface choice independently of it. The
line and the reference are drawn before the answer is used: the reference is any shape of the
line with a possible subject on both sides of it (neither an end nor a neighbour of the
reference: each asked shape is then named in two sentences of opposite meaning for it, so no
single sentence tells the answer, and no sentence relates the two), so where the reference
stands is the same for every answer. Then the subject is drawn among the possible ones on the
answer's side. The order of the sentences, their forms, which of the two asked shapes is named
first or last and the same-canvas examples (pairs of the ends and the reference's neighbours:
never a possible subject, so they rule none out) are drawn without regard to the answer. What
stays tied to the answer is the subject's own place on the line (a subject near one end is more
often beyond the reference towards that end): a partial skill reported as such (``partial``).
The chain fixes the axis, so chance is 1/2.

With a possible subject on both sides of the reference, the line needs 7 shapes: the task does
not run on fewer.
"""

import itertools
import random

from common.canvas import describe
from common.canvas.relations import horizontal, vertical
from common.canvas.shapes import Geometry, Shape
from common.canvas.tasks.base import Impossible, Questions, Task

OPPOSITE = describe.OPPOSITE
ANSWERS = ["Left", "Right", "Above", "Below"]
LINE = 7  # shapes a line needs: an end, a subject, the reference's neighbour, the reference, ...
POSITIVE = {"Left": "Right", "Right": "Right", "Above": "Above", "Below": "Above"}  # the axis's way up


def line_from(start: Shape, shapes: list[Shape], word: str, geometry: Geometry) -> list[Shape]:
    """Return the line going ``word`` (Right or Above) from ``start``: each next shape the nearest
    one (on the axis) beyond the previous by the relation rule."""
    relate = horizontal if word in ("Left", "Right") else vertical
    axis = 0 if word in ("Left", "Right") else 1
    line = [start]
    while True:
        previous = line[-1]
        beyond = [s for s in shapes if relate(previous, s, geometry) == word]
        if not beyond:
            return line
        line.append(
            min(beyond, key=lambda s: (abs((s.x, s.y)[axis] - (previous.x, previous.y)[axis]), s.name))
        )


def subjects(line_length: int, reference: int, word: str) -> list[int]:
    """Return the places a subject may take on the ``word`` side (Right/Above: higher places) of
    the reference at ``reference``: neither an end of the line nor a neighbour of the reference."""
    if word in ("Right", "Above"):
        return list(range(reference + 2, line_length - 1))
    return list(range(1, reference - 1))


class TransitivityTask(Task):
    """Where is one shape of a line relative to another, not its neighbour? Balanced over the four
    directions."""

    name = "transitivity"
    owned_description = "chain"
    instruction = "Answer with one of Left, Right, Above, Below."
    min_shapes = LINE

    def answer_strata(self, num_shapes: int) -> list[str]:
        """Return the four directions."""
        return list(ANSWERS)

    def unsupported(self, num_shapes: int, stratum: str | None = None) -> str | None:
        """Return why a canvas this small cannot be asked (see the module docstring)."""
        if num_shapes < self.min_shapes:
            return (
                f"transitivity needs at least {self.min_shapes} shapes (a line with a possible subject on "
                "both sides of the reference, so that where the reference stands does not tell the answer)"
            )
        return None

    def generate_questions(
        self,
        shapes: list[Shape],
        rng: random.Random,
        geometry: Geometry,
        selected: str | None = None,
        examples: int = 2,
    ) -> Questions:
        """Return a line description, a question of stratum ``selected`` and examples on pairs of
        shapes no question could ask as the subject. Raises Impossible when no line of ``LINE``
        shapes runs along the answer's axis."""
        answer = self.pick_stratum(rng, len(shapes), selected)
        up = POSITIVE[answer]
        lines = [line_from(s, shapes, up, geometry) for s in shapes]
        lines = [line for line in lines if len(line) >= LINE]
        if not lines:
            raise Impossible(f"no {LINE}-shape line going {up.lower()}")
        line = rng.choice(lines)
        reference = rng.randrange(3, len(line) - 3)  # a possible subject on both sides
        subject = rng.choice(subjects(len(line), reference, answer))
        fixed = {0, reference - 1, reference, reference + 1, len(line) - 1}
        free = [line[i] for i in sorted(fixed - {reference})]  # rule no possible subject out
        shots = [(a, b) for a in free for b in free if a != b]
        chosen = [(line[subject], line[reference]), *rng.sample(shots, min(examples, len(shots)))]
        pairs = [
            (f"Where is the {a.name} relative to the {b.name}?", self._word(a, b, line, up))
            for a, b in chosen
        ]
        off_line = tuple(s for s in shapes if s not in line)
        return Questions(
            pairs,
            list(ANSWERS),
            description=describe.chain(len(shapes), self._links(line, up, rng), off_line),
            facts={"chain": [s.name for s in line], "reference": line[reference].name},
        )

    @staticmethod
    def _links(line: list[Shape], up: str, rng: random.Random) -> list[describe.Link]:
        """Return one link per pair of neighbours of ``line`` (going ``up``), each told from either
        end and in either form at random, in a random order."""
        links = []
        for low, high in itertools.pairwise(line):
            told = (low, up, high) if rng.random() < 0.5 else (high, OPPOSITE[up], low)
            links.append((*told, rng.random() < 0.5))
        rng.shuffle(links)
        return links

    @staticmethod
    def _word(a: Shape, b: Shape, line: list[Shape], up: str) -> str:
        """Return where ``a`` is relative to ``b`` from their places on the line (going ``up``)."""
        return up if line.index(a) > line.index(b) else OPPOSITE[up]
