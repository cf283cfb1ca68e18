"""Waiting in tests on a shared machine: every timeout scaled by one factor, and polls for events.

A test that starts processes or servers must pass under CPU load, so it never sleeps for a fixed
time hoping something has happened by then (it waits for the thing with ``wait_for``), and every
timeout or upper bound on an elapsed time goes through ``timeout``: seconds on an idle machine,
times ``time_factor()``. The factor is ``TEST_TIME_FACTOR`` when set (e.g. 10 on a very slow
machine), else measured once per test session: the larger of 1, the load average per core, and
how much longer than on an idle machine this interpreter takes to start (``SPAWN_IDLE_S``),
which is what these tests do most.
"""

import functools
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable

SPAWN_IDLE_S = 0.1  # `python -c pass` on the idle 2-core development machine (0.06 to 0.11 s)
POLL_S = 0.01  # how often ``wait_for`` looks


@functools.cache
def time_factor() -> float:
    """Return how many times slower than idle this machine is now (at least 1; see the module doc)."""
    given = os.environ.get("TEST_TIME_FACTOR")
    if given:
        return max(1.0, float(given))
    spawns = []
    for _ in range(3):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        spawns.append(time.perf_counter() - start)
    load_per_core = os.getloadavg()[0] / (os.cpu_count() or 1)
    return max(1.0, load_per_core, statistics.median(spawns) / SPAWN_IDLE_S)


def timeout(seconds: float) -> float:
    """Return ``seconds`` (enough on an idle machine) scaled to this machine's load."""
    return seconds * time_factor()


def wait_for(condition: Callable[[], object], seconds: float, what: str) -> None:
    """Return once ``condition()`` is true; fail the test naming ``what`` when it is still false
    after ``timeout(seconds)``."""
    deadline = time.monotonic() + timeout(seconds)
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting {timeout(seconds):.1f} s for {what}")
        time.sleep(POLL_S)
