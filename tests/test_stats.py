"""Every statistic of common/stats.py against scipy or a hand calculation on a tiny example."""

import math

import numpy as np
import pandas as pd
import pytest
import scipy.stats

from common import stats
from common.stats import (
    clustered_wilson_interval,
    collapse_equal_weight,
    group_stats,
    kaplan_meier,
    logrank,
    mean_interval,
    paired_exact_test,
    paired_survival_test,
    paired_t_test,
    pairwise_exact_tests,
    share_interval,
    wilson_interval,
)

Z = 1.959964


# ---- proportions ------------------------------------------------------------------------------------
def test_wilson_matches_the_closed_form():
    lo, hi = wilson_interval(0, 10)
    assert lo == 0.0 and hi == pytest.approx(Z**2 / (10 + Z**2), rel=1e-6)
    lo, hi = wilson_interval(40, 100)
    assert (round(lo, 4), round(hi, 4)) == (0.3094, 0.4980)
    assert wilson_interval(5, 5)[1] == 1.0 and wilson_interval(0, 0) == (0.0, 1.0)
    lo90, hi90 = wilson_interval(40, 100, confidence=0.90)
    assert lo < lo90 < hi90 < hi


def test_wilson_rejects_impossible_counts():
    with pytest.raises(ValueError):
        wilson_interval(11, 10)


def test_share_interval_is_the_share_with_its_wilson_interval():
    # 3 of 10 by hand: centre (0.3 + z^2/20) / (1 + z^2/10), half-width z sqrt(0.021 + z^2/400) / (1 + z^2/10)
    centre = (0.3 + Z**2 / 20) / (1 + Z**2 / 10)
    half = Z * math.sqrt(0.3 * 0.7 / 10 + Z**2 / 400) / (1 + Z**2 / 10)
    assert share_interval(3, 10) == pytest.approx((0.3, centre - half, centre + half), rel=1e-6)
    assert [round(x, 4) for x in share_interval(3, 10)] == [0.3, 0.1078, 0.6032]
    share, lo, hi = share_interval(0, 0)
    assert math.isnan(share) and (lo, hi) == (0.0, 1.0)


def test_clustered_wilson_equals_wilson_for_clusters_of_one():
    outcomes = [1] * 40 + [0] * 60
    p, lo, hi = clustered_wilson_interval(outcomes, [1] * 100)
    # cluster-robust variance of singletons is k/(k-1) times the binomial one: n_eff = 99
    assert p == 0.4
    assert (lo, hi) == pytest.approx(wilson_interval(40, 100), abs=0.002)
    assert hi - lo > wilson_interval(40, 100)[1] - wilson_interval(40, 100)[0]


def test_clustered_wilson_counts_identical_variants_once():
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


# ---- means --------------------------------------------------------------------------------------------
def test_mean_interval_is_the_mean_plus_minus_1_96_standard_errors():
    # [1, 2, 3, 4]: mean 2.5, sample sd sqrt(5/3), half-width 1.959964 sqrt(5/3) / 2
    half = Z * math.sqrt(5 / 3) / 2
    assert mean_interval([1, 2, 3, 4]) == pytest.approx((2.5, 2.5 - half, 2.5 + half))
    assert mean_interval([1, 2, 3, 4, math.nan]) == pytest.approx((2.5, 2.5 - half, 2.5 + half))
    assert mean_interval([1, 2, 3, 4], bounds=(2.0, 3.0)) == (2.5, 2.0, 3.0)  # clipped to the range
    assert mean_interval([7.0]) == (7.0, 7.0, 7.0)  # no spread to estimate
    assert all(math.isnan(x) for x in mean_interval([]))


# ---- the exact paired test ----------------------------------------------------------------------------
def test_exact_paired_test_of_binary_outcomes_is_mcnemar_on_the_discordant_pairs():
    a = [True] * 6 + [False] * 1 + [True] * 10 + [False] * 3
    b = [False] * 6 + [True] * 1 + [True] * 10 + [False] * 3
    result = paired_exact_test(a, b)
    assert (result.a_better, result.b_better) == (6, 1)
    assert result.p == pytest.approx(2 * (1 + 7) / 2**7)  # P(X <= 1) doubled, X ~ Bin(7, 1/2)
    assert result.p == pytest.approx(scipy.stats.binomtest(6, 7).pvalue)
    assert paired_exact_test(b, a).p == pytest.approx(result.p)
    with pytest.raises(ValueError):
        paired_exact_test([True], [True, False])


