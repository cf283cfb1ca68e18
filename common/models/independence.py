"""Independent samples: two items never share a reply the model sampled.

A model samples unless its temperature is 0 (None, the server's default, samples: 1 at
OpenAI). Two items whose requests happen to coincide (two conversations that open alike, two
questions worded alike) must then each get a reply of their own, as a server asked twice gives
two samples. So a sampled request is tied to its item (``identity``: the item's Key and which
of its answers, ``draw``): the response cache keys it on that too (``keyed``), and a seed, when
the config sends one, becomes the item's own (``item_seed``), so that a seeded server does not
answer the two alike either. A rerun (into the same results file or another) finds each item's
replies in the cache, as before; ``--no-cache`` draws new ones. At temperature 0 a reply is a
function of the request: identical requests share one cached reply and the config's seed
(+ draw), as they always did.
"""

import hashlib
import json
from typing import Any

SEED_RANGE = 2**31  # the seeds servers take (OpenAI, vLLM, llama.cpp: 32-bit integers)


def samples(temperature: float | None) -> bool:
    """Return whether a model at ``temperature`` samples (anything but 0; None is the server's
    default, which samples)."""
    return temperature is None or temperature > 0


def identity(item: dict[str, Any] | None) -> str | None:
    """Return what tells one item's sampled request from another item's: the item's Key and its
    ``draw``; None for a request that names no item (nothing to tell apart: it is cached and
    seeded by its body alone)."""
    if not item or "Key" not in item:
        return None
    return json.dumps([item["Key"], int(item.get("draw") or 0)], default=str)


def keyed(key: str, ident: str | None) -> str:
    """Return the cache key of a sampled request: ``key`` (the request's) joined with the item's
    identity ``ident``; ``key`` itself when ``ident`` is None (the model does not sample)."""
    if ident is None:
        return key
    return hashlib.sha256(f"{key}\n{ident}".encode()).hexdigest()


def item_seed(seed: int, ident: str) -> int:
    """Return the seed an item's sampled request is sent with: ``seed`` moved by a hash of the
    item's identity, in ``SEED_RANGE`` (the same item, the same seed on every rerun)."""
    offset = int(hashlib.sha256(ident.encode()).hexdigest()[:15], 16)
    return (seed + offset) % SEED_RANGE
