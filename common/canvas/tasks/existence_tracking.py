"""Existence tracking: a shared description, additions and removals, then
"Is there a {s} in the canvas?".

The invariant: the answer is drawn first, and every surface choice independently of it. A
shape's presence flips with each event naming it, so its answer is whether it was on the first
canvas, flipped once per event. The stratum is (answer, the number of the asked shape's events,
2 or 3), which fixes its history: removed-added (Yes), added-removed-added (Yes), added-removed
(No), removed-added-removed (No). Whether it was on the first canvas (the history starts with a
removal) is then Yes as often as No within each answer, and the number of its events is drawn
apart from the answer.

Every prompt holds a *twin*: another shape with as many events, starting the other way (on the
first canvas when the asked shape is not), so it ends the other way. The two get two slot sets
drawn together and dealt at random (each: three random slots among the prompt's ``events``, the
first and the last kept, the middle one only for a three-event history, so where a history
starts and ends does not depend on its length); the other events name other shapes, each
removing a shape still on the canvas (never the last other one) or adding an absent identity,
with equal odds when both are possible, drawn without regard to the asked shape. So the pair
{asked shape, twin} is the same whatever the answer, and only which of the two is asked
differs: the kind of every event at every position (counted from either end), the number of
additions and removals, where the asked shape's events fall, how often it is named in events,
whether the first description names it, and the events of every other shape have the same
distribution for a Yes as for a No. The same-canvas examples ask about other mentioned shapes,
never the twin (its answer is the opposite one). What stays tied to the answer is the history
itself: the kind of the asked shape's last event, and the parity of its mentions (the first
description's and the events'), each the answer by the rule that an event flips the shape.

A canvas of 24 shapes has no absent identity, so one of the two could not start off the canvas:
the task does not run there (every asked shape would start on it, and the number of its events
would tell the answer).
"""

import random

from common.canvas import describe
from common.canvas.shapes import IDENTITIES, Geometry, Shape
from common.canvas.tasks.base import Impossible, Questions, Task

ANSWERS = ["Yes", "No"]
LENGTHS = ["2", "3"]  # events naming the asked shape (and its twin)
MIN_EVENTS = 6  # two shapes with three events each


def history(answer: str, length: int) -> list[str]:
    """Return the kinds of the events of a shape with ``length`` events ending present (Yes) or
    absent (No): alternating, the last one an addition for Yes."""
    last = "add" if answer == "Yes" else "remove"
    other = "remove" if last == "add" else "add"
    return [last if (length - 1 - i) % 2 == 0 else other for i in range(length)]


class ExistenceTrackingTask(Task):
    """Is this shape on the canvas after the events? Balanced over (answer, events naming it)."""

    name = "existence_tracking"
    instruction = "Answer Yes or No."
    events = 8  # events in a prompt

    def answer_strata(self, num_shapes: int) -> list[str]:
        """Return ``"<answer>:<events naming the asked shape>"`` (4 strata)."""
        return [f"{answer}:{length}" for answer in ANSWERS for length in LENGTHS]

    def unsupported(self, num_shapes: int, stratum: str | None = None) -> str | None:
        """Return why no question can be asked: too few events, or no absent identity (24 shapes)."""
        if self.events < MIN_EVENTS:
            return f"the asked shape and its twin need {MIN_EVENTS} events (the set has {self.events})"
        if num_shapes >= len(IDENTITIES):
            return (
                "every identity is on the canvas: no shape can start off it, so the number of the asked "
                "shape's events would give the answer"
            )
        return super().unsupported(num_shapes, stratum)

    def generate_questions(
        self,
        shapes: list[Shape],
        rng: random.Random,
        geometry: Geometry,
        selected: str | None = None,
        examples: int = 2,
    ) -> Questions:
        """Return the events (as a suffix), a question about a shape of the stratum's history and
        examples on other mentioned shapes (never the twin). Raises Impossible when the other
        shapes' events cannot be made."""
        answer, length = self.pick_stratum(rng, len(shapes), selected).split(":")
        initial = [s.identity for s in shapes]
        absent = [i for i in IDENTITIES if i not in initial]
        if not absent or self.events < MIN_EVENTS:
            raise Impossible("no shape can start off the canvas")
        asked_kinds = history(answer, int(length))
        twin_kinds = history("No" if answer == "Yes" else "Yes", int(length))
        on_first = rng.choice(initial)  # the one of the two that starts on the canvas
        off_first = rng.choice(absent)
        target, twin = (on_first, off_first) if asked_kinds[0] == "remove" else (off_first, on_first)
        slots = rng.sample(range(self.events), 6)
        pair = [sorted(slots[:3]), sorted(slots[3:])]  # dealt at random: slots[:3] is a random triple
        plan: dict[int, tuple[str, tuple[str, str, str]]] = {}
        for (first, middle, last), identity, kinds in zip(
            pair, (target, twin), (asked_kinds, twin_kinds), strict=True
        ):
            for slot, kind in zip(
                [first, middle, last] if len(kinds) == 3 else [first, last], kinds, strict=True
            ):
                plan[slot] = (kind, identity)
        present, touched, sentences = list(initial), [], []
        for slot in range(self.events):
            event, identity = plan.get(slot) or self._other_event(rng, present, (target, twin))
            if event == "remove":
                present.remove(identity)
                sentences.append(describe.removed(" ".join(identity)))
            else:
                present.append(identity)
                sentences.append(describe.added(" ".join(identity)))
            touched.append(identity)
        assert (target in present) == (answer == "Yes") and (twin in present) != (target in present)
        others = [i for i in dict.fromkeys(initial + touched) if i not in (target, twin)]
        chosen = [target, *rng.sample(others, min(examples, len(others)))]
        pairs = [
            (f"Is there a {' '.join(i)} in the canvas?", "Yes" if i in present else "No") for i in chosen
        ]
        facts = {"final": [" ".join(i) for i in present], "twin": " ".join(twin)}
        return Questions(pairs, list(ANSWERS), suffix=" ".join(sentences), facts=facts)

    @staticmethod
    def _other_event(
        rng: random.Random, present: list[tuple[str, str, str]], pair: tuple[tuple[str, str, str], ...]
    ) -> tuple[str, tuple[str, str, str]]:
        """Return an event on a shape other than the asked one and its twin, drawn without regard to
        them: a removal (never of the last other shape) or an addition, with equal odds when both
        are possible; raise Impossible when neither is."""
        others = [i for i in present if i not in pair]
        removable = others if len(others) > 1 else []
        absent = [i for i in IDENTITIES if i not in present and i not in pair]
        if removable and (not absent or rng.random() < 0.5):
            return "remove", rng.choice(removable)
        if absent:
            return "add", rng.choice(absent)
        raise Impossible("no event is possible on the other shapes")