def test_exact_paired_test_of_scores_is_the_sign_test_and_ties_carry_nothing():
    a = [0.5, 1.0, 0.9, 0.7, 0.4, 0.6, 0.3]
    b = [0.3, 1.0, 0.2, 0.1, 0.0, 0.5, 0.3]  # a higher on 5 units, 2 ties
    result = paired_exact_test(a, b)
    assert (result.a_better, result.b_better, result.p) == (5, 0, pytest.approx(2 / 2**5))
    # no untied unit: the only split (0 against 0) has probability 1, so p is 1.0 (not NaN)
    assert paired_exact_test([True, False], [True, False]) == stats.PairedTest(0, 0, 1.0)
    assert paired_exact_test([], []).p == 1.0


def test_pairwise_exact_tests_compare_every_two_runs_on_the_units_both_scored():
    scores = pd.DataFrame(
        {
            "x": [1.0, 1.0, 0.0, 1.0, np.nan],
            "y": [0.0, 1.0, 0.0, np.nan, np.nan],
            "z": [np.nan, np.nan, np.nan, np.nan, 1.0],
        }
    )
    table = pairwise_exact_tests(scores)
    assert list(table.columns) == ["a", "b", "n", "a_better", "b_better", "p"]
    # x-y share units 0..2 (x better on 0); x-z and y-z share none: left out
    assert table.to_dict("records") == [{"a": "x", "b": "y", "n": 3, "a_better": 1, "b_better": 0, "p": 1.0}]
    booleans = pd.DataFrame({"r": [True, True, None], "s": [False, True, False]})
    assert pairwise_exact_tests(booleans)[["n", "a_better", "b_better"]].values.tolist() == [[2, 1, 0]]
    assert pairwise_exact_tests(scores[["x"]]).empty


def test_paired_t_test_matches_scipy():
    a, b = [1.0, 1.0, 0.5, 1.0, 0.5, 1.0], [0.5, 1.0, 0.0, 0.5, 0.5, 0.0]
    test = paired_t_test(a, b)
    expected = scipy.stats.ttest_rel(a, b)
    assert (test.mean_a, test.mean_b, test.diff) == pytest.approx((5 / 6, 2.5 / 6, 2.5 / 6))
    assert test.p == pytest.approx(expected.pvalue)
    assert (test.low, test.high) == pytest.approx(tuple(expected.confidence_interval(0.95)))
    same = paired_t_test([1.0, 0.5], [0.5, 0.0])  # every difference 0.5: nothing to test
    assert (same.low, same.high) == (0.5, 0.5) and math.isnan(same.p)
    with pytest.raises(ValueError):
        paired_t_test([1.0], [0.0])


