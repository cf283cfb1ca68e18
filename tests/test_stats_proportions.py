"""Wilson intervals and the exact McNemar test against hand calculations."""

import math

import pytest

from common.stats import mcnemar_exact, wilson_interval


def test_wilson_matches_the_closed_form():
    lo, hi = wilson_interval(0, 10)
    assert lo == 0.0 and hi == pytest.approx(1.959964 ** 2 / (10 + 1.959964 ** 2), rel=1e-6)
    lo, hi = wilson_interval(40, 100)
    assert (round(lo, 4), round(hi, 4)) == (0.3094, 0.4980)
    assert wilson_interval(5, 5)[1] == 1.0 and wilson_interval(0, 0) == (0.0, 1.0)
    lo90, hi90 = wilson_interval(40, 100, confidence=0.90)
    assert lo < lo90 < hi90 < hi


def test_wilson_rejects_impossible_counts():
    with pytest.raises(ValueError):
        wilson_interval(11, 10)


def test_exact_mcnemar_uses_only_discordant_pairs():
    a = [True] * 6 + [False] * 1 + [True] * 10 + [False] * 3
    b = [False] * 6 + [True] * 1 + [True] * 10 + [False] * 3
    result = mcnemar_exact(a, b)
    assert (result.only_a, result.only_b) == (6, 1)
    assert result.p_value == pytest.approx(2 * (1 + 7) / 2 ** 7)  # P(X <= 1) doubled, X ~ Bin(7, 1/2)
    assert mcnemar_exact([True, False], [True, False]).p_value == 1.0
    assert math.isclose(mcnemar_exact(b, a).p_value, result.p_value)
    with pytest.raises(ValueError):
        mcnemar_exact([True], [True, False])
