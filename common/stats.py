"""Statistics shared by every suite; each section names its estimators in the docstrings."""

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd


# ---- proportions: Wilson interval, exact McNemar ----
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


@dataclass(frozen=True)
class McNemarResult:
    """An exact McNemar test of two paired binary outcomes."""

    only_a: int  # pairs where A succeeded and B failed
    only_b: int  # pairs where B succeeded and A failed
    p_value: float  # two-sided exact binomial p on the discordant pairs (1.0 when there are none)


def mcnemar_exact(a: Sequence[bool], b: Sequence[bool]) -> McNemarResult:
    """Return the exact (binomial) McNemar test of paired outcomes ``a`` and ``b``.

    Under the null hypothesis both methods have the same success rate, so each discordant pair
    is A-only with probability 1/2: p = binomtest(only_a, only_a + only_b, 0.5), two-sided.
    Concordant pairs carry no information and are ignored.
    """
    import scipy.stats

    if len(a) != len(b):
        raise ValueError(f"paired outcomes need equal lengths, got {len(a)} and {len(b)}")
    only_a = sum(1 for x, y in zip(a, b, strict=True) if x and not y)
    only_b = sum(1 for x, y in zip(a, b, strict=True) if y and not x)
    if only_a + only_b == 0:
        return McNemarResult(0, 0, 1.0)
    p = scipy.stats.binomtest(only_a, only_a + only_b, 0.5, alternative="two-sided").pvalue
    return McNemarResult(only_a, only_b, float(p))


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