@pytest.mark.parametrize("levels", [2, 4, None])  # outcomes, shares of 3 variants, any score (no levels)
def test_every_pair_at_once_is_each_pair_tested_alone(levels):
    """pairwise_exact_tests (matrix products per score level, or blocks of comparisons past
    LEVELS) and pairwise_t_tests (sums from matrix products) give what the one-pair tests give,
    on units with missing scores, with runs identical or shifted by a constant (nothing to test)."""
    rng = np.random.default_rng(levels or 0)
    values = rng.random((300, 7)) if levels is None else rng.integers(0, levels, (300, 7)) / (levels - 1)
    values[rng.random(values.shape) < 0.15] = np.nan
    values[:, 1] = values[:, 0]  # identical runs
    values[:, 3] = values[:, 2] + 0.25  # every difference the same
    scores = pd.DataFrame(values, columns=[f"r{i}" for i in range(7)])
    table = pairwise_exact_tests(scores)
    ttests = stats.pairwise_t_tests(scores, list(zip(table["a"], table["b"], strict=True)))
    assert len(table) == 21
    for row, means in zip(table.to_dict("records"), ttests.to_dict("records"), strict=True):
        both = scores[[row["a"], row["b"]]].dropna()
        alone = paired_exact_test(both[row["a"]].tolist(), both[row["b"]].tolist())
        assert (row["n"], row["a_better"], row["b_better"]) == (len(both), alone.a_better, alone.b_better)
        assert row["p"] == pytest.approx(alone.p, rel=1e-9)
        one = paired_t_test(both[row["a"]], both[row["b"]])
        assert math.isnan(means["p"]) == math.isnan(one.p), (row["a"], row["b"])
        got = [means[k] for k in ("mean_a", "mean_b", "diff", "low", "high")]
        assert got == pytest.approx(
            [one.mean_a, one.mean_b, one.diff, one.low, one.high], rel=1e-9, abs=1e-12
        )
        assert math.isnan(one.p) or means["p"] == pytest.approx(one.p, rel=1e-7)
    flat = ttests[(table["a"] == "r2") & (table["b"] == "r3")].iloc[0]
    assert math.isnan(flat["p"]) and flat["low"] == flat["high"] == pytest.approx(-0.25)


# ---- grouped means with equal re-weighting --------------------------------------------------------------
@pytest.fixture
def sizes() -> pd.DataFrame:
    """Model M: size 1 scores 0 and 1 (mean 0.5, sample variance 0.5), size 2 four times 1."""
    return pd.DataFrame({"model": ["M"] * 6, "size": [1, 1, 2, 2, 2, 2], "v": [0.0, 1.0, 1.0, 1.0, 1.0, 1.0]})


def test_group_stats_are_the_plain_group_statistics(sizes):
    table = group_stats(sizes, ["model", "size"], "v")
    assert table.loc[("M", 1)].to_dict() == pytest.approx(
        {"mean": 0.5, "sem": 0.5, "count": 2, "var": 0.5, "std": math.sqrt(0.5)}
    )
    assert table.loc[("M", 2)].to_dict() == pytest.approx(
        {"mean": 1.0, "sem": 0.0, "count": 4, "var": 0.0, "std": 0.0}
    )


def test_collapse_equal_weight_by_hand(sizes):
    fine = group_stats(sizes, ["model", "size"], "v")
    # rebalanced: each size counts min(2, 4) = 2; mean (2*0.5 + 2*1)/4 = 0.75;
    # mean of squares (2*(0.5 + 0.25) + 2*(0 + 1))/4 = 0.875; var 0.875 - 0.75^2 = 0.3125
    even = collapse_equal_weight(fine, ["model"]).loc["M"]
    assert even.to_dict() == pytest.approx(
        {"count": 4, "mean": 0.75, "var": 0.3125, "std": math.sqrt(0.3125), "sem": math.sqrt(0.3125) / 2}
    )
    # as counted: mean 5/6, mean of squares (2*0.75 + 4*1)/6 = 11/12, var 11/12 - 25/36 = 2/9
    plain = collapse_equal_weight(fine, ["model"], rebalance=False).loc["M"]
    assert (plain["count"], plain["mean"], plain["var"]) == pytest.approx((6, 5 / 6, 2 / 9))
    # a fine group of one value contributes a variance of 0 (its sample variance is undefined)
    single = group_stats(sizes.iloc[[0, 2, 3]], ["model", "size"], "v")
    assert collapse_equal_weight(single, ["model"]).loc["M", "var"] == pytest.approx(0.25)


# ---- survival --------------------------------------------------------------------------------------------
def test_kaplan_meier_and_its_band_by_hand():
    # failures at 2, 3, 3, 5; censored at 3 (still at risk at 3) and 4
    curve = kaplan_meier([2, 3, 3, 5], [3, 4], range(7)).set_index("time")
    assert curve["survival"].tolist() == pytest.approx([1, 1, 5 / 6, 5 / 6 * 3 / 5, 0.5, 0, 0])
    # log-log band at t = 2: var(log S) = d / (n (n - d)) = 1/30 (Greenwood), S^exp(+-z se / |log S|)
    s, se = 5 / 6, math.sqrt(1 / 30) / abs(math.log(5 / 6))
    z = scipy.stats.norm.ppf(0.975)
    assert curve.loc[2, ["lo", "hi"]].tolist() == pytest.approx(
        [s ** math.exp(z * se), s ** math.exp(-z * se)]
    )
    assert curve.loc[5, ["lo", "hi"]].tolist() == [0, 0]  # nobody at risk after: the estimate itself


