"""An Already Said That set: its config, building it, writing it, and reading it back.

A config (``configs/already_said_that/<set>.yaml``, ``SetConfig``) names the variant (which
distractor sources a conversation draws from), the conversation settings the runner uses
(adversarial option, turns) and the data (samples, seed, where words and distractors come
from); ``load_set_config`` checks every field and names the file, line and field of a mistake.

A set directory holds ``samples.jsonl`` (the word samples, ``{"sample", "words"}``: the same for
every variant with the same seed and word source, so conversations are paired across
variants), ``distractors.jsonl`` (the distractor pool of the variant's sources, empty when
distractorless) and ``manifest.json`` (the config, counts, the held-out worked example and the
SHA-256 of both files; written last, so its presence marks a finished set). ``load_set`` reads
it back, checked, for the runner.
"""

import json
import logging
import random
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from common import config as cfg
from common.already_said_that import distractors, original, wordnet
from common.already_said_that.distractors import SOURCES
from common.already_said_that.prompts import Conversation
from common.errors import ConfigError, DataError
from common.fetch import sha256_file
from common.jsonl import iter_jsonl, read_jsonl, write_json, write_jsonl
from common.stale import fingerprint
from common.suite import SetRef

log = logging.getLogger(__name__)

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
    play: int | None = None  # conversations each seed plays, chosen by it (the original: 250); None: all
    seeds: int = (
        1  # seeds a run plays, each a draw of its own (first_seed, first_seed + 1, ...; the original: 3)
    )
    first_seed: int | None = None  # the first seed a run plays (None: seed; the original's runs: 1)
    words: Literal["wordnet", "original"] = "wordnet"
    distractors: Literal["generated", "original"] = "generated"
    wrong_golds: Literal["leave_out", "keep"] = "leave_out"  # original distractors whose gold is wrong
    wording: Literal["original", "suite"] = "suite"  # what the model reads: the original's texts or ours
    name: str = field(default="", metadata={"derived": True})  # the file's stem, not a key

    def as_dict(self) -> dict:
        """Return the config's fields as written in the file (without the derived ``name``). The
        fields added since the first sets (``LATER_FIELDS``) appear only when they differ from
        their defaults: a set that does not use them keeps the manifest, and so the fingerprints
        of its conversations (``common/stale.py``) and the results that answered them."""
        data = asdict(self)
        data.pop("name")
        for name, default in LATER_FIELDS.items():
            if data[name] == default:
                del data[name]
        return data


LATER_FIELDS = {"first_seed": None, "wrong_golds": "leave_out", "wording": "suite"}  # and their defaults


def load_set_config(path: str | Path) -> SetConfig:
    """Return the checked SetConfig of ``path`` (its ``name`` is the file's stem).

    Raises ConfigError naming ``file:line`` and the field for an unknown key, a wrong type, an
    unknown variant or source, or sources that do not match the variant; FileNotFoundError for
    a missing file.
    """
    data, source = cfg.load_set_yaml(path)
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
    if settings.play is not None and not 1 <= settings.play <= settings.samples:
        raise ConfigError(
            f"{where('play')}: field 'play': {settings.play} must be between 1 and samples "
            f"({settings.samples}), or left out to play every sample"
        )
    if settings.seeds < 1:
        raise ConfigError(f"{where('seeds')}: field 'seeds': must be 1 or more, got {settings.seeds}")
    if settings.first_seed is not None and settings.first_seed < 0:
        raise ConfigError(
            f"{where('first_seed')}: field 'first_seed': must be 0 or more, got {settings.first_seed}"
        )
    if settings.wrong_golds == "keep" and settings.distractors != "original":
        raise ConfigError(
            f"{where('wrong_golds')}: field 'wrong_golds': only the original's distractors have wrong "
            "golds (generated golds are recomputed by code): keep needs distractors: original"
        )
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


POOL_SIZE = 200  # generated questions per source (a conversation asks about 33)


def draw_samples(words: list[str], n: int, seed: int, size: int = WORDS_PER_SAMPLE) -> list[dict]:
    """Return ``n`` samples of ``size`` distinct words drawn with ``seed`` from ``words``.

    ``words`` must be the sorted list (``wordnet.load_words``): with a fixed order and
    ``random.Random(seed)`` the samples are the same on every machine and hash seed.
    """
    rng = random.Random(seed)
    return [{"sample": index, "words": rng.sample(words, size)} for index in range(n)]


