"""What the stub server answers to one completion request: the reply body, or the error a real
server would give (a reasoning model's refusal of a field, a context too long, a message that
is not of the API's documented shape, a picture sent to a text-only model).

The shape checked (OpenAI's chat API reference): ``messages`` is a list of objects with a
``role`` (system, developer, user, assistant, tool) and a ``content`` that is a string or a list
of parts; a part is ``{"type": "text", "text": str}`` or, in a user message only,
``{"type": "image_url", "image_url": {"url": str, "detail"?: "auto" | "low" | "high"}}`` whose
url is http(s) or a ``data:image/<png|jpeg|gif|webp>;base64,`` URL of valid base64 (a PNG must
start with the PNG signature). Anything else is answered 400, as OpenAI does, with the path of
the offending field in ``param``.

``respond(stub, body, route)`` is shared by the live routes and the Batch API
(``stub_batch``), so a batch and a live run against the same stub get the same replies.
"""

import base64
import binascii
from typing import Any

from common.models.images import PNG_SIGNATURE

THINKING_STYLES = ("reasoning_content", "reasoning", "inline", "hidden")
ROLES = ("system", "developer", "user", "assistant", "tool")
DATA_URL_TYPES = ("png", "jpeg", "gif", "webp")
IMAGE_TOKENS = 85  # the usage a picture adds (OpenAI's low-detail cost, as good a stand-in as any)
# what a text-only server answers a picture: vLLM's 400, llama.cpp's 500 (no --mmproj)
TEXT_ONLY = {
    400: "stub-model is not a multimodal model",
    500: "image input is not supported by this server",
}
# think_words cycle through these; "FALSE" makes an answer read from the thinking go wrong
THOUGHT = ["first", "guess", "FALSE", "but", "let", "me", "check", "each", "fact", "again"]


def respond(stub: Any, body: dict[str, Any], route: str, empty: bool = False) -> tuple[int, dict[str, Any]]:
    """Return ``(status, json)`` of the stub's answer to ``body`` on ``route`` (a path ending in
    /chat/completions or /completions): a refusal of a reasoning model (HTTP 400), a context
    error (400) when the request is longer than ``stub.max_context`` words, else the completion
    of ``stub.answer(prompt)`` (``""`` when ``empty``)."""
    if stub.reasoning_model and (rejected := _rejected_by_reasoning_model(body)):
        return 400, {"error": rejected}
    if "messages" in body and (wrong := check_messages(body["messages"])):
        return 400, {"error": {"message": wrong[1], "type": "invalid_request_error", "param": wrong[0]}}
    if "messages" in body and stub.text_only and _pictures(body):
        status = stub.text_only
        return status, {"error": {"message": TEXT_ONLY[status], "type": "BadRequestError", "code": status}}
    prompt = _prompt_of(body)
    asked = _words_of(body) + int(_token_limit(body) or 0)
    if stub.max_context is not None and asked > stub.max_context:
        return 400, {"error": _context_error(stub.max_context, asked)}
    text = "" if empty else stub.answer(prompt)
    return 200, _completion(body, route, text, prompt, stub)


def _context_error(limit: int, asked: int) -> dict[str, Any]:
    """Return vLLM's error for a request longer than the context (an OpenAI error object)."""
    return {
        "message": f"This model's maximum context length is {limit} tokens. However, you requested "
        f"{asked} tokens. Please reduce the length.",
        "type": "invalid_request_error",
        "param": "messages",
        "code": "context_length_exceeded",
    }


# what a server whose content filter refuses a prompt answers (HTTP 400): Azure OpenAI's
# content_filter, OpenAI's invalid_prompt (as their API references and error guides show them)
FILTER_ERRORS = {
    "content_filter": {
        "message": "The response was filtered due to the prompt triggering Azure OpenAI's content "
        "management policy. Please modify your prompt and retry.",
        "type": None,
        "param": "prompt",
        "code": "content_filter",
    },
    "invalid_prompt": {
        "message": "Invalid prompt: your prompt was flagged as potentially violating our usage policy. "
        "Please try again with a different prompt.",
        "type": "invalid_request_error",
        "param": None,
        "code": "invalid_prompt",
    },
}


