"""Several replicas of one model behind separate URLs: which one gets the next request.

``base_url`` in a model config may be a list (vLLM data-parallel replicas, several servers).
``Endpoints.pick`` gives the endpoint with the fewest requests in flight (ties: the one the
asking thread used last, so a worker's conversation stays where its prompt prefix is cached,
e.g. on its slot of an engine, ``engine.py``; then the one that served fewest). An endpoint
that cannot be reached, times out or answers 5xx is set aside for a while (``ASIDE_S``,
doubling with each failure in a row up to ``ASIDE_MAX_S``) and then tried again; meanwhile
the others serve, so the run completes on them. When every endpoint is set aside the one due
back first is tried. ``stats`` gives the requests each endpoint served, for the run metadata.
With one URL there is nothing to choose: it always gets the request.

Which replica answered is never part of a cache key: the cache and the batch files name a
request by the first URL (``Endpoints.canonical``), so answers stay valid whatever the list.
"""

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import requests

from common.models.base import ModelError, ServerUnreachable
from common.models.responses import BAD_URL, failure_reason, json_or_none, server_message

log = logging.getLogger(__name__)

ASIDE_S = 2.0  # an endpoint that failed is set aside this long, doubling with each failure in a row
ASIDE_MAX_S = 60.0
CHECK_TIMEOUT_S = (5.0, 30.0)  # (connect, read) of the one reachability check before the first request
CHECK_ATTEMPTS = 2  # a server that is just starting gets a second chance, one second later


@dataclass
class Endpoint:
    """One server of the list: its URLs and what it did."""

    base_url: str  # as configured, e.g. http://gpu1:8000/v1
    url: str  # the completion route on it
    in_flight: int = 0
    served: int = 0  # requests it answered (any HTTP answer: refusals and 429s too)
    failed: int = 0  # attempts that found it down (connection error, timeout, 5xx)
    failures_in_a_row: int = 0
    aside_until: float = 0.0  # time.monotonic() before which it is not picked (unless all are aside)


class Endpoints:
    """The endpoints of one model; ``pick`` and ``done`` are safe to call from many threads."""

    def __init__(self, base_urls: str | list[str], route: str):
        urls = [base_urls] if isinstance(base_urls, str) else list(base_urls)
        self.all = [Endpoint(base.rstrip("/"), base.rstrip("/") + route) for base in urls]
        self._lock = threading.Lock()
        self._last = threading.local()  # the endpoint each thread used last

    def __repr__(self) -> str:
        return f"<Endpoints {', '.join(e.base_url for e in self.all)}>"

    def __len__(self) -> int:
        return len(self.all)

    @property
    def canonical(self) -> Endpoint:
        """Return the endpoint that names the model in cache keys and batch files: the first."""
        return self.all[0]

    def pick(self) -> Endpoint:
        """Return the endpoint for the next attempt, counted in flight until ``done``."""
        if len(self.all) == 1:
            endpoint = self.all[0]
            with self._lock:
                endpoint.in_flight += 1
            return endpoint
        with self._lock:
            now = time.monotonic()
            ready = [e for e in self.all if e.aside_until <= now]
            if not ready:  # every one is set aside: try the one due back first
                ready = [min(self.all, key=lambda e: e.aside_until)]
            last = getattr(self._last, "endpoint", None)
            endpoint = min(ready, key=lambda e: (e.in_flight, e is not last, e.served))
            endpoint.in_flight += 1
            self._last.endpoint = endpoint
            return endpoint

    def done(self, endpoint: Endpoint, down: bool = False) -> None:
        """Count an attempt on ``endpoint`` as over: it answered, or it was ``down`` (not
        reached, timed out, 5xx), which sets it aside when other endpoints exist."""
        with self._lock:
            endpoint.in_flight -= 1
            if not down:
                endpoint.served += 1
                endpoint.failures_in_a_row = 0
                return
            endpoint.failed += 1
            endpoint.failures_in_a_row += 1
            if len(self.all) > 1:
                pause = min(ASIDE_MAX_S, ASIDE_S * 2 ** (endpoint.failures_in_a_row - 1))
                endpoint.aside_until = time.monotonic() + pause
                if endpoint.failures_in_a_row == 1:
                    log.warning(
                        "%s is not answering; set aside, tried again in %.0f s", endpoint.base_url, pause
                    )

    def others_ready(self, endpoint: Endpoint) -> bool:
        """Return whether another endpoint than ``endpoint`` may be picked now (a retry need not wait)."""
        now = time.monotonic()
        with self._lock:
            return any(e is not endpoint and e.aside_until <= now for e in self.all)

    def set_aside(self, endpoint: Endpoint) -> None:
        """Set ``endpoint`` aside at once (it failed the reachability check)."""
        with self._lock:
            endpoint.failures_in_a_row += 1
            endpoint.aside_until = time.monotonic() + ASIDE_S

    def check_all(self, check: Callable[[str], None]) -> None:
        """Run ``check(base_url)`` (``check_server``) on every endpoint: those that raise
        ServerUnreachable are set aside with a warning, while one answers; raise when none does."""
        unreachable = []
        for endpoint in self.all:
            try:
                check(endpoint.base_url)
            except ServerUnreachable as exc:
                if len(self.all) == 1:
                    raise
                log.warning("%s", exc)
                self.set_aside(endpoint)
                unreachable.append(endpoint.base_url)
        if len(unreachable) == len(self.all):
            raise ServerUnreachable(
                f"no model server answers at any of {', '.join(unreachable)}. Start the servers, or fix "
                "base_url in the model config"
            )

    def stats(self) -> dict[str, dict[str, int]]:
        """Return, per base URL, the requests it ``served`` and the attempts that ``failed`` on it."""
        with self._lock:
            return {e.base_url: {"served": e.served, "failed": e.failed} for e in self.all}


