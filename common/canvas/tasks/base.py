"""The ``Task`` base class: what every canvas task provides to the generator.

A task turns a canvas into a test question with its gold answer, plus few-shot example
questions about the same canvas that never repeat the test question nor give its answer away.
Balancing is set by the generator across the whole set: the task only says which answer
strata exist (``answer_strata``) and must produce a test question of the requested stratum,
or raise ``Impossible`` when this canvas has none (the generator then draws another canvas, a
bounded number of times, and counts the request as skipped when none fits).
"""

import random
from dataclasses import dataclass, field

from common.canvas.shapes import Geometry, Shape, random_canvas, sample_identities


class Impossible(Exception):
    """This canvas (or this number of shapes) cannot give the requested question."""


@dataclass
class Questions:
    """What a task made of one canvas."""

    pairs: list[tuple[str, str]]  # (question, answer): the test question first, then examples
    vocabulary: list[str]  # the answers a model may give (expectedresp)
    description: str | None = None  # a task-owned description, replacing the shared ones
    suffix: str = ""  # sentences appended to a shared description (events)
    # the end of a task-owned description that a picture of the canvas cannot show (the relation
    # rule, the swaps): kept in words beside the picture (``common.canvas.generate``, modalities)
    unseen: str = ""
    facts: dict[str, object] = field(default_factory=dict)  # what a reader needs to check the answer
    stratum: str = ""  # the balancing labels of the test question (``Task.strata``), for the manifest
    shapes: list[Shape] | None = None  # the canvas as the task left it (coordinate moves its subject)


class Task:
    """Base class of canvas tasks; subclasses set the class attributes and ``generate_questions``."""

    name = "task"
    owned_description: str | None = None  # the description type the task owns, e.g. "chain"
    instruction = ""  # one line telling the model how to answer
    min_shapes = 1
    no_same_canvas = ""  # why the task offers no same-canvas examples (that style is skipped with it)

    def answer_strata(self, num_shapes: int) -> list[str]:
        """Return the labels the set balances over (usually the possible answers), in a fixed order."""
        raise NotImplementedError

    def strata(self, num_shapes: int) -> list[list[str]]:
        """Return the balancing axes: each a list of labels the set balances over independently
        (default: the one axis ``answer_strata``). The generator passes a test question's labels
        joined with ``|``."""
        return [self.answer_strata(num_shapes)]

    def unsupported(self, num_shapes: int, stratum: str | None = None) -> str | None:
        """Return why no canvas of ``num_shapes`` shapes can give a question of ``stratum``, or None.

        Only certain impossibilities are reported here; rare canvases are found by drawing.
        """
        if num_shapes < self.min_shapes:
            return f"{self.name} needs at least {self.min_shapes} shapes"
        return None

    def identities(
        self, rng: random.Random, num_shapes: int, stratum: str | None
    ) -> list[tuple[str, str, str]]:
        """Return the identities of a new canvas; tasks may bias the draw toward ``stratum``."""
        return sample_identities(rng, num_shapes)

    def place(
        self, rng: random.Random, identities: list[tuple[str, str, str]], geometry: Geometry
    ) -> list[Shape]:
        """Return a canvas of these identities: random placement (``shapes.random_canvas``) unless a
        task needs a layout (may raise Impossible or CanvasError)."""
        return random_canvas(rng, identities, geometry)

    def generate_questions(
        self,
        shapes: list[Shape],
        rng: random.Random,
        geometry: Geometry,
        selected: str | None = None,
        examples: int = 2,
    ) -> Questions:
        """Return the test question (of stratum ``selected``, random if None) and up to ``examples`` others.

        Raises Impossible when the canvas has no question of that stratum.
        """
        raise NotImplementedError

    def pick_stratum(self, rng: random.Random, num_shapes: int, selected: str | None) -> str:
        """Return ``selected``, or a random stratum (a label of each axis) when it is None (few-shot
        canvases)."""
        if selected is not None:
            return selected
        return "|".join(rng.choice(axis) for axis in self.strata(num_shapes))