def withheld(payload: dict[str, Any]) -> dict[str, Any]:
    """Return ``payload`` (a completion) as a content filter leaves it when it withholds the
    reply: no text (chat: ``content`` null), ``finish_reason`` "content_filter"."""
    choice = payload["choices"][0]
    if "message" in choice:
        choice["message"]["content"] = None
    else:
        choice["text"] = ""
    choice["finish_reason"] = "content_filter"
    return payload


def check_messages(messages: Any) -> tuple[str, str] | None:
    """Return ``(param, message)`` of the first way ``messages`` leaves the API's documented shape
    (the module docstring), or None when they keep to it."""
    if not isinstance(messages, list) or not messages:
        return "messages", "'messages' must be a non-empty array"
    for i, message in enumerate(messages):
        where = f"messages.[{i}]"
        if not isinstance(message, dict) or message.get("role") not in ROLES:
            return f"{where}.role", f"Invalid value for '{where}.role': must be one of {', '.join(ROLES)}"
        content = message.get("content")
        if isinstance(content, str) or (content is None and message["role"] == "assistant"):
            continue
        if not isinstance(content, list) or not content:
            return f"{where}.content", f"Invalid type for '{where}.content': expected a string or an array"
        for j, part in enumerate(content):
            wrong = _check_part(part, f"{where}.content.[{j}]", message["role"])
            if wrong:
                return wrong
    return None


def _check_part(part: Any, where: str, role: str) -> tuple[str, str] | None:
    """Return ``(param, message)`` of what is wrong with one content part, or None."""
    kind = part.get("type") if isinstance(part, dict) else None
    if kind == "text":
        if set(part) != {"type", "text"} or not isinstance(part["text"], str):
            return where, f"Invalid content part '{where}': a text part is {{type, text}} with a string"
        return None
    if kind != "image_url":
        return f"{where}.type", f"Invalid value for '{where}.type': expected 'text' or 'image_url'"
    if role != "user":
        return f"{where}.type", f"Invalid value for '{where}.type': image_url parts are for user messages"
    image = part.get("image_url")
    if (
        set(part) != {"type", "image_url"}
        or not isinstance(image, dict)
        or not set(image) <= {"url", "detail"}
    ):
        return (
            f"{where}.image_url",
            f"Invalid content part '{where}': expected {{type, image_url: {{url, detail}}}}",
        )
    if "detail" in image and image["detail"] not in ("auto", "low", "high"):
        return f"{where}.image_url.detail", f"Invalid value for '{where}.image_url.detail': auto, low or high"
    return _check_url(image.get("url"), f"{where}.image_url.url")


def _check_url(url: Any, where: str) -> tuple[str, str] | None:
    """Return ``(param, message)`` when ``url`` is neither http(s) nor a base64 image data URL."""
    if not isinstance(url, str):
        return where, f"Invalid type for '{where}': expected a string"
    if url.startswith(("http://", "https://")):
        return None
    head, _, payload = url.partition(",")
    kinds = tuple(f"data:image/{kind};base64" for kind in DATA_URL_TYPES)
    if head not in kinds:
        return where, f"Invalid image URL '{where}': expected an http(s) URL or data:image/<type>;base64,"
    try:
        data = base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError):
        return where, f"Invalid image data in '{where}': not valid base64"
    if head == kinds[0] and not data.startswith(PNG_SIGNATURE):
        return where, f"Invalid image data in '{where}': not a PNG image"
    return None


def _pictures(body: dict[str, Any]) -> int:
    """Return how many pictures a chat request carries."""
    return sum(
        1
        for message in body.get("messages", [])
        if isinstance(message.get("content"), list)
        for part in message["content"]
        if part.get("type") == "image_url"
    )


