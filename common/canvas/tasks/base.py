"""The ``Task`` base class: what every canvas task provides to the generator.

A task turns a canvas into a *contrast tuple*: the test question with its gold answer (the
item), and for each input the skill needs (``Task.inputs``) a twin that differs from it in that
input alone and has another gold answer (``Member.varies`` names what differs). A rule blind to
an input reads an item and its twin in that input alike, so it gives them one answer and gets
at most one of the two right: the tuple makes such a rule fail by construction, whatever the
canvas. Same-canvas examples (``Questions.examples``) are shown with every member alike and
never repeat a member's question or give a member's answer away.

Balancing is set by the generator across the whole set: the task only says which strata exist
(``answer_strata``) and must produce a tuple whose item is of the requested stratum, or raise
``Impossible`` when this canvas has none (the generator then draws another canvas, a bounded
number of times, and counts the request as skipped when none fits).
"""

import dataclasses
import random
from dataclasses import dataclass, field

from common.canvas.shapes import Geometry, Shape, random_canvas, sample_identities


class Impossible(Exception):
    """This canvas (or this number of shapes) cannot give the requested question."""


@dataclass
class Member:
    """One question of a contrast tuple: the item (``varies`` empty) or a twin of it."""

    question: str
    answer: str
    varies: tuple[str, ...] = ()  # the inputs (``Task.inputs``) in which it differs from the item
    shapes: list[Shape] | None = None  # its own canvas, where the twin changes the canvas
    description: str | None = None  # its own task-owned description, where the twin changes it
    suffix: str | None = None  # its own sentences after a shared description (events)
    unseen: str | None = None  # its own end of the description that a picture cannot show
    facts: dict[str, object] = field(default_factory=dict)  # what a reader needs to check its answer


@dataclass
class Questions:
    """What a task made of one canvas: a contrast tuple and what its members share."""

    members: list[Member]  # the item first, then its twins
    vocabulary: list[str]  # the answers a model may give (expectedresp)
    examples: list[tuple[str, str]] = field(default_factory=list)  # same-canvas (question, answer)
    description: str | None = None  # a task-owned description, replacing the shared ones
    suffix: str = ""  # sentences appended to a shared description (events)
    # the end of a task-owned description that a picture of the canvas cannot show (the relation
    # rule, the swaps): kept in words beside the picture (``common.canvas.build``, modalities)
    unseen: str = ""
    facts: dict[str, object] = field(default_factory=dict)  # shared facts (every member's)
    stratum: str = ""  # the balancing labels of the item (``Task.strata``), for the manifest
    shapes: list[Shape] | None = None  # the canvas as the task left it (coordinate moves its subject)

    @property
    def item(self) -> Member:
        """Return the tuple's item (its first member)."""
        return self.members[0]

    def member(self, index: int) -> "Questions":
        """Return the tuple as member ``index`` sees it: a one-member Questions with that member's
        canvas, description, events and facts in place of the shared ones (what a prompt shows)."""
        chosen = self.members[index]
        return dataclasses.replace(
            self,
            members=[chosen],
            description=chosen.description if chosen.description is not None else self.description,
            suffix=chosen.suffix if chosen.suffix is not None else self.suffix,
            unseen=chosen.unseen if chosen.unseen is not None else self.unseen,
            facts=self.facts | chosen.facts,
            shapes=chosen.shapes if chosen.shapes is not None else self.shapes,
        )


class Task:
    """Base class of canvas tasks; subclasses set the class attributes and ``generate_questions``."""

    name = "task"
    owned_description: str | None = None  # the description type the task owns, e.g. "chain"
    instruction = ""  # one line telling the model how to answer
    min_shapes = 1
    no_same_canvas = ""  # why the task offers no same-canvas examples (that style is skipped with it)
    inputs: tuple[str, ...] = ()  # the inputs the skill needs that the item's twins vary, one each

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
        twins: bool = True,
    ) -> Questions:
        """Return the contrast tuple of an item of stratum ``selected`` (random if None), with its
        twins unless ``twins`` is False (an other-canvas example needs the item alone), and up to
        ``examples`` same-canvas examples.

        Raises Impossible when the canvas has no such tuple.
        """
        raise NotImplementedError

    def pick_stratum(self, rng: random.Random, num_shapes: int, selected: str | None) -> str:
        """Return ``selected``, or a random stratum (a label of each axis) when it is None (few-shot
        canvases)."""
        if selected is not None:
            return selected
        return "|".join(rng.choice(axis) for axis in self.strata(num_shapes))
