"""Statistics shared by every suite; each section names its estimators in the docstrings. The paired
tests live in ``common.paired`` and are re-exported here."""

import math
import warnings
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from common.paired import PAIR_CHUNK as PAIR_CHUNK
from common.paired import PAIRED_COLUMNS as PAIRED_COLUMNS
from common.paired import PairedMeans as PairedMeans
from common.paired import PairedTest as PairedTest
from common.paired import binomial_p as binomial_p
from common.paired import pair_counts as pair_counts
from common.paired import paired_exact_test as paired_exact_test
from common.paired import paired_survival_test as paired_survival_test
from common.paired import paired_t_test as paired_t_test
from common.paired import pairwise_exact_tests as pairwise_exact_tests
from common.paired import pairwise_survival_counts as pairwise_survival_counts
from common.paired import pairwise_t_tests as pairwise_t_tests


# ---- proportions -----------------------------------------------------------------------------------
def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Return the Wilson score interval ``(lo, hi)`` for ``successes`` out of ``n`` trials.

    With z the two-sided normal quantile and p = successes / n:
    centre = (p + z^2 / 2n) / (1 + z^2 / n), half-width = z sqrt(p(1-p)/n + z^2/4n^2) / (1 + z^2/n).
    Unlike the normal (Wald) interval it stays inside [0, 1] and is not degenerate at 0 or n.
    ``n == 0`` gives (0.0, 1.0).
    """
    import scipy.stats  # imported here: the WorldSense analysis needs none of scipy's start-up time

    if not 0 <= successes <= n:
        raise ValueError(f"successes must be between 0 and n, got {successes} of {n}")
    if n == 0:
        return 0.0, 1.0
    return _wilson(successes / n, n, float(scipy.stats.norm.ppf(0.5 + confidence / 2)))


def _wilson(p: float, n: float, z: float) -> tuple[float, float]:
    """Return the Wilson interval of proportion ``p`` over a (possibly effective, non-integer) ``n``."""
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def clustered_wilson_interval(
    successes: Sequence[float], sizes: Sequence[int], confidence: float = 0.95
) -> tuple[float, float, float]:
    """Return ``(p, lo, hi)``: the pooled proportion of clustered binary outcomes and its Wilson-type
    interval with the effective sample size of the clustering.

    Cluster i holds ``sizes[i]`` trials of which ``successes[i]`` succeeded (e.g. the variants of
    one generated item: they share a canvas and a question, so they are not independent). The
    proportion is p = sum(y) / sum(m); its cluster-robust (ratio-estimator) variance is
    v = k / (k - 1) * sum((y_i - p m_i)^2) / sum(m)^2 over the k clusters, and the effective
    sample size n_eff = p (1 - p) / v (the trial count divided by the design effect), clamped to
    [1, sum(m)]. The interval is Wilson's with n_eff in place of n, so it stays inside [0, 1]
    and is not degenerate at 0 or 1. When v is 0 (p is 0 or 1, or every cluster has the same
    rate) or k is 1, n_eff is the number of clusters: nothing shows the variants to be independent.
    No trials give (nan, 0.0, 1.0).
    """
    import scipy.stats

    if len(successes) != len(sizes):
        raise ValueError(f"need one size per cluster, got {len(successes)} and {len(sizes)}")
    y = np.asarray(successes, dtype=float)
    m = np.asarray(sizes, dtype=float)
    if (m < 0).any() or (y < 0).any() or (y > m).any():
        raise ValueError("every cluster needs 0 <= successes <= size")
    total = float(m.sum())
    if total == 0:
        return math.nan, 0.0, 1.0
    k = int((m > 0).sum())
    p = float(y.sum()) / total
    v = k / (k - 1) * float(((y - p * m) ** 2).sum()) / total**2 if k > 1 else 0.0
    n_eff = min(total, max(1.0, p * (1 - p) / v)) if v > 0 else float(k)
    return (p, *_wilson(p, n_eff, float(scipy.stats.norm.ppf(0.5 + confidence / 2))))


def share_interval(hits: int, n: int) -> tuple[float, float, float]:
    """Return ``(share, lo, hi)`` of ``hits`` out of ``n`` with the Wilson 95% interval
    (``wilson_interval``); the share is NaN when ``n`` is 0 (the interval then (0, 1))."""
    lo, hi = wilson_interval(hits, n)
    return (hits / n if n else math.nan), lo, hi


# ---- means -----------------------------------------------------------------------------------------
Z95 = 1.959964  # two-sided 95% normal quantile


def mean_interval(
    values: Iterable[float], bounds: tuple[float, float] = (-math.inf, math.inf)
) -> tuple[float, float, float]:
    """Return ``(mean, lo, hi)``: the mean with mean +- 1.959964 standard errors (sample standard
    deviation, ddof 1, over sqrt(n)), clipped to the values' possible range ``bounds``. NaN
    values are dropped; all three are NaN when no value is left, and the interval collapses to
    the mean for a single value (no spread to estimate)."""
    data = np.array([v for v in values if not (isinstance(v, float) and math.isnan(v))], dtype=float)
    if data.size == 0:
        return math.nan, math.nan, math.nan
    mean = float(data.mean())
    half = Z95 * float(data.std(ddof=1)) / math.sqrt(data.size) if data.size > 1 else 0.0
    return mean, max(bounds[0], mean - half), min(bounds[1], mean + half)


def mean_over_runs(values: Iterable[float]) -> tuple[float, float, float]:
    """Return ``(mean, se_population, se_sample)`` of one metric's values over k repeated runs
    (e.g. seeds): the mean, and its standard error two ways, the standard deviation over sqrt(k)
    with the population standard deviation (ddof 0, numpy's default: what the original Already
    Said That eval's plots draw, ``np.std(values) / sqrt(NUM_REPEATS)``) and with the sample
    standard deviation (ddof 1, the unbiased variance; larger by sqrt(k / (k - 1))). NaN values
    are dropped; both errors are NaN with fewer than two values, all three with none."""
    data = np.array([v for v in values if not math.isnan(v)], dtype=float)
    if data.size == 0:
        return math.nan, math.nan, math.nan
    if data.size == 1:
        return float(data[0]), math.nan, math.nan
    root = math.sqrt(data.size)
    return float(data.mean()), float(data.std(ddof=0)) / root, float(data.std(ddof=1)) / root


def pass_at_k(n: int, c: int, k: int) -> float:
    """Return the unbiased estimate of pass@k for one item answered ``n`` times, ``c`` of them
    right: the chance that at least one of k answers drawn without replacement from the n is
    right, 1 - C(n - c, k) / C(n, k) (Chen et al. 2021); 1.0 when fewer than k are wrong.
    Raises ValueError unless 0 <= c <= n and 1 <= k <= n."""
    if not (0 <= c <= n and 1 <= k <= n):
        raise ValueError(f"pass@k needs 0 <= c <= n and 1 <= k <= n, got n={n}, c={c}, k={k}")
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


# ---- grouped means with equal re-weighting (WorldSense) ----


def group_stats(df: pd.DataFrame, by: list[str], field: str) -> pd.DataFrame:
    """Return per group of ``by`` the ``mean``, ``sem``, ``count``, ``var`` and ``std`` of ``field``.

    ``var`` is the sample variance (ddof 1), ``sem = std / sqrt(count)``; both are NaN for a
    group of one value. Missing values of ``field`` are not counted. Rows whose group key is
    missing are dropped (pandas ``groupby``). The index holds ``by``, sorted. ``df`` is not modified.
    """
    grouped = df.groupby(by, observed=True, sort=True)[field]
    return grouped.agg(["mean", "sem", "count", "var", "std"])


def collapse_equal_weight(stats: pd.DataFrame, by: list[str], rebalance: bool = True) -> pd.DataFrame:
    """Return the statistics of the coarser groups ``by``, pooled from finer-grained ``stats``.

    ``stats`` holds ``mean``, ``var`` and ``count`` per fine group (its index levels are a
    superset of ``by``), as returned by ``group_stats`` or by this function. With ``rebalance``
    every fine group inside a coarse group gets the same effective count, the smallest count
    in that coarse group, so each fine group weighs equally in the coarse mean. Pooling uses the
    fine groups' mean of squares (``var + mean**2``):

        mean = sum(c * mean_i) / sum(c),  mean_sq = sum(c * (var_i + mean_i**2)) / sum(c),
        var = mean_sq - mean**2,  std = sqrt(var),  sem = std / sqrt(sum(c)).

    So ``var`` is the variance of the underlying values (not of the fine means), and ``count``
    is the total effective count. A fine group of a single value contributes a variance of 0
    (its sample variance is undefined). Rounding noise that makes ``var`` slightly negative is
    clipped to 0. Returns a new DataFrame indexed by ``by`` with ``count``, ``mean``, ``var``,
    ``std`` and ``sem``; ``stats`` is not modified.
    """
    st = stats.reset_index()
    count = st["count"].astype(float)
    if rebalance:
        count = count.groupby([st[f] for f in by], observed=True, sort=False).transform("min")
    var = st["var"].where(st["count"] > 1, 0.0)
    pooled = pd.DataFrame({f: st[f] for f in by})
    pooled["count"] = count
    pooled["sum"] = st["mean"] * count
    pooled["sum_sq"] = (var + st["mean"] ** 2) * count
    sums = pooled.groupby(by, observed=True, sort=True)[["count", "sum", "sum_sq"]].sum()
    out = pd.DataFrame(index=sums.index)
    out["count"] = sums["count"]
    out["mean"] = sums["sum"] / sums["count"]
    out["var"] = (sums["sum_sq"] / sums["count"] - out["mean"] ** 2).clip(lower=0.0)
    out["std"] = np.sqrt(out["var"])
    out["sem"] = out["std"] / np.sqrt(out["count"])
    return out


# ---- survival: Kaplan-Meier and the log-rank test ------------------------------------------------
def kaplan_meier(events: Sequence[float], censored: Sequence[float], times: Sequence[float]) -> pd.DataFrame:
    """Return the Kaplan-Meier survival curve at ``times``: columns ``time``, ``survival`` (the
    share still alive after that time) and its 95% band ``lo``/``hi``.

    ``events`` are the times at which a subject failed, ``censored`` the times at which one was
    last seen alive (right-censored). With d_i failures among the n_i subjects still at risk at
    failure time t_i, S(t) = prod over t_i <= t of (1 - d_i / n_i) (scipy.stats.ecdf on
    CensoredData); the band is the log-log (exponential Greenwood) one, and where it is undefined
    (nobody left at risk) it is the estimate itself. Past the last time observed, when that time
    is a censoring, nobody is followed any more and S is undefined: NaN there, not the last value
    carried on. No subject at all gives NaN everywhere.
    """
    import scipy.stats

    times = np.asarray(times, dtype=float)
    failures, right = np.asarray(events, dtype=float), np.asarray(censored, dtype=float)
    if failures.size + right.size == 0:
        return pd.DataFrame({"time": times, "survival": math.nan, "lo": math.nan, "hi": math.nan})
    result = scipy.stats.ecdf(scipy.stats.CensoredData(uncensored=failures, right=right))
    alive = result.sf.evaluate(times)
    with warnings.catch_warnings():  # undefined where no one is at risk any more: shown as the estimate
        warnings.simplefilter("ignore", RuntimeWarning)
        band = result.sf.confidence_interval(0.95, method="log-log")
    lo = np.where(np.isnan(low := band.low.evaluate(times)), alive, low)
    hi = np.where(np.isnan(high := band.high.evaluate(times)), alive, high)
    last = max(failures.max(initial=0), right.max(initial=0))
    if right.size and right.max() == last:
        for values in (alive, lo, hi):
            values[times > last] = math.nan
    return pd.DataFrame({"time": times, "survival": alive, "lo": lo, "hi": hi})


def logrank(
    events_a: Sequence[float],
    censored_a: Sequence[float],
    events_b: Sequence[float],
    censored_b: Sequence[float],
) -> tuple[float, float]:
    """Return the log-rank test's ``(statistic, p)`` of survival in group a against group b, each
    given as failure and right-censoring times (as ``kaplan_meier`` takes them).

    At every failure time the observed failures of a are compared with those expected if both
    groups shared one hazard; the statistic is scipy.stats.logrank's signed z, (observed -
    expected failures of a) / its standard deviation: negative when a survives longer. p is
    two-sided. Both NaN when neither group has a failure, and when the statistic has no
    variance (at every failure time, every subject still at risk failed: e.g. both groups fail
    all at once at the same turn), where there is nothing to compare; no warning is printed.
    """
    import scipy.stats

    if len(events_a) + len(events_b) == 0:
        return math.nan, math.nan
    x = scipy.stats.CensoredData(uncensored=np.asarray(events_a, float), right=np.asarray(censored_a, float))
    y = scipy.stats.CensoredData(uncensored=np.asarray(events_b, float), right=np.asarray(censored_b, float))
    with np.errstate(divide="ignore", invalid="ignore"):  # zero variance: NaN, said in the docstring
        result = scipy.stats.logrank(x, y)
    return float(result.statistic), float(result.pvalue)
