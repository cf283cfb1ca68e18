"""The HTTP client for OpenAI-compatible servers (OpenAI, vLLM, llama.cpp, Ollama, TGI, ...).

Plain ``requests``, one Session per worker thread, a (connect, read) timeout on every request.
Connection errors, timeouts, 408, 429, 5xx and unreadable bodies are retried with exponential
backoff and jitter, honouring ``Retry-After``, up to ``max_retries`` per request and
``retry_budget`` per run. Any other 4xx means the request itself is wrong: the run stops at
once with the server's message. The API key is sent in the Authorization header only and is
masked out of every message this module produces.
"""

import email.utils
import logging
import random
import re
import threading
import time
from typing import Any

import requests
from requests.adapters import HTTPAdapter

from common.models.base import Counters, Message, ModelError, Reply, RequestFailed
from common.models.cache import ResponseCache, request_key
from common.models.config import ModelConfig

log = logging.getLogger(__name__)

RETRY_STATUSES = frozenset({408, 429})  # plus every 5xx; other 4xx are never retried
RETRY_AFTER_MAX_S = 600.0  # a server's Retry-After is obeyed as given, up to this (guards against nonsense)


class _Transient(Exception):
    """A failure worth retrying; ``retry_after`` is the server's wish in seconds, if it said one."""

    def __init__(self, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after


class HTTPModel:
    """A model behind an OpenAI-compatible endpoint; ``complete`` is safe to call from many threads."""

    def __init__(self, config: ModelConfig, cache: ResponseCache | None = None,
                 counters: Counters | None = None):
        self.config = config
        self.name = config.name
        self.concurrency = config.concurrency
        self.cache = cache
        self.counters = counters or Counters()
        path = "/chat/completions" if config.api == "chat" else "/completions"
        self.url = config.base_url.rstrip("/") + path
        self._key = config.api_key()  # ConfigError now, before any work, if the variable is unset
        self._local = threading.local()
        self._sessions: list[requests.Session] = []
        self._lock = threading.Lock()
        self._budget_left = config.retry_budget
        self._jitter = random.Random(config.seed)  # only spreads waiting times; answers do not depend on it

    def __repr__(self) -> str:
        return f"<HTTPModel {self.name}: {self.config.model} at {self.url}>"

    def settings(self) -> dict[str, Any]:
        """Return the config as plain data plus the endpoint URL (the key's variable name, never the key)."""
        return {**self.config.settings(), "url": self.url}

    def payload(self, messages: list[Message]) -> dict[str, Any]:
        """Return the JSON body for ``messages``: chat messages, or one prompt for the completions API."""
        config = self.config
        body: dict[str, Any] = {"model": config.model}
        if config.api == "chat":
            body["messages"] = messages
        else:
            body["prompt"] = "\n\n".join(message["content"] for message in messages)
        body["temperature"] = config.temperature
        body["max_tokens"] = config.max_tokens
        for name in ("stop", "seed", "top_p"):
            if getattr(config, name) is not None:
                body[name] = getattr(config, name)
        return body

    def complete(self, messages: list[Message], item: dict[str, Any] | None = None) -> Reply:
        """Return the model's reply, from the cache when this exact request was answered before.

        Raises RequestFailed when the request still fails after its retries, ModelError when
        the run must stop. Non-empty replies are cached; errors and empty replies never are.
        """
        body = self.payload(messages)
        key = request_key(self.url, body) if self.cache is not None else ""
        if self.cache is not None and (hit := self.cache.get(key)) is not None:
            self.counters.add(cache_hits=1)
            return Reply(hit["text"], hit["prompt_tokens"], hit["completion_tokens"], attempts=0, cached=True)
        reply = self._post_with_retries(body)
        self.counters.add(prompt_tokens=reply.prompt_tokens, completion_tokens=reply.completion_tokens)
        if self.cache is not None and reply.text.strip():
            self.cache.put(key, {"text": reply.text, "prompt_tokens": reply.prompt_tokens,
                                 "completion_tokens": reply.completion_tokens})
        return reply

    def close(self) -> None:
        """Close every thread's Session, and the cache (committing what it holds in memory)."""
        if self.cache is not None:
            self.cache.close()
        with self._lock:
            for session in self._sessions:
                session.close()
            self._sessions.clear()
        self._local = threading.local()

    # ---- one request, retried --------------------------------------------------------------
    def _post_with_retries(self, body: dict[str, Any]) -> Reply:
        """Return the reply to ``body``, retrying transient failures (see the module docstring)."""
        attempt = 0
        while True:
            attempt += 1
            try:
                reply = self._post_once(body)
            except _Transient as exc:
                if attempt > self.config.max_retries:
                    raise RequestFailed(f"{self.url}: {exc} (gave up after {attempt} attempts)") from None
                self._spend_retry(exc)
                delay = self._delay(attempt, exc.retry_after)
                log.debug("%s: %s; retry %d in %.2f s", self.url, exc, attempt, delay)
                time.sleep(delay)
                continue
            reply.attempts = attempt
            return reply

    def _post_once(self, body: dict[str, Any]) -> Reply:
        """Return the reply of one POST; raise _Transient (retry) or ModelError (stop)."""
        start = time.monotonic()
        try:
            response = self._session().post(self.url, json=body, timeout=tuple(self.config.timeout_s))
        except (requests.exceptions.InvalidURL, requests.exceptions.InvalidSchema,
                requests.exceptions.MissingSchema) as exc:
            raise ModelError(f"{self.url}: not a usable URL, check base_url: {exc}") from None
        except requests.Timeout as exc:
            raise _Transient(f"timed out ({type(exc).__name__}, timeout_s={self.config.timeout_s})") from None
        except requests.RequestException as exc:  # refused, reset, dropped, ...
            raise _Transient(f"connection failed: {self._mask(str(exc))[:300]}") from None
        latency = time.monotonic() - start
        self.counters.add(requests=1)
        status = response.status_code
        if status in RETRY_STATUSES or status >= 500:
            raise _Transient(f"HTTP {status}: {self._server_message(response)}",
                             _retry_after(response.headers.get("Retry-After")))
        if status >= 400:
            raise ModelError(f"{self.url}: the server refused the request with HTTP {status} (not retried): "
                             f"{self._server_message(response)}")
        try:
            data = response.json()
            choice = data["choices"][0]
            text = choice["message"]["content"] if self.config.api == "chat" else choice["text"]
            usage = data.get("usage") or {}
            return Reply(text or "", int(usage.get("prompt_tokens") or 0),
                         int(usage.get("completion_tokens") or 0), latency_s=latency)
        except (ValueError, KeyError, IndexError, TypeError, AttributeError):
            raise _Transient(f"malformed response body: {self._mask(response.text)[:200]!r}") from None

    def _spend_retry(self, exc: _Transient) -> None:
        """Take one retry from the run's budget; raise ModelError when it is used up."""
        with self._lock:
            if self._budget_left <= 0:
                raise ModelError(f"{self.url}: retry budget of {self.config.retry_budget} used up; "
                                 f"the server seems unwell, stopping. Last error: {exc}")
            self._budget_left -= 1
        self.counters.add(retries=1)

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        """Return seconds to wait before retry ``attempt``: Retry-After if given, else jittered backoff."""
        if retry_after is not None:
            return min(RETRY_AFTER_MAX_S, retry_after)
        ceiling = min(self.config.backoff_max_s, self.config.backoff_s * 2 ** (attempt - 1))
        return ceiling / 2 + self._jitter.uniform(0, ceiling / 2)  # "equal jitter": never zero, spread out

    def _session(self) -> requests.Session:
        """Return this thread's Session (keep-alive, no automatic retries), creating it on first use."""
        session = getattr(self._local, "session", None)
        if session is None:
            session = requests.Session()
            session.mount(self.url.split("/", 3)[0] + "//", HTTPAdapter(pool_connections=1, pool_maxsize=1))
            if self._key:
                session.headers["Authorization"] = f"Bearer {self._key}"
            self._local.session = session
            with self._lock:
                self._sessions.append(session)
        return session

    def _server_message(self, response: requests.Response) -> str:
        """Return the masked error message of a response: OpenAI's {"error": {"message"}}, or the body."""
        try:
            data = response.json()
            error = data.get("error", data.get("detail", data)) if isinstance(data, dict) else data
            message = error.get("message", error) if isinstance(error, dict) else error
            text = str(message)
        except ValueError:
            text = response.text
        return self._mask(text.strip())[:500] or "(empty body)"

    def _mask(self, text: str) -> str:
        """Return ``text`` with the API key, and any 8+ character piece of it, replaced by ***."""
        if not self._key:
            return text
        text = text.replace(self._key, "***")
        return re.sub(r"[A-Za-z0-9_\-]{8,}", lambda m: "***" if m.group(0) in self._key else m.group(0), text)


def _retry_after(value: str | None) -> float | None:
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
