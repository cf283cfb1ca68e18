"""The HTTP client for OpenAI-compatible servers (OpenAI, vLLM, llama.cpp, Ollama, TGI, ...).

Plain ``requests``, one Session per worker thread, a (connect, read) timeout on every request.
A reply's answer is kept apart from a reasoning model's thinking (``responses.reply_parts``), and
its usage gives the reasoning and prompt-cache tokens where the server reports them.
Connection errors, timeouts, 408, 429, 5xx and unreadable bodies are retried with exponential
backoff and jitter, honouring ``Retry-After``, up to ``max_retries`` per request and
``retry_budget`` per run. A 400 (413, 422) that concerns this one request, told apart by the
OpenAI error ``code``/``type`` and the message (``classify_refusal``: context length exceeded,
content filter, a prompt that cannot be tokenized), raises RequestRefused: the runner records
the item and goes on. Any other 4xx means every request would fail (bad key, unknown model,
wrong URL, a request field the model does not take, named with the config field to change): the
run stops at once with the server's message. Before its first real request the
model checks once that the server answers at all (``GET /models``), so a server that is down is
reported in seconds instead of after every item's backoff. The API key is sent in the
Authorization header only and is masked out of every message this module produces.
"""

import logging
import random
import re
import threading
import time
from typing import Any

import requests
from requests.adapters import HTTPAdapter

from common.models.base import (
    Counters,
    Message,
    ModelError,
    Reply,
    RequestFailed,
    RequestRefused,
    ServerUnreachable,
)
from common.models.cache import ResponseCache, request_key
from common.models.config import ModelConfig
from common.models.responses import (
    classify_refusal,
    json_or_none,
    rejected_setting,
    reply_parts,
    retry_after,
    usage_counts,
)

log = logging.getLogger(__name__)

RETRY_STATUSES = frozenset({408, 429})  # plus every 5xx; other 4xx are never retried
RETRY_AFTER_MAX_S = 600.0  # a server's Retry-After is obeyed as given, up to this (guards against nonsense)
CHECK_TIMEOUT_S = (5.0, 30.0)  # (connect, read) of the one reachability check before the first request
CHECK_ATTEMPTS = 2  # a server that is just starting gets a second chance, one second later
# What a cache entry keeps of a Reply besides text and tokens (the last three only when non-empty).
CACHED_EXTRAS = ("finish_reason", "reasoning", "reasoning_tokens", "cached_tokens")


