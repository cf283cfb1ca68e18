"""Generating a set, the same for every suite: the suite writes its data, then stale results are set aside.

``generate(ref)`` calls the suite's generator (``Suite.generate``: ``generate(ref, seed,
overrides)``), which writes the set's data under ``ref.data`` from its config and returns each
item's fingerprint per results directory; the fingerprints go to the set's ``items.json``
(``ITEMS``), and the results answered under the previous ones are checked: those whose item
changed or is gone are set aside (``common.stale``), with a message each.
"""

from __future__ import annotations

import json
from typing import Any

from common import suites
from common.jsonl import write_json
from common.stale import set_aside_stale
from common.suite import SetRef

ITEMS = "items.json"  # in the set's data directory: {results subdirectory: {Key: fingerprint}}


def generate(ref: SetRef, seed: int | None = None, overrides: dict[str, Any] | None = None) -> list[str]:
    """Write the set ``ref`` from its config (``seed`` and ``overrides`` replace the config's),
    then set aside the results its new items no longer match; return the messages about them.
    Raises UserError (ConfigError...) before anything is written when the config is wrong."""
    suite = suites.get(ref.suite)
    previous = _fingerprints(ref)
    fingerprints = suite.part("generate")(ref, seed, overrides or {})
    texts = {name: {str(key): value for key, value in items.items()} for name, items in fingerprints.items()}
    write_json(ref.data / ITEMS, texts)
    return set_aside_stale(ref.results, previous, texts)


def _fingerprints(ref: SetRef) -> dict[str, dict[str, str]] | None:
    """Return the fingerprints of the set as last generated (its ``items.json``), None without."""
    try:
        return json.loads((ref.data / ITEMS).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
