"""What a set shows a model: its scene in words, as a picture, or both.

``text`` is every set's default (its prompts as they always were); ``image`` replaces the
prompt's description of the scene by a picture and keeps the question in words; ``text+image``
shows both. The items are the same in every modality (the same Keys), so runs pair item by
item. A run's results label carries its modality after the prompting (``paper-image``,
``paper-text+image``; a text run's label is unchanged) and its records a ``modality`` field
(none for text, so every existing record stays as it was): ``record_modality`` reads it back.
"""

from collections.abc import Sequence
from typing import Any

from common.errors import ConfigError

TEXT, IMAGE, BOTH = "text", "image", "text+image"
MODALITIES = (TEXT, IMAGE, BOTH)


def modalities_of(value: Any, where: str = "modality") -> list[str]:
    """Return the modalities a set config's ``modality`` field asks for (one name or a list of
    them), in MODALITIES order; raise ConfigError naming ``where`` for an unknown or empty value."""
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        raise ConfigError(f"{where}: one of {', '.join(MODALITIES)}, or a list of them (got {value!r})")
    unknown = [name for name in names if name not in MODALITIES]
    if unknown:
        raise ConfigError(f"{where}: unknown modality {unknown[0]!r} (known: {', '.join(MODALITIES)})")
    return [name for name in MODALITIES if name in names]


def shows_pictures(modality: str) -> bool:
    """Return whether a modality shows pictures."""
    return modality != TEXT


def shows_words(modality: str) -> bool:
    """Return whether a modality describes the scene in words."""
    return modality != IMAGE


def label(prompting: str, modality: str) -> str:
    """Return the prompting label of a run in ``modality``: unchanged for text, else with
    ``-<modality>`` (``paper-image``, ``paper-text+image``)."""
    return prompting if modality == TEXT else f"{prompting}-{modality}"


def record_fields(modality: str, pictures: Sequence[str]) -> dict[str, Any]:
    """Return what a results record adds for ``modality``: nothing for text; else ``modality`` and
    ``images``, the names of the pictures its requests showed (content addressed: exactly which)."""
    return {} if modality == TEXT else {"modality": modality, "images": list(pictures)}


def record_modality(record: dict[str, Any]) -> str:
    """Return the modality of a results record (``text`` when it names none)."""
    return str(record.get("modality") or TEXT)
