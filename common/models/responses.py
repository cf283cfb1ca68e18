"""Reading what an OpenAI-compatible server answered besides the text: refusals, JSON, Retry-After.

``classify_refusal`` tells an error that concerns one request alone (too long for the model's
context, a content filter, a prompt that cannot be tokenized: the runner records the item and
goes on) from one that concerns the whole run. The tables come from what OpenAI, vLLM,
llama.cpp, TGI, LM Studio and Azure servers send.
"""

import email.utils
import re
import time
from typing import Any

import requests

REFUSAL_STATUSES = frozenset({400, 413, 422})  # statuses a per-request refusal comes with (422: TGI)
# llama-cpp-python answers 500 "llama_decode returned 1" (no room left in the KV cache) when a chat
# prompt fits the context but prompt + max_tokens does not: the same request always fails the same way.
_LLAMA_CONTEXT_FULL = re.compile(r"llama_decode returned 1\b")
# What servers say when one request is refused for itself (OpenAI, vLLM, llama.cpp, TGI, LM Studio,
# Azure); matched against the error's code and type first, then its message.
_REFUSAL_CODES = {
    "context_length_exceeded": "context_length_exceeded",
    "exceed_context_size_error": "context_length_exceeded",  # llama.cpp's own server
    "string_above_max_length": "context_length_exceeded",
    "content_filter": "content_filter",
    "content_policy_violation": "content_filter",
    "invalid_prompt": "invalid_prompt",
}
_REFUSAL_MESSAGES = (
    (
        "context_length_exceeded",
        re.compile(
            r"maximum context length|context (?:length|size|window)|exceeds? the (?:available )?context"
            r"|too many (?:input )?tokens|(?:prompt|input) is too long|must be <= \d+",
            re.IGNORECASE,
        ),
    ),
    (
        "content_filter",
        re.compile(r"content (?:management )?polic|content filter|safety system", re.IGNORECASE),
    ),
    (
        "invalid_prompt",
        re.compile(
            r"tokeni[sz]|could not (?:be )?(?:de|en)code|invalid (?:utf|unicode)"
            r"|surrogates not allowed",
            re.IGNORECASE,
        ),
    ),
)


def classify_refusal(status: int, body: Any, message: str) -> str | None:
    """Return the kind of refusal (one of base.REFUSAL_KINDS) when an error response concerns
    only the request it answers, else None (the error concerns the whole run).

    Only 400, 413 and 422 can be per-request. The OpenAI error object's ``code`` and ``type``
    decide first (``context_length_exceeded``, llama.cpp's ``exceed_context_size_error``,
    ``content_filter``, ``invalid_prompt``), then the message (vLLM: "This model's maximum
    context length is ...", TGI: "... must be <= 2048", "... could not be tokenized"). A 413
    (request body too large) is taken as too long for the context, and so is llama-cpp-python's
    500 "llama_decode returned 1" (a chat prompt that fits but leaves no room for max_tokens).
    """
    if status == 500:  # llama-cpp-python's chat endpoint: prompt + max_tokens overflow the KV cache
        return "context_length_exceeded" if _LLAMA_CONTEXT_FULL.search(message) else None
    if status not in REFUSAL_STATUSES:
        return None
    error = body.get("error", body) if isinstance(body, dict) else {}
    if isinstance(error, dict):
        for field in ("code", "type"):
            kind = _REFUSAL_CODES.get(str(error.get(field, "")).lower())
            if kind:
                return kind
    for kind, pattern in _REFUSAL_MESSAGES:
        if pattern.search(message):
            return kind
    return "context_length_exceeded" if status == 413 else None


def json_or_none(response: requests.Response) -> Any:
    """Return the response body parsed as JSON, or None when it is not JSON."""
    try:
        return response.json()
    except ValueError:
        return None


def retry_after(value: str | None) -> float | None:
    """Return the seconds a Retry-After header asks for (a number or an HTTP date), or None."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())
