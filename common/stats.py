"""Statistics shared by every suite; each section names its estimators in the docstrings."""

import math
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd


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


PAIR_CHUNK = 4_000_000  # comparisons held at once by ``pair_counts`` (units x runs x runs booleans)


def pair_counts(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return three runs x runs matrices from ``values`` (units x runs, NaN where a run has no
    score): ``n[i, j]`` the units both runs scored, ``better[i, j]`` those where run i scored
    higher than run j, and its transpose (``better[j, i]``). One comparison of every pair at once,
    over blocks of units (PAIR_CHUNK comparisons at a time: memory stays flat in the units)."""
    units, runs = values.shape
    present = (~np.isnan(values)).astype(np.int64)
    n = present.T @ present
    better = np.zeros((runs, runs), dtype=np.int64)
    step = max(1, PAIR_CHUNK // max(1, runs * runs))
    for start in range(0, units, step):
        block = values[start : start + step]
        better += (block[:, :, None] > block[:, None, :]).sum(axis=0)  # NaN compares False: skipped
    return n, better, better.T.copy()


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
