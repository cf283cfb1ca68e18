"""Asking a model canvas trials: the trials protocol on the canvas trial sets.

The sets are in the trial format (``common/trials/data.py``; written by ``generate.py``), so the
items and the answering protocol are the shared layer's (``common/trials/protocol.py``: ask,
re-prompt once with the options when no answer is read), with the answer read by the strict
reader of ``reader.py``, the one that scores the raw replies afterwards, so a reply the score
would credit is never re-prompted, and ``resp`` is the answer the score reads. Results of every
model, built-in or not, go to ``results/canvas/<set>/`` (the set directory under data/ is
generated, and may be regenerated).

A set whose config names picture modalities (``modalities``) is asked in each: an item of a
picture modality is the trial with the prompt ``sent`` in it (``shown.py``: the canvas drawn,
its pictures in the set's ``images/``), the same Key; its ``text`` stays the text prompt, which
the built-ins read (the scene, not the picture) and the reader reads the question of. A record
of a picture modality says so (``modality``, ``images``).
"""

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from common.canvas import reading
from common.canvas.reader import extract
from common.errors import DataError
from common.models.base import Model
from common.pictures.modality import TEXT, modalities_of, record_fields
from common.pictures.store import marked_names
from common.trials import protocol
from common.trials.data import load_testset

__all__ = ["answer", "items", "modalities"]


def answer(model: Model, item: dict[str, Any], reprompts: int = 1) -> dict[str, Any]:
    """Return the results record of asking ``model`` about ``item``: the trials protocol
    (``trials.protocol.answer``) with the strict reader (``reader.extract``) deciding whether a
    reply gives an answer or is re-prompted (with the question the prompt asks, as the score reads
    it). Changes nothing."""
    question = asked(str(item.get("text", "")))
    record = protocol.answer(
        model, item, reprompts, reader=lambda reply, options: extract(reply, options, question)
    )
    return {**record, **record_fields(item.get("modality", TEXT), item.get("images", []))}


def modalities(testset: str | Path) -> list[str]:
    """Return the modalities a canvas set was generated in (its manifest's config; text when it
    names none)."""
    manifest = Path(testset) / "manifest.json"
    config = json.loads(manifest.read_text(encoding="utf-8")).get("config", {}) if manifest.is_file() else {}
    return modalities_of(config.get("modality") or TEXT)


def items(testset: str | Path, limit: int | None = None, modality: str = TEXT) -> Iterator[dict[str, Any]]:
    """Yield the first ``limit`` trials of a canvas set as the runner's items in ``modality``:
    the trials' (``trials.protocol.items``) for text; in a picture modality each with ``sent``
    (its prompt there), ``modality``, ``images`` (the pictures its prompt shows) and
    ``image_dir``. Raises DataError when the set has no prompts in ``modality``."""
    if modality == TEXT:
        yield from protocol.items(testset, limit)
        return
    trials = load_testset(testset)
    if "modalities" not in trials.columns:
        raise DataError(
            f"{testset}: no {modality!r} prompts: add it to the set config's `modality`, generate again"
        )
    for trial in trials[[*protocol.ASKED_FIELDS, "modalities"]].head(limit).to_dict("records"):
        sent = (trial.pop("modalities") or {}).get(modality)
        if sent is None:
            raise DataError(
                f"{testset}: trial {trial['Key']} has no {modality!r} prompt: generate the set again"
            )
        names = list(dict.fromkeys(marked_names(sent)))
        yield {
            **trial,
            "sent": sent,
            "modality": modality,
            "images": names,
            "image_dir": Path(testset) / "images",
        }


def asked(prompt: str) -> str | None:
    """Return the test question of a canvas prompt (its last "Question: " line), or None."""
    try:
        return reading.question(prompt)
    except ValueError:
        return None
