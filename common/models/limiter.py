"""How many requests may be in flight at once: a limit that adapts to a server's 429s.

The runner starts ``concurrency`` worker threads (the configured maximum); every HTTP attempt
takes a slot of the shared ``AdaptiveLimiter`` first. The limit starts at the maximum. A 429
Too Many Requests says the server had too many of ours at once: the limit drops to the number
of the other requests still in flight when it came back (what the server was answering), and
never grows back while the server's ``Retry-After`` runs. Otherwise it grows by one after
``limit`` answers in a row (additive increase, as TCP does), never above the maximum: it probes
one above what the server takes, now and then, and comes back down. A burst of 429s brings it
down to what was still answered, and a server answering nothing but 429s (a rate per minute
used up) to 1.

``Retry-After`` is obeyed by the request that got it (the client sleeps before retrying it);
it never pauses the other requests: the limit has already made room, and one pause per 429
for every new attempt cut the requests in flight to a fraction of what the server takes.
``stats`` gives what the run metadata records: the limit at the end and its lowest, the most
and the mean (time-weighted) requests in flight, and how many 429s came back.
"""

import threading
import time
from typing import Any


class AdaptiveLimiter:
    """A semaphore whose size moves between 1 and ``maximum``: down to what the server was
    answering on a 429, +1 after a window of answers; safe to share between threads."""

    def __init__(self, maximum: int):
        self.maximum = maximum
        self.limit = maximum  # how many may be in flight now
        self.lowest = maximum
        self.in_flight = 0
        self.peak = 0  # the most in flight at once
        self.throttled = 0  # 429 answers seen
        self.throttled_in_a_row = 0  # ... since the last answer
        self._ok_in_a_row = 0
        self._hold_until = 0.0  # no growth before this (a Retry-After running)
        self._area = 0.0  # integral of in_flight over time, for the mean
        self._started = self._last = time.monotonic()
        self._cond = threading.Condition()

    def __repr__(self) -> str:
        return f"<AdaptiveLimiter {self.in_flight}/{self.limit} of {self.maximum}>"

    def acquire(self) -> None:
        """Wait for a free slot and take it."""
        with self._cond:
            while self.in_flight >= self.limit:
                self._cond.wait()
            self._account()
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)

    def release(self, answered: bool, throttled: bool = False, retry_after: float | None = None) -> None:
        """Give the slot back: after an answer (``answered``: the limit may grow), a 429
        (``throttled``: the limit drops to the others in flight, and does not grow for
        ``retry_after`` seconds), or another failure (no change)."""
        with self._cond:
            self._account()
            self.in_flight -= 1
            now = time.monotonic()
            if throttled:
                self.throttled += 1
                self.throttled_in_a_row += 1
                self._ok_in_a_row = 0
                self.limit = max(1, min(self.limit, self.in_flight))
                self.lowest = min(self.lowest, self.limit)
                self._hold_until = max(self._hold_until, now + (retry_after or 0.0))
            elif answered:
                self.throttled_in_a_row = 0
                self._ok_in_a_row += 1
                if self._ok_in_a_row >= self.limit and self.limit < self.maximum and now >= self._hold_until:
                    self.limit += 1
                    self._ok_in_a_row = 0
            self._cond.notify_all()

    def stats(self) -> dict[str, Any]:
        """Return what the run metadata records: ``max`` (configured), ``final`` and ``lowest``
        limit, ``peak_in_flight``, ``mean_in_flight`` (time-weighted) and ``throttled`` (429s)."""
        with self._cond:
            self._account()
            elapsed = self._last - self._started
            return {
                "max": self.maximum,
                "final": self.limit,
                "lowest": self.lowest,
                "peak_in_flight": self.peak,
                "mean_in_flight": round(self._area / elapsed, 2) if elapsed else 0.0,
                "throttled": self.throttled,
            }

    def _account(self) -> None:
        """Add the time since the last change, weighted by what was in flight (lock held)."""
        now = time.monotonic()
        self._area += self.in_flight * (now - self._last)
        self._last = now
