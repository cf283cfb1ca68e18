"""Existence tracking: a shared description, additions and removals, then
"Is there a {s} in the canvas?".

The asked shape is always touched by the events, in one of four equally frequent ways
(the balancing strata): ``removed`` (No), ``added`` (Yes), ``removed-added`` (Yes) and
``added-removed`` (No). So neither "ignore the events" (answer whether the shape is in the
first description), nor "a shape named in an event is gone", nor "answer by its first event"
beats chance (each is right in exactly two of the four), and a never-mentioned shape is never
asked (its answer would always be No). Only the last event touching the shape decides. The
other events remove a shape still on the canvas or add an absent identity (identities stay
unique; the canvas never empties). A canvas of 24 shapes has no absent identity, so its
questions are ``removed`` or ``removed-added`` (still half Yes, half No).
"""

import random

from common.canvas import describe
from common.canvas.shapes import IDENTITIES, Geometry, Shape
from common.canvas.tasks.base import Impossible, Questions, Task

# stratum -> (the asked shape's events in order, the answer)
HISTORIES = {
    "removed": (["remove"], "No"),
    "added": (["add"], "Yes"),
    "removed-added": (["remove", "add"], "Yes"),
    "added-removed": (["add", "remove"], "No"),
}


class ExistenceTrackingTask(Task):
    """Is this shape on the canvas after the events? Balanced over the asked shape's history."""

    name = "existence_tracking"
    instruction = "Answer Yes or No."
    events = 3  # additions and removals appended to the description

    def answer_strata(self, num_shapes: int) -> list[str]:
        """Return the four histories of the asked shape (two answered Yes, two No)."""
        return list(HISTORIES)

    def unsupported(self, num_shapes: int, stratum: str | None = None) -> str | None:
        """Return why a history cannot be asked: too few events, or nothing absent to add."""
        if stratum is not None:
            touches = HISTORIES[stratum][0]
            if len(touches) > self.events:
                return f"the {stratum} history needs {len(touches)} events (the set has {self.events})"
            if touches[0] == "add" and num_shapes >= len(IDENTITIES):
                return "every identity is on the canvas: none can be added first"
        return super().unsupported(num_shapes, stratum)

    def generate_questions(self, shapes: list[Shape], rng: random.Random, geometry: Geometry,
                           selected: str | None = None, examples: int = 2) -> Questions:
        """Return the events (as a suffix), a question about a shape with history ``selected``, and
        examples on other mentioned shapes. Raises Impossible when the events cannot be made."""
        stratum = self.pick_stratum(rng, len(shapes), selected)
        touches, answer = HISTORIES[stratum]
        initial = [s.identity for s in shapes]
        pool = initial if touches[0] == "remove" else [i for i in IDENTITIES if i not in initial]
        if not pool or len(touches) > self.events:
            raise Impossible(f"no shape can have the history {stratum}")
        target = rng.choice(pool)
        slots = sorted(rng.sample(range(self.events), len(touches)))
        present = list(initial)
        touched: list[tuple[str, str, str]] = []
        sentences = []
        for slot in range(self.events):
            if slot in slots:
                event, identity = touches[slots.index(slot)], target
            else:
                event, identity = self._other_event(rng, present, target)
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

    @staticmethod
    def _other_event(
        rng: random.Random, present: list[tuple[str, str, str]], target: tuple[str, str, str]
    ) -> tuple[str, tuple[str, str, str]]:
        """Return a random event on a shape other than ``target``: a removal (never of the last
        shape) or an addition, with equal odds when both are possible."""
        removable = [i for i in present if i != target] if len(present) > 1 else []
        absent = [i for i in IDENTITIES if i not in present and i != target]
        if removable and (not absent or rng.random() < 0.5):
            return "remove", rng.choice(removable)
        if absent:
            return "add", rng.choice(absent)
        raise Impossible("no event is possible on the other shapes")
