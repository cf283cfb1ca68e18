"""Existence tracking: a shared description, additions and removals, then
"Is there a {s} in the canvas?".

The asked shape is always touched by the events, in one of four equally frequent histories
(the balancing strata): ``removed-added`` (Yes), ``added-removed`` (No), ``removed-added-removed``
(No) and ``added-removed-added`` (Yes). Only the last event touching the shape decides; each of
these rules is right in exactly two of the four: "ignore the events" (answer whether the first
description names the shape), "answer by its first event", "a shape ever removed is gone", "a
shape ever added is there", and "a never-mentioned shape is absent" (none is asked). The last
event of all decides in exactly two as well: a three-event history ends the events, while after
a two-event history the last event is another shape's, of the other kind (a removal after the
asked shape came back, an addition after it went). A history of one event would put the
"ever removed" and "ever added" rules above chance, so none is asked; the histories need three
events (fewer: the task does not run). The other events remove a shape still on the canvas or
add an absent identity (identities stay unique; the canvas never empties). A canvas of 24 shapes
has no absent identity, so its questions are ``removed-added`` and ``removed-added-removed``
(still half Yes, half No, and every rule above at chance).
"""

import random

from common.canvas import describe
from common.canvas.shapes import IDENTITIES, Geometry, Shape
from common.canvas.tasks.base import Impossible, Questions, Task

# stratum -> (the asked shape's events in order, the answer)
HISTORIES = {
    "removed-added": (["remove", "add"], "Yes"),
    "added-removed": (["add", "remove"], "No"),
    "removed-added-removed": (["remove", "add", "remove"], "No"),
    "added-removed-added": (["add", "remove", "add"], "Yes"),
}
MIN_EVENTS = 3  # a two-event history needs a later event on another shape


class ExistenceTrackingTask(Task):
    """Is this shape on the canvas after the events? Balanced over the asked shape's history."""

    name = "existence_tracking"
    instruction = "Answer Yes or No."
    events = 3  # additions and removals appended to the description

    def answer_strata(self, num_shapes: int) -> list[str]:
        """Return the histories of the asked shape (two answered Yes, two No); on a canvas holding
        every identity only those starting with a removal."""
        if num_shapes >= len(IDENTITIES):
            return [h for h, (touches, _) in HISTORIES.items() if touches[0] == "remove"]
        return list(HISTORIES)

    def unsupported(self, num_shapes: int, stratum: str | None = None) -> str | None:
        """Return why a history cannot be asked: too few events, or nothing absent to add."""
        if self.events < MIN_EVENTS:
            return f"the balanced histories need {MIN_EVENTS} events (the set has {self.events})"
        if stratum is not None and HISTORIES[stratum][0][0] == "add" and num_shapes >= len(IDENTITIES):
            return "every identity is on the canvas: none can be added first"
        return super().unsupported(num_shapes, stratum)

    def generate_questions(
        self,
        shapes: list[Shape],
        rng: random.Random,
        geometry: Geometry,
        selected: str | None = None,
        examples: int = 2,
    ) -> Questions:
        """Return the events (as a suffix), a question about a shape with history ``selected``, and
        examples on other mentioned shapes. Raises Impossible when the events cannot be made."""
        stratum = self.pick_stratum(rng, len(shapes), selected)
        touches, answer = HISTORIES[stratum]
        initial = [s.identity for s in shapes]
        pool = initial if touches[0] == "remove" else [i for i in IDENTITIES if i not in initial]
        if not pool or self.events < MIN_EVENTS:
            raise Impossible(f"no shape can have the history {stratum}")
        target = rng.choice(pool)
        slots = self._slots(rng, len(touches))
        present = list(initial)
        touched: list[tuple[str, str, str]] = []
        sentences = []
        for slot in range(self.events):
            if slot in slots:
                event, identity = touches[slots.index(slot)], target
            else:
                # the last event, after a two-event history, is of the other kind than the answer's
                wanted = ("remove" if answer == "Yes" else "add") if slot == self.events - 1 else None
                event, identity = self._other_event(rng, present, target, wanted)
            if event == "remove":
                if len(present) == 1:
                    raise Impossible("a removal would empty the canvas")
                present.remove(identity)
                sentences.append(describe.removed(" ".join(identity)))
            else:
                present.append(identity)
                sentences.append(describe.added(" ".join(identity)))
            touched.append(identity)
        assert (target in present) == (answer == "Yes")
        mentioned = list(dict.fromkeys(initial + touched))
        others = [i for i in mentioned if i != target]
        chosen = [target, *rng.sample(others, min(examples, len(others)))]
        pairs = [
            (f"Is there a {' '.join(i)} in the canvas?", "Yes" if i in present else "No") for i in chosen
        ]
        return Questions(
            pairs, ["Yes", "No"], suffix=" ".join(sentences), facts={"final": [" ".join(i) for i in present]}
        )

    def _slots(self, rng: random.Random, touches: int) -> list[int]:
        """Return the sorted event slots of the asked shape's ``touches`` events: a three-event
        history ends at the last slot, a two-event one ends before it (see the module docstring)."""
        if touches == MIN_EVENTS:
            return [*sorted(rng.sample(range(self.events - 1), touches - 1)), self.events - 1]
        return sorted(rng.sample(range(self.events - 1), touches))

    @staticmethod
    def _other_event(
        rng: random.Random,
        present: list[tuple[str, str, str]],
        target: tuple[str, str, str],
        wanted: str | None = None,
    ) -> tuple[str, tuple[str, str, str]]:
        """Return an event on a shape other than ``target``: of kind ``wanted``, or a removal (never
        of the last shape) or an addition with equal odds when both are possible; raise Impossible
        when none is."""
        removable = [i for i in present if i != target] if len(present) > 1 else []
        absent = [i for i in IDENTITIES if i not in present and i != target]
        if wanted == "remove":
            absent = []
        elif wanted == "add":
            removable = []
        if removable and (not absent or rng.random() < 0.5):
            return "remove", rng.choice(removable)
        if absent:
            return "add", rng.choice(absent)
        raise Impossible("no event is possible on the other shapes")
