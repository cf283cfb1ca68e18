"""Wilson intervals and the exact McNemar test against hand calculations."""

import math

import pytest

from common.stats import mcnemar_exact, wilson_interval


def test_wilson_matches_the_closed_form():
    lo, hi = wilson_interval(0, 10)
    assert lo == 0.0 and hi == pytest.approx(1.959964**2 / (10 + 1.959964**2), rel=1e-6)
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
    assert result.p_value == pytest.approx(2 * (1 + 7) / 2**7)  # P(X <= 1) doubled, X ~ Bin(7, 1/2)
    assert mcnemar_exact([True, False], [True, False]).p_value == 1.0
    assert math.isclose(mcnemar_exact(b, a).p_value, result.p_value)
    with pytest.raises(ValueError):
        mcnemar_exact([True], [True, False])


def test_clustered_wilson_equals_wilson_for_clusters_of_one():
    from common.stats import clustered_wilson_interval

    outcomes = [1] * 40 + [0] * 60
    p, lo, hi = clustered_wilson_interval(outcomes, [1] * 100)
    # cluster-robust variance of singletons is k/(k-1) times the binomial one: n_eff = 99
    assert p == 0.4
    assert (lo, hi) == pytest.approx(wilson_interval(40, 100), abs=0.002)
    assert hi - lo > wilson_interval(40, 100)[1] - wilson_interval(40, 100)[0]


def test_clustered_wilson_counts_identical_variants_once():
    from common.stats import clustered_wilson_interval

    # 20 items answered the same way in all 9 variants: as wide as 20 independent trials, not 180
    p, lo, hi = clustered_wilson_interval([9] * 8 + [0] * 12, [9] * 20)
    assert p == 0.4
    assert (lo, hi) == pytest.approx(wilson_interval(8, 20), abs=0.01)  # n_eff = 19 (k / (k - 1))
    assert hi - lo > 2 * (wilson_interval(72, 180)[1] - wilson_interval(72, 180)[0]) * 0.9
    # all correct: the effective size is the number of clusters
    assert clustered_wilson_interval([3] * 10, [3] * 10)[1:] == pytest.approx(wilson_interval(10, 10))
    assert math.isnan(clustered_wilson_interval([], [])[0])
    with pytest.raises(ValueError):
        clustered_wilson_interval([4], [3])
