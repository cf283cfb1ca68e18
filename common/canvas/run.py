"""Asking a model canvas trials: the WorldSense protocol on the canvas trial sets.

The sets are in the WorldSense trial format (``common/canvas/generate.py``), so the items and
the answering protocol are WorldSense's (``common/worldsense/run.py``: ask, re-prompt once with
the options when the answer is not one of them); the strict reader of ``scoring.py`` scores the
raw replies afterwards. Results of every model, built-in or not, go to
``results/canvas/<set>/`` (the set directory under data/ is generated, and may be regenerated).
"""

from pathlib import Path

from common import paths
from common.worldsense.data import first_trial
from common.worldsense.run import answer, items

__all__ = ["answer", "items", "results_dir"]

CANVAS_FIELDS = ("task", "item")  # in every canvas trial, in no WorldSense one


def is_canvas_set(testset: str | Path) -> bool:
    """Return whether ``testset`` is a canvas set directory, by content: its trials carry the
    canvas fields (``task``, ``item``; a WorldSense trial has neither), with or without the
    manifest the generator writes beside them."""
    trial = first_trial(testset)
    return trial is not None and all(field in trial for field in CANVAS_FIELDS)


def results_dir(testset: str | Path, root: Path | None = None) -> Path:
    """Return where answers to the canvas set ``testset`` go: ``<root>/<set name>/``, by default
    ``results/canvas/<set name>/``."""
    return (root or paths.RESULTS / "canvas") / Path(testset).resolve().name
