"""Existence tracking: a shared description, additions and removals, then
"Is there a {s} in the canvas?".

Each event removes a shape still on the canvas or adds one of the identities absent from it
(identities stay unique), with equal odds when both are possible; the canvas never empties.
The question prefers a shape some event touched, so that tracking is needed.
"""

import random

from common.canvas import describe
from common.canvas.shapes import IDENTITIES, Geometry, Shape
from common.canvas.tasks.base import Impossible, Questions, Task


class ExistenceTrackingTask(Task):
    """Is this shape on the canvas after the events? Balanced over Yes / No."""

    name = "existence_tracking"
    instruction = "Answer Yes or No."
    events = 3  # additions and removals appended to the description

    def answer_strata(self, num_shapes: int) -> list[str]:
        """Return ``["Yes", "No"]``."""
        return ["Yes", "No"]

    def generate_questions(self, shapes: list[Shape], rng: random.Random, geometry: Geometry,
                           selected: str | None = None, examples: int = 2) -> Questions:
        """Return the events (as a suffix), a question answered ``selected``, and examples on other shapes."""
        stratum = self.pick_stratum(rng, len(shapes), selected)
        present = [s.identity for s in shapes]
        touched: list[tuple[str, str, str]] = []
        sentences = []
        for _ in range(self.events):
            absent = [i for i in IDENTITIES if i not in present]
            if len(present) > 1 and (not absent or rng.random() < 0.5):
                gone = rng.choice(present)
                present.remove(gone)
                sentences.append(describe.removed(" ".join(gone)))
                touched.append(gone)
            elif absent:
                new = rng.choice(absent)
                present.append(new)
                sentences.append(describe.added(" ".join(new)))
                touched.append(new)
        mentioned = [s.identity for s in shapes] + [
            i for i in touched if i not in [s.identity for s in shapes]
        ]
        test = self._pick(rng, stratum, present, touched, mentioned)
        others = [i for i in mentioned if i != test]
        chosen = [test, *rng.sample(others, min(examples, len(others)))]
        pairs = [
            (f"Is there a {' '.join(i)} in the canvas?", "Yes" if i in present else "No") for i in chosen
        ]
        return Questions(
            pairs, ["Yes", "No"], suffix=" ".join(sentences), facts={"final": [" ".join(i) for i in present]}
        )

    @staticmethod
    def _pick(
        rng: random.Random,
        stratum: str,
        present: list[tuple[str, str, str]],
        touched: list[tuple[str, str, str]],
        mentioned: list[tuple[str, str, str]],
    ) -> tuple[str, str, str]:
        """Return the asked identity: touched by an event if possible, else mentioned, else any; None-safe."""
        want = stratum == "Yes"
        for pool in (touched, mentioned, list(IDENTITIES)):
            candidates = [i for i in dict.fromkeys(pool) if (i in present) == want]
            if candidates:
                return rng.choice(candidates)
        raise Impossible(f"no identity is {'present' if want else 'absent'} after the events")
