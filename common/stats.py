"""Statistics shared by every suite; each section names its estimators."""

import math
from collections.abc import Sequence
from dataclasses import dataclass

from scipy import stats as _scipy_stats


# ---- proportions: Wilson interval, exact McNemar ----
def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Return the Wilson score interval ``(lo, hi)`` for ``successes`` out of ``n`` trials.

    With z the two-sided normal quantile and p = successes / n:
    centre = (p + z^2 / 2n) / (1 + z^2 / n), half-width = z sqrt(p(1-p)/n + z^2/4n^2) / (1 + z^2/n).
    Unlike the normal (Wald) interval it stays inside [0, 1] and is not degenerate at 0 or n.
    ``n == 0`` gives (0.0, 1.0).
    """
    if not 0 <= successes <= n:
        raise ValueError(f"successes must be between 0 and n, got {successes} of {n}")
    if n == 0:
        return 0.0, 1.0
    z = float(_scipy_stats.norm.ppf(0.5 + confidence / 2))
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True)
class McNemarResult:
    """An exact McNemar test of two paired binary outcomes."""

    only_a: int      # pairs where A succeeded and B failed
    only_b: int      # pairs where B succeeded and A failed
    p_value: float   # two-sided exact binomial p on the discordant pairs (1.0 when there are none)


def mcnemar_exact(a: Sequence[bool], b: Sequence[bool]) -> McNemarResult:
    """Return the exact (binomial) McNemar test of paired outcomes ``a`` and ``b``.

    Under the null hypothesis both methods have the same success rate, so each discordant pair
    is A-only with probability 1/2: p = binomtest(only_a, only_a + only_b, 0.5), two-sided.
    Concordant pairs carry no information and are ignored.
    """
    if len(a) != len(b):
        raise ValueError(f"paired outcomes need equal lengths, got {len(a)} and {len(b)}")
    only_a = sum(1 for x, y in zip(a, b, strict=True) if x and not y)
    only_b = sum(1 for x, y in zip(a, b, strict=True) if y and not x)
    if only_a + only_b == 0:
        return McNemarResult(0, 0, 1.0)
    p = _scipy_stats.binomtest(only_a, only_a + only_b, 0.5, alternative="two-sided").pvalue
    return McNemarResult(only_a, only_b, float(p))
