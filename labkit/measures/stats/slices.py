"""Per-slice means with intervals: :func:`group_means_ci` (Wilson for a proportion, the percentile bootstrap for
any other mean, the findings helper's sparse bound where resampling would pin an end, the rule bound where every
item is equal) and :func:`mean_ci` (the same interval for one list of scores), for every chapter that reports a
figure per slice (most slices hold well under 100 queries)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from labkit import SEED
from labkit.core import args
from labkit.measures.stats.intervals import bootstrap_ci, wilson
from labkit.measures.stats.kindbase import SPARSE, Ctx, alpha_of, flat_chance, sparse

__all__ = ["group_means_ci", "mean_ci"]


def mean_ci(values: Any, n: int = 2000, level: float = 0.95, seed: int = SEED) -> tuple[float, float, float]:
    """``(mean, low, high)`` of one sample, with the interval :func:`group_means_ci` would give it: Wilson when
    every value is 0 or 1 (a proportion), else the percentile bootstrap, or the sparse bound where few values differ
    (scores in [0, 1])."""
    import numpy as np

    values = [float(v) for v in args.sequence("values", values, allow_empty=False, example="[1, 0, 1]")]
    if all(v in (0.0, 1.0) for v in values):
        return wilson(int(sum(values)), len(values), level)
    x = np.asarray(args.numbers("values", values), dtype=float)
    scores = (0.0, 1.0) if float(x.min()) >= 0 and float(x.max()) <= 1 else None
    return _graded_mean_ci(x, "values", n, level, seed, scores)


def group_means_ci(
    frame: Any,
    by: str | Sequence[str],
    columns: str | Sequence[str],
    n: int = 2000,
    level: float = 0.95,
    seed: int = SEED,
    proportions: str | Sequence[str] = "auto",
    bounds: Any = None,
) -> Any:
    """Per-group means with 95 % intervals: the per-slice table with its uncertainty.

    ``frame`` holds one row per item (usually per query); ``by`` names the grouping column(s) and ``columns``
    the per-item values to average (a 0/1 hit or a reciprocal rank). Returns one row per group with, for each
    column ``c``: ``c`` (the mean), ``c low`` and ``c high``, and ``n`` (the group's size).

    A column of 0/1 values is a **proportion** (hit@k, a right answer) and gets the Wilson interval: a
    percentile bootstrap of a group that is all 1 has zero width ("[1.000, 1.000]") although a few dozen items
    cannot show a rate of exactly 1. ``proportions="auto"`` treats every column whose values are all 0 or 1
    across the whole frame as one; pass a list of names to choose, or ``()`` for the graded treatment below everywhere.

    Every other column gets the percentile bootstrap over the group's items, each group resampled with the same
    seed, so a table is reproducible cell by cell, except where **few items differ** from a common value (an RR@10
    of 1 on all but two queries): when a resample holding one value only has a chance above ``(1 - level) /
    SPARSE`` (:data:`kindbase.SPARSE`, the findings helper's rule), the percentile bootstrap would pin an end at
    that value (every such resample gives it), so the group gets the findings helper's **sparse bound** instead
    (:func:`kindbase.sparse`: the shares above and below the common value at Wilson's bound, the items anywhere in
    the score's range; for all-equal values the rule bound). Below that chance at most a fifth of the tail's
    resamples are expected at a bound, so a bootstrap end does not sit on one. ``bounds``: the range one item's
    score can take, ``(low, high)`` for every column or ``{column: (low, high)}``; by default [0, 1] for a column whose
    values all lie there, and a sparse group of any other column (a count) raises, naming ``bounds``.
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
    limits = _limits(bounds, cols)
    # [0, 1] is assumed only for a column that holds scores there in every group (a count is not one)
    scores = {c: (0.0, 1.0) for c in cols if frame[c].astype(float).between(0.0, 1.0).all()}
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
                row[c], row[f"{c} low"], row[f"{c} high"] = _graded_mean_ci(values.to_numpy(), c, n, level, seed,
                                                                             limits.get(c, scores.get(c)))  # fmt: skip
        rows.append(row)
    out = pd.DataFrame(rows).set_index(by_cols)
    return out[["n"] + [x for c in cols for x in (c, f"{c} low", f"{c} high")]]


def _limits(bounds: Any, cols: list[str]) -> dict[str, Any]:
    """``bounds`` of :func:`group_means_ci` as ``{column: (low, high) or None}``."""
    if bounds is None:
        return {}
    if isinstance(bounds, dict):
        unknown = sorted(set(map(str, bounds)) - set(cols))
        if unknown:
            raise ValueError(f"bounds names {unknown}, which are not among columns {cols}")
        pairs = dict(bounds)
    else:
        pairs = dict.fromkeys(cols, bounds)
    for c, pair in pairs.items():
        if not isinstance(pair, tuple | list) or len(pair) != 2:
            raise ValueError(f"bounds for {c!r} must be (low, high), the range one item's score can take, got {pair!r}")
        lo, hi = (args.finite_number(f"bounds[{c!r}]", v) for v in pair)
        if not lo < hi:
            raise ValueError(f"bounds for {c!r} must be (low, high) with low < high, got {pair!r}")
        pairs[c] = (lo, hi)
    return pairs


def _graded_mean_ci(x: Any, column: str, n: int, level: float, seed: int, limits: Any) -> tuple[float, float, float]:
    """One group's graded mean: the percentile bootstrap, or the findings helper's sparse bound when a resample
    without spread is likelier than ``(1 - level) / SPARSE`` (see :func:`group_means_ci`)."""

    alpha = alpha_of(args.finite_number("level", level, minimum=0.5, maximum=0.999))
    if flat_chance(x) <= alpha / SPARSE:
        return bootstrap_ci(x, n=n, level=level, seed=seed)
    if limits is None:
        raise ValueError(f"column {column!r}: few of a group's {len(x)} values differ from a common value, so its "
                         "interval is the sparse bound, which needs the range one item can take, and the column is not "
                         f"a score in [0, 1] (a count?): pass bounds={{{column!r}: (low, high)}}, or leave it out of "
                         "columns and describe it")  # fmt: skip
    lo, hi = limits
    if float(x.min()) < lo or float(x.max()) > hi:
        raise ValueError(f"column {column!r}: its values lie in [{float(x.min()):g}, {float(x.max()):g}], "
                         f"outside bounds ({lo:g}, {hi:g}): pass bounds={{{column!r}: (low, high)}} holding every "
                         "item")  # fmt: skip
    mean = float(x.mean())
    ctx = Ctx(alpha, mean, n, seed, 2, (lo, hi), None, None, f"the mean of {column!r}")
    iv = sparse("graded mean", x, ctx, (lo, hi))
    return mean, float(iv.low), float(iv.high)
