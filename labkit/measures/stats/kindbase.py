"""What every kind of interval shares (:mod:`kinds` chooses one; :mod:`findings` states it).

- :class:`Interval` — one number at one level: estimate, ends, the unadjusted p that agrees with them, words.
- :func:`alpha_of` — ``1 - level`` as an exact fraction, so counts of resamples are compared without rounding.
- :func:`closed` — a closed-form interval (a function of the normal quantile ``z``) and the p that inverts it.
- :func:`rule` — the bound when every value is equal: at most Wilson's bound for "0 of n differ" may differ, anywhere
  in the score's range; never ``[x, x]``.
- :func:`sparse` — the bound of a mean whose items mostly share one value ``v`` (too few differ for the
  bootstrap-t): the shares above and below ``v`` each at Wilson's bound, anywhere in the score's range. A
  bootstrap of such items pins an end at ``v`` exactly (every resample in which nothing differs gives ``v``).
- :func:`percentile` — the order-statistic percentile interval and the p counted from the same resamples:
  with ``k = floor(tail · (B + 1))``, the ends are the ``k``-th smallest and largest resamples and
  ``p = 2 · (min(#<= null, #>= null) + 1) / (B + 1)``, so ``p <= alpha`` exactly when ``null`` lies outside: an
  end that equals ``null`` holds it, never excludes it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from labkit.core import args
from labkit.measures.stats.compare import permutation_p
from labkit.measures.stats.maxt import MIN_TAIL, needed_resamples
from labkit.measures.stats.score import inverted_p, wilson_z, z_of

__all__ = ["SPARSE", "Interval", "Ctx", "alpha_of", "reconcile", "binary", "two", "aligned", "paired_differences",
           "span", "too_few", "closed", "rule", "share_bound", "sparse", "percentile", "boot_means", "max_t_words",
           "shifted", "flat_chance", "score_range", "clipped"]  # fmt: skip

SPARSE = 10
"""A mean leaves the bootstrap-t when a resample without spread has a chance above ``alpha / SPARSE``: such a
resample's |t| is infinite, and more of them than the tail would make the critical value infinite. Two graded
groups leave the percentile bootstrap on the same count: its resamples without spread pin an end."""


@dataclass(frozen=True)
class Interval:
    """One number with its interval at one level. ``p`` is unadjusted and agrees with the interval:
    ``p <= 1 - level`` exactly when ``resolved`` (the interval excludes ``null``). ``low is None``: too few items."""

    kind: str
    estimate: float | None
    low: float | None
    high: float | None
    p: float | None
    resolved: bool | None
    method: str
    n: Any
    null: float
    level: float
    one_sided: bool = False
    details: dict = field(default_factory=dict, compare=False, hash=False)
    p_exact: Fraction | None = field(default=None, compare=False, hash=False)


@dataclass(frozen=True)
class Ctx:
    alpha: Fraction
    null: float
    n: int
    seed: Any
    min_n: int
    bounds: tuple[float, float] | None
    fn: Callable | None
    strata: str | None
    what: str


def alpha_of(level: float) -> Fraction:
    """``1 - level`` as an exact fraction (0.95 -> 1/20), so counts and p are compared without rounding."""
    level = args.finite_number("level", level, minimum=0.5, strict_minimum=True)
    if level >= 1:
        raise ValueError(f"level must be below 1, got {level}")
    return 1 - Fraction(level).limit_denominator(10**9)


def reconcile(p: float, resolved: bool, alpha: Fraction) -> float:
    """``p`` moved onto the verdict's side of ``alpha`` when float rounding (or the bisection's 1e-12) left it a
    hair across: the verdict is read from the interval, and ``p <= alpha`` must say the same. Anything more than a
    hair (a relative 1e-6) is a bug, and raises rather than being hidden."""
    a = float(alpha)
    if (p > a) if resolved else (p <= a):
        if abs(p - a) > 1e-6 * a:
            raise AssertionError(f"p = {p!r} and the interval's verdict ({'resolved' if resolved else 'not shown'}) "
                                 f"disagree at alpha = {a!r}: a bug in the construction")  # fmt: skip
        return a if resolved else math.nextafter(a, 2.0)
    return p


def shifted(low: float, high: float, null: float, resolved: bool) -> tuple[float, float]:
    """An interval made for ``x - null`` moved back by ``null``: adding ``null`` may round an end onto it (1e-17
    becomes 0 beside 0.44), so an end is set a hair outside ``null`` again when the verdict is resolved, onto it when
    not; anything more than rounding is a bug and raises."""
    low, high = low + null, high + null
    outside = low > null or high < null
    if outside != resolved:
        near = min(abs(low - null), abs(high - null))
        if near > 1e-12 * (1 + abs(null)):
            raise AssertionError(f"the interval [{low}, {high}] and its verdict disagree about {null}: a bug")
        if resolved and abs(low - null) <= abs(high - null):
            low = math.nextafter(null, math.inf)
        elif resolved:
            high = math.nextafter(null, -math.inf)
        else:
            low, high = min(low, null), max(high, null)
    return low, high


def score_range(raw: Any, bounds: Any, difference: bool) -> tuple[float, float] | None:
    """The range a mean (``difference``: of paired differences) can take: from ``bounds``, else [0, 1] when every
    raw score lies in it, else ``None`` (unknown: nothing is cut)."""
    import numpy as np

    if bounds is None:
        raw = np.asarray(raw, dtype=float)
        if raw.size == 0 or float(raw.min()) < 0 or float(raw.max()) > 1:
            return None
    lo, hi = span([], bounds, check=False)
    return (lo - hi, hi - lo) if difference else (lo, hi)


def clipped(low: float, high: float, limits: tuple[float, float] | None, null: float) -> tuple[float, float, bool]:
    """A symmetric interval (mean ± c·se) cut to the range its mean can take (R@20 0.956 ± 0.045 is [0.911, 1],
    not [0.911, 1.001]): every value cut off is impossible, so coverage is kept; with ``null`` inside the range the
    verdict cannot change. Returns ``(low, high, cut)``."""
    if limits is None or not limits[0] <= null <= limits[1]:
        return low, high, False
    new = max(low, limits[0]), min(high, limits[1])
    return new[0], new[1], new != (low, high)


def flat_chance(x: Any) -> float:
    """The chance that a bootstrap resample of ``x`` holds one value only: ``sum over values v of share(v)^n``."""
    from collections import Counter

    n = len(x)
    return float(sum((c / n) ** n for c in Counter(float(v) for v in x).values()))


def binary(name: str, values: Any) -> list[int]:
    """0/1 per item (True/False and numpy bools too), or an error naming the item."""
    out = []
    for i, v in enumerate(args.sequence(name, values, allow_empty=False)):
        if hasattr(v, "dtype") and str(v.dtype) == "bool":
            v = bool(v)
        if v in (0, 1) and not (isinstance(v, float) and math.isnan(v)):
            out.append(int(v))
        else:
            raise ValueError(f"{name}[{i}] is {v!r}: give 0/1 (or True/False) per item")
    return out


def two(data: Any, kind: str) -> tuple[Any, Any]:
    """``data`` as the pair ``(a, b)`` a two-sample or paired kind takes."""
    if not isinstance(data, tuple | list) or len(data) != 2:
        raise ValueError(f"a {kind!r} number takes data=(a, b), one value per item in each, got {type(data).__name__}")
    return data[0], data[1]


def aligned(a: Any, b: Any) -> tuple[Any, Any, Any]:
    """Paired values in one order: pandas Series are matched by their index (its tuple is the items' key)."""
    if hasattr(a, "reindex") and hasattr(b, "reindex") and hasattr(a, "index"):
        if a.index.has_duplicates or set(a.index) != set(b.index) or len(a.index) != len(b.index):
            raise ValueError("paired Series must hold the same items (the same index, each once)")
        return list(a), list(b.reindex(a.index)), tuple(a.index)
    a, b = args.sequence("a", a, allow_empty=False), args.sequence("b", b, allow_empty=False)
    if len(a) != len(b):
        raise ValueError(f"a has {len(a)} items and b {len(b)}: paired values need one per item in each, same order")
    return a, b, ("items", len(a))


def paired_differences(data: Any) -> tuple[Any, Any]:
    """``(a - b per item, key)`` of paired graded data; the key names the items (comparisons with equal keys
    are resampled with the same items in :func:`maxt.max_t_bootstrap`)."""
    import numpy as np

    a, b, key = aligned(*two(data, "paired graded"))
    return np.asarray(args.numbers("a", a), float) - np.asarray(args.numbers("b", b), float), key


def span(values: Any, bounds: Any, difference: bool = False, check: bool = True) -> tuple[float, float]:
    """The range one item (or one difference) can take: ``bounds``, by default [0, 1]; ``check``: every value
    equals ``values[0]`` and must lie within it."""
    lo, hi = (0.0, 1.0) if bounds is None else (float(bounds[0]), float(bounds[1]))
    if not lo < hi:
        raise ValueError(f"bounds must be (low, high) with low < high, got {bounds}")
    out = (lo - hi, hi - lo) if difference else (lo, hi)
    if check and (min(values) < out[0] or max(values) > out[1]):
        raise ValueError(f"every value equals {values[0]:g}, outside {out}: pass bounds=(low, high), the range one "
                         "item's score can take, so the rule bound knows how far an unseen item may lie")  # fmt: skip
    return out


def too_few(kind: str, estimate: Any, n: Any, ctx: Ctx, why: str) -> Interval:
    return Interval(kind, estimate, None, None, None, None, why, n, ctx.null, float(1 - ctx.alpha),
                    details={"too few": why})  # fmt: skip


def closed(kind: str, est: float, at: Callable, ctx: Ctx, n: Any, method: str, p: float | None = None,
           sides: int = 2, details: dict | None = None) -> Interval:  # fmt: skip
    low, high = at(z_of(ctx.alpha, sides))
    if not high > low:
        raise AssertionError(f"{kind}: a closed-form interval of zero width [{low}, {high}]")
    resolved = (low > ctx.null) if sides == 1 else not (low <= ctx.null <= high)
    p = inverted_p(at, ctx.null, sides) if p is None else p
    return Interval(kind, est, low, high, reconcile(p, resolved, ctx.alpha), resolved, method, n, ctx.null,
                    float(1 - ctx.alpha), sides == 1, details or {})  # fmt: skip


def rule(kind: str, est: float, n: int, limits: tuple[float, float], ctx: Ctx) -> Interval:
    lo, hi = limits

    def at(z: float) -> tuple[float, float]:
        u = z * z / (n + z * z)  # Wilson's upper bound for 0 of n
        return est - u * (est - lo), est + u * (hi - est)

    words = (f"rule bound: all {n} values equal {est:.3f}, so at most Wilson's bound for 0 of {n} may differ, "
             f"anywhere in [{lo:g}, {hi:g}]")  # fmt: skip
    return closed(kind, est, at, ctx, n, words)


def share_bound(x: Any, limits: tuple[float, float], null: float = 0.0) -> tuple[Callable, float, int, int]:
    """``(at, v, up, down)`` for :func:`sparse`: ``at(z)`` gives the bound at the normal quantile ``z``."""
    import numpy as np

    x = np.asarray(x, dtype=float)
    lo, hi = limits
    if float(x.min()) < lo or float(x.max()) > hi:
        raise ValueError(f"values lie in [{float(x.min()):g}, {float(x.max()):g}], outside ({lo:g}, {hi:g}): pass "
                         "bounds=(low, high), the range one item's score can take, so the bound knows how far an "
                         "item that differs may lie")  # fmt: skip
    n = len(x)
    values, counts = np.unique(x, return_counts=True)
    v = float(max(zip(values, counts, strict=True), key=lambda t: (t[1], -abs(t[0] - null)))[0])
    up, down = int(np.sum(x > v)), int(np.sum(x < v))

    def at(z: float) -> tuple[float, float]:
        return v - (v - lo) * wilson_z(down, n, z)[1], v + (hi - v) * wilson_z(up, n, z)[1]

    return at, v, up, down


def sparse(kind: str, x: Any, ctx: Ctx, limits: tuple[float, float], head: str = "") -> Interval:
    """A mean of ``x`` whose items mostly share one value ``v`` (the commonest; a tie goes to the one nearest the
    null): ``up`` items lie above ``v`` and ``down`` below, of ``n``. Whatever the differing items' sizes, the mean
    lies within ``v - (v - lo) · P(below)`` and ``v + (hi - v) · P(above)``; each share is bounded by Wilson's
    interval of ``down / n`` and ``up / n``, so the interval is::

        [v - (v - lo) · wilson_upper(down, n),  v + (hi - v) · wilson_upper(up, n)]

    It never rests on resamples in which nothing differs (which pin a bootstrap's end at ``v``), holds the mean
    for every ``z``, and at ``up = down = 0`` it is :func:`rule`. ``p`` inverts it (1 when the null lies within
    the range the observed shares allow). For paired differences whose common value is the null, the exact
    sign-flip p over the differing items (the graded McNemar) is beside it, unadjusted."""
    import numpy as np

    x = np.asarray(x, dtype=float)
    lo, hi = limits
    at, v, up, down = share_bound(x, limits, ctx.null)
    n = len(x)
    details: dict = {"common value": v, "above": up, "below": down}
    words = (f"{head}sparse bound: {up} of {n} items above the common value {v:g} and {down} below it, each share "
             f"at Wilson's bound, the items anywhere in [{lo:g}, {hi:g}]; p by inverting it")  # fmt: skip
    if kind == "paired graded" and v == ctx.null == 0.0 and up + down:
        moved = x[x != v]
        details["sign-flip p"] = permutation_p(moved, np.zeros(len(moved)), n=max(ctx.n, 20_000), seed=ctx.seed)
        exact = "exact " if 2 ** len(moved) <= 2**16 else ""
        words += (f"; the {exact}sign-flip p over the {len(moved)} that differ, {details['sign-flip p']:.3g} "
                  "(unadjusted), is beside it")  # fmt: skip
    return closed(kind, float(x.mean()), at, ctx, n, words, details=details)


def percentile(kind: str, est: float, boots: Any, ctx: Ctx, n: Any, method: str, one_sided: bool = False,
               details: dict | None = None) -> Interval:  # fmt: skip
    """Order-statistic percentile interval and the p counted from the same resamples (see the module docstring)."""
    import numpy as np

    s = np.sort(np.asarray(boots, dtype=float))
    b = len(s)
    tail = ctx.alpha if one_sided else ctx.alpha / 2
    k = math.floor(tail * (b + 1))
    if k < MIN_TAIL:
        need = needed_resamples(tail)
        raise ValueError(f"{ctx.what}: a tail of {float(tail):.3g} leaves {k} of {b:,} (defined) resamples beyond "
                         f"the bound (at least {MIN_TAIL} are needed); use n >= {need:,} resamples")  # fmt: skip
    low, high = float(s[k - 1]), 1.0 if one_sided else float(s[b - k])
    below, above = int(np.sum(s <= ctx.null)), int(np.sum(s >= ctx.null))
    if one_sided:
        p, resolved = Fraction(below + 1, b + 1), below <= k - 1
    else:
        p, resolved = min(Fraction(1), Fraction(2 * (min(below, above) + 1), b + 1)), min(below, above) <= k - 1
    if not high > low:
        return too_few(kind, est, n, ctx, f"every resample gives {low:.3f}: the items cannot bound it")
    details = dict(details or {})
    if low == ctx.null or (high == ctx.null and not one_sided):  # pinned: resamples that land on the null exactly
        share = float(np.mean(s == ctx.null))
        details["resamples at the null"] = share
        method += (f"; {share:.1%} of resamples equal {ctx.null:g} exactly, so an end sits on it: it holds "
                   f"{ctx.null:g} and rules out nothing beyond")  # fmt: skip
    return Interval(kind, est, low, high, reconcile(float(p), resolved, ctx.alpha), resolved, method, n, ctx.null,
                    float(1 - ctx.alpha), one_sided, details, p)  # fmt: skip


def boot_means(x: Any, n: int, rng: Any) -> Any:
    import numpy as np

    out = np.empty(n)
    step = max(1, 4_000_000 // len(x))
    for start in range(0, n, step):
        stop = min(n, start + step)
        out[start:stop] = x[rng.integers(0, len(x), (stop - start, len(x)))].mean(axis=1)
    return out


def max_t_words(out: dict, items: Any, members: int = 1) -> str:
    """How a :func:`maxt.max_t_bootstrap` result was made, in words."""
    head = "studentised bootstrap (symmetric bootstrap-t)"
    if members > 1:
        head = f"max-|t| bootstrap over {members} members (studentised, single-step)"
    return f"{head} of {items} items, {out['draws']:,} resamples: mean ± {out['c']:.2f}·se, p from the same resamples"