class _Transient(Exception):
    """A failure worth retrying; ``retry_after`` is the server's wish in seconds, if it said one."""

    def __init__(self, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after


class HTTPModel:
    """A model behind an OpenAI-compatible endpoint; ``complete`` is safe to call from many threads."""

    def __init__(
        self,
        config: ModelConfig,
        cache: ResponseCache | None = None,
        counters: Counters | None = None,
        reask_truncated: bool = False,
    ):
        self.config = config
        self.reask_truncated = reask_truncated  # a cached reply cut at the token limit is asked again
        self.name = config.name
        self.concurrency = config.concurrency
        self.samples = config.samples  # the runner asks each item this many times (item["draw"])
        self.cache = cache
        self.counters = counters or Counters()
        path = "/chat/completions" if config.api == "chat" else "/completions"
        self.url = config.base_url.rstrip("/") + path
        self._key = config.api_key()  # ConfigError now, before any work, if the variable is unset
        self._local = threading.local()
        self._sessions: list[requests.Session] = []
        self._lock = threading.Lock()
        self._budget_left = config.retry_budget
        self._check_lock = threading.Lock()
        self._checked = False  # set by check_endpoint once the server has answered
        self._check_error: ModelError | None = None  # ... or why it did not
        self._jitter = random.Random(config.seed)  # only spreads waiting times; answers do not depend on it

    def __repr__(self) -> str:
        return f"<HTTPModel {self.name}: {self.config.model} at {self.url}>"

    def settings(self) -> dict[str, Any]:
        """Return the config as plain data plus the endpoint URL (the key's variable name, never the key)."""
        return {**self.config.settings(), "url": self.url}

    def payload(self, messages: list[Message], draw: int = 0) -> dict[str, Any]:
        """Return the JSON body for ``messages``: chat messages, or one prompt for the completions API.

        Settings that are None are not sent (the server's default applies); the token limit goes
        under the name ``token_limit_param`` says; ``extra_body`` is merged last, as given. The
        ``draw``-th answer to an item (repeated sampling) is asked with ``seed + draw``.
        """
        config = self.config
        body: dict[str, Any] = {"model": config.model}
        if config.api == "chat":
            body["messages"] = messages
        else:
            body["prompt"] = "\n\n".join(message["content"] for message in messages)
        if config.temperature is not None:
            body["temperature"] = config.temperature
        if config.max_tokens is not None:
            body[config.token_limit_param] = config.max_tokens
        for name in ("stop", "seed", "top_p", "reasoning_effort"):
            if getattr(config, name) is not None:
                body[name] = getattr(config, name)
        if draw and config.seed is not None:
            body["seed"] = config.seed + draw
        body.update(config.extra_body or {})
        return body

    def complete(self, messages: list[Message], item: dict[str, Any] | None = None) -> Reply:
        """Return the model's reply, from the cache when this exact request was answered before
        (for the same ``item["draw"]``: each of an item's repeated answers is cached apart).

        Raises RequestFailed when the request still fails after its retries, ModelError when
        the run must stop. Replies with an answer are cached, and so are replies cut at the
        token limit (an outcome: a rerun does not pay for it again, unless ``reask_truncated``);
        errors and other empty replies never are.
        """
        draw = int((item or {}).get("draw") or 0)
        body = self.payload(messages, draw)
        key = request_key(self.url, body, draw) if self.cache is not None else ""
        hit = self.cache.get(key) if self.cache is not None else None
        if hit is not None and not (self.reask_truncated and hit.get("finish_reason") == "length"):
            self.counters.add(cache_hits=1)
            return Reply(
                hit["text"],
                hit["prompt_tokens"],
                hit["completion_tokens"],
                attempts=0,
                cached=True,
                **{name: hit[name] for name in CACHED_EXTRAS if name in hit},
            )
        self.check_endpoint()
        reply = self._post_with_retries(body)
        self.counters.add(
            prompt_tokens=reply.prompt_tokens,
            completion_tokens=reply.completion_tokens,
            reasoning_tokens=reply.reasoning_tokens,
            cached_tokens=reply.cached_tokens,
        )
        if self.cache is not None and (reply.text.strip() or reply.finish_reason == "length"):
            value = {"text": reply.text, "prompt_tokens": reply.prompt_tokens}
            value["completion_tokens"] = reply.completion_tokens
            value["finish_reason"] = reply.finish_reason
            value.update({name: getattr(reply, name) for name in CACHED_EXTRAS[1:] if getattr(reply, name)})
            self.cache.put(key, value)
        return reply

    def check_endpoint(self) -> None:
        """Check once that the server answers (``GET <base_url>/models``); later calls return at once.

        Raises ServerUnreachable naming the URL and the fix when nothing listens there (after
        CHECK_ATTEMPTS tries a second apart), ModelError when the server rejects the key (401/403).
        Any other answer means a server is up; a model list without the configured model only
        logs a warning (some servers accept any name). Runs of cached answers never call it.
        """
        with self._check_lock:
            if self._checked:
                return
            if self._check_error is not None:  # another thread's check failed: the same answer
                raise type(self._check_error)(str(self._check_error))  # the same kind
            try:
                self._check_once()
            except ModelError as exc:
                self._check_error = exc
                raise
            self._checked = True

    def _check_once(self) -> None:
        """Do the check of ``check_endpoint``: return when a server answers, else raise ModelError."""
        url = self.config.base_url.rstrip("/") + "/models"
        for attempt in range(1, CHECK_ATTEMPTS + 1):
            try:
                response = self._session().get(url, timeout=CHECK_TIMEOUT_S)
                break
            except requests.exceptions.ReadTimeout:
                return  # connected, only slow to list its models: it is up
            except (
                requests.exceptions.InvalidURL,
                requests.exceptions.InvalidSchema,
                requests.exceptions.MissingSchema,
            ) as exc:
                raise ModelError(f"{url}: not a usable URL, check base_url: {exc}") from None
            except requests.RequestException as exc:
                if attempt == CHECK_ATTEMPTS:
                    raise ServerUnreachable(
                        f"no model server answers at {self.config.base_url} ({self._mask(_reason(exc))}). "
                        "Start the server, or fix base_url in the model config (or override it: "
                        "--set base_url=..., or under make: SET=base_url=...)"
                    ) from None
                time.sleep(1.0)
        if response.status_code in (401, 403):
            raise ModelError(
                f"{url}: the server rejects the API key with HTTP {response.status_code}: "
                f"{self._server_message(response)}; check the key in "
                f"{self.config.api_key_env or 'the variable api_key_env names'}"
            )
        self._warn_unlisted_model(response)

    def _warn_unlisted_model(self, response: requests.Response) -> None:
        """Log when the server's model list (OpenAI format) lacks the configured model: a warning
        when it lists several (the name picks one, so a typo matters), only INFO when it lists one
        (llama.cpp serves the model it loaded whatever the name; vLLM refuses a wrong name with a
        404, which stops the run with its message)."""
        listed = (json_or_none(response) or {}).get("data") if response.ok else None
        if isinstance(listed, list):
            ids = [str(entry.get("id")) for entry in listed if isinstance(entry, dict)]
            if ids and self.config.model not in ids:
                log.log(
                    logging.WARNING if len(ids) > 1 else logging.INFO,
                    "%s does not list model %r (it lists %s); requests may be refused",
                    self.config.base_url,
                    self.config.model,
                    ", ".join(ids[:10]),
                )

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
        self.counters.add(requests=1)  # every attempt, also those that time out or cannot connect
        try:
            response = self._session().post(self.url, json=body, timeout=tuple(self.config.timeout_s))
        except (
            requests.exceptions.InvalidURL,
            requests.exceptions.InvalidSchema,
            requests.exceptions.MissingSchema,
        ) as exc:
            raise ModelError(f"{self.url}: not a usable URL, check base_url: {exc}") from None
        except requests.Timeout as exc:
            raise _Transient(f"timed out ({type(exc).__name__}, timeout_s={self.config.timeout_s})") from None
        except requests.RequestException as exc:  # refused, reset, dropped, ...
            raise _Transient(f"connection failed: {self._mask(str(exc))[:300]}") from None
        latency = time.monotonic() - start
        status = response.status_code
        if status == 500 and classify_refusal(status, None, self._server_message(response)):
            raise RequestRefused("context_length_exceeded", f"HTTP 500: {self._server_message(response)}")
        if status in RETRY_STATUSES or status >= 500:
            raise _Transient(
                f"HTTP {status}: {self._server_message(response)}",
                retry_after(response.headers.get("Retry-After")),
            )
        if status >= 400:
            message = self._server_message(response)
            if status == 400 and (fix := rejected_setting(json_or_none(response), message, body)):
                raise ModelError(f"{self.url}: {fix} (HTTP 400: {message})")
            kind = classify_refusal(status, json_or_none(response), message)
            if kind is not None:
                raise RequestRefused(kind, f"HTTP {status}: {message}")
            raise ModelError(
                f"{self.url}: the server refused the request with HTTP {status} (not retried): {message}"
            )
        try:
            data = response.json()
            choice = data["choices"][0]
            answer, reasoning = reply_parts(choice, chat=self.config.api == "chat")
            usage = usage_counts(data.get("usage"))
        except (ValueError, KeyError, IndexError, TypeError, AttributeError):
            raise _Transient(f"malformed response body: {self._mask(response.text)[:200]!r}") from None
        if reasoning and not usage["reasoning_tokens"] and usage["completion_tokens"]:
            # not reported (llama.cpp, inline think blocks): the reasoning's share of the characters
            share = len(reasoning) / (len(reasoning) + len(answer))
            usage["reasoning_tokens"] = round(usage["completion_tokens"] * share)
        return Reply(
            answer,
            **usage,
            latency_s=latency,
            finish_reason=str(choice.get("finish_reason") or ""),
            reasoning=reasoning,
        )

    def _spend_retry(self, exc: _Transient) -> None:
        """Take one retry from the run's budget; raise ModelError when it is used up."""
        with self._lock:
            if self._budget_left <= 0:
                raise ModelError(
                    f"{self.url}: retry budget of {self.config.retry_budget} used up; "
                    f"the server seems unwell, stopping. Last error: {exc}"
                )
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


def _reason(exc: requests.RequestException) -> str:
    """Return why a request could not be sent, without urllib3's wrapping, e.g. "Failed to
    establish a new connection: [Errno 111] Connection refused" (at most 200 characters)."""
    cause = exc.args[0] if exc.args else exc
    cause = getattr(cause, "reason", None) or cause  # urllib3's MaxRetryError holds the real error
    text = re.sub(r"^\w+\(host=[^)]*\): ", "", str(cause))
    return f"{type(exc).__name__}: {text}"[:200]
