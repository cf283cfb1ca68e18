"""Helpers for the model-access tests: configs pointing at the stub server, tiny trial sets."""

import functools
from pathlib import Path
from typing import Any

from common.jsonl import write_jsonl
from common.models import runner
from common.models.config import ModelConfig, config_from_mapping
from common.models.stub_server import StubServer
from common.worldsense.run import answer
from tests.timing import timeout

SENTINEL_KEY = "sk-SENTINEL-do-not-leak-4f1c9a7e2b"

# Tiny backoffs and timeouts so that retry tests take milliseconds (timeouts scaled to the load).
FAST = {"backoff_s": 0.001, "backoff_max_s": 0.05, "timeout_s": [timeout(2), timeout(2)], "max_retries": 3}
# A read timeout that a stub answer takes well within, and a "slow" behaviour that never does.
SHORT_READ_S = timeout(0.3)
TOO_SLOW = f"slow:{SHORT_READ_S * 3:.2f}"


def make_config(server: StubServer | None, **settings: Any) -> ModelConfig:
    """Return a checked config pointing at ``server`` (or ``settings["base_url"]``) with fast
    retries, updated by ``settings``."""
    base = {"name": "stub", "base_url": server.url if server else "", "model": "stub-model", **FAST}
    return config_from_mapping({**base, **settings})


def make_items(n: int, start: int = 0) -> list[dict[str, Any]]:
    """Return ``n`` WorldSense-like trials with Keys start..start+n-1 (gold answer FALSE)."""
    return [
        {
            "Key": start + i,
            "text": f"Question {start + i}: is it so? Answer TRUE or FALSE.",
            "expectedresp": ["TRUE", "FALSE"],
            "goldresp": "FALSE",
        }
        for i in range(n)
    ]


def write_testset(directory: Path, n: int) -> Path:
    """Write a test set directory with ``n`` trials (plain trials.jsonl) and return it."""
    write_jsonl(
        directory / "trials.jsonl",
        [{**item, "problemname": "stub", "tuple_ID": item["Key"]} for item in make_items(n)],
    )
    return directory


def run_items(model: Any, items: Any, path: Path, reprompts: int = 1, **options: Any) -> runner.RunSummary:
    """Return ``runner.run_items`` of ``model`` on ``items`` with the WorldSense protocol (``reprompts``)."""
    return runner.run_items(
        model, items, path, answer=functools.partial(answer, reprompts=reprompts), **options
    )
