"""The interval a number gets follows its kind: :func:`interval_for` is the one place that chooses.

==============================  ==============================================  ======================================
kind                            data                                            interval (and the p that agrees)
==============================  ==============================================  ======================================
``"proportion"``                0/1 per item; ``null`` is required              Wilson score; the score test's p
``"two independent proportions"`` ``(a, b)``: 0/1 per item, different items     Newcombe hybrid score (method 10)
``"paired 0/1"``                ``(a, b)``: 0/1 per item, the same items        paired Newcombe; exact McNemar p beside
``"graded mean"``               a score per item; ``null`` is required          studentised bootstrap (bootstrap-t)
``"paired graded"``             ``(a, b)``: a score per item, the same items    studentised bootstrap of the differences
``"two graded groups"``         ``(a, b)``: a score per item, different items   percentile bootstrap, each group alone
``"kappa"``                     ``(labels a, labels b)`` on the same items      percentile bootstrap of Cohen's kappa
``"derived"``                   ``{name: per-item values}`` and ``fn``          percentile bootstrap, inputs together
==============================  ==============================================  ======================================

Rules every kind keeps:

- Fewer than ``min_n`` items (:data:`MIN_N` = 10, per group): no interval at all, and the result says so. Below
  ten items a bootstrap's resamples repeat a handful of values and even the bootstrap-t covers 87-90 % at a
  nominal 95 % for skewed data (simulated): the ends of an interval would be read as knowledge they are not.
- Few items differ from a common value (a resample without spread likelier than ``alpha / SPARSE``): paired 0/1 ->
  paired Newcombe with the exact McNemar p; else :func:`kindbase.sparse`, the shares above and below the common
  value at Wilson's bound. A percentile bootstrap there pins an end at that value (every resample in which nothing
  differs gives it): "[0.000, 0.096]", read as ruling out every drop.
- Every value equal: the bootstrap would give ``[x, x]``. The rule bound instead: at most Wilson's bound for
  "0 of n differ" may differ, anywhere in the score's range (``bounds``, default [0, 1]); for n of n 0/1 values
  that is exactly Wilson's interval. No kind ever returns a zero-width interval.
- Kappa near 1: when the upper percentile reaches kappa's maximum 1 the bound is one-sided (``kappa >= low``);
  resamples where kappa is undefined (one class only) are left out and their share is reported.
- A percentile bound must have at least :data:`maxt.MIN_TAIL` resamples beyond it; otherwise ``ValueError`` names
  the resamples needed (a level is never capped in silence).
- ``p <= alpha`` exactly when the interval excludes ``null``: resampled kinds count both from the same resamples;
  closed-form kinds invert their own interval (:func:`score.inverted_p`; for Wilson that is the score test).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from labkit import SEED
from labkit.core import args
from labkit.measures.stats.intervals import fmt_ci
from labkit.measures.stats.kindbase import (
    SPARSE,
    Ctx,
    Interval,
    aligned,
    alpha_of,
    binary,
    clipped,
    closed,
    flat_chance,
    max_t_words,
    paired_differences,
    reconcile,
    rule,
    score_range,
    shifted,
    span,
    sparse,
    too_few,
    two,
)
from labkit.measures.stats.maxt import max_t_bootstrap
from labkit.measures.stats.resampled import derived, kappa, two_graded
from labkit.measures.stats.score import mcnemar_exact_p, newcombe_z, paired_newcombe_z, wilson_z

__all__ = ["interval_for", "interval", "fmt_interval", "KINDS", "MIN_N", "SPARSE"]

KINDS = ("proportion", "two independent proportions", "paired 0/1", "graded mean", "paired graded",
         "two graded groups", "kappa", "derived")  # fmt: skip
MIN_N = 10
NEEDS_NULL = ("proportion", "graded mean", "derived")


def _proportion(data: Any, ctx: Ctx) -> Interval:
    x = binary("data", data)
    n, k = len(x), sum(x)
    if n < ctx.min_n:
        return too_few("proportion", k / n, n, ctx, f"{n} items; at least {ctx.min_n} are needed")
    if not 0 < ctx.null < 1:
        raise ValueError(f"a proportion's null must lie strictly between 0 and 1, got {ctx.null}")
    p = math.erfc(abs(k / n - ctx.null) / math.sqrt(ctx.null * (1 - ctx.null) / n) / math.sqrt(2))
    return closed("proportion", k / n, lambda z: wilson_z(k, n, z), ctx, n,
                  f"Wilson score interval of {k}/{n}; p of the score test against {ctx.null:g}", p)  # fmt: skip


def _two_proportions(data: Any, ctx: Ctx) -> Interval:
    a, b = (binary(name, v) for name, v in zip("ab", two(data, "two independent proportions"), strict=True))
    (xa, na), (xb, nb) = (sum(a), len(a)), (sum(b), len(b))
    if min(na, nb) < ctx.min_n:
        return too_few("two independent proportions", xa / na - xb / nb, (na, nb), ctx,
                       f"{na} and {nb} items; at least {ctx.min_n} in each are needed")  # fmt: skip
    words = f"Newcombe's hybrid score interval of {xa}/{na} - {xb}/{nb}; p by inverting it"
    return closed("two independent proportions", xa / na - xb / nb, lambda z: newcombe_z(xa, na, xb, nb, z), ctx,
                  (na, nb), words)  # fmt: skip


def _paired_binary(data: Any, ctx: Ctx) -> Interval:
    a, b, _ = aligned(*two(data, "paired 0/1"))
    a, b = binary("a", a), binary("b", b)
    n, est = len(a), (sum(a) - sum(b)) / len(a)
    if n < ctx.min_n:
        return too_few("paired 0/1", est, n, ctx, f"{n} items; at least {ctx.min_n} are needed")
    only_a = sum(1 for i, j in zip(a, b, strict=True) if i and not j)
    only_b = sum(1 for i, j in zip(a, b, strict=True) if j and not i)
    mc = mcnemar_exact_p(only_a, only_b)
    words = (f"paired Newcombe score interval ({n} items, {only_a} + {only_b} changed); p by inverting it; the exact "
             f"McNemar p {mc:.3g} (unadjusted) is beside it")  # fmt: skip
    return closed("paired 0/1", est, lambda z: paired_newcombe_z(a, b, z), ctx, n, words,
                  details={"McNemar p": mc, "only a": only_a, "only b": only_b})  # fmt: skip


def _one_mean(kind: str, x: Any, ctx: Ctx, pairs: Any = None) -> Interval:
    """A mean of per-item values (or differences) against ``null``: the studentised bootstrap, alone; a rule bound
    when every value is equal; and when resamples without any spread are too likely for a finite critical value
    (few items differ), paired Newcombe for 0/1 pairs or else :func:`kindbase.sparse` (the shares that differ at
    Wilson's bound: a percentile bootstrap of such items pins an end at their common value)."""
    import numpy as np

    if len(x) < ctx.min_n:
        return too_few(kind, float(np.mean(x)), len(x), ctx, f"{len(x)} items; at least {ctx.min_n} are needed")
    if float(x.max() - x.min()) == 0:
        return rule(kind, float(x[0]), len(x), span(x.tolist(), ctx.bounds, difference=kind == "paired graded"), ctx)
    chance = flat_chance(x)
    if chance > ctx.alpha / SPARSE:
        why = (f"too few items differ for the bootstrap-t (a resample has no spread with chance {chance:.2g}), so "
               "decided alone: ")  # fmt: skip
        if pairs is not None and all(v in (0, 1) for v in (*pairs[0], *pairs[1])):
            iv = _paired_binary(pairs, ctx)
            return dataclasses.replace(iv, kind=kind, method=why + iv.method)
        # not a percentile bootstrap: its resamples in which nothing differs pin an end at the common value
        return sparse(kind, x, ctx, span([], ctx.bounds, kind == "paired graded", check=False), why)
    out = max_t_bootstrap([x - ctx.null], ctx.alpha, ctx.n, ctx.seed, what=ctx.what)
    p, ok = out["p"][0], out["resolved"][0]
    low, high = shifted(out["low"][0], out["high"][0], ctx.null, ok)
    raw = x if pairs is None else [*pairs[0], *pairs[1]]
    low, high, cut = clipped(low, high, score_range(raw, ctx.bounds, kind == "paired graded"), ctx.null)
    words = max_t_words(out, len(x)) + ("; cut to the range the mean can take" if cut else "")
    return Interval(kind, out["mean"][0] + ctx.null, low, high, reconcile(float(p), ok, ctx.alpha), ok, words,
                    len(x), ctx.null, float(1 - ctx.alpha), details={"critical |t|": out["c"]}, p_exact=p)  # fmt: skip


def _graded_mean(data: Any, ctx: Ctx) -> Interval:
    import numpy as np

    return _one_mean("graded mean", np.asarray(args.numbers("data", data, allow_empty=False), dtype=float), ctx)


def _paired_graded(data: Any, ctx: Ctx) -> Interval:
    a, b, _ = aligned(*two(data, "paired graded"))
    return _one_mean("paired graded", paired_differences(data)[0], ctx, (a, b))


_BY_KIND = {"proportion": _proportion, "two independent proportions": _two_proportions, "paired 0/1": _paired_binary,
            "graded mean": _graded_mean, "paired graded": _paired_graded, "two graded groups": two_graded,
            "kappa": kappa, "derived": derived}  # fmt: skip


def interval(kind: str, data: Any, alpha: Fraction, null: float | None = None, n: int = 2000, seed: Any = SEED,
             min_n: int = MIN_N, bounds: Any = None, fn: Callable | None = None, strata: str | None = None,
             what: str = "this interval") -> Interval:  # fmt: skip
    """:func:`interval_for` at an exact tail share ``alpha`` (a family's share): what :mod:`findings` calls."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    if null is None and kind in NEEDS_NULL:
        raise ValueError(f"a {kind!r} needs null=: the value it is tested against (a benchmark, the old rate, 1 for a "
                         "ratio), stated before the data are read")  # fmt: skip
    null = 0.0 if null is None else args.finite_number("null", null)
    n = args.whole_number("n", n, minimum=100, maximum=10_000_000)
    ctx = Ctx(alpha, null, n, seed, args.whole_number("min_n", min_n, minimum=2), bounds, fn, strata, what)
    return _BY_KIND[kind](data, ctx)


def interval_for(kind: str, data: Any, level: float = 0.95, null: float | None = None, n: int = 2000,
                 seed: int = SEED, min_n: int = MIN_N, bounds: Any = None, fn: Callable | None = None,
                 strata: str | None = None) -> Interval:  # fmt: skip
    """The interval of one number, chosen by its ``kind`` (one of :data:`KINDS`; see the module docstring).

    ``null``: the value the number is tested against (0 by default for differences and kappa; required for a
    proportion, a graded mean and a derived figure). ``n``: resamples (bootstrap, random sign patterns).
    ``bounds``: the range one item's score can take, used only when every value is equal (default [0, 1]).
    ``fn`` / ``strata``: for ``"derived"`` (see :func:`findings.derived_finding`).
    """
    return interval(kind, data, alpha_of(level), null, n, seed, min_n, bounds, fn, strata,
                    what=f"a single {kind} at {level:.4g}")  # fmt: skip


def fmt_interval(iv: Any, digits: int = 3) -> str:
    """An :class:`Interval` as a table cell: ``est [low, high]``; ``est, at least low (one-sided)`` when its kind
    called for a one-sided bound (a kappa whose resamples pin the top at 1); the reason when there is no interval."""
    if not isinstance(iv, Interval):
        raise ValueError(f"iv must be an Interval, as stats.interval_for returns; got {type(iv).__name__}")
    if iv.estimate is None or iv.low is None:
        return iv.method
    if iv.one_sided:
        return f"{iv.estimate:.{digits}f}, at least {iv.low:.{digits}f} (one-sided)"
    return fmt_ci(iv.estimate, iv.low, iv.high, digits)
