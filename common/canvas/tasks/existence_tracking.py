"""Existence tracking: a shared description, additions and removals, then
"Is there a {s} in the canvas?".

The answer is drawn first, then everything the question does not depend on independently of it.
The asked shape is always touched by the events, with one of six histories: removed-added
(Yes), added-removed (No), removed-added-removed (No), added-removed-added (Yes) and the two
four-event ones (Yes for removed-first, No for added-first). Its answer is whether it was on the
first canvas, flipped by each of its events, so two things a rule might read without its
events, whether it was there at first and how many events concern it, must each be balanced
and must not both be readable: the stratum pairs a history with the number of events of the
prompt, ``events`` or one more (``short`` / ``long``), so that a short prompt has a two- or a
three-event history and a long one a three- or a four-event one, half of each. Then neither the
number of events of the prompt, nor the number of events about other shapes (``events`` - 2 or -
1 in a short prompt, one fewer in a long one), tells the parity of the asked shape's events, so
no count does; whether it was there at first is Yes as often as No within each.

The events about other shapes are drawn without looking at the asked shape: each removes a
shape still on the canvas (never the last other one) or adds an absent identity, with equal
odds when both are possible, and the last event of the prompt is always about another shape,
its kind (the ``last-add`` / ``last-remove`` label) balanced independently of the answer. So
"the last event of all decides", "ignore the events", "the first event naming the shape
decides", "a shape ever removed is gone" and "a shape ever added is there" are each right half
the time, as are the answers of the same-canvas examples (other shapes the prompt mentions) as
a guess. A shape the prompt does not mention is never asked; the histories need ``events`` >= 4.
A canvas of 24 shapes has no absent identity: its histories start with a removal and its last
event is a removal.
"""

import random

from common.canvas import describe
from common.canvas.shapes import IDENTITIES, Geometry, Shape
from common.canvas.tasks.base import Impossible, Questions, Task

# history -> the asked shape's events in order
HISTORIES = {
    "removed-added": ["remove", "add"],
    "added-removed": ["add", "remove"],
    "removed-added-removed": ["remove", "add", "remove"],
    "added-removed-added": ["add", "remove", "add"],
    "removed-added-removed-added": ["remove", "add", "remove", "add"],
    "added-removed-added-removed": ["add", "remove", "add", "remove"],
}
LENGTHS = {"short": (2, 3), "long": (3, 4)}  # prompt length -> the histories' lengths it holds
MIN_EVENTS = 4  # a short prompt with a three-event history keeps one event for another shape


def answer_of(history: str) -> str:
    """Return the answer after ``history``: on the first canvas when it starts with a removal,
    flipped by each event."""
    kinds = HISTORIES[history]
    return "Yes" if (kinds[0] == "remove") == (len(kinds) % 2 == 0) else "No"


class ExistenceTrackingTask(Task):
    """Is this shape on the canvas after the events? Balanced over (history, prompt length, the
    kind of the last event)."""

    name = "existence_tracking"
    instruction = "Answer Yes or No."
    events = MIN_EVENTS  # events in a short prompt (a long one has one more)

    def answer_strata(self, num_shapes: int) -> list[str]:
        """Return ``"<answer>:<history>:<short|long>:<last-add|last-remove>"``: each history with
        each prompt length that holds it, and both kinds of last event (on a canvas holding every
        identity only the histories starting with a removal, and a last removal)."""
        full = num_shapes >= len(IDENTITIES)
        lasts = ["last-remove"] if full else ["last-add", "last-remove"]
        return [
            f"{answer_of(history)}:{history}:{length}:{last}"
            for length, sizes in LENGTHS.items()
            for history, kinds in HISTORIES.items()
            if len(kinds) in sizes and not (full and kinds[0] == "add")
            for last in lasts
        ]

    def unsupported(self, num_shapes: int, stratum: str | None = None) -> str | None:
        """Return why a history cannot be asked: too few events, or nothing absent to add."""
        if self.events < MIN_EVENTS:
            return f"the balanced histories need {MIN_EVENTS} events (the set has {self.events})"
        if (
            stratum is not None
            and num_shapes >= len(IDENTITIES)
            and stratum.split(":")[1].startswith("added")
        ):
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
        """Return the events (as a suffix), a question about a shape with the stratum's history,
        and examples on other mentioned shapes. Raises Impossible when the events cannot be made."""
        answer, history, length, last = self.pick_stratum(rng, len(shapes), selected).split(":")
        touches = HISTORIES[history]
        initial = [s.identity for s in shapes]
        pool = initial if touches[0] == "remove" else [i for i in IDENTITIES if i not in initial]
        if not pool or self.events < MIN_EVENTS:
            raise Impossible(f"no shape can have the history {history}")
        target = rng.choice(pool)
        total = self.events + (length == "long")
        slots = sorted(rng.sample(range(total - 1), len(touches)))  # the last event is another shape's
        present, touched, sentences = list(initial), [], []
        for slot in range(total):
            if slot in slots:
                event, identity = touches[slots.index(slot)], target
            else:
                wanted = last.removeprefix("last-") if slot == total - 1 else None
                event, identity = self._other_event(rng, present, target, wanted)
            if event == "remove":
                present.remove(identity)
                sentences.append(describe.removed(" ".join(identity)))
            else:
                present.append(identity)
                sentences.append(describe.added(" ".join(identity)))
            touched.append(identity)
        assert (target in present) == (answer == "Yes")
        others = [i for i in dict.fromkeys(initial + touched) if i != target]
        chosen = [target, *rng.sample(others, min(examples, len(others)))]
        pairs = [
            (f"Is there a {' '.join(i)} in the canvas?", "Yes" if i in present else "No") for i in chosen
        ]
        return Questions(
            pairs, ["Yes", "No"], suffix=" ".join(sentences), facts={"final": [" ".join(i) for i in present]}
        )

    @staticmethod
    def _other_event(
        rng: random.Random,
        present: list[tuple[str, str, str]],
        target: tuple[str, str, str],
        wanted: str | None = None,
    ) -> tuple[str, tuple[str, str, str]]:
        """Return an event on a shape other than ``target``, drawn without regard to it: of kind
        ``wanted``, or a removal (never of the last other shape) or an addition with equal odds when
        both are possible; raise Impossible when none is."""
        others = [i for i in present if i != target]
        removable = others if len(others) > 1 and wanted != "add" else []
        absent = [i for i in IDENTITIES if i not in present and i != target] if wanted != "remove" else []
        if removable and (not absent or rng.random() < 0.5):
            return "remove", rng.choice(removable)
        if absent:
            return "add", rng.choice(absent)
        raise Impossible("no event is possible on the other shapes")
