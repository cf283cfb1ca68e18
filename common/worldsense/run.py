"""Asking a model WorldSense trials: the trials protocol (``common.trials.protocol``) with
WorldSense's careful reader (``reader.extract_answer``) deciding whether a reply gives an answer
or is re-prompted, as the release's README describes it."""

from typing import Any

from common.models.base import Model
from common.trials.protocol import answer as ask_trial
from common.trials.protocol import items
from common.worldsense.reader import extract_answer

__all__ = ["answer", "items"]


def answer(model: Model, item: dict[str, Any], reprompts: int = 1) -> dict[str, Any]:
    """Return the results record of asking ``model`` about the trial ``item`` with the trials
    protocol, re-prompting (``reprompts`` times at most) while ``extract_answer`` reads no option
    from the reply. Changes nothing."""
    return ask_trial(model, item, reprompts, reader=extract_answer)
