"""The canvas built-in models (``BASELINES``): random, oracle, and one per shortcut rule.

``random`` and ``oracle`` are every trial set's (``common/trials/baselines.py``).
Each shortcut of ``shortcuts.py`` answers by its rule where the rule reads the prompt (its
task), and as ``random`` elsewhere; its score on its task, next to the task's chance rate, is
what ``report`` shows (a shortcut above chance is a flaw of the set).
"""

import functools
from typing import Any

from common.canvas.shortcuts import SHORTCUTS, Shortcut
from common.models.base import Message, ModelError, Reply
from common.models.builtin import BuiltinModel
from common.pictures.modality import TEXT
from common.trials.baselines import BASELINES as TRIAL_BASELINES
from common.trials.baselines import RandomAnswer


class ShortcutModel(BuiltinModel):
    """A built-in model answering by one shortcut's rule; elsewhere as the ``random`` built-in."""

    seeded = True  # its fallback draws
    modalities = (TEXT,)  # a rule on the prompt's words: asked the text modality only

    def __init__(self, shortcut: Shortcut, seed: int = 0):
        super().__init__(seed)
        self.shortcut = shortcut
        self.name = shortcut.name
        self.fallback = RandomAnswer(seed)

    def complete(self, messages: list[Message], item: dict[str, Any]) -> Reply:
        """Return the rule's answer to the trial's prompt (``item["text"]``), else the random answer.

        Raises ModelError when the prompt is not a canvas prompt (it has no question to read)."""
        try:
            answer = self.shortcut.rule(str(item["text"]))
        except ValueError as exc:
            raise ModelError(
                f"{self.name} answers canvas prompts only ({exc}): run it on a canvas set "
                "(data/canvas/<set>), or use random or oracle here"
            ) from None
        return Reply(answer, attempts=0) if answer is not None else self.fallback.complete(messages, item)

    def settings(self) -> dict[str, Any]:
        """Return the name, the targeted task, the rule and the seed of the fallback."""
        return {
            "name": self.name,
            "builtin": True,
            "task": self.shortcut.task,
            "rule": self.shortcut.about,
            "seed": self.seed,
        }


# The canvas built-ins: the trial sets' random and oracle, then every shortcut.
BASELINES = {
    **TRIAL_BASELINES,
    **{shortcut.name: functools.partial(ShortcutModel, shortcut) for shortcut in SHORTCUTS},
}
