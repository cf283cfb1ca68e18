"""Reading what an OpenAI-compatible server answered: the answer apart from the reasoning, the
token usage, refusals, a rejected setting, JSON, Retry-After.

``reply_parts`` keeps a reasoning model's thinking out of the answer, wherever the server puts
it: ``reasoning_content`` (DeepSeek's API, vLLM and llama.cpp with a reasoning parser),
``reasoning`` (newer vLLM, Ollama's OpenAI API, OpenRouter), or inline ``<think>...</think>``
in the text (a server without a reasoning parser). A reply cut while still thinking (an
unclosed ``<think>``, or reasoning and no content) has no answer: "", never the reasoning.
``classify_refusal`` tells an error that concerns one request alone (too long for the model's
context, a content filter, a prompt that cannot be tokenized: the runner records the item and
goes on) from one that concerns the whole run. The tables come from what OpenAI, vLLM,
llama.cpp, TGI, LM Studio and Azure servers send.
"""

import email.utils
import os
import re
import time
from pathlib import Path
from typing import Any

import requests

from common.models.base import Reply
from common.models.images import has_images

# errors of a URL that cannot be used at all (stop: retrying cannot help)
BAD_URL = (
    requests.exceptions.InvalidURL,
    requests.exceptions.InvalidSchema,
    requests.exceptions.MissingSchema,
)
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


THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
_THINK_BLOCK = re.compile(r"<think>(.*?)</think>", re.DOTALL)


def split_reasoning(text: str) -> tuple[str, str]:
    """Return ``(answer, reasoning)`` of a completion that may hold inline ``<think>`` blocks.

    Without think tags the text is the answer, unchanged. Otherwise every closed block is
    reasoning; a ``</think>`` with no opening tag closes a block the chat template opened (as
    DeepSeek-R1's and Qwen3's do), so all before it is reasoning; an unclosed ``<think>`` (cut
    while thinking) makes the rest reasoning and the answer "". The answer is then stripped.
    """
    if THINK_OPEN not in text and THINK_CLOSE not in text:
        return text, ""
    thoughts: list[str] = []
    head, close, tail = text.partition(THINK_CLOSE)
    if close and THINK_OPEN not in head:
        thoughts.append(head)
        text = tail

    def take(match: re.Match) -> str:
        thoughts.append(match.group(1))
        return ""

    text = _THINK_BLOCK.sub(take, text)
    if THINK_OPEN in text:
        text, _, rest = text.partition(THINK_OPEN)
        thoughts.append(rest)
        text = ""  # cut while thinking: whatever came before the block is not the answer
    return text.strip(), "\n\n".join(thought.strip() for thought in thoughts if thought.strip())


def reply_parts(choice: dict[str, Any], chat: bool) -> tuple[str, str]:
    """Return ``(answer, reasoning)`` of one choice of a chat or text completion: the reasoning
    from ``reasoning_content`` or ``reasoning`` (chat) joined with inline think blocks."""
    if not chat:
        return split_reasoning(choice["text"] or "")
    message = choice["message"]
    answer, inline = split_reasoning(message.get("content") or "")
    separate = message.get("reasoning_content") or message.get("reasoning") or ""
    separate = separate if isinstance(separate, str) else ""
    return answer, "\n\n".join(part for part in (separate.strip(), inline) if part)


def reply_of(data: Any, chat: bool, latency_s: float = 0.0) -> Reply:
    """Return the Reply of a completion response body ``data`` (a live answer, or a line of a
    batch output): the answer apart from the reasoning, the usage, the finish reason. Where the
    server counts no reasoning tokens (llama.cpp, inline think blocks) they are the reasoning's
    share of the characters. Raises ValueError, KeyError, IndexError, TypeError or
    AttributeError for a body that is not a completion."""
    choice = data["choices"][0]
    answer, reasoning = reply_parts(choice, chat=chat)
    usage = usage_counts(data.get("usage"))
    if reasoning and not usage["reasoning_tokens"] and usage["completion_tokens"]:
        share = len(reasoning) / (len(reasoning) + len(answer))
        usage["reasoning_tokens"] = round(usage["completion_tokens"] * share)
    return Reply(
        answer,
        **usage,
        latency_s=latency_s,
        finish_reason=str(choice.get("finish_reason") or ""),
        reasoning=reasoning,
    )


