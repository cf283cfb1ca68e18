"""bench/bench_scale.py's table, as docs/benchmarks.md shows it: per stage and N, the median of its
repetitions with their range, and the growth exponents fitted on the medians."""

import importlib.util
import sys

from common.paths import ROOT


def load_scale():
    sys.path.insert(0, str(ROOT / "bench"))  # its sibling bench/measure.py
    try:
        spec = importlib.util.spec_from_file_location("bench_scale", ROOT / "bench" / "bench_scale.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(ROOT / "bench"))
    return module


def test_the_table_gives_medians_their_range_and_the_exponent_of_the_medians():
    scale = load_scale()
    rows = {  # [CPU s, wall s, peak MB] of each repetition
        10: {"report": [[1.0, 2.0, 100], [3.0, 2.5, 120], [2.0, 9.0, 110]], "queries": [[0.5, 0.6, 90]] * 3},
        100: {"report": [[20.0, 30.0, 200], [18.0, 25.0, 210], [30.0, 26.0, 190]]},
    }
    lines = scale.table([10, 100], rows, 3).splitlines()
    assert lines[1] == "|" + " --- |" * 5 and len(lines) == 4
    # CPU: medians 2 and 20, log(10) / log(10) = 1; wall: 2.5 and 26, log(10.4) / log(10) = 1.02
    assert (
        lines[2]
        == "| report | 2.00 (1.00-3.00) / 2.50 / 120 | 20.00 (18.00-30.00) / 26.00 / 210 | 1.00 | 1.02 |"
    )
    assert lines[3] == "| queries | 0.50 (0.50-0.50) / 0.60 / 90 | - | - | - |"
