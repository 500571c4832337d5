"""The kinds whose interval is a percentile bootstrap (:mod:`kinds` chooses): two graded groups, Cohen's kappa, and
a derived figure whose inputs are resampled together."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from labkit.core import args
from labkit.measures.stats.agreement import cohen_kappa
from labkit.measures.stats.kindbase import (
    SPARSE,
    Ctx,
    Interval,
    aligned,
    boot_means,
    closed,
    flat_chance,
    percentile,
    share_bound,
    span,
    too_few,
    two,
)
from labkit.measures.stats.score import wilson_z

__all__ = ["two_graded", "kappa", "derived"]


def two_graded(data: Any, ctx: Ctx) -> Interval:
    import numpy as np

    a, b = (np.asarray(args.numbers(k, v, allow_empty=False), float)
            for k, v in zip("ab", two(data, "two graded groups"), strict=True))  # fmt: skip
    est, na, nb = float(a.mean() - b.mean()), len(a), len(b)
    if min(na, nb) < ctx.min_n:
        return too_few("two graded groups", est, (na, nb), ctx,
                       f"{na} and {nb} items; at least {ctx.min_n} in each are needed")  # fmt: skip
    if float(np.ptp(a)) == 0 and float(np.ptp(b)) == 0:
        lo, hi = span([*a, *b], ctx.bounds)
        ca, cb = float(a[0]), float(b[0])

        def at(z: float) -> tuple[float, float]:
            ua, ub = z * z / (na + z * z), z * z / (nb + z * z)
            return ca - ua * (ca - lo) - cb - ub * (hi - cb), ca + ua * (hi - ca) - cb + ub * (cb - lo)

        return closed("two graded groups", est, at, ctx, (na, nb), "rule bound of each constant group, subtracted")
    chance = flat_chance(a) * flat_chance(b)  # neither group's resample moves: the difference lands on one value
    if chance > ctx.alpha / SPARSE:  # so often that a percentile bootstrap would pin an end there
        limits = span([], ctx.bounds, check=False)
        (at_a, va, ua, da), (at_b, vb, ub, db) = share_bound(a, limits), share_bound(b, limits)

        def at(z: float) -> tuple[float, float]:
            (la, ha), (lb, hb) = at_a(z), at_b(z)
            return la - hb, ha - lb

        words = (f"too few items differ for the bootstrap (a resample has no spread with chance {chance:.2g}): "
                 f"sparse bound of each group, subtracted ({ua} above and {da} below {va:g} of {na}; {ub} above and "
                 f"{db} below {vb:g} of {nb}; each share at Wilson's bound, the items anywhere in [{limits[0]:g}, "
                 f"{limits[1]:g}])")  # fmt: skip
        return closed("two graded groups", est, at, ctx, (na, nb), words)
    rng = np.random.default_rng(ctx.seed)
    boots = boot_means(a, ctx.n, rng) - boot_means(b, ctx.n, rng)
    return percentile("two graded groups", est, boots, ctx, (na, nb),
                      f"percentile bootstrap, each group resampled on its own ({ctx.n:,} resamples)")  # fmt: skip


def kappa(data: Any, ctx: Ctx) -> Interval:
    import numpy as np

    a, b, _ = aligned(*two(data, "kappa"))
    cats = sorted(set(a) | set(b), key=str)
    n, k = len(a), len(cats)
    if n < ctx.min_n or k < 2:
        why = f"{n} items; at least {ctx.min_n} are needed" if n < ctx.min_n else "one label only: kappa is undefined"
        return too_few("kappa", None, n, ctx, why)
    est = cohen_kappa(a, b)
    index = {c: i for i, c in enumerate(cats)}
    ia, ib = np.array([index[x] for x in a]), np.array([index[x] for x in b])
    rng, boots = np.random.default_rng(ctx.seed), []
    for start in range(0, ctx.n, 2000):
        idx = rng.integers(0, n, (min(ctx.n, start + 2000) - start, n))
        codes = ia[idx] * k + ib[idx] + np.arange(len(idx))[:, None] * k * k
        table = np.bincount(codes.ravel(), minlength=len(idx) * k * k).reshape(len(idx), k, k) / n
        po, pe = np.trace(table, axis1=1, axis2=2), (table.sum(axis=2) * table.sum(axis=1)).sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            boots.append(np.where(1 - pe > 1e-12, (po - pe) / (1 - pe), np.nan))
    boots = np.concatenate(boots)
    defined = boots[~np.isnan(boots)]
    undefined = ctx.n - len(defined)
    share = f"; {undefined:,} of {ctx.n:,} resamples ({undefined / ctx.n:.1%}) had one class, kappa undefined, left out"
    words = f"percentile bootstrap of Cohen's kappa over {n} items{share if undefined else ''}"
    details = {"undefined resamples": undefined, "undefined share": undefined / ctx.n}
    s = np.sort(defined)
    k2 = math.floor(ctx.alpha / 2 * (len(s) + 1))
    if k2 >= 1 and s[len(s) - k2] >= 1.0 and est > ctx.null:  # the upper end is kappa's maximum: bound one side
        one = percentile("kappa", est, s, ctx, n, words + "; one-sided: the upper end is the maximum 1", True, details)
        if one.low is not None:
            return one
        agree = sum(x == y for x, y in zip(a, b, strict=True))
        ra, rb = np.bincount(ia, minlength=k) / n, np.bincount(ib, minlength=k) / n
        pe = float(ra @ rb)

        def at(z: float) -> tuple[float, float]:
            return (wilson_z(agree, n, z)[0] - pe) / (1 - pe), 1.0

        return closed("kappa", est, at, ctx, n, f"rule bound: {agree} of {n} agree; Wilson's one-sided bound of the "
                      "agreement, chance agreement held at its observed value", sides=1, details=details)  # fmt: skip
    return percentile("kappa", est, s, ctx, n, words, details=details)


def derived(data: Any, ctx: Ctx) -> Interval:
    import numpy as np

    fn = args.function("fn", ctx.fn, example="lambda v: v['hits'].mean() / v['judged'].mean()")
    sets = [data] if isinstance(data, Mapping) else list(args.sequence("data", data, allow_empty=False))
    arrays: dict[str, Any] = {}
    sizes: list[int] = []
    for i, group in enumerate(sets):
        group = sets[i] = args.mapping(f"data[{i}]", group, example="{'says': [...], 'truth': [...]}")
        if not group:
            raise ValueError(f"data[{i}] holds no inputs")
        if len({len(v) for v in group.values()}) != 1:
            raise ValueError(f"the inputs of one item set must have one value per item: lengths {dict(group)}")
        for name, values in group.items():
            if name in arrays:
                raise ValueError(f"input {name!r} appears twice")
            arrays[name] = np.asarray(list(values))
        sizes.append(len(arrays[name]))

    def value(given: dict) -> float | None:
        try:
            v = fn(given)
        except (ZeroDivisionError, FloatingPointError):
            return None
        return None if v is None or not math.isfinite(float(v)) else float(v)

    est = value(dict(arrays))
    if est is None:
        raise ValueError("fn gives no finite value on the data themselves: nothing to put an interval on")
    if min(sizes) < ctx.min_n:
        return too_few("derived", est, tuple(sizes), ctx, f"{min(sizes)} items; at least {ctx.min_n} are needed")
    rng = np.random.default_rng(ctx.seed)
    if ctx.strata is not None and not any(ctx.strata in g for g in sets):
        raise ValueError(f"strata names {ctx.strata!r}, which is not an input: {sorted(arrays)}")
    cells = [[np.flatnonzero(arrays[ctx.strata] == v) for v in np.unique(arrays[ctx.strata])] if ctx.strata in g
             else None for g in sets]  # fmt: skip
    boots, undefined = [], 0
    for _ in range(ctx.n):
        drawn = {}
        for group, size, within in zip(sets, sizes, cells, strict=True):
            if within is None:
                idx = rng.integers(0, size, size)
            else:  # each stratum (a true class) keeps its count, so rates within it stay defined
                idx = np.concatenate([rng.choice(c, len(c)) for c in within])
            drawn.update({name: arrays[name][idx] for name in group})
        v = value(drawn)
        undefined += v is None
        if v is not None:
            boots.append(v)
    left_out = f", {undefined:,} undefined ({undefined / ctx.n:.1%}) left out" if undefined else ""
    words = (f"derived figure: percentile bootstrap over items, every input of an item set resampled together "
             f"({ctx.n:,} resamples{left_out})")  # fmt: skip
    return percentile("derived", est, boots, ctx, tuple(sizes) if len(sizes) > 1 else sizes[0], words,
                      details={"undefined resamples": undefined, "undefined share": undefined / ctx.n})  # fmt: skip
