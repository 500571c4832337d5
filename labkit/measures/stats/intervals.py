"""How sure a number is: bootstrap and Wilson intervals, and per-slice tables of them.

- :func:`bootstrap_ci` — percentile bootstrap of a statistic over items (Efron & Tibshirani 1993), seeded: for a
  mean of per-query scores (RR, nDCG, a 0/1 hit), whatever its distribution.
- :func:`wilson` — the Wilson score interval of a proportion (Wilson 1927): for any share of items (a pass rate,
  a TPR), right at small n and at 0/n or n/n, where the percentile bootstrap collapses to a point.
- :func:`normal_interval` — the textbook ``p ± 1.96·sqrt(p(1−p)/n)``, shown so the chapters can say why not.
- :func:`group_means_ci` / :func:`fmt_ci_table` — per-slice means with bootstrap intervals, for every chapter
  that reports a figure per slice (most slices hold well under 100 queries).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from labkit import SEED
from labkit.core import args

__all__ = ["bootstrap_ci", "wilson", "normal_interval", "fmt_ci", "group_means_ci", "mean_ci", "fmt_ci_table", "bools"]


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


def mean_ci(values: Any, n: int = 2000, level: float = 0.95, seed: int = SEED) -> tuple[float, float, float]:
    """``(mean, low, high)`` of one sample, with the interval :func:`group_means_ci` would give it: Wilson when
    every value is 0 or 1 (a proportion), else the percentile bootstrap."""
    values = [float(v) for v in args.sequence("values", values, allow_empty=False, example="[1, 0, 1]")]
    if all(v in (0.0, 1.0) for v in values):
        return wilson(int(sum(values)), len(values), level)
    return bootstrap_ci(values, n=n, level=level, seed=seed)


def group_means_ci(
    frame: Any,
    by: str | Sequence[str],
    columns: str | Sequence[str],
    n: int = 2000,
    level: float = 0.95,
    seed: int = SEED,
    proportions: str | Sequence[str] = "auto",
) -> Any:
    """Per-group means with 95 % intervals: the per-slice table with its uncertainty.

    ``frame`` holds one row per item (usually per query); ``by`` names the grouping column(s) and ``columns``
    the per-item values to average (a 0/1 hit or a reciprocal rank). Returns one row per group with, for each
    column ``c``: ``c`` (the mean), ``c low`` and ``c high``, and ``n`` (the group's size).

    A column of 0/1 values is a **proportion** (hit@k, a right answer) and gets the Wilson interval: a
    percentile bootstrap of a group that is all 1 has zero width ("[1.000, 1.000]") although a few dozen items
    cannot show a rate of exactly 1. ``proportions="auto"`` treats every column whose values are all 0 or 1
    across the whole frame as one; pass a list of names to choose, or ``()`` for the bootstrap everywhere.
    Every other column gets the percentile bootstrap over the group's items, each group resampled with the same
    seed, so a table is reproducible cell by cell.
    """
    import pandas as pd

    if not isinstance(frame, pd.DataFrame):
        raise ValueError(f"frame must be a pandas DataFrame with one row per item, got {type(frame).__name__}")
    by_cols = [by] if isinstance(by, str) else list(by)
    cols = [columns] if isinstance(columns, str) else list(columns)
    if not cols:
        raise ValueError("columns must name at least one column to average")
    missing = [c for c in by_cols + cols if c not in frame.columns]
    if missing:
        raise ValueError(f"frame has no column(s) {missing}; it has {list(frame.columns)}")
    if frame.empty:
        raise ValueError("frame is empty: there is nothing to average")
    if proportions == "auto":
        shares = {c for c in cols if frame[c].astype(float).isin((0.0, 1.0)).all()}
    else:
        shares = set(args.strings("proportions", proportions, example='["hit@3"] or "auto"'))
        unknown = shares - set(cols)
        if unknown:
            raise ValueError(f"proportions names {sorted(unknown)}, which are not among columns {cols}")
    rows = []
    for key, group in frame.groupby(by_cols, sort=True):
        row: dict[str, Any] = dict(zip(by_cols, key if isinstance(key, tuple) else (key,), strict=True))
        row["n"] = len(group)
        for c in cols:
            values = group[c].astype(float)
            if c in shares:
                if not values.isin((0.0, 1.0)).all():
                    raise ValueError(f"proportions names {c!r}, whose values are not all 0 or 1")
                row[c], row[f"{c} low"], row[f"{c} high"] = wilson(int(values.sum()), len(values), level)
            else:
                row[c], row[f"{c} low"], row[f"{c} high"] = bootstrap_ci(values, n=n, level=level, seed=seed)
        rows.append(row)
    out = pd.DataFrame(rows).set_index(by_cols)
    return out[["n"] + [x for c in cols for x in (c, f"{c} low", f"{c} high")]]


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