def test_kaplan_meier_is_undefined_past_a_last_censoring():
    curve = kaplan_meier([1], [3], range(5)).set_index("time")
    assert curve.loc[:3, "survival"].tolist() == [1, 0.5, 0.5, 0.5]
    assert curve.loc[4].isna().all()  # nobody followed after 3: not 0.5 carried on
    assert kaplan_meier([], [], [0, 1])["survival"].isna().all()


def test_logrank_by_hand():
    # a fails at 1, 2, 3 (censored at 4); b fails at 5, 6 (censored at 7, 8). Expected failures of a
    # at 1, 2, 3: 4/8 + 3/7 + 2/6; variances 1/4 + 12/49 + 2/9 (b alone at risk after 4)
    observed_minus_expected = 3 - (4 / 8 + 3 / 7 + 2 / 6)
    z = observed_minus_expected / math.sqrt(1 / 4 + 12 / 49 + 2 / 9)
    statistic, p = logrank([1, 2, 3], [4], [5, 6], [7, 8])
    assert statistic == pytest.approx(z) and p == pytest.approx(2 * scipy.stats.norm.sf(z))
    assert logrank([5, 6], [7, 8], [1, 2, 3], [4])[0] == pytest.approx(-z)  # a survives longer: z < 0
    assert all(math.isnan(x) for x in logrank([], [3, 4], [], [5]))  # no failure: nothing to compare


def test_paired_survival_test_counts_only_what_censoring_decides():
    # unit: (a lasted, a failed, b lasted, b failed)
    units = [
        (5, True, 3, True),  # both failed, a later: a
        (2, True, 4, True),  # both failed, b later: b
        (6, False, 3, True),  # a censored after b failed: a
        (3, False, 3, True),  # a censored when b failed: undecided
        (2, False, 4, True),  # a censored before b failed: undecided
        (4, True, 4, True),  # the same failure time: a tie
        (7, False, 7, False),  # both censored: nothing to tell
        (1, True, 9, False),  # b censored after a failed: b
    ]
    a, fa, b, fb = (list(column) for column in zip(*units, strict=True))
    test = paired_survival_test(a, fa, b, fb)
    assert (test.a_better, test.b_better) == (2, 2)
    assert test.p == pytest.approx(scipy.stats.binomtest(2, 4).pvalue)
    assert paired_survival_test(b, fb, a, fa) == stats.PairedTest(2, 2, test.p)
    with pytest.raises(ValueError):
        paired_survival_test([1], [True], [1, 2], [True, True])


def test_logrank_without_variance_is_nan_and_quiet(recwarn):
    # both groups fail all at once at the same time: nothing to compare, no scipy warning
    z, p = logrank([1, 1, 1], [], [1, 1], [])
    assert math.isnan(z) and math.isnan(p) and not recwarn.list


def test_mean_over_runs_gives_both_standard_errors():
    """Seeds 2, 4, 9: population SD sqrt(26/3), sample SD sqrt(13), each over sqrt 3; NaN seeds
    (a metric a seed could not measure) are dropped; one value has no standard error."""
    mean, se_population, se_sample = stats.mean_over_runs([2.0, 4.0, math.nan, 9.0])
    assert mean == 5.0
    assert se_population == pytest.approx(math.sqrt(26 / 3) / math.sqrt(3))
    assert se_sample == pytest.approx(math.sqrt(13) / math.sqrt(3))
    assert se_sample / se_population == pytest.approx(math.sqrt(3 / 2))  # always sqrt(k / (k - 1))
    assert stats.mean_over_runs([7.0])[0] == 7.0 and all(map(math.isnan, stats.mean_over_runs([7.0])[1:]))
    assert all(map(math.isnan, stats.mean_over_runs([])))
