"""Asking a model canvas trials: the WorldSense protocol on the canvas trial sets.

The sets are in the WorldSense trial format (``common/canvas/generate.py``), so the items and
the answering protocol are WorldSense's (``common/worldsense/run.py``: ask, re-prompt once with
the options when no answer is read), with one difference: the answer is read by the strict
reader of ``scoring.py``, the one that scores the raw replies afterwards, so a reply the score
would credit is never re-prompted, and ``resp`` is the answer the score reads. Results of every
model, built-in or not, go to ``results/canvas/<set>/`` (the set directory under data/ is
generated, and may be regenerated).
"""

from pathlib import Path
from typing import Any

from common import paths
from common.canvas import reading
from common.canvas.scoring import extract
from common.models.base import Model
from common.worldsense import run as worldsense_run
from common.worldsense.run import items

__all__ = ["answer", "items", "results_dir"]


def answer(model: Model, item: dict[str, Any], reprompts: int = 1) -> dict[str, Any]:
    """Return the results record of asking ``model`` about ``item``: the WorldSense protocol
    (``worldsense.run.answer``) with the strict reader (``scoring.extract``) deciding whether a
    reply gives an answer or is re-prompted (with the question the prompt asks, as the score reads
    it). Changes nothing."""
    question = asked(str(item.get("text", "")))
    return worldsense_run.answer(
        model, item, reprompts, reader=lambda reply, options: extract(reply, options, question)
    )


def asked(prompt: str) -> str | None:
    """Return the test question of a canvas prompt (its last "Question: " line), or None."""
    try:
        return reading.question(prompt)
    except ValueError:
        return None


def results_dir(testset: str | Path, root: Path | None = None) -> Path:
    """Return where answers to the canvas set ``testset`` go: ``<root>/<set name>/``, by default
    ``results/canvas/<set name>/``."""
    return (root or paths.RESULTS / "canvas") / Path(testset).resolve().name
