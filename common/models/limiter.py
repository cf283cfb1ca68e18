"""How many requests may be in flight at once: a limit that adapts to a server's 429s (AIMD).

The runner starts ``concurrency`` worker threads (the configured maximum); every HTTP attempt
takes a slot of the shared ``AdaptiveLimiter`` first. The limit starts at the maximum, is
halved when the server answers 429 Too Many Requests (once per cohort: the other 429s of
requests sent before that cut do not halve it again), and grows by one after ``limit``
answers in a row while answers flow (additive increase, multiplicative decrease, as TCP
does), never above the maximum. A ``Retry-After`` pauses every new attempt until it has
passed. ``stats`` gives what the run metadata records: the limit at the end and its lowest,
the most and the mean (time-weighted) requests in flight, and how many 429s came back.
"""

import threading
import time
from typing import Any

RETRY_AFTER_MAX_S = 600.0  # a server's Retry-After is obeyed as given, up to this (guards against nonsense)


class AdaptiveLimiter:
    """A semaphore whose size moves between 1 and ``maximum``: halved on a 429, +1 after a window
    of answers; safe to share between threads."""

    def __init__(self, maximum: int):
        self.maximum = maximum
        self.limit = maximum  # how many may be in flight now
        self.lowest = maximum
        self.in_flight = 0
        self.peak = 0  # the most in flight at once
        self.throttled = 0  # 429 answers seen
        self._ok_in_a_row = 0
        self._cohort = 0  # bumped at each cut: a 429 of an older cohort does not cut again
        self._pause_until = 0.0
        self._area = 0.0  # integral of in_flight over time, for the mean
        self._started = self._last = time.monotonic()
        self._cond = threading.Condition()

    def __repr__(self) -> str:
        return f"<AdaptiveLimiter {self.in_flight}/{self.limit} of {self.maximum}>"

    def acquire(self) -> int:
        """Wait for a free slot (and the end of a Retry-After pause), take it; return the cohort
        to hand back to ``release``."""
        with self._cond:
            while True:
                pause = self._pause_until - time.monotonic()
                if pause > 0:
                    self._cond.wait(pause)
                elif self.in_flight < self.limit:
                    break
                else:
                    self._cond.wait()
            self._account()
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
            return self._cohort

    def release(
        self, cohort: int, answered: bool, throttled: bool = False, retry_after: float | None = None
    ) -> None:
        """Give the slot back: after an answer (``answered``: the limit may grow), a 429
        (``throttled``: the limit is halved unless a cut since ``cohort`` already did, and
        ``retry_after`` seconds pause every new attempt), or another failure (no change)."""
        with self._cond:
            self._account()
            self.in_flight -= 1
            if throttled:
                self.throttled += 1
                self._ok_in_a_row = 0
                if cohort == self._cohort:
                    self.limit = max(1, self.limit // 2)
                    self.lowest = min(self.lowest, self.limit)
                    self._cohort += 1
                if retry_after:
                    until = time.monotonic() + min(RETRY_AFTER_MAX_S, retry_after)
                    self._pause_until = max(self._pause_until, until)
            elif answered:
                self._ok_in_a_row += 1
                if self._ok_in_a_row >= self.limit and self.limit < self.maximum:
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