def source_pool(source: str, settings: SetConfig) -> tuple[dict, list[dict]]:
    """Return ``(example, pool)`` of one source: generated with the set's seed (the example is
    one more question, held out) or the checked original records."""
    if settings.distractors == "original":
        return original.original_distractors(source, keep_wrong_golds=settings.wrong_golds == "keep")
    size = len(distractors.winograd.SENTENCES) - 1 if source == "ambiguous_sentences" else POOL_SIZE
    records = distractors.generate(source, size + 1, settings.seed)
    example = {**records[-1], "id": f"{source}-example"}
    return example, records[:-1]


def build_set(settings: SetConfig) -> tuple[list[dict], list[dict], dict]:
    """Return ``(samples, pool, example)`` for ``settings``: the data of one set, not written."""
    if settings.words == "original":
        samples = original.original_samples(settings.samples)
    else:
        samples = draw_samples(wordnet.load_words(), settings.samples, settings.seed)
    pool: list[dict] = []
    example = distractors.BASIC_EXAMPLE
    for index, source in enumerate(settings.sources):
        held_out, records = source_pool(source, settings)
        pool.extend(records)
        if index == 0:  # mixed: the first listed source gives the worked example
            example = held_out
    return samples, pool, example


def write_set(settings: SetConfig, out: Path) -> dict:
    """Write the set directory ``out`` (samples, distractors, then the manifest) and return the
    manifest. A finished set's manifest is removed first, so an interrupted rewrite never
    leaves an old manifest naming new files."""
    samples, pool, example = build_set(settings)
    (out / "manifest.json").unlink(missing_ok=True)
    write_jsonl(out / "samples.jsonl", samples)
    write_jsonl(out / "distractors.jsonl", pool)
    counts: dict[str, int] = {source: 0 for source in settings.sources}
    for record in pool:
        counts[record["source"]] += 1
    manifest = {
        "set": settings.name,
        "config": settings.as_dict(),
        "samples": len(samples),
        "distractors": counts,
        "example": example,
        "sha256": {name: sha256_file(out / name) for name in ("samples.jsonl", "distractors.jsonl")},
    }
    wrong = [
        {key: r[key] for key in ("id", "question", "answer", "wrong_gold")}
        for r in pool
        if r.get("wrong_gold")
    ]
    if wrong:  # kept as the original kept them (wrong_golds: keep), judged by their (wrong) gold
        manifest["wrong_golds"] = wrong
    write_json(out / "manifest.json", manifest)
    return manifest


@dataclass
class SetData:
    """One set directory, loaded and checked."""

    path: Path
    name: str
    config: dict[str, Any]
    samples: list[dict[str, Any]]
    pool: list[dict[str, Any]]
    example: dict[str, Any] | None
    samples_sha256: str = ""  # the manifest's SHA-256 of samples.jsonl
    _chosen: dict[int, frozenset[int]] = field(default_factory=dict, repr=False)  # per draw, with play

    @property
    def pairing(self) -> str:
        """Return what runs must share to be paired sample by sample: the word samples (a
        SHA-256 prefix) and the seed of the random streams (``first_seed``)."""
        return f"{self.samples_sha256[:16]}:{self.first_seed}"

    @property
    def first_seed(self) -> int:
        """Return the seed of the first draw's conversations: ``first_seed``, else the set's seed."""
        first = self.config.get("first_seed")
        return int(self.config.get("seed", 0) if first is None else first)

    @property
    def has_distractors(self) -> bool:
        """Whether turns may be distractor questions (a pool, and a variant other than distractorless)."""
        return bool(self.pool) and self.config.get("variant") != "distractorless"

    def plays(self, sample: dict[str, Any], draw: int = 0) -> bool:
        """Return whether seed ``draw`` (``first_seed`` + draw) plays ``sample``: every sample,
        or with ``play`` N the N that seed picks as the original picked them: its eval ran
        ``random.Random(seed).sample(samples, n_samples)`` on the samples in file order
        (``eval.py``, ``_get_samples``), so seeds 1-3 of the ``original_*`` sets play its 250
        conversations of each of its runs, sample for sample."""
        play = self.config.get("play")
        if play is None:
            return True
        if draw not in self._chosen:
            ids = [int(s["sample"]) for s in self.samples]  # file order, as the original read them
            self._chosen[draw] = frozenset(random.Random(self.first_seed + draw).sample(ids, play))
        return int(sample["sample"]) in self._chosen[draw]

    def limited(self, limit: int | None) -> list[dict[str, Any]]:
        """Return the samples a run asked for ``limit`` conversations plays: the first ``limit``;
        where each seed plays its own pick (``play``), the first ``limit`` that every one of the
        set's ``seeds`` plays, so that each comes with all its draws (whole items, as ``--limit``
        gives on any set) and a run's repeated-samples statistics have every seed."""
        if limit is None:
            return self.samples
        seeds = range(int(self.config.get("seeds") or 1))
        return [s for s in self.samples if all(self.plays(s, draw) for draw in seeds)][:limit]

    def conversation(self, sample: dict[str, Any], draw: int = 0) -> Conversation:
        """Return a fresh Conversation for ``sample`` under the set's options and seed; the
        ``draw``-th seed of a run playing several (``seeds``) is ``first_seed`` + draw."""
        return Conversation(
            sample["words"],
            self.pool,
            seed=self.first_seed + draw,
            sample=int(sample["sample"]),
            distractors=self.has_distractors,
            adversarial=bool(self.config.get("adversarial", True)),
            max_turns=int(self.config.get("turns", 100)),
        )


