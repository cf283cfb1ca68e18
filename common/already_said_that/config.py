"""Set configs of Already Said That: ``configs/already_said_that/<set>.yaml``.

A config names the variant (which distractor sources a conversation draws from), the
conversation settings the runner uses (adversarial option, turns) and the data (samples, seed,
where words and distractors come from). ``load_set_config`` checks every field and names the
file, line and field of a mistake.
"""

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Literal

from common import config as cfg
from common.already_said_that.distractors import SOURCES
from common.errors import ConfigError

VARIANTS = (*SOURCES, "distractorless", "mixed")
WORDS_PER_SAMPLE = 100  # as the original's 500_100 file: a conversation never runs out of words
ORIGINAL_SAMPLES = 500  # samples in the original word file


@dataclass
class SetConfig:
    """One Already Said That set: see configs/already_said_that/*.yaml for the meaning of each field."""

    variant: Literal[
        "which_is_heavier", "first_letters", "reverse_sort", "ambiguous_sentences", "distractorless", "mixed"
    ]
    sources: list[str]
    adversarial: bool = True
    turns: int = 100
    samples: int = 500
    seed: int = 0
    words: Literal["wordnet", "original"] = "wordnet"
    distractors: Literal["generated", "original"] = "generated"
    name: str = field(default="", metadata={"derived": True})  # the file's stem, not a key

    def as_dict(self) -> dict:
        """Return the config's fields as written in the file (without the derived ``name``)."""
        data = asdict(self)
        data.pop("name")
        return data


def load_set_config(path: str | Path) -> SetConfig:
    """Return the checked SetConfig of ``path`` (its ``name`` is the file's stem).

    Raises ConfigError naming ``file:line`` and the field for an unknown key, a wrong type, an
    unknown variant or source, or sources that do not match the variant; FileNotFoundError for
    a missing file.
    """
    data, source = cfg.load_yaml(path)
    if isinstance(data, dict) and "name" in data:
        raise ConfigError(
            f"{source.where('name')}: 'name' is not a setting: a set is named after "
            f"its file ({Path(path).stem})"
        )
    settings: SetConfig = cfg.build(SetConfig, data, source)
    settings.name = Path(path).stem
    validate(settings, source)
    return settings


def validate(settings: SetConfig, source: cfg.Source) -> None:
    """Raise ConfigError (naming ``source``'s file and line) for values that are well-typed but
    out of range or inconsistent with each other (the variant and its sources)."""
    where = source.where
    if not 1 <= settings.turns <= WORDS_PER_SAMPLE:
        raise ConfigError(
            f"{where('turns')}: field 'turns': {settings.turns} must be between 1 "
            f"and {WORDS_PER_SAMPLE} (the words of a sample)"
        )
    limit = ORIGINAL_SAMPLES if settings.words == "original" else 100_000
    if not 1 <= settings.samples <= limit:
        raise ConfigError(
            f"{where('samples')}: field 'samples': {settings.samples} must be between "
            f"1 and {limit}" + (" (the original word file has 500)" if limit == 500 else "")
        )
    if settings.seed < 0:
        raise ConfigError(f"{where('seed')}: field 'seed': must be 0 or more, got {settings.seed}")
    for index, name in enumerate(settings.sources):
        if name not in SOURCES:
            raise ConfigError(
                f"{where(f'sources.{index}')}: field 'sources': unknown source "
                f"{name!r} (known: {', '.join(SOURCES)})"
            )
        if name in settings.sources[:index]:
            raise ConfigError(f"{where(f'sources.{index}')}: field 'sources': {name!r} is listed twice")
    variant, sources = settings.variant, settings.sources
    if variant == "distractorless" and sources:
        raise ConfigError(
            f"{where('sources')}: field 'sources': the distractorless variant has "
            f"no distractors: write sources: []"
        )
    if variant == "mixed" and len(sources) < 2:
        raise ConfigError(
            f"{where('sources')}: field 'sources': the mixed variant draws from two "
            f"or more sources (e.g. all four: {', '.join(SOURCES)})"
        )
    if variant in SOURCES and sources != [variant]:
        raise ConfigError(
            f"{where('sources')}: field 'sources': the {variant} variant draws from "
            f"its own source only: write sources: [{variant}]"
        )