def _text(content: Any) -> str:
    """Return the text of a message's content: the string, or its text parts joined."""
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if part.get("type") == "text")
    return str(content or "")


def _prompt_of(body: dict[str, Any]) -> str:
    """Return the last user message (chat; its text parts) or the prompt (completions) of a body."""
    if "messages" in body:
        return next((_text(m["content"]) for m in reversed(body["messages"]) if m.get("role") == "user"), "")
    return str(body.get("prompt", ""))


def _words_of(body: dict[str, Any]) -> int:
    """Return the request's length in words (its "tokens"): every message, or the prompt; a
    picture counts IMAGE_TOKENS."""
    if "messages" in body:
        words = sum(len(_text(m.get("content")).split()) for m in body["messages"])
        return words + IMAGE_TOKENS * _pictures(body)
    return len(str(body.get("prompt", "")).split())


def _token_limit(body: dict[str, Any]) -> Any:
    """Return the request's token limit, under either name (None when it sends none)."""
    return body.get("max_completion_tokens", body.get("max_tokens"))


def _rejected_by_reasoning_model(body: dict[str, Any]) -> dict[str, Any] | None:
    """Return the error OpenAI's reasoning models give for ``max_tokens`` or a temperature but 1."""
    if "max_tokens" in body:
        message = "Unsupported parameter: 'max_tokens' is not supported with this model. "
        message += "Use 'max_completion_tokens' instead."
        return {
            "message": message,
            "type": "invalid_request_error",
            "param": "max_tokens",
            "code": "unsupported_parameter",
        }
    if body.get("temperature", 1) != 1:
        message = f"Unsupported value: 'temperature' does not support {body['temperature']} with this model. "
        message += "Only the default (1) value is supported."
        return {
            "message": message,
            "type": "invalid_request_error",
            "param": "temperature",
            "code": "unsupported_value",
        }
    return None


def _completion(body: dict[str, Any], path: str, text: str, prompt: str, stub: Any) -> dict[str, Any]:
    """Return an OpenAI-format response carrying ``text`` after ``stub.think_words`` of thinking
    (together cut at the token limit, then with finish_reason "length"), with word counts as
    token usage."""
    limit = _token_limit(body)
    limit = limit if isinstance(limit, int) else None
    thought = [THOUGHT[i % len(THOUGHT)] for i in range(stub.think_words)]
    words = text.split()
    finish = "length" if limit is not None and len(thought) + len(words) > limit else "stop"
    if limit is not None:
        thought, words = thought[:limit], words[: max(0, limit - len(thought))]
    answer = " ".join(words) if finish == "length" else text
    usage = {"prompt_tokens": _words_of(body), "completion_tokens": len(thought) + len(words)}
    usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
    message: dict[str, Any] = {"role": "assistant", "content": answer}
    if stub.think_words:
        usage["completion_tokens_details"] = {"reasoning_tokens": len(thought)}
        earlier = sum(len(_text(m.get("content")).split()) for m in body.get("messages", [])[:-1])
        usage["prompt_tokens_details"] = {"cached_tokens": earlier}
        reasoning = " ".join(thought)
        if stub.thinking == "inline":
            whole = len(thought) == stub.think_words  # else cut mid-thought: the block never closes
            message["content"] = f"<think>{reasoning}</think>{answer}" if whole else f"<think>{reasoning}"
        elif stub.thinking != "hidden":
            message[stub.thinking] = reasoning
            message["content"] = answer or None
    if path.endswith("/chat/completions"):
        choice = {"index": 0, "message": message, "finish_reason": finish}
        kind = "chat.completion"
    else:
        choice = {"index": 0, "text": message["content"] or "", "finish_reason": finish}
        kind = "text_completion"
    return {
        "id": "stub-1",
        "object": kind,
        "model": body.get("model", ""),
        "choices": [choice],
        "usage": usage,
    }
