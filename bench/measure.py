"""What every benchmark prints beside its figures: the machine's load, and a median with its spread.

A figure taken on a shared machine means little without the load it was taken under, and a
ratio means little without how much it moved between repetitions: ``load_line`` is printed
before and after each measurement, ``spread`` gives "median (min to max, n runs)".
"""

import os
import statistics
from collections.abc import Sequence


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
