"""What the stub server answers to one completion request: the reply body, or the error a real
server would give (a reasoning model's refusal of a field, a context too long).

``respond(stub, body, route)`` is shared by the live routes and the Batch API
(``stub_batch``), so a batch and a live run against the same stub get the same replies.
"""

from typing import Any

THINKING_STYLES = ("reasoning_content", "reasoning", "inline", "hidden")
# think_words cycle through these; "FALSE" makes an answer read from the thinking go wrong
THOUGHT = ["first", "guess", "FALSE", "but", "let", "me", "check", "each", "fact", "again"]


def respond(stub: Any, body: dict[str, Any], route: str, empty: bool = False) -> tuple[int, dict[str, Any]]:
    """Return ``(status, json)`` of the stub's answer to ``body`` on ``route`` (a path ending in
    /chat/completions or /completions): a refusal of a reasoning model (HTTP 400), a context
    error (400) when the request is longer than ``stub.max_context`` words, else the completion
    of ``stub.answer(prompt)`` (``""`` when ``empty``)."""
    if stub.reasoning_model and (rejected := _rejected_by_reasoning_model(body)):
        return 400, {"error": rejected}
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


def _prompt_of(body: dict[str, Any]) -> str:
    """Return the last user message (chat) or the prompt (completions) of a request body."""
    if "messages" in body:
        return next((m["content"] for m in reversed(body["messages"]) if m.get("role") == "user"), "")
    return str(body.get("prompt", ""))


def _words_of(body: dict[str, Any]) -> int:
    """Return the request's length in words (its "tokens"): every message, or the prompt."""
    if "messages" in body:
        return sum(len(str(m.get("content", "")).split()) for m in body["messages"])
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
        earlier = sum(len(str(m.get("content", "")).split()) for m in body.get("messages", [])[:-1])
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
