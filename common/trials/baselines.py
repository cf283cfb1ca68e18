"""The built-in models of every trial set: ``random`` and ``oracle``.

Both read the trial (``expectedresp``, ``goldresp``), so they answer any set in the trial format
(``common.trials.data``): WorldSense's, and the canvas sets (whose registry extends this one).
"""

from typing import Any

from common.models.base import Message, Reply
from common.models.builtin import BuiltinModel


class RandomAnswer(BuiltinModel):
    """Answers with a random option of the trial's ``expectedresp``, seeded per (seed, Key).

    Gives exactly the answers of ``scripts/test_random_model.py`` with the same seed, and the
    same answer to a trial however often or in whatever order it is asked.
    """

    name = "random"
    seeded = True

    def complete(self, messages: list[Message], item: dict[str, Any]) -> Reply:
        """Return one of ``item["expectedresp"]`` chosen by ``random.Random(f"{seed}:{Key}")`` (for a
        repeated answer, with its draw: ``rng``)."""
        rng = self.rng(item, item["Key"])
        return Reply(rng.choice(list(item["expectedresp"])), attempts=0)


class OracleAnswer(BuiltinModel):
    """Answers with the trial's gold answer (``goldresp``): the ceiling every score is compared with."""

    name = "oracle"

    def complete(self, messages: list[Message], item: dict[str, Any]) -> Reply:
        """Return ``item["goldresp"]``."""
        return Reply(str(item["goldresp"]), attempts=0)


BASELINES = {"random": RandomAnswer, "oracle": OracleAnswer}