# What a cache entry keeps of a Reply besides text and tokens (the last three only when non-empty).
CACHED_EXTRAS = ("finish_reason", "reasoning", "reasoning_tokens", "cached_tokens")


def worth_caching(reply: Reply) -> bool:
    """Return whether a reply is stored in the cache: one with an answer, or one cut at the token
    limit (an outcome); never an empty one."""
    return bool(reply.text.strip()) or reply.finish_reason == "length"


def cache_entry(reply: Reply) -> dict[str, Any]:
    """Return what the response cache stores of ``reply`` (``reply_from_cache`` reads it back)."""
    value: dict[str, Any] = {"text": reply.text, "prompt_tokens": reply.prompt_tokens}
    value["completion_tokens"] = reply.completion_tokens
    value["finish_reason"] = reply.finish_reason
    value.update({name: getattr(reply, name) for name in CACHED_EXTRAS[1:] if getattr(reply, name)})
    return value


def reply_from_cache(hit: dict[str, Any]) -> Reply:
    """Return the Reply of a cache entry: no HTTP attempt, ``cached`` True."""
    return Reply(
        hit["text"],
        hit["prompt_tokens"],
        hit["completion_tokens"],
        attempts=0,
        cached=True,
        **{name: hit[name] for name in CACHED_EXTRAS if name in hit},
    )


def usage_counts(usage: Any) -> dict[str, int]:
    """Return the token counts of a response's ``usage``: prompt and completion tokens, and, where
    the server reports them, ``reasoning_tokens`` (``completion_tokens_details``; part of the
    completion tokens) and ``cached_tokens`` (``prompt_tokens_details``: prompt-cache hits)."""
    usage = usage if isinstance(usage, dict) else {}
    return {
        "prompt_tokens": int(usage.get("prompt_tokens") or 0),
        "completion_tokens": int(usage.get("completion_tokens") or 0),
        "reasoning_tokens": int(_get(usage.get("completion_tokens_details"), "reasoning_tokens") or 0),
        "cached_tokens": int(_get(usage.get("prompt_tokens_details"), "cached_tokens") or 0),
    }


def _get(mapping: Any, name: str) -> Any:
    """Return ``mapping[name]`` when ``mapping`` is a dict, else None."""
    return mapping.get(name) if isinstance(mapping, dict) else None


# The model config field to change when a server rejects a request field (OpenAI's reasoning
# models reject max_tokens and any temperature but their default).
_SETTING_FIXES = {
    "max_tokens": "set token_limit_param: max_completion_tokens",
    "max_completion_tokens": "set token_limit_param: max_tokens",
    "temperature": "set temperature: null (not sent: the model's default)",
    "top_p": "set top_p: null",
    "seed": "set seed: null",
    "stop": "set stop: null",
    "reasoning_effort": "set reasoning_effort: null, or a value the model takes",
}
_REJECTED = re.compile(
    r"unsupported (?:parameter|value)|not supported|unrecognized|unknown (?:field|parameter)"
    r"|extra (?:inputs|fields) are not permitted|does not support",
    re.IGNORECASE,
)


def rejected_setting(body: Any, message: str, sent: dict[str, Any]) -> str | None:
    """Return what to change in the model config when an error says the server does not take a
    field of the request ``sent`` (OpenAI: ``"param": "max_tokens"``, "Unsupported parameter";
    vLLM: "Extra inputs are not permitted"), else None: "field 'max_tokens' ...: set
    token_limit_param: max_completion_tokens"."""
    error = body.get("error", body) if isinstance(body, dict) else {}
    param = str(error.get("param") or "") if isinstance(error, dict) else ""
    if not _REJECTED.search(message):
        return None
    named = [name for name in sent if re.search(rf"'{name}'|\b{name}\b", message)]
    names = [param] if param in sent else named
    names = [name for name in names if name not in ("model", "messages", "prompt")]
    if not names:
        return None
    name = names[0]
    fix = _SETTING_FIXES.get(name, f"remove {name!r} from extra_body")
    return f"the server does not take the request field {name!r}: in the model config, {fix}"


