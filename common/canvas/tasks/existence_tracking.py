"""Existence tracking: a shared description, additions and removals, then
"Is there a {s} in the canvas?".

Every item is asked as a contrast pair over the asked shape's own events: the same description,
the same events of every other shape in the same order, and the asked shape S with one event
more in one member than in the other (its last event dropped). An event flips S (a shape on the
canvas can only be removed, one off it only added), so the two members answer opposite ways. A
rule that does not read S's events (the final sentence when it names another shape, the events
of the other shapes, the first description) reads the two alike and gets at most one right.

S's history has two events in one member and three in the other (on the first canvas: removed,
added, then removed again; off it: added, removed, then added again), so every rule on the kinds
of S's events ("ever removed", "ever added", "its first event", "never mentioned", "ignore the
events") is right in one member of every pair and wrong in the other: at chance. The stratum is
whether S starts on the first canvas, balanced across the set; which member is the item is drawn
at random. S's last event takes a slot drawn uniformly among the ``events`` slots (its earlier
events random slots before it), so no slot counted from either end holds S's deciding event much
more often than another. Two decoys get histories drawn the same way (two or three events, a random
start), so S is not the one shape named in several events; the same-canvas examples ask about
other shapes. The remaining slots hold events of other shapes drawn without regard to S: each
removes a shape still on the canvas (never the last other one) or adds an absent identity, the
number of additions among them uniform, so that counting additions against removals tells
little: S's final state moves the count by one, the others' spread it over many values.

What no twin closes: the members differ in S's state alone, so a rule that tracks every shape
without knowing which is asked (how many end present, additions against removals) keeps a small
edge, the larger the fewer the other events; ``partial`` reports it (net-events, majority-present)
and the audit reports the view with the subject blinded beside the gate, not in it.

A canvas of 24 shapes has no absent identity, so S could not start off the canvas: the task does
not run there (every S would start on it, and the parity of its events would tell the answer).
"""

import random

from common.canvas import describe
from common.canvas.shapes import IDENTITIES, Geometry, Shape
from common.canvas.tasks.base import Impossible, Member, Questions, Task

ANSWERS = ["Yes", "No"]
STARTS = ["on", "off"]  # the asked shape on the first canvas, or not
SHORTER = ["2"]  # the asked shape's events in the shorter member (the longer has one more): see above
MIN_EVENTS = 4  # the longer member's three events of the asked shape, and one other
DECOYS = 2  # other shapes given histories like the asked shape's, so that it does not stand out
DECOY_LENGTHS = [2, 3]  # the asked shape's lengths over the set


def history(start: str, length: int) -> list[str]:
    """Return the kinds of the events of a shape starting ``on`` or ``off`` the canvas: alternating,
    a removal first for a shape on it."""
    first, second = ("remove", "add") if start == "on" else ("add", "remove")
    return [first if i % 2 == 0 else second for i in range(length)]