def load_set(path: str | Path) -> SetData:
    """Return the set in directory ``path``, its files checked against the manifest's SHA-256s.

    Raises DataError naming the file (and line or field) when something is missing, malformed
    or does not match, with what to do.
    """
    path = Path(path)
    manifest_path = path / "manifest.json"
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DataError(f"{manifest_path}: unreadable manifest ({exc}); regenerate the set") from None
    for key in ("config", "sha256"):
        if not isinstance(manifest.get(key), dict):
            raise DataError(f"{manifest_path}: field '{key}' missing or not a mapping; regenerate the set")
    for name, digest in manifest["sha256"].items():
        if sha256_file(path / name) != digest:
            raise DataError(
                f"{path / name}: SHA-256 differs from manifest.json (changed after generation?); "
                "regenerate the set"
            )
    samples = list(iter_jsonl(path / "samples.jsonl"))
    for lineno, sample in enumerate(samples, start=1):
        words = sample.get("words")
        if (
            not isinstance(sample.get("sample"), int)
            or not isinstance(words, list)
            or not words
            or len(set(words)) != len(words)
        ):
            raise DataError(
                f"{path / 'samples.jsonl'}:{lineno}: a sample needs an integer 'sample' and a "
                "non-empty list 'words' of distinct words"
            )
    pool = list(iter_jsonl(path / "distractors.jsonl"))
    for lineno, record in enumerate(pool, start=1):
        missing = [key for key in ("id", "source", "question", "answer") if key not in record]
        if missing:
            raise DataError(f"{path / 'distractors.jsonl'}:{lineno}: field(s) {', '.join(missing)} missing")
    return SetData(
        path=path,
        name=str(manifest.get("set") or path.name),
        config=manifest["config"],
        samples=samples,
        pool=pool,
        example=manifest.get("example"),
        samples_sha256=str(manifest["sha256"].get("samples.jsonl", "")),
    )


def generate(
    ref: SetRef, seed: int | None = None, overrides: dict[str, Any] | None = None
) -> dict[str, dict]:
    """Write the set ``ref`` from its config (``seed`` and ``overrides`` replace the config's):
    samples, distractors, then the manifest (``write_set``). Returns each conversation's
    fingerprint (its words and everything else the manifest pins: config and distractors, which
    every conversation shares; not how many samples there are), by Key, for the set's one results
    directory (``common.generation``)."""
    settings = load_set_config(ref.config)
    changes = {**(overrides or {}), **({"seed": seed} if seed is not None else {})}
    if changes:
        name = settings.name
        settings = cfg.apply_overrides(settings, changes)
        settings.name = name
        validate(settings, cfg.Source("<command line>"))
    manifest = write_set(settings, ref.data)
    pool = ", ".join(f"{source} {count}" for source, count in manifest["distractors"].items())
    log.info("%s: %d samples, distractors: %s", settings.name, manifest["samples"], pool or "none")
    shared = {key: value for key, value in manifest.items() if key not in ("sha256", "samples", "set")}
    shared["config"] = {key: value for key, value in shared["config"].items() if key != "samples"}
    shared["files"] = {k: v for k, v in manifest["sha256"].items() if k != "samples.jsonl"}
    samples = read_jsonl(ref.data / "samples.jsonl")
    return {"": {int(s["sample"]): fingerprint(s["words"], shared) for s in samples}}
