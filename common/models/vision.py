"""Which modalities a model is asked in: pictures go only to a model that takes them (an HTTP
model whose config says ``vision: true``, a built-in, a model file that says ``VISION = True``)."""

import logging
from collections.abc import Sequence
from typing import Any

from common.models.base import ModelError
from common.pictures.modality import shows_pictures

log = logging.getLogger(__name__)


def takes_images(model: Any) -> bool:
    """Return whether ``model`` may be asked with pictures: an HTTP model whose config says
    ``vision: true``; a built-in (it reads the scene, or the picture, itself); a model file that
    says ``VISION = True``."""
    return bool(getattr(model, "vision", True))


def _model_name(model: Any) -> str:
    """Return the name a message gives a model: its config's name, else its own."""
    return getattr(getattr(model, "config", None), "name", getattr(model, "name", "?"))


def modalities_to_ask(model: Any, modalities: Sequence[str], asked_for: Sequence[str] = ()) -> list[str]:
    """Return the modalities of ``modalities`` to ask ``model``: all of them when the user named
    them (``asked_for``, ``--modality``: a text-only model is then refused, ``check_takes_images``),
    else those it can take, so that ``make all MODEL=x`` asks a text-only model the text of a
    set that also shows pictures (and says what it left out) instead of stopping there."""
    if asked_for or takes_images(model):
        return list(modalities)
    kept = [m for m in modalities if not shows_pictures(m)]
    left = [m for m in modalities if shows_pictures(m)]
    if left:
        name = _model_name(model)
        log.warning(
            "%s takes no pictures (vision: true in a model config, VISION = True in a model file): "
            "not asked in %s",
            name,
            ", ".join(left),
        )
    return kept


def check_takes_images(model: Any) -> None:
    """Raise ModelError naming the config field to set when ``model`` takes no pictures
    (``takes_images``): before any request, so a text-only model never sees an image set."""
    if not takes_images(model):
        name = _model_name(model)
        raise ModelError(
            f"model {name!r} is text-only by its config (vision: false, the default) and this set shows "
            "pictures: if the model takes images, set vision: true in its config (or --set vision=true); "
            "else ask it the set's text modality (docs/models.md, vision models)"
        )