def stats_since(now: dict[str, dict[str, int]], start: dict[str, dict[str, int]]) -> dict[str, Any]:
    """Return one run's share of ``Endpoints.stats`` (``now`` less ``start``, taken when it began)."""
    return {
        url: {name: value - start.get(url, {}).get(name, 0) for name, value in counts.items()}
        for url, counts in now.items()
    }


def warn_unlisted(response: requests.Response, model: str) -> None:
    """Log when a server's model list (``GET /models``, OpenAI format) lacks ``model``: a warning
    when it lists several (the name picks one, so a typo matters), only INFO when it lists one
    (llama.cpp serves the model it loaded whatever the name; vLLM refuses a wrong name with a
    404, which stops the run with its message)."""
    listed = (json_or_none(response) or {}).get("data") if response.ok else None
    if isinstance(listed, list):
        ids = [str(entry.get("id")) for entry in listed if isinstance(entry, dict)]
        if ids and model not in ids:
            log.log(
                logging.WARNING if len(ids) > 1 else logging.INFO,
                "%s does not list model %r (it lists %s); requests may be refused",
                response.url.removesuffix("/models"),
                model,
                ", ".join(ids[:10]),
            )


def check_server(
    session: requests.Session, base_url: str, key: str | None, key_env: str | None, model: str
) -> None:
    """Check that a server answers at ``base_url`` (``GET /models`` through ``session``).

    Raises ServerUnreachable naming the URL and the fix when nothing listens there (after
    CHECK_ATTEMPTS tries a second apart), ModelError when the server rejects the key (401/403,
    naming the variable ``key_env``, never the ``key``). Any other answer means a server is up;
    a model list without ``model`` only logs (``warn_unlisted``).
    """
    url = base_url.rstrip("/") + "/models"
    for attempt in range(1, CHECK_ATTEMPTS + 1):
        try:
            response = session.get(url, timeout=CHECK_TIMEOUT_S)
            break
        except requests.exceptions.ReadTimeout:
            return  # connected, only slow to list its models: it is up
        except BAD_URL as exc:
            raise ModelError(f"{url}: not a usable URL, check base_url: {exc}") from None
        except requests.RequestException as exc:
            if attempt == CHECK_ATTEMPTS:
                raise ServerUnreachable(
                    f"no model server answers at {base_url} ({failure_reason(exc, key)}). "
                    "Start the server, or fix base_url in the model config (or override it: "
                    "--set base_url=..., or under make: SET=base_url=...)"
                ) from None
            time.sleep(1.0)
    if response.status_code in (401, 403):
        raise ModelError(
            f"{url}: the server rejects the API key with HTTP {response.status_code}: "
            f"{server_message(response, key)}; check the key in {key_env or 'the variable api_key_env names'}"
        )
    warn_unlisted(response, model)
