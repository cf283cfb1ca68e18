"""main's existence tracking and transitivity before issue 31 (commit cccdced), kept as test
fixtures: the audit must fail on sets they make (``tests/canvas/test_audit.py``).

Existence tracking: the asked shape's events took the first slots of only 4-5, so its last event
was almost always the second-to-last of the prompt and the final event another shape's.
Transitivity: the chain was listed outward from the pivot, so which asked shape is named first,
with the side's direction, gave the answer. The code is main's, unchanged but for the names and
the chain description it used (``_chain``).
"""

import random

from common.canvas import describe
from common.canvas.relations import horizontal, vertical
from common.canvas.shapes import IDENTITIES, Geometry, Shape
from common.canvas.tasks.base import Impossible, Questions, Task

OPPOSITE = describe.OPPOSITE
_PHRASES = {"Left": "left of", "Right": "right of", "Above": "above", "Below": "below"}


def _chain(pivot, sides, inverted=frozenset(), others=()):
    """main's chain description: the pivot, then per side each shape after the previous, outward."""
    n = 1 + sum(len(shapes) for _, shapes in sides) + len(others)
    sentences = [describe.intro(n), f"There is a {pivot.name} in the canvas."]
    for word, shapes in sides:
        previous = pivot
        for shape in shapes:
            if shape.name in inverted:
                sentences.append(f"The {previous.name} is {_PHRASES[OPPOSITE[word]]} a {shape.name}.")
            else:
                preposition = {"Left": "Left of", "Right": "Right of"}.get(word, word)
                sentences.append(f"{preposition} the {previous.name} is a {shape.name}.")
            previous = shape
    sentences += [f"There is also a {shape.name} in the canvas." for shape in others]
    return " ".join(sentences)


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


class LegacyExistenceTracking(Task):
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


class LegacyTransitivity(Task):
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
            description=_chain(pivot, [s for s in sides if s[1]], inverted, off_chain),
            facts={"chain": [s.name for s in line], "pivot": pivot.name},
        )

    @staticmethod
    def _word(a: Shape, b: Shape, line: list[Shape], word: str) -> str:
        """Return where ``a`` is relative to ``b`` from their order in the chain (``line`` runs
        towards ``word``)."""
        return word if line.index(a) > line.index(b) else OPPOSITE[word]