# What servers answer to a picture sent to a text-only model: vLLM (400 "<model> is not a
# multimodal model"), llama.cpp without --mmproj (500 "image input is not supported by this
# server", older: "Unsupported content part type: \"image_url\""), OpenAI's text-only models (400
# "image_url is only supported by certain models"), llama-cpp-python ("not configured with a
# mmproj module"), and the like.
_NO_IMAGES = re.compile(
    r"not a multimodal model|image input is not supported|image_url is only supported"
    r"|unsupported content part type|mmproj|does not support (?:image|vision|multimodal)"
    r"|images? (?:are|is) not supported|vision is not supported",
    re.IGNORECASE,
)


def rejected_images(sent: dict[str, Any], message: str) -> str | None:
    """Return what to change in the model config when a server answers a request carrying a
    picture (``sent``) with an error saying it takes none, else None."""
    if not has_images(sent.get("messages") or []) or not _NO_IMAGES.search(message):
        return None
    return (
        "the server does not take pictures (a text-only model): serve a vision model "
        "(docs/models.md, vision models), or set vision: false in the model config (the set's "
        "pictures are then refused before any request: ask its text modality)"
    )


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


def mask_key(text: str, key: str | None) -> str:
    """Return ``text`` with the API ``key``, and any 8+ character piece of it, replaced by ***."""
    if not key:
        return text
    text = text.replace(key, "***")
    return re.sub(r"[A-Za-z0-9_\-]{8,}", lambda m: "***" if m.group(0) in key else m.group(0), text)


def server_message(response: requests.Response, key: str | None) -> str:
    """Return the masked error message of a response: OpenAI's {"error": {"message"}}, or the body."""
    try:
        data = response.json()
        error = data.get("error", data.get("detail", data)) if isinstance(data, dict) else data
        message = error.get("message", error) if isinstance(error, dict) else error
        text = str(message)
    except ValueError:
        text = response.text
    return mask_key(text.strip(), key)[:500] or "(empty body)"


def failure_reason(exc: requests.RequestException, key: str | None = None) -> str:
    """Return why a request could not be sent, without urllib3's wrapping, e.g. "Failed to
    establish a new connection: [Errno 111] Connection refused" (at most 200 characters, masked)."""
    cause = exc.args[0] if exc.args else exc
    cause = getattr(cause, "reason", None) or cause  # urllib3's MaxRetryError holds the real error
    text = re.sub(r"^\w+\(host=[^)]*\): ", "", str(cause))
    return mask_key(f"{type(exc).__name__}: {text}"[:200], key)


def read_environment_once(session: requests.Session, tls: bool = True) -> None:
    """Set ``session`` up to read the environment now rather than on every request: its CA
    bundle (``REQUESTS_CA_BUNDLE``, ``CURL_CA_BUNDLE``) becomes ``verify`` (only with ``tls``, a
    session that talks https: requests looks at the path, a stat, on every request it is set
    for, plain http included), and requests' own reading (``trust_env``) stays on only where a
    proxy or a netrc file is set up. That reading scans ``os.environ`` twice per request: about a
    tenth of a millisecond of CPU each time, the largest cost of the client besides the socket."""
    bundle = os.environ.get("REQUESTS_CA_BUNDLE") or os.environ.get("CURL_CA_BUNDLE")
    if bundle and tls:
        session.verify = bundle
    netrc = os.environ.get("NETRC") or (Path.home() / ".netrc").is_file()
    session.trust_env = bool(requests.utils.getproxies() or netrc)
