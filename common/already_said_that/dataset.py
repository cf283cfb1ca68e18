"""Build an Already Said That set directory from its config.

``<out>/samples.jsonl``: the word samples (``{"sample", "words"}``), the same for every variant
with the same seed and word source, so conversations are paired across variants.
``<out>/distractors.jsonl``: the distractor pool of the variant's sources (empty when
distractorless). ``<out>/manifest.json``: the config, counts, the held-out worked example and
the SHA-256 of both files; written last, so its presence marks a finished set.
"""

import random
from pathlib import Path

from common.already_said_that import distractors, original, wordnet
from common.already_said_that.config import WORDS_PER_SAMPLE, SetConfig
from common.fetch import sha256_file
from common.jsonl import write_json, write_jsonl

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
        return original.original_distractors(source)
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
    write_json(out / "manifest.json", manifest)
    return manifest
