"""Score intervals at any level, the p that inverts an interval, and the exact McNemar p.

:func:`intervals.wilson`, :func:`compare.newcombe` and :func:`compare.paired_newcombe` take a level up to 0.999;
a family of 60 comparisons needs each interval at 1 - 0.05/60 = 0.99917, and the p of a finding needs the level
at which an interval just reaches the null (often beyond 0.9999). These are the same formulas written for a
normal quantile ``z`` (``tests/test_findings.py`` checks them against those helpers and against statsmodels).

- :func:`wilson_z`, :func:`newcombe_z`, :func:`paired_newcombe_z` — ``(low, high)`` at quantile ``z``.
- :func:`inverted_p` — the p of an interval family: the tail share at which the interval's edge meets ``null``
  (nested intervals, so ``p <= alpha`` exactly when the ``1 - alpha`` interval excludes ``null``).
- :func:`mcnemar_exact_p` — two-sided exact McNemar p from the discordant counts.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from statistics import NormalDist

__all__ = ["wilson_z", "newcombe_z", "paired_newcombe_z", "inverted_p", "mcnemar_exact_p", "z_of", "p_of_z"]


def z_of(tail: float, sides: int = 2) -> float:
    """The normal quantile that leaves ``tail`` outside a two-sided (or one-sided) interval."""
    return NormalDist().inv_cdf(1 - float(tail) / sides)


def p_of_z(z: float, sides: int = 2) -> float:
    """The tail share beyond ``z``: ``2·(1 - Φ(z))`` two-sided, ``1 - Φ(z)`` one-sided (accurate far out)."""
    return math.erfc(z / math.sqrt(2)) * (1.0 if sides == 2 else 0.5)


def wilson_z(successes: int, n: int, z: float) -> tuple[float, float]:
    """Wilson's score interval of ``successes / n`` at quantile ``z`` (``intervals.wilson`` at any level)."""
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return low, high


def newcombe_z(x1: int, n1: int, x2: int, n2: int, z: float) -> tuple[float, float]:
    """Newcombe's hybrid score interval of ``x1/n1 - x2/n2`` (1998, method 10) at quantile ``z``."""
    p1, p2 = x1 / n1, x2 / n2
    l1, u1 = wilson_z(x1, n1, z)
    l2, u2 = wilson_z(x2, n2, z)
    d = p1 - p2
    low = d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)
    high = d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)
    return max(-1.0, low), min(1.0, high)


def _cells(a: Sequence[int], b: Sequence[int]) -> tuple[int, int, int, int]:
    both = sum(1 for i, j in zip(a, b, strict=True) if i and j)
    only_a = sum(1 for i, j in zip(a, b, strict=True) if i and not j)
    only_b = sum(1 for i, j in zip(a, b, strict=True) if j and not i)
    return both, only_a, only_b, len(a) - both - only_a - only_b


def paired_newcombe_z(a: Sequence[int], b: Sequence[int], z: float) -> tuple[float, float]:
    """Newcombe's score interval of ``mean(a) - mean(b)`` for paired 0/1 outcomes (1998, method 10) at ``z``."""
    both, only_a, only_b, neither = _cells(a, b)
    n = len(a)
    p1, p2 = (both + only_a) / n, (both + only_b) / n
    l1, u1 = wilson_z(both + only_a, n, z)
    l2, u2 = wilson_z(both + only_b, n, z)
    num = both * neither - only_a * only_b
    if num > 0:
        num = max(num - n / 2, 0.0)  # Newcombe's continuity adjustment of a positive correlation
    den = (both + only_a) * (only_b + neither) * (both + only_b) * (only_a + neither)
    phi = num / math.sqrt(den) if den else 0.0
    d = p1 - p2
    low = d - math.sqrt(max((p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2, 0.0))
    high = d + math.sqrt(max((u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2, 0.0))
    return max(-1.0, low), min(1.0, high)


def inverted_p(interval_at: Callable[[float], tuple[float, float]], null: float, sides: int = 2) -> float:
    """The p of ``null`` for a family of intervals nested in ``z``: the tail share at which an edge meets it.

    ``interval_at(z)`` gives ``(low, high)``; at ``z = 0`` it is the point estimate. Found by bisection in ``z`` to
    1e-12; 1 when ``null`` is the estimate, and the p beyond ``z = 64`` (0) when no interval reaches it.
    """

    def inside(z: float) -> bool:
        low, high = interval_at(z)
        return low <= null <= high

    if inside(0.0):
        return 1.0
    lo, hi = 0.0, 1.0
    while not inside(hi):
        if hi >= 64:
            return 0.0
        lo, hi = hi, hi * 2
    while hi - lo > 1e-12 * max(1.0, hi):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if inside(mid) else (mid, hi)
    return p_of_z(hi, sides)


def mcnemar_exact_p(only_a: int, only_b: int) -> float:
    """Two-sided exact McNemar p: the discordant pairs split as a fair coin would (binomial, doubled tail)."""
    d = only_a + only_b
    if d == 0 or only_a == only_b:
        return 1.0
    k = min(only_a, only_b)
    return min(1.0, 2 * sum(math.comb(d, i) for i in range(k + 1)) / 2**d)
