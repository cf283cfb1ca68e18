"""The HTTP client for OpenAI-compatible servers (OpenAI, vLLM, llama.cpp, Ollama, TGI, ...).

Plain ``requests``, one Session per worker thread, a (connect, read) timeout on every request.
A reply's answer is kept apart from a reasoning model's thinking (``responses.reply_parts``), and
its usage gives the reasoning and prompt-cache tokens where the server reports them.
Connection errors, timeouts, 408, 429, 5xx and unreadable bodies are retried with exponential
backoff and jitter, honouring ``Retry-After``, up to ``max_retries`` per request and
``retry_budget`` per run (429s count against neither: see below). A 400 (413, 422) that
concerns this one request, told apart by the OpenAI error ``code``/``type`` and the message
(``classify_refusal``: context length exceeded, content filter, a prompt that cannot be
tokenized), raises RequestRefused: the runner records the item and goes on. Any other 4xx means
every request would fail (bad key, unknown model, wrong URL, a request field the model does not
take, named with the config field to change): the run stops at once with the server's message.
Before its first real request the model checks once that the server answers at all
(``GET /models``), so a server that is down is reported in seconds instead of after every
item's backoff. The API key is sent in the Authorization header only and is masked out of every
message this module produces.

``base_url`` may be a list of replicas: each attempt goes to the one with the fewest requests in
flight, and one that stops answering is set aside while the others serve (``endpoints``). Every
attempt takes a slot of an ``AdaptiveLimiter`` (``limiter``), which lowers the requests in
flight on a 429 to what the server was answering and grows them back while answers flow. A
429's ``Retry-After`` delays the retry of that request alone (and holds the limit meanwhile);
429s are retried without spending ``max_retries`` or the run's retry budget, unless the server
answers nothing but 429s for ``THROTTLED_IN_A_ROW`` attempts (a quota used up): the run stops.
In batch mode (``batch`` set, ``common.models.batch``) a request the cache cannot answer is
not sent: it waits for the next batch (``Deferred``).

When the model samples (temperature not 0), a request belongs to its item (``independence``):
its cache key and the seed sent are the item's own, so two items whose requests coincide never
share a reply.
"""

import logging
import random
import threading
import time
from typing import Any

import requests
from requests.adapters import HTTPAdapter

from common.models import independence
from common.models.base import (
    Counters,
    Deferred,
    Message,
    ModelError,
    Reply,
    RequestFailed,
    RequestRefused,
)
from common.models.cache import ResponseCache, canonical_json, key_of_canonical
from common.models.config import ModelConfig
from common.models.endpoints import Endpoint, Endpoints, check_server
from common.models.engine import Engine, identity
from common.models.limiter import AdaptiveLimiter
from common.models.payload import request_body
from common.models.responses import (
    BAD_URL,
    cache_entry,
    classify_refusal,
    json_or_none,
    mask_key,
    read_environment_once,
    rejected_images,
    rejected_setting,
    reply_from_cache,
    reply_of,
    retry_after,
    server_message,
    worth_caching,
)

log = logging.getLogger(__name__)

RETRY_STATUSES = frozenset({408, 429})  # plus every 5xx; other 4xx are never retried
RETRY_AFTER_MAX_S = 600.0  # a server's Retry-After is obeyed as given, up to this (guards against nonsense)
THROTTLED_IN_A_ROW = 50  # 429s with no answer between them (at least, or 4 x concurrency) stop the run
JSON = {"Content-Type": "application/json"}


class _Transient(Exception):
    """A failure worth retrying; ``retry_after`` is the server's wish in seconds, if it said one;
    ``down``: the endpoint did not answer (or 5xx), ``throttled``: it said 429."""

    def __init__(
        self, message: str, retry_after: float | None = None, down: bool = False, throttled: bool = False
    ):
        super().__init__(message)
        self.retry_after = retry_after
        self.down, self.throttled = down, throttled


