"""The files of a batch, in the OpenAI batch JSONL format that OpenAI's Batch API, vLLM's
``run_batch`` and other engines read and write.

An input line is ``{"custom_id", "method": "POST", "url": "/v1/chat/completions", "body"}`` (the
body as sent live: a request showing pictures carries them as base64 data URLs); a file holds
at most MAX_REQUESTS lines and MAX_BYTES (``lines_that_fit``); an
output (or error) line is ``{"id", "custom_id", "response": {"status_code", "request_id",
"body"}, "error"}``. ``custom_id`` is ``<Key>[-d<draw>][-t<turn>]-r<round>-<request hash>``:
the item, which of its answers (draw) and turns, the round, and the first 16 hex digits of the
request's cache key (unique per request: two requests of one item never share it).
"""

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from common.errors import UserError
from common.jsonl import atomic_write, write_json
from common.models.base import Reply, RequestRefused
from common.models.responses import classify_refusal, reply_of

# What one batch input file may hold: OpenAI's Batch API takes at most 50,000 requests and 200 MB
# per file (vLLM's run_batch has no limit; the same split serves it). A round whose requests
# exceed either sends the first that fit and leaves the rest to the next round.
MAX_REQUESTS = 50_000
MAX_BYTES = 200_000_000
REFUSED_STATUSES = (400, 413, 422)  # what a refusal of one request comes with (responses.classify_refusal)
GIVE_UP_STATUSES = (401, 403, 404)  # the key or the model is wrong: every request would fail the same way


def state_path(results_path: str | Path) -> Path:
    """Return the batch state file of a results file: ``<name without .jsonl>.batch.json``."""
    results_path = Path(results_path)
    return results_path.with_name(results_path.name.removesuffix(".jsonl") + ".batch.json")


class BatchState:
    """The batches of one results file, on disk beside it: ``data`` in ``<name>.batch.json``
    (``round``, ``pending``: the batch in hand, ``done``: the rounds done, ``refused``: requests a
    batch refused), rewritten atomically by ``save``; and ``answered``, the cache keys of the
    requests its batches answered, in ``<name>.batch.answered`` (appended, one a line)."""

    def __init__(self, results_path: Path):
        self.path = state_path(results_path)
        self.answered_path = self.path.with_suffix(".answered")
        self.data: dict[str, Any] = {
            "results_file": results_path.name,
            "round": 0,
            "pending": None,
            "done": [],
        }
        self.data["refused"] = {}
        if self.path.is_file():
            self.data = json.loads(self.path.read_text(encoding="utf-8"))
        text = self.answered_path.read_text(encoding="utf-8") if self.answered_path.is_file() else ""
        self.answered = set(text.split())

    def __repr__(self) -> str:
        return f"<BatchState {self.path.name}: round {self.data['round']}>"

    def account(self) -> dict[str, Any]:
        """Return what the run metadata records: the state file, rounds, batch ids, the one in hand."""
        pending = self.data.get("pending") or {}
        fields = ("round", "mode", "batch_id", "status", "input")
        return {
            "state": self.path.name,
            "rounds": self.data["round"],
            "batches": [done.get("batch_id") or done["input"] for done in self.data["done"]],
            "pending": {name: pending.get(name) for name in fields} if pending else None,
        }

    def save(self) -> None:
        """Write ``data`` atomically (a kill leaves the old state or the new one)."""
        write_json(self.path, self.data)

    def add_answered(self, keys: Iterable[str]) -> None:
        """Note ``keys`` as answered by a batch (after their answers are in the cache)."""
        keys = list(keys)
        with open(self.answered_path, "a", encoding="utf-8") as handle:
            handle.write("".join(key + "\n" for key in keys))
        self.answered.update(keys)


@dataclass
class Failed:
    """A request the batch did not answer: asked again by the next round, unless ``fatal``."""

    message: str
    fatal: bool = False  # it concerns every request (bad key, unknown model): the run stops


def custom_id(key: str, item: dict[str, Any], round_number: int) -> str:
    """Return the custom_id of the request with cache key ``key``, asked for ``item`` in round
    ``round_number``."""
    parts = [str(item.get("Key", "item"))]
    if item.get("draw"):
        parts.append(f"d{item['draw']}")
    if "turn" in item:
        parts.append(f"t{item['turn']}")
    return "-".join([*parts, f"r{round_number}", key[:16]])


def input_lines(requests: Iterable[tuple[str, dict[str, Any]]], route: str) -> list[str]:
    """Return the lines of a batch input file: one per ``(custom_id, body)``, POSTed to ``route``
    (e.g. /v1/chat/completions), each ending in a newline."""
    return [
        json.dumps({"custom_id": name, "method": "POST", "url": route, "body": body}) + "\n"
        for name, body in requests
    ]


def lines_that_fit(lines: list[str]) -> int:
    """Return how many of ``lines`` (from the first) one input file may hold: at most
    MAX_REQUESTS, and at most MAX_BYTES of UTF-8. Raises UserError when the first alone is too
    large (a request no batch can carry: fewer or smaller pictures, or a live run)."""
    total = 0
    for count, line in enumerate(lines[:MAX_REQUESTS]):
        total += len(line.encode("utf-8"))
        if total > MAX_BYTES:
            if not count:
                raise UserError(
                    f"one request is {total:,} bytes, more than a batch input file may hold "
                    f"({MAX_BYTES:,} bytes): ask it live (without --batch)"
                )
            return count
    return min(len(lines), MAX_REQUESTS)


def write_input(path: Path, lines: Iterable[str]) -> None:
    """Write the batch input file ``path`` (atomically) from its ``input_lines``."""
    with atomic_write(path) as handle:
        for line in lines:
            handle.write(line)


def output_lines(texts: Iterable[str]) -> Iterator[dict[str, Any]]:
    """Yield the lines of batch output and error files (their texts), parsed."""
    for text in texts:
        for line in text.splitlines():
            if line.strip():
                yield json.loads(line)


def read_output_line(
    line: dict[str, Any], requests: dict[str, str], chat: bool
) -> tuple[str | None, Reply | RequestRefused | Failed]:
    """Return ``(cache key, outcome)`` of one output or error line: the Reply of a 200, the
    RequestRefused of a request refused for itself (context too long, content filter), else
    Failed (expired, 5xx, a malformed body; fatal for 401/403/404). The key is None for a
    custom_id that is not in ``requests`` (custom_id -> cache key)."""
    key = requests.get(line.get("custom_id"))
    if key is None:
        return None, Failed(f"unknown custom_id {line.get('custom_id')!r}")
    response = line.get("response") or {}
    status, body = response.get("status_code"), response.get("body")
    if status == 200:
        try:
            return key, reply_of(body, chat=chat)
        except (ValueError, KeyError, IndexError, TypeError, AttributeError):
            return key, Failed(f"malformed answer in the batch output: {str(body)[:200]}")
    error = body.get("error") if isinstance(body, dict) else None
    error = error or line.get("error") or {}
    message = str(error.get("message", error) if isinstance(error, dict) else error)[:500]
    kind = classify_refusal(status, body, message) if status in REFUSED_STATUSES else None
    if kind is not None:
        return key, RequestRefused(kind, f"HTTP {status}: {message}")
    return key, Failed(f"HTTP {status}: {message}" if status else message, fatal=status in GIVE_UP_STATUSES)
