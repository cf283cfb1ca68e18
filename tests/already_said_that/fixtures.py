"""Hand-written Already Said That set directories in the contract's format (docs: notes/ASAT_CONTRACT),
so the runner and analysis are tested without the data side: made-up lemmas, a few questions
per source whose gold answers are plain to check by eye."""

import hashlib
import itertools
import json
import random
from pathlib import Path
from typing import Any

from common.jsonl import dumps

SOURCES = ("which_is_heavier", "first_letters", "reverse_sort", "ambiguous_sentences")
VARIANTS = (*SOURCES, "mixed", "distractorless")

QUESTIONS = {
    "which_is_heavier": [
        ("Is 2 kilograms of feathers heavier than 500 grams of iron?", "yes"),
        ("Is 3 pounds of sand heavier than 2 kilograms of water?", "no"),
        ("Is 1 tonne of wood heavier than 900 kilograms of lead?", "yes"),
    ],
    "first_letters": [
        ("What word do the first letters of 'cats are tame' spell?", "cat"),
        ("What word do the first letters of 'dogs often growl' spell?", "dog"),
    ],
    "reverse_sort": [
        ("Sort in reverse alphabetical order: apple, cherry, banana", "cherry, banana, apple"),
        ("Sort in reverse alphabetical order: mango, kiwi, lime", "mango, lime, kiwi"),
    ],
    "ambiguous_sentences": [
        ("In 'The trophy did not fit in the case because it was too big', what was too big?", "the trophy"),
        (
            "In 'The city refused the marchers a permit because they feared violence', who feared violence?",
            "the city",
        ),
    ],
}
EXAMPLES = {
    source: (f"Example question about {source.replace('_', ' ')}: is ten more than two?", "yes")
    for source in SOURCES
}


def lemmas(count: int = 600) -> list[str]:
    """Return ``count`` distinct made-up alphabetic lower-case words (consonant-vowel syllables)."""
    syllables = [c + v for c, v in itertools.product("bdfgklmnprstvz", "aeiou")]
    return [a + b + c for a, b, c in itertools.islice(itertools.product(syllables, repeat=3), count)]


def _record(source: str, index: int, question: str, answer: str) -> dict[str, Any]:
    words = [
        w.lower()
        for w in question.replace("'", " ").replace(",", " ").replace("?", " ").split()
        if w.isalpha()
    ]
    return {
        "id": f"{source}-{index:04d}",
        "source": source,
        "question": question,
        "answer": answer,
        "words": words,
    }


def write_set(
    directory: Path,
    variant: str,
    samples: int = 20,
    seed: int = 0,
    turns: int = 100,
    adversarial: bool = True,
    **settings: Any,
) -> Path:
    """Write a set directory (manifest.json last) for ``variant`` and return it; ``settings`` are
    more fields of its config (e.g. ``wording="original"``)."""
    directory.mkdir(parents=True, exist_ok=True)
    sources = [] if variant == "distractorless" else list(SOURCES) if variant == "mixed" else [variant]
    rng = random.Random(seed)
    vocabulary = lemmas()
    sample_lines = [dumps({"sample": i, "words": rng.sample(vocabulary, 100)}) + "\n" for i in range(samples)]
    pool = [_record(source, i, q, a) for source in sources for i, (q, a) in enumerate(QUESTIONS[source], 1)]
    (directory / "samples.jsonl").write_text("".join(sample_lines), encoding="utf-8")
    (directory / "distractors.jsonl").write_text("".join(dumps(r) + "\n" for r in pool), encoding="utf-8")
    example = _record(sources[0], 0, *EXAMPLES[sources[0]]) if sources else None
    manifest = {
        "set": directory.name,
        "config": {
            "variant": variant,
            "adversarial": adversarial,
            "turns": turns,
            "samples": samples,
            "seed": seed,
            "words": "wordnet",
            "distractors": "generated",
            "sources": sources,
            **settings,
        },
        "samples": samples,
        "distractors": {s: len(QUESTIONS[s]) for s in sources},
        "example": example,
        "sha256": {
            name: hashlib.sha256((directory / name).read_bytes()).hexdigest()
            for name in ("samples.jsonl", "distractors.jsonl")
        },
    }
    (directory / "manifest.json").write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    return directory
