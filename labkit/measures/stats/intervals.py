"""How sure a number is: bootstrap and Wilson intervals, and per-slice tables of them.

- :func:`bootstrap_ci` — percentile bootstrap of a statistic over items (Efron & Tibshirani 1993), seeded: for a
  mean of per-query scores (RR, nDCG, a 0/1 hit), whatever its distribution.
- :func:`wilson` — the Wilson score interval of a proportion (Wilson 1927): for any share of items (a pass rate,
  a TPR), right at small n and at 0/n or n/n, where the percentile bootstrap collapses to a point.
- :func:`normal_interval` — the textbook ``p ± 1.96·sqrt(p(1−p)/n)``, shown so the chapters can say why not.
- :func:`fmt_ci_table` — a table of means with intervals, formatted (the per-slice means themselves are in
  :mod:`labkit.measures.stats.slices`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from labkit import SEED
from labkit.core import args

__all__ = ["bootstrap_ci", "wilson", "normal_interval", "fmt_ci", "fmt_ci_table", "bools"]


def bools(name: str, values: Any) -> list[bool]:
    """``values`` as a list of True / False (numpy bools too), or a clear error naming the argument."""
    out = args.sequence(name, values, allow_empty=False)
    for i, v in enumerate(out):
        if not isinstance(v, bool) and not (hasattr(v, "dtype") and str(v.dtype) == "bool"):
            raise ValueError(f"{name}[{i}] must be True or False, got {v!r}")
    return [bool(v) for v in out]


def bootstrap_ci(
    values: Sequence[float],
    stat: Callable[[Any], float] | None = None,
    n: int = 2000,
    level: float = 0.95,
    seed: int = SEED,
) -> tuple[float, float, float]:
    """``(estimate, low, high)``: the statistic (default: the mean) and its percentile-bootstrap interval."""
    import numpy as np

    x = np.asarray(args.numbers("values", values, allow_empty=False), dtype=float)
    n = args.whole_number("n", n, minimum=100, maximum=100_000)
    level = args.finite_number("level", level, minimum=0.5, maximum=0.999)
    f = stat or np.mean
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(x), size=(n, len(x)))
    boots = np.array([f(x[i]) for i in idx]) if stat else x[idx].mean(axis=1)
    lo, hi = np.quantile(boots, [(1 - level) / 2, 1 - (1 - level) / 2])
    return float(f(x)), float(lo), float(hi)


def wilson(successes: int, n: int, level: float = 0.95) -> tuple[float, float, float]:
    """``(p, low, high)``: the proportion ``successes / n`` and its Wilson score interval."""
    from statistics import NormalDist

    n = args.whole_number("n", n)
    successes = args.whole_number("successes", successes, minimum=0, maximum=n)
    level = args.finite_number("level", level, minimum=0.5, maximum=0.999)
    z = NormalDist().inv_cdf(1 - (1 - level) / 2)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    low = 0.0 if successes == 0 else max(0.0, centre - half)  # exactly 0 and 1 at the ends, not 1e-17 off
    high = 1.0 if successes == n else min(1.0, centre + half)
    return p, low, high


def normal_interval(successes: int, n: int, level: float = 0.95) -> tuple[float, float, float]:
    """``(p, low, high)``: the normal-approximation ("Wald") interval ``p ± z·sqrt(p(1−p)/n)``, not clipped.

    Shown for contrast only: at 0/n and n/n it has zero width, and near them it leaves [0, 1]. Use :func:`wilson`.
    """
    from statistics import NormalDist

    n = args.whole_number("n", n)
    successes = args.whole_number("successes", successes, minimum=0, maximum=n)
    z = NormalDist().inv_cdf(1 - (1 - args.finite_number("level", level, minimum=0.5, maximum=0.999)) / 2)
    p = successes / n
    half = z * math.sqrt(p * (1 - p) / n)
    return p, p - half, p + half


def fmt_ci(estimate: float | None, low: float | None, high: float | None, digits: int = 3) -> str:
    """``0.712 [0.650, 0.771]``; ``n/a`` for a missing estimate."""
    digits = args.whole_number("digits", digits, minimum=0, maximum=15)
    for name, value in (("estimate", estimate), ("low", low), ("high", high)):
        if value is not None and not (isinstance(value, float) and math.isnan(value)):
            args.finite_number(name, value)
    if estimate is None:
        return "n/a"
    if low is None or high is None:
        return f"{estimate:.{digits}f}"
    return f"{estimate:.{digits}f} [{low:.{digits}f}, {high:.{digits}f}]"


def fmt_ci_table(table: Any, digits: int = 3) -> Any:
    """A :func:`group_means_ci` table for reading: one ``0.712 [0.650, 0.771]`` cell per column, plus ``n``."""
    import pandas as pd

    args.table("table", table, example="stats.group_means_ci(...)")
    cols = [c for c in table.columns if c != "n" and f"{c} low" in table.columns]
    out = pd.DataFrame(index=table.index)
    out["n"] = table["n"]
    for c in cols:
        out[c] = [
            fmt_ci(e, lo, hi, digits) for e, lo, hi in zip(table[c], table[f"{c} low"], table[f"{c} high"], strict=True)
        ]
    return out
