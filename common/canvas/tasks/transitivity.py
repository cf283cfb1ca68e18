"""Transitivity: a chain of shapes through a pivot, then a question about two shapes not adjacent in it.

The description (owned by the task) names a pivot shape, then the shapes on one side of it
going away from it, then those on the other side, each sentence relating a shape to the
previous one, in one of two forms drawn at random: "Below the small blue square is a small blue
triangle." or "The small blue square is above a small blue triangle." (the same fact). Each side
is built greedily: the next shape is the nearest one (on the chain's axis) beyond the previous
by the relation rule. The shapes off the chain close the description ("There is also a ... in
the canvas."), so its first sentence counts every shape it names.

The answer is drawn first, then everything the question does not depend on independently of it.
A stratum is (answer, which of the two asked shapes lies further from the pivot). Both asked
shapes are on one side of the pivot, neither is the pivot nor the last shape of the side, and
they are not adjacent: each is named in two sentences of opposite meaning (it is beyond the
shape before it and before the shape after it), so no single sentence tells the answer; the
stratum's "further" label sets which one is the subject, the two positions being drawn first.
The side's direction follows (the answer if the subject is further, its opposite otherwise), so
it is independent of the answer; the other side, the forms, the order of the sides and the
examples (other pairs of the chain, never naming the subject or the reference) are drawn at
random. With the pivot beside, a side needs four shapes: the task needs 5 shapes (with 3 or 4,
one sentence about the subject or the reference always gives the answer). The chain fixes the
axis, so chance is 1/2.
"""

import random

from common.canvas import describe
from common.canvas.relations import horizontal, vertical
from common.canvas.shapes import Geometry, Shape
from common.canvas.tasks.base import Impossible, Questions, Task

OPPOSITE = describe.OPPOSITE
ANSWERS = ["Left", "Right", "Above", "Below"]
FURTHER = ["subject-further", "reference-further"]  # which asked shape is further from the pivot
SIDE = 4  # shapes a side needs beyond the pivot: two interior, non-adjacent positions


def _side(pivot: Shape, shapes: list[Shape], word: str, geometry: Geometry) -> list[Shape]:
    """Return the chain going ``word`` (Left/Right/Above/Below) from ``pivot``, nearest first."""
    relate = horizontal if word in ("Left", "Right") else vertical
    axis = 0 if word in ("Left", "Right") else 1
    chain, previous = [], pivot
    while True:
        beyond = [s for s in shapes if relate(previous, s, geometry) == word]
        if not beyond:
            return chain
        previous = min(beyond, key=lambda s: (abs((s.x, s.y)[axis] - (previous.x, previous.y)[axis]), s.name))
        chain.append(previous)


class TransitivityTask(Task):
    """Where is one shape of a chain relative to a non-adjacent one? Balanced over the four
    directions and over which asked shape is further from the pivot."""

    name = "transitivity"
    owned_description = "chain"
    instruction = "Answer with one of Left, Right, Above, Below."
    min_shapes = SIDE + 1

    def answer_strata(self, num_shapes: int) -> list[str]:
        """Return ``"<direction>:<subject-further|reference-further>"`` (8 strata)."""
        return [f"{answer}:{further}" for answer in ANSWERS for further in FURTHER]

    def unsupported(self, num_shapes: int, stratum: str | None = None) -> str | None:
        """Return why a canvas this small cannot be asked (see the module docstring)."""
        if num_shapes < self.min_shapes:
            return (
                f"transitivity needs at least {self.min_shapes} shapes (with fewer, one sentence about "
                "the subject or the reference gives the answer)"
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
        """Return a chain description, a question of stratum ``selected`` and examples on other
        pairs of the chain. Raises Impossible when no shape has ``SIDE`` shapes beyond it in the
        side's direction."""
        answer, further = self.pick_stratum(rng, len(shapes), selected).split(":")
        word = answer if further == "subject-further" else OPPOSITE[answer]  # the asked side's direction
        chains = [
            (p, _side(p, shapes, word, geometry), _side(p, shapes, OPPOSITE[word], geometry)) for p in shapes
        ]
        chains = [c for c in chains if len(c[1]) >= SIDE]
        if not chains:
            raise Impossible(f"no {SIDE + 1}-shape chain going {word.lower()}")
        pivot, asked_side, other_side = rng.choice(chains)
        near, far = rng.choice(
            [(i, j) for i in range(len(asked_side) - 1) for j in range(i + 2, len(asked_side) - 1)]
        )
        subject, reference = asked_side[far], asked_side[near]
        if further == "reference-further":
            subject, reference = reference, subject
        line = [*reversed(other_side), pivot, *asked_side]  # ordered along OPPOSITE[word] -> word
        sides = [(word, asked_side), (OPPOSITE[word], other_side)]
        rng.shuffle(sides)
        inverted = frozenset(s.name for s in line if rng.random() < 0.5)
        others = [s for s in line if s not in (subject, reference)]
        pairs_ = [(a, b) for a in others for b in others if a != b]
        chosen = [(subject, reference), *rng.sample(pairs_, min(examples, len(pairs_)))]
        pairs = [
            (f"Where is the {a.name} relative to the {b.name}?", self._word(a, b, line, word))
            for a, b in chosen
        ]
        off_chain = tuple(s for s in shapes if s not in line)
        return Questions(
            pairs,
            list(ANSWERS),
            description=describe.chain(pivot, [s for s in sides if s[1]], inverted, off_chain),
            facts={"chain": [s.name for s in line], "pivot": pivot.name},
        )

    @staticmethod
    def _word(a: Shape, b: Shape, line: list[Shape], word: str) -> str:
        """Return where ``a`` is relative to ``b`` from their order in the chain (``line`` runs
        towards ``word``)."""
        return word if line.index(a) > line.index(b) else OPPOSITE[word]
