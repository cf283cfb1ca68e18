"""Transitivity: a chain of shapes through a pivot, then a question about two shapes not adjacent in it.

The description (owned by the task) names a pivot shape, then the shapes on one side of it
going away from it, then those on the other side, each sentence relating a shape to the
previous one, in one of two forms: "Below the small blue square is a small blue triangle." or
"The small blue square is above a small blue triangle." (the same fact). Each side is built
greedily: the next shape is the nearest one (on the chain's axis) that is beyond the previous by
the relation rule. The answer follows by transitivity and agrees with the rule on the pair.

Balanced over (answer, whether the word of the sentence introducing the subject is the answer,
whether the opposite of the word introducing the reference is): neither the subject nor the
reference is the pivot, and the forms of their sentences are set by the stratum, so "answer
with the word that introduced the subject" and "answer the opposite of the reference's word"
are each right in half the items, and given the answer the two words are independent of it.
The other shapes' sentences take either form at random. The chain fixes the axis, so chance is 1/2.
"""

import random

from common.canvas import describe
from common.canvas.relations import horizontal, vertical
from common.canvas.shapes import Geometry, Shape
from common.canvas.tasks.base import Impossible, Questions, Task

OPPOSITE = describe.OPPOSITE
ANSWERS = ["Left", "Right", "Above", "Below"]
INTRO = ["intro-same", "intro-other"]  # the subject's introducing word is / is not the answer
REFERENCE = ["ref-same", "ref-other"]  # the opposite of the reference's introducing word is / is not


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
    """Where is one shape of a chain relative to a non-adjacent one? Balanced over the four directions
    and over whether the subject's introducing word is the answer."""

    name = "transitivity"
    owned_description = "chain"
    instruction = "Answer with one of Left, Right, Above, Below."
    min_shapes = 3

    def answer_strata(self, num_shapes: int) -> list[str]:
        """Return ``"<direction>:<intro-same|intro-other>:<ref-same|ref-other>"`` (16 strata)."""
        return [f"{answer}:{intro}:{ref}" for answer in ANSWERS for intro in INTRO for ref in REFERENCE]

    def generate_questions(
        self,
        shapes: list[Shape],
        rng: random.Random,
        geometry: Geometry,
        selected: str | None = None,
        examples: int = 2,
    ) -> Questions:
        """Return a chain description, a question of stratum ``selected`` and examples on other
        chain pairs.

        Raises Impossible when no shape has shapes on both sides along the answer's axis.
        """
        stratum, intro, ref = self.pick_stratum(rng, len(shapes), selected).split(":")
        words = ["Left", "Right"] if stratum in ("Left", "Right") else ["Below", "Above"]
        chains = [
            (p, _side(p, shapes, words[0], geometry), _side(p, shapes, words[1], geometry)) for p in shapes
        ]
        chains = [c for c in chains if c[1] and c[2]]
        if not chains:
            raise Impossible(f"no 3-shape chain along the {'x' if words[0] == 'Left' else 'y'} axis")
        pivot, first, second = rng.choice(chains)
        line = [*reversed(first), pivot, *second]  # ordered along words[0] -> words[1]
        sides = [(words[0], first), (words[1], second)]
        if rng.random() < 0.5:
            sides.reverse()
        far = [(i, j) for i in range(len(line)) for j in range(i + 2, len(line))]
        # line[i] lies towards words[0] of line[j]
        pairs_ = [(line[i], line[j]) if stratum == words[0] else (line[j], line[i]) for i, j in far]
        pairs_ = [(s, r) for s, r in pairs_ if pivot not in (s, r)]
        subject, reference = rng.choice(pairs_)

        def side(shape: Shape) -> str:
            return words[0] if shape in first else words[1]  # the shape's side of the pivot

        # plain sentence: the introducing word is the side's; inverted: its opposite
        inverted = {s.name for s in line if s not in (pivot, subject, reference) and rng.random() < 0.5}
        if (side(subject) == stratum) != (intro == "intro-same"):
            inverted.add(subject.name)
        if (OPPOSITE[side(reference)] == stratum) != (ref == "ref-same"):
            inverted.add(reference.name)
        others = [(a, b) for a in line for b in line if a != b and {a, b} != {subject, reference}]
        chosen = [(subject, reference), *rng.sample(others, min(examples, len(others)))]
        pairs = [
            (f"Where is the {a.name} relative to the {b.name}?", self._word(a, b, line, words))
            for a, b in chosen
        ]
        return Questions(
            pairs,
            list(ANSWERS),
            description=describe.chain(len(shapes), pivot, sides, frozenset(inverted)),
            facts={"chain": [s.name for s in line]},
        )

    @staticmethod
    def _word(a: Shape, b: Shape, line: list[Shape], words: list[str]) -> str:
        """Return where ``a`` is relative to ``b`` from their order in the chain."""
        return words[0] if line.index(a) < line.index(b) else words[1]
