"""What every benchmark prints beside its figures: the machine's load, and a median with its spread.

A figure taken on a shared machine means little without the load it was taken under, and a
ratio means little without how much it moved between repetitions: ``load_line`` is printed
before and after each measurement, ``spread`` gives "median (min to max, n runs)".
"""

import os
import statistics
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path


def load_line() -> str:
    """Return one line naming the cores and the load averages (1, 5, 15 min, ``os.getloadavg``)."""
    one, five, fifteen = os.getloadavg()
    cores = os.cpu_count()
    return f"machine load: {one:.1f} {five:.1f} {fifteen:.1f} (1, 5, 15 min averages) on {cores} cores"


def spread(values: Sequence[float], form: str = "{:.2f}") -> str:
    """Return the median of ``values`` with their range and count, each written with ``form``:
    "1.95 (1.90 to 1.98, 9 runs)"."""
    low, middle, high = min(values), statistics.median(values), max(values)
    runs = f"{len(values)} run" + ("s" if len(values) != 1 else "")
    return f"{form.format(middle)} ({form.format(low)} to {form.format(high)}, {runs})"


def run_timed(command: Sequence[str], cwd: Path, env: Mapping[str, str]) -> tuple[float, float]:
    """Run ``command`` in ``cwd`` to completion; return its CPU seconds (user + system, of the
    process and every child it waited for: ``os.wait4``) and its wall seconds. Raises SystemExit
    naming the command, with the end of its output, when it fails."""
    with tempfile.TemporaryFile() as output:
        start = time.perf_counter()
        process = subprocess.Popen(
            list(command), cwd=cwd, stdout=output, stderr=subprocess.STDOUT, env=dict(env)
        )
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - start
        if os.waitstatus_to_exitcode(status):
            output.seek(0)
            tail = output.read()[-3000:].decode(errors="replace")
            raise SystemExit(f"{' '.join(command)} failed in {cwd}:\n{tail}")
    return usage.ru_utime + usage.ru_stime, wall
