"""The paired tests of every suite: two runs scored on the same units (``common.stats`` re-exports them).

The exact paired test (``paired_exact_test``: McNemar's on binary outcomes, the sign test on
scores), its survival form (``paired_survival_test``), and the paired t-test (``paired_t_test``);
between every two runs of a table at once (``pairwise_exact_tests``, ``pairwise_t_tests``,
``pairwise_survival_counts``): in array operations over all pairs, not one test at a time, so a
hundred runs cost about one pass over their scores.
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

# ---- the paired exact test: two runs, paired by unit -------------------------------------------------
PAIRED_COLUMNS = ["a", "b", "n", "a_better", "b_better", "p"]


@dataclass(frozen=True)
class PairedTest:
    """The exact paired test of two runs: how many units favour each, and the two-sided p."""

    a_better: int  # units where run a scored higher than run b
    b_better: int  # units where run b scored higher than run a
    p: float  # exact two-sided binomial p on those units; 1.0 when there are none


def paired_exact_test(a: Sequence[float], b: Sequence[float]) -> PairedTest:
    """Return the exact paired test of two runs scored on the same units (``a[i]`` and ``b[i]``
    are unit i's scores).

    A unit favours a when ``a[i] > b[i]``, b when ``b[i] > a[i]``; ties carry no information and
    are left out. Under the null hypothesis (both runs equally good) each untied unit favours a
    with probability 1/2, so p = scipy.stats.binomtest(a_better, a_better + b_better, 0.5),
    two-sided: the probability of a split at most as likely as the one observed. With binary
    outcomes (True = success) this is McNemar's exact test on the discordant pairs; with
    per-unit scores (e.g. the share of a unit's variants answered right) it is the sign test.
    **No untied unit gives p = 1.0**: the only possible split (0 against 0) has probability 1,
    so nothing speaks against the null hypothesis (a number, not NaN, so tables sort and read
    the same in every suite).
    """
    import scipy.stats

    if len(a) != len(b):
        raise ValueError(f"paired scores need equal lengths, got {len(a)} and {len(b)}")
    a_better = sum(1 for x, y in zip(a, b, strict=True) if x > y)
    b_better = sum(1 for x, y in zip(a, b, strict=True) if y > x)
    if a_better + b_better == 0:
        return PairedTest(0, 0, 1.0)
    p = scipy.stats.binomtest(a_better, a_better + b_better, 0.5, alternative="two-sided").pvalue
    return PairedTest(a_better, b_better, float(p))


def paired_survival_test(
    survived_a: Sequence[float],
    failed_a: Sequence[bool],
    survived_b: Sequence[float],
    failed_b: Sequence[bool],
) -> PairedTest:
    """Return ``paired_exact_test`` of two runs' survival on the same units, as far as censoring
    tells: ``survived_a[i]`` is how long unit i lasted in run a (the time it was last known
    alive; when ``failed_a[i]`` it failed right after, else it was censored there), likewise b.

    A unit favours a when b failed at a time a outlasted (b failed and ``survived_a[i] >
    survived_b[i]``; a failed later or was censored after it), b likewise. Equal failure times
    are ties; a censored run that stopped no later than the other failed leaves the unit
    undecided. Unlike the log-rank test, which takes the runs as independent samples, this uses
    the pairing (e.g. the same word schedule in both runs), so it stays valid when the runs of a
    unit depend on each other.
    """
    lengths = {len(survived_a), len(failed_a), len(survived_b), len(failed_b)}
    if len(lengths) != 1:
        raise ValueError(f"paired survival needs four equal-length sequences, got lengths {sorted(lengths)}")
    a_longer = [fb and ta > tb for ta, tb, fb in zip(survived_a, survived_b, failed_b, strict=True)]
    b_longer = [fa and tb > ta for ta, tb, fa in zip(survived_a, survived_b, failed_a, strict=True)]
    return paired_exact_test(a_longer, b_longer)


def pairwise_exact_tests(scores: pd.DataFrame) -> pd.DataFrame:
    """Return ``paired_exact_test`` between every two runs of ``scores`` (one row per unit, one
    column per run, missing where a run has no score for the unit; booleans or numbers).

    One row per pair (a, b) of columns, a before b in column order, on the units both scored:
    ``a, b, n`` (those units), ``a_better, b_better, p``. Pairs sharing no unit are left out.
    ``scores`` is not modified. Every pair is counted in one array operation (``pair_counts``)
    and every p computed at once (``binomial_p``), so a hundred runs (4,950 pairs) cost about
    what one pass over their scores does.
    """
    columns = list(scores.columns)
    n, a_better, b_better = pair_counts(scores.astype(float).to_numpy())
    first, second = np.triu_indices(len(columns), k=1)
    keep = n[first, second] > 0
    first, second = first[keep], second[keep]
    wins, losses = a_better[first, second], b_better[first, second]
    return pd.DataFrame(
        {
            "a": [columns[i] for i in first],
            "b": [columns[j] for j in second],
            "n": n[first, second].astype("int64"),
            "a_better": wins.astype("int64"),
            "b_better": losses.astype("int64"),
            "p": binomial_p(wins, losses),
        },
        columns=PAIRED_COLUMNS,
    )


PAIR_CHUNK = 4_000_000  # comparisons held at once by ``_outscored`` (units x runs x runs booleans)
LEVELS = 64  # at most this many distinct values: ``_outscored`` counts by matrix products


def pair_counts(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return three runs x runs matrices from ``values`` (units x runs, NaN where a run has no
    score): ``n[i, j]`` the units both runs scored, ``better[i, j]`` those where run i scored
    higher than run j, and its transpose (``better[j, i]``). Every pair at once (``_outscored``)."""
    present = ~np.isnan(values)
    better = _outscored(values, present)
    return _count_product(present, present), better, better.T.copy()


def pairwise_survival_counts(survived: np.ndarray, failed: np.ndarray) -> tuple[np.ndarray, ...]:
    """Return ``paired_survival_test``'s counts between every two runs at once, from ``survived``
    (units x runs: how long each unit lasted in each run, NaN where a run has no such unit) and
    ``failed`` (units x runs: it failed right after, else it was censored there): three runs x
    runs matrices, ``n[i, j]`` the units both runs have, ``better[i, j]`` those where run j failed
    at a time run i outlasted, and its transpose (``better[j, i]``: the reverse), as
    ``pair_counts`` counts them (``_outscored``, only run j's failures counted); the p of a split
    is ``binomial_p``."""
    present = ~np.isnan(survived)
    better = _outscored(survived, failed & present)
    return _count_product(present, present), better, better.T.copy()


def _outscored(values: np.ndarray, counted: np.ndarray) -> np.ndarray:
    """Return the runs x runs matrix whose ``[i, j]`` counts the units where run i's value is
    above run j's and run j's is ``counted`` (units x runs booleans; NaN values compare as
    neither). With few distinct values (at most LEVELS: outcomes, shares of a unit's variants,
    turns) one matrix product per value v (the units where run i has v times those where run j
    is counted below it: exact, as counts of units are far below 2**53); else comparing blocks
    of units, PAIR_CHUNK comparisons at a time (memory flat in the units)."""
    units, runs = values.shape
    levels = np.unique(values[~np.isnan(values)])
    better = np.zeros((runs, runs), dtype=np.int64)
    if len(levels) <= LEVELS:
        below = np.zeros_like(counted)
        for level in levels:  # ascending: ``below`` holds the counted values under ``level``
            at = values == level
            better += _count_product(at, below)
            below |= at & counted
        return better
    step = max(1, PAIR_CHUNK // max(1, runs * runs))
    for start in range(0, units, step):
        block, mask = values[start : start + step], counted[start : start + step]
        better += ((block[:, :, None] > block[:, None, :]) & mask[:, None, :]).sum(axis=0)
    return better


def _count_product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Return ``a.T @ b`` of two units x runs boolean arrays as integer counts (a float product:
    BLAS, exact below 2**53)."""
    return np.rint(a.T.astype(float) @ b.astype(float)).astype(np.int64)


def binomial_p(a_better: np.ndarray, b_better: np.ndarray) -> np.ndarray:
    """Return the exact two-sided binomial p of each split (``paired_exact_test``'s p), for arrays
    of counts at once: with k the smaller count of n = a + b, ``binom.cdf(k) + binom.sf(n - k - 1)``
    at 1/2 (the terms scipy.stats.binomtest adds for a symmetric null), at most 1; 1.0 without an
    untied unit or with an even split."""
    import scipy.stats

    a, b = np.asarray(a_better, dtype=np.int64), np.asarray(b_better, dtype=np.int64)
    total, low = a + b, np.minimum(a, b)
    p = scipy.stats.binom.cdf(low, total, 0.5) + scipy.stats.binom.sf(total - low - 1, total, 0.5)
    return np.where((total == 0) | (a == b), 1.0, np.minimum(1.0, p)).astype(float)


@dataclass(frozen=True)
class PairedMeans:
    """A paired t-test of two runs' scores on the same units."""

    mean_a: float  # mean score of run a
    mean_b: float  # mean score of run b
    diff: float  # mean of the per-unit differences a - b
    low: float  # 95% confidence interval of diff
    high: float
    p: float  # two-sided p; NaN when every difference is the same (no spread to test)


def paired_t_test(a: Sequence[float], b: Sequence[float]) -> PairedMeans:
    """Return the paired t-test of the scores ``a`` and ``b`` of the same units (scipy.stats.ttest_rel):
    the two means, the mean difference d = mean(a - b) with its 95% interval d +- t(0.975, n-1)
    sd(a - b) / sqrt(n), and the two-sided p. When every difference is the same (standard
    deviation under 1e-9) there is no test: the interval collapses to d and p is NaN (scipy would
    warn of a catastrophic loss of precision). Needs at least two units."""
    import scipy.stats

    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if len(x) != len(y) or len(x) < 2:
        raise ValueError(
            f"a paired t-test needs two equal-length samples of 2 or more, got {len(x)} and {len(y)}"
        )
    diff = float((x - y).mean())
    if (x - y).std(ddof=1) <= 1e-9:
        return PairedMeans(float(x.mean()), float(y.mean()), diff, diff, diff, math.nan)
    test = scipy.stats.ttest_rel(x, y)
    low, high = test.confidence_interval(0.95)
    return PairedMeans(float(x.mean()), float(y.mean()), diff, float(low), float(high), float(test.pvalue))


def pairwise_t_tests(scores: pd.DataFrame, pairs: Sequence[tuple[str, str]]) -> pd.DataFrame:
    """Return ``paired_t_test`` of each pair (a, b) of columns of ``scores`` (one row per unit,
    NaN where a run has no score), on the units both scored, for every pair at once rather than one
    test at a time: one row per pair, in order, with ``mean_a, mean_b, diff, low, high, p`` as
    ``PairedMeans`` has them (p NaN and the interval collapsed to diff where every difference is
    the same). Each pair needs 2 units or more.

    The sums every test needs (units, sums of each run's scores, of their squares and of their
    products, over the units both runs scored) come from matrix products over all runs; a pair
    whose differences look flat by those sums (sum of squared deviations under FLAT_CHECK, where
    rounding could hide or feign a spread) is computed again from its differences, so "every
    difference the same" is decided exactly as ``paired_t_test`` decides it."""
    import scipy.stats

    values = scores.astype(float).to_numpy()
    index = {column: i for i, column in enumerate(scores.columns)}
    first = np.array([index[a] for a, _ in pairs], dtype=np.int64)
    second = np.array([index[b] for _, b in pairs], dtype=np.int64)
    columns = ["mean_a", "mean_b", "diff", "low", "high", "p"]
    if not len(first):
        return pd.DataFrame(columns=columns, dtype=float)
    scored = ~np.isnan(values)
    present, x = scored.astype(float), np.where(scored, values, 0.0)
    sums = x.T @ present  # [i, j]: run i's scores summed over the units run j scored too
    squares = (x * x).T @ present
    products = x.T @ x
    n = _count_product(scored, scored)[first, second]
    if (n < 2).any():
        raise ValueError("a paired t-test needs two equal-length samples of 2 or more")
    sum_a, sum_b = sums[first, second], sums[second, first]
    diff = (sum_a - sum_b) / n
    deviations = squares[first, second] + squares[second, first] - 2 * products[first, second] - n * diff**2
    check = np.flatnonzero(deviations < FLAT_CHECK)
    for k in check:  # near flat: its differences, as paired_t_test takes them
        both = scored[:, first[k]] & scored[:, second[k]]
        d = values[both, first[k]] - values[both, second[k]]
        diff[k] = d.mean()
        deviations[k] = ((d - diff[k]) ** 2).sum()
    sd = np.sqrt(np.maximum(deviations, 0.0) / (n - 1))
    flat = sd <= 1e-9
    se = np.where(flat, 1.0, sd / np.sqrt(n))
    p = 2 * scipy.stats.t.sf(np.abs(diff / se), n - 1)
    half = scipy.stats.t.ppf(0.975, n - 1) * se
    return pd.DataFrame(
        {
            "mean_a": sum_a / n,
            "mean_b": sum_b / n,
            "diff": diff,
            "low": np.where(flat, diff, diff - half),
            "high": np.where(flat, diff, diff + half),
            "p": np.where(flat, np.nan, p),
        },
        columns=columns,
    )


FLAT_CHECK = 1e-6  # sums of squared deviations below this are computed again from the differences