class ExistenceTrackingTask(Task):
    """Is this shape on the canvas after the events? A contrast pair over the shape's own events."""

    name = "existence_tracking"
    instruction = "Answer Yes or No."
    events = 24  # events in the longer member of a pair
    decoys = DECOYS
    inputs = ("events",)

    def answer_strata(self, num_shapes: int) -> list[str]:
        """Return ``"<on|off>:<events of the asked shape in the shorter member>"`` (6 strata)."""
        return [f"{start}:{k}" for start in STARTS for k in SHORTER]

    def unsupported(self, num_shapes: int, stratum: str | None = None) -> str | None:
        """Return why no question can be asked: too few events, or no absent identity (24 shapes)."""
        if self.events < MIN_EVENTS:
            return (
                f"the asked shape's events and another need {MIN_EVENTS} events (the set has {self.events})"
            )
        if num_shapes >= len(IDENTITIES):
            return (
                "every identity is on the canvas: no shape can start off it, so the parity of the asked "
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
        twins: bool = True,
    ) -> Questions:
        """Return the pair (the item first, the shorter or the longer member at random) and
        examples on other mentioned shapes. Raises Impossible when the other shapes' events
        cannot be made."""
        start, k = self.pick_stratum(rng, len(shapes), selected).split(":")
        initial = [s.identity for s in shapes]
        absent = [i for i in IDENTITIES if i not in initial]
        if not absent or self.events < MIN_EVENTS:
            raise Impossible("no shape can start off the canvas")
        asked = rng.choice(initial if start == "on" else absent)
        plan = self._plan(rng, asked, start, int(k) + 1, {})
        for _ in range(self.decoys):
            start_d = rng.choice(STARTS)
            taken = [identity for _, identity in plan.values()]
            pool = [i for i in (initial if start_d == "on" else absent) if i not in taken]
            if pool:
                self._plan(rng, rng.choice(pool), start_d, rng.choice(DECOY_LENGTHS), plan)
        last = max(slot for slot, (_, identity) in plan.items() if identity == asked)
        fillers = self.events - len(plan)
        adds = rng.randint(0, fillers)  # the others' additions: uniform, so their net count is flat
        wanted = rng.sample(["add"] * adds + ["remove"] * (fillers - adds), fillers)
        present, touched, longer = list(initial), [], []
        for slot in range(self.events):
            if slot in plan:
                event, identity = plan[slot]
            else:
                event, identity = self._other_event(rng, present, [i for _, i in plan.values()], wanted.pop())
            touched.append(identity)
            if event == "remove":
                present.remove(identity)
            else:
                present.append(identity)
            text = (
                describe.removed(" ".join(identity))
                if event == "remove"
                else describe.added(" ".join(identity))
            )
            longer.append((slot, text))
        name = " ".join(asked)
        question = f"Is there a {name} in the canvas?"
        final = {"shorter": (asked in initial) != (int(k) % 2 == 1), "longer": asked in present}
        suffixes = {
            "shorter": " ".join(text for slot, text in longer if slot != last),
            "longer": " ".join(text for _, text in longer),
        }
        order = ["shorter", "longer"] if rng.random() < 0.5 else ["longer", "shorter"]
        members = [
            Member(
                question,
                "Yes" if final[which] else "No",
                () if i == 0 else ("events",),
                suffix=suffixes[which],
                facts={"events_of_asked": int(k) + (which == "longer")},
            )
            for i, which in enumerate(order[: 2 if twins else 1])
        ]
        tracked = [identity for _, identity in plan.values()]  # the asked shape and the decoys
        others = [i for i in dict.fromkeys(initial + touched) if i not in tracked]
        chosen = rng.sample(others, min(examples, len(others)))
        pairs = [
            (f"Is there a {' '.join(i)} in the canvas?", "Yes" if i in present else "No") for i in chosen
        ]
        return Questions(members, list(ANSWERS), examples=pairs, suffix=suffixes[order[0]])

    def _plan(
        self,
        rng: random.Random,
        identity: tuple[str, str, str],
        start: str,
        length: int,
        plan: dict[int, tuple[str, tuple[str, str, str]]],
    ) -> dict[int, tuple[str, tuple[str, str, str]]]:
        """Add ``length`` events of ``identity`` (starting ``on`` or ``off`` the canvas) to ``plan``
        (slot -> (kind, identity)) and return it: its last event at a free slot drawn uniformly
        (from the ``length``-th free one on), the others at random free slots before it; raise
        Impossible when the slots run out."""
        free = [slot for slot in range(self.events) if slot not in plan]
        if length > len(free):
            raise Impossible("too few events for the tracked shapes")
        if length:
            last = rng.randrange(length - 1, len(free))
            chosen = [*sorted(rng.sample(free[:last], length - 1)), free[last]]
            plan.update(zip(chosen, [(kind, identity) for kind in history(start, length)], strict=True))
        return plan

    @staticmethod
    def _other_event(
        rng: random.Random,
        present: list[tuple[str, str, str]],
        tracked: list[tuple[str, str, str]],
        kind: str,
    ) -> tuple[str, tuple[str, str, str]]:
        """Return an event of ``kind`` on a shape other than the tracked ones (the asked shape and
        the decoys), drawn without regard to them: a removal (never of the last other shape) or an
        addition, the other kind when ``kind`` is not possible; raise Impossible when neither is."""
        others = [i for i in present if i not in tracked]
        removable = others if len(others) > 1 else []
        absent = [i for i in IDENTITIES if i not in present and i not in tracked]
        if removable and (not absent or kind == "remove"):
            return "remove", rng.choice(removable)
        if absent:
            return "add", rng.choice(absent)
        raise Impossible("no event is possible on the other shapes")
