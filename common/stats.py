"""Statistics shared by the suites. Each section is owned by one suite; estimators are named
in the docstrings."""

import numpy as np
import pandas as pd

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
