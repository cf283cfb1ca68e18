"""What every model offers the runner: ``complete(messages, item) -> Reply``, and the errors it raises.

A message is ``{"role": "user" | "assistant" | "system", "content": str}``, or, when it shows
pictures, ``content`` is a list of OpenAI content parts (``images.attach_images``). ``item`` is
the trial being answered (built-in baselines such as ``oracle`` read it; HTTP models ignore it).
"""

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from common.errors import UserError

Message = dict[str, Any]  # content: a string, or a list of content parts (pictures)


@dataclass
class Reply:
    """One answer of a model to one conversation."""

    text: str  # the answer: the completion without the reasoning ("" when cut while thinking)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    attempts: int = 1  # HTTP requests it took (1 + retries); 0 when answered from the cache
    cached: bool = False
    latency_s: float = 0.0  # wall time of the successful request (0 from the cache)
    finish_reason: str = ""  # the server's: "stop", "length" (cut at max_tokens), ...; "" if unknown
    reasoning: str = ""  # a reasoning model's thinking, kept apart from the answer ("" if none)
    reasoning_tokens: int = 0  # of completion_tokens, those spent thinking (as reported, or estimated)
    cached_tokens: int = 0  # of prompt_tokens, those the server read from its prompt cache

    @property
    def cut_while_thinking(self) -> bool:
        """Whether the reply was cut at the token limit before any answer: no answer at all
        (suites count it wrong and do not re-prompt; ``--retry-truncated`` asks again)."""
        return self.finish_reason == "length" and not self.text.strip()


def reasoning_fields(replies: Sequence[Reply]) -> dict[str, Any]:
    """Return the results record fields of what reasoning models add, empty for a model that
    does not reason (its records stay as they were): ``reasoning`` (each reply's, in order),
    ``reasoning_tokens`` and ``cached_tokens`` summed, each only when there is some."""
    fields: dict[str, Any] = {}
    if any(reply.reasoning for reply in replies):
        fields["reasoning"] = [reply.reasoning for reply in replies]
    for name in ("reasoning_tokens", "cached_tokens"):
        total = sum(getattr(reply, name) for reply in replies)
        if total:
            fields[name] = total
    return fields


def request_totals(replies: Sequence[Reply], started: float) -> dict[str, Any]:
    """Return what a results record keeps of the requests behind it: ``attempts`` (HTTP requests),
    ``cached`` (every reply from the cache), ``latency_s`` since ``started`` (a
    ``time.monotonic()``), ``prompt_tokens`` and ``completion_tokens`` summed, and a reasoning
    model's ``reasoning_fields``."""
    return {
        "attempts": sum(reply.attempts for reply in replies),
        "cached": all(reply.cached for reply in replies),
        "latency_s": round(time.monotonic() - started, 4),
        "prompt_tokens": sum(reply.prompt_tokens for reply in replies),
        "completion_tokens": sum(reply.completion_tokens for reply in replies),
        **reasoning_fields(replies),
    }


class Model(Protocol):
    """A model the runner can ask: a built-in baseline or an HTTP endpoint."""

    name: str  # label in results file names
    concurrency: int  # worker threads the runner should use

    def complete(self, messages: list[Message], item: dict[str, Any]) -> Reply:
        """Return the model's answer to the conversation ``messages`` about ``item``."""
        ...

    def settings(self) -> dict[str, Any]:
        """Return the settings worth recording in the run metadata (never a key)."""
        ...

    def close(self) -> None:
        """Release connections and files."""
        ...


class ModelError(UserError):
    """The run must stop: the server refused the request (400/401/403/404) or the retry budget is spent."""


class ServerUnreachable(ModelError):
    """No server answers at the configured URL: the whole run stops (the message names no item)."""


class RequestFailed(Exception):
    """One request still failed after its retries (a transient error); the run may go on."""


class Deferred(Exception):
    """Batch mode: the request is not answered yet and waits for the next batch
    (``common.models.batch``). The runner writes nothing for the item; once the batch's output
    is in the cache the item's protocol runs again and finds the answer there."""


REFUSAL_KINDS = ("context_length_exceeded", "content_filter", "invalid_prompt")


class RequestRefused(Exception):
    """The server refused this one request for a reason of its own (it is too long for the
    model's context, a content filter, a prompt it cannot tokenize); other items may succeed.

    ``kind`` is one of REFUSAL_KINDS, ``message`` the server's message (key masked). The
    runner records the item as refused (answer empty) and goes on; asking again gives the
    same refusal, so a rerun does not, unless told to (``--retry-errors``).
    """

    def __init__(self, kind: str, message: str):
        super().__init__(f"refused ({kind}): {message}")
        self.kind = kind
        self.message = message


@dataclass
class Counters:
    """Live totals of a run, shared by worker threads (add through ``add``)."""

    retries: int = 0
    errors: int = 0
    cache_hits: int = 0
    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0  # part of completion_tokens
    cached_tokens: int = 0  # part of prompt_tokens
    throttled: int = 0  # 429 answers (retried without spending the run's retry budget)
    batch_requests: int = 0  # requests answered through a batch (their tokens are counted above)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, **amounts: int) -> None:
        """Add ``amounts`` to the named counters (thread-safe)."""
        with self._lock:
            for name, amount in amounts.items():
                setattr(self, name, getattr(self, name) + amount)

    def since(self, start: dict[str, int]) -> dict[str, int]:
        """Return what the counters added since ``start`` (an earlier ``as_dict``): one run's share
        when a model's counters serve several runs (e.g. every view of a blocks set)."""
        return {name: value - start.get(name, 0) for name, value in self.as_dict().items()}

    def as_dict(self) -> dict[str, int]:
        """Return the counters as a plain dict."""
        with self._lock:
            return {
                name: getattr(self, name)
                for name in (
                    "requests",
                    "retries",
                    "errors",
                    "cache_hits",
                    "prompt_tokens",
                    "completion_tokens",
                    "reasoning_tokens",
                    "cached_tokens",
                    "throttled",
                    "batch_requests",
                )
            }