class HTTPModel:
    """A model behind an OpenAI-compatible endpoint; ``complete`` is safe to call from many threads."""

    def __init__(
        self,
        config: ModelConfig,
        cache: ResponseCache | None = None,
        counters: Counters | None = None,
        reask_truncated: bool = False,
        offline: bool = False,
    ):
        self.config = config
        self.offline = offline  # builds requests (--dry-run) but never sends one: needs no key
        self.reask_truncated = reask_truncated  # a cached reply cut at the token limit is asked again
        self.name = config.name
        self.concurrency = config.concurrency
        self.samples = config.samples  # the runner asks each item this many times (item["draw"])
        self.vision = config.vision  # whether its requests may carry pictures (the runner checks items)
        self.cache = cache
        self.counters = counters or Counters()
        self.route = "/chat/completions" if config.api == "chat" else "/completions"
        # an engine the run starts (config.engine): its servers' URLs are known once it is up, and
        # its requests are named in the cache by what it serves (``engine.identity``), not a port
        self.engine = Engine(config) if config.engine and not offline else None
        self._serving = False  # the engine is up and its servers are the endpoints
        self.endpoints = Endpoints(identity(config) if config.engine else config.base_url, self.route)
        self.url = self.endpoints.canonical.url  # names requests in the cache, whichever replica answers
        self.limiter = AdaptiveLimiter(config.concurrency)
        self.batch: Any = None  # batch mode: the round collecting requests (common.models.batch)
        # ConfigError now, before any work, if the variable is unset (a dry run sends nothing: no key)
        self._key = None if offline else config.api_key()
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

    def run_stats(self) -> dict[str, Any]:
        """Return what the run metadata records of the transport: requests per endpoint
        (``endpoints``) and the concurrency reached (``concurrency``, ``AdaptiveLimiter.stats``)."""
        return {"endpoints": self.endpoints.stats(), "concurrency": self.limiter.stats()}

    def payload(
        self, messages: list[Message], draw: int = 0, item_identity: str | None = None
    ) -> dict[str, Any]:
        """Return the JSON body for ``messages`` (``payload.request_body``: chat messages or a
        completions prompt, the settings the config sets, the seed of the draw or the item)."""
        return request_body(self, messages, draw, item_identity)

    def complete(self, messages: list[Message], item: dict[str, Any] | None = None) -> Reply:
        """Return the model's reply, from the cache when this exact request was answered before
        (for the same ``item["draw"]``: each of an item's repeated answers is cached apart; when the
        model samples, for the same item: ``independence``).

        Raises RequestFailed when the request still fails after its retries, ModelError when
        the run must stop. Replies with an answer are cached, and so are replies cut at the
        token limit (an outcome: a rerun does not pay for it again, unless ``reask_truncated``);
        errors and other empty replies never are.
        """
        draw = int((item or {}).get("draw") or 0)
        sampled = independence.samples(self.config.temperature)
        ident = independence.identity(item) if sampled else None
        body = self.payload(messages, draw, ident)
        text = canonical_json(body)  # encoded once: for the cache key and to send
        key = (
            independence.keyed(key_of_canonical(self.url, text, draw), ident)
            if self.cache is not None
            else ""
        )
        if self.batch is not None and (imported := self.batch.imported(key)) is not None:
            return imported  # answered by a batch during this run: as a live answer (or its refusal)
        hit = self.cache.get(key) if self.cache is not None else None
        if hit is not None and not (self.reask_truncated and hit.get("finish_reason") == "length"):
            self.counters.add(cache_hits=1)
            return reply_from_cache(hit)
        if self.batch is not None:
            self.batch.defer(key, body, item or {})
            raise Deferred(key)
        self.start_engine()
        self.check_endpoint()
        reply = self._post_with_retries(body, text.encode("utf-8"))
        self.counters.add(
            prompt_tokens=reply.prompt_tokens,
            completion_tokens=reply.completion_tokens,
            reasoning_tokens=reply.reasoning_tokens,
            cached_tokens=reply.cached_tokens,
        )
        if self.cache is not None and worth_caching(reply):
            self.cache.put(key, cache_entry(reply))
        return reply

    def start_engine(self) -> None:
        """Start the engine of the config (``engine``), unless it is up or there is none; its
        servers become the endpoints. Called before the first request the cache cannot answer."""
        if self.engine is None or self._serving:
            return
        with self._check_lock:
            if not self._serving:
                self.endpoints = Endpoints(self.engine.start(), self.route)
                self._serving = True

    def check_endpoint(self) -> None:
        """Check once that the server answers (``GET <base_url>/models``); later calls return at once.
        For an engine not started yet (``start_engine``), only that it can start (``Engine.check``).

        Raises ServerUnreachable naming the URL and the fix when nothing listens there (after
        CHECK_ATTEMPTS tries a second apart), ModelError when the server rejects the key (401/403).
        Any other answer means a server is up; a model list without the configured model only
        logs a warning (some servers accept any name). Runs of cached answers never call it.
        """
        if self.engine is not None and not self._serving:
            self.engine.check()
            return
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
        """Do the check of ``check_endpoint`` on every endpoint (``endpoints.check_server``)."""
        session = self._session()
        config = self.config
        self.endpoints.check_all(
            lambda base_url: check_server(session, base_url, self._key, config.api_key_env, config.model)
        )

    def close(self) -> None:
        """Close every thread's Session, and the cache (committing what it holds in memory); stop
        the engine the run started."""
        if self.engine is not None:
            self.engine.stop()
        if self.cache is not None:
            self.cache.close()
        with self._lock:
            for session in self._sessions:
                session.close()
            self._sessions.clear()
        self._local = threading.local()

    # ---- one request, retried --------------------------------------------------------------
    def _post_with_retries(self, body: dict[str, Any], sent: bytes) -> Reply:
        """Return the reply to ``body``, retrying transient failures (see the module docstring):
        each attempt on the endpoint with the fewest in flight, within the limiter's slots."""
        attempt = failed = 0  # failed: attempts that count against max_retries (429s do not)
        while True:
            attempt += 1
            endpoint = self.endpoints.pick()
            self.limiter.acquire()
            try:
                reply = self._post_once(body, sent, endpoint)
            except _Transient as exc:
                wish = None if exc.retry_after is None else min(RETRY_AFTER_MAX_S, exc.retry_after)
                self.limiter.release(answered=False, throttled=exc.throttled, retry_after=wish)
                self.endpoints.done(endpoint, down=exc.down)
                failed += not exc.throttled
                if failed > self.config.max_retries:
                    raise RequestFailed(f"{endpoint.url}: {exc} (gave up after {attempt} attempts)") from None
                self._spend_retry(exc)
                delay = self._delay(attempt, exc, endpoint)
                log.debug("%s: %s; retry %d in %.2f s", endpoint.url, exc, attempt, delay)
                time.sleep(delay)
                continue
            except BaseException:
                self.limiter.release(answered=False)
                self.endpoints.done(endpoint)
                raise
            self.limiter.release(answered=True)
            self.endpoints.done(endpoint)
            reply.attempts = attempt
            return reply

    def _post_once(self, body: dict[str, Any], sent: bytes, endpoint: Endpoint) -> Reply:
        """Return the reply of one POST of ``body`` (``sent``: it as JSON bytes) to ``endpoint``;
        raise _Transient (retry) or ModelError (stop)."""
        start = time.monotonic()
        self.counters.add(requests=1)  # every attempt, also those that time out or cannot connect
        url = endpoint.url
        try:
            response = self._session().post(
                url, data=sent, headers=JSON, timeout=tuple(self.config.timeout_s)
            )
        except BAD_URL as exc:
            raise ModelError(f"{url}: not a usable URL, check base_url: {exc}") from None
        except requests.Timeout as exc:
            message = f"timed out ({type(exc).__name__}, timeout_s={self.config.timeout_s})"
            raise _Transient(message, down=True) from None
        except requests.RequestException as exc:  # refused, reset, dropped, ...
            raise _Transient(f"connection failed: {mask_key(str(exc), self._key)[:300]}", down=True) from None
        latency = time.monotonic() - start
        status = response.status_code
        if status in (400, 500) and (fix := rejected_images(body, server_message(response, self._key))):
            raise ModelError(f"{url}: {fix} (HTTP {status}: {server_message(response, self._key)})")
        if status == 500 and classify_refusal(status, None, server_message(response, self._key)):
            raise RequestRefused(
                "context_length_exceeded", f"HTTP 500: {server_message(response, self._key)}"
            )
        if status in RETRY_STATUSES or status >= 500:
            raise _Transient(
                f"HTTP {status}: {server_message(response, self._key)}",
                retry_after(response.headers.get("Retry-After")),
                down=status >= 500,
                throttled=status == 429,
            )
        if status >= 400:
            message = server_message(response, self._key)
            if status == 400 and (fix := rejected_setting(json_or_none(response), message, body)):
                raise ModelError(f"{url}: {fix} (HTTP 400: {message})")
            kind = classify_refusal(status, json_or_none(response), message)
            if kind is not None:
                raise RequestRefused(kind, f"HTTP {status}: {message}")
            raise ModelError(
                f"{url}: the server refused the request with HTTP {status} (not retried): {message}"
            )
        try:
            return reply_of(response.json(), chat=self.config.api == "chat", latency_s=latency)
        except (ValueError, KeyError, IndexError, TypeError, AttributeError):
            raise _Transient(
                f"malformed response body: {mask_key(response.text, self._key)[:200]!r}"
            ) from None

    def _spend_retry(self, exc: _Transient) -> None:
        """Take one retry from the run's budget; raise ModelError when it is used up. A 429 takes
        none (the limiter slows down instead) unless the server has answered nothing but 429s
        for ``THROTTLED_IN_A_ROW`` (at least, or 4 x concurrency) attempts: then the run stops,
        as a quota used up would otherwise be asked forever."""
        if exc.throttled:
            self.counters.add(retries=1, throttled=1)
            in_a_row = self.limiter.throttled_in_a_row
            if in_a_row >= max(THROTTLED_IN_A_ROW, 4 * self.limiter.maximum):
                raise ModelError(
                    f"{self.url}: {in_a_row} answers in a row were 429 Too Many Requests and none "
                    f"an answer; is the account's quota used up? Last: {exc}"
                )
            return
        with self._lock:
            if self._budget_left <= 0:
                raise ModelError(
                    f"{self.url}: retry budget of {self.config.retry_budget} used up; "
                    f"the server seems unwell, stopping. Last error: {exc}"
                )
            self._budget_left -= 1
        self.counters.add(retries=1)

    def _delay(self, attempt: int, exc: _Transient, endpoint: Endpoint) -> float:
        """Return seconds to wait before retry ``attempt``: Retry-After if given, none when another
        endpoint can take the retry of a request ``endpoint`` failed, else jittered backoff."""
        if exc.retry_after is not None:
            return min(RETRY_AFTER_MAX_S, exc.retry_after)
        if exc.down and self.endpoints.others_ready(endpoint):
            return 0.0
        ceiling = min(self.config.backoff_max_s, self.config.backoff_s * 2 ** (attempt - 1))
        return ceiling / 2 + self._jitter.uniform(0, ceiling / 2)  # "equal jitter": never zero, spread out

    @property
    def api_key(self) -> str | None:
        """Return the key this model sends (for masking it out of messages; never to be written)."""
        return self._key

    def session(self) -> requests.Session:
        """Return this thread's Session (the Batch API calls go through it too)."""
        return self._session()

    def _session(self) -> requests.Session:
        """Return this thread's Session (keep-alive, no automatic retries), creating it on first use."""
        session = getattr(self._local, "session", None)
        if session is None:
            if self.offline:
                raise ModelError(f"{self.name}: built for a dry run, which sends no request")
            session = requests.Session()
            adapter = HTTPAdapter(pool_connections=len(self.endpoints), pool_maxsize=1)
            session.mount(self.url.split("/", 3)[0] + "//", adapter)
            if self._key:
                session.headers["Authorization"] = f"Bearer {self._key}"
            read_environment_once(session, tls=any(e.url.startswith("https:") for e in self.endpoints.all))
            self._local.session = session
            with self._lock:
                self._sessions.append(session)
        return session
