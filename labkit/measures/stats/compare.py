"""Comparing two systems, or many pairs of them: the interval of the *difference*, and how many were scanned.

Taught in 03_metrics_by_hand (the rules) and used by every chapter that says "A beats B". Which tool for which
question:

- Two systems on the **same** queries (two retrievers, two readers, two chunkings): :func:`diff_ci` with
  ``paired=True``, the interval of the mean per-query difference. Each query's difficulty cancels in its own
  difference, so this interval is narrower than either system's own (and never read two overlapping
  intervals as "no difference": :func:`diff_ci` is the test, the overlap is not).
- Two groups of **different** queries (the easy slice against the hard slice): :func:`diff_ci` with
  ``paired=False`` (each group resampled on its own); for two proportions, :func:`newcombe` (Newcombe's hybrid
  score interval, built from the two Wilson intervals, right at 0/n and n/n); for two proportions on the
  **same** items (a hit with and without a reranker), :func:`paired_newcombe`.
- "A suffers more than B" (a model loses more from short to long prompts than another): that is a difference
  of differences, :func:`interaction_ci`, never two separate tests, one resolved and one not.
- A p-value, where a chapter reports one: :func:`permutation_p`, exact for small samples.
- A cell that scans several comparisons, or any comparison a chapter states a verdict on: a
  :class:`findings.Family` declared before the numbers are read (``findings.compare_many`` for a table of them),
  whose verdict, simultaneous interval and adjusted p agree by construction. :func:`holm` is here to be taught
  (Holm 1979: the chance of any false "resolved" stays at most 5 %); no helper in this module decides a verdict.

An interval that holds 0 *bounds* the effect (it is no larger than its ends); it never shows the effect is 0.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

from labkit import SEED
from labkit.core import args
from labkit.measures.stats.intervals import bootstrap_ci, wilson

__all__ = ["diff_ci", "newcombe", "paired_newcombe", "permutation_p", "holm", "interaction_ci", "MAX_EXACT"]

MAX_EXACT = 2**16
"""Up to this many rearrangements :func:`permutation_p` enumerates them all (an exact p); beyond, it samples."""


def _pair(a: Any, b: Any, paired: bool) -> tuple[Any, Any]:
    import numpy as np

    x = np.asarray(args.numbers("a", a, allow_empty=False), dtype=float)
    y = np.asarray(args.numbers("b", b, allow_empty=False), dtype=float)
    if paired and len(x) != len(y):
        raise ValueError(
            f"a has {len(x)} items and b {len(y)}: a paired comparison needs one value per item in each "
            "(the same queries in the same order), or pass paired=False for two different groups"
        )
    return x, y


def diff_ci(
    a: Sequence[float], b: Sequence[float], paired: bool = True, n: int = 2000, level: float = 0.95, seed: int = SEED
) -> dict[str, Any]:
    """``mean(a) - mean(b)`` with its percentile-bootstrap interval.

    ``paired=True``: ``a[i]`` and ``b[i]`` belong to the same item (query), so the items are resampled and the
    interval is that of the mean per-item difference. ``paired=False``: two different groups, each resampled
    on its own. Returns ``difference``, ``low``, ``high``, the sizes, and ``sd`` of the per-item differences
    (paired) or of the two groups (not paired), so a chapter can show why pairing narrows the interval.
    """
    import numpy as np

    x, y = _pair(a, b, paired)
    n = args.whole_number("n", n, minimum=100, maximum=100_000)
    if paired:
        d, low, high = bootstrap_ci(x - y, n=n, level=level, seed=seed)
        return {"difference": d, "low": low, "high": high, "n_a": len(x), "n_b": len(y), "paired": True,
                "sd": float(np.std(x - y, ddof=1)) if len(x) > 1 else 0.0}  # fmt: skip
    level = args.finite_number("level", level, minimum=0.5, maximum=0.999)
    rng = np.random.default_rng(seed)
    boots = x[rng.integers(0, len(x), (n, len(x)))].mean(axis=1) - y[rng.integers(0, len(y), (n, len(y)))].mean(axis=1)
    low, high = np.quantile(boots, [(1 - level) / 2, 1 - (1 - level) / 2])
    return {"difference": float(x.mean() - y.mean()), "low": float(low), "high": float(high), "n_a": len(x),
            "n_b": len(y), "paired": False, "sd": (float(np.std(x, ddof=1)) if len(x) > 1 else 0.0,
                                                   float(np.std(y, ddof=1)) if len(y) > 1 else 0.0)}  # fmt: skip


def newcombe(x1: int, n1: int, x2: int, n2: int, level: float = 0.95) -> tuple[float, float, float]:
    """``(p1 - p2, low, high)`` for two independent proportions: Newcombe's hybrid score interval (1998, method
    10), built from each proportion's Wilson interval. For the same items judged twice, use
    :func:`paired_newcombe` instead."""
    p1, l1, u1 = wilson(x1, n1, level)
    p2, l2, u2 = wilson(x2, n2, level)
    d = p1 - p2
    low = d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)
    high = d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)
    return d, max(-1.0, low), min(1.0, high)


def _zero_one(name: str, values: Any) -> list[int]:
    out = args.numbers(name, values, allow_empty=False)
    bad = next((i for i, v in enumerate(out) if v not in (0, 1)), None)
    if bad is not None:
        raise ValueError(f"{name}[{bad}] is {out[bad]!r}: give 0/1 outcomes (a hit, a right answer), one per item")
    return [int(v) for v in out]


def paired_newcombe(a: Sequence[Any], b: Sequence[Any], level: float = 0.95) -> tuple[float, float, float]:
    """``(mean(a) - mean(b), low, high)`` for two 0/1 outcomes of the **same** items (a hit with and without a
    reranker, per query): Newcombe's score interval for paired proportions (Newcombe 1998, Stat Med 17:2635,
    method 10), built from the two Wilson intervals and the correlation of the pairs.

    Unlike a bootstrap of the per-item differences, it never collapses: when no item changed (no discordant
    pair) the difference is 0 and the interval still bounds it, wider for fewer items.
    """
    x, y = _zero_one("a", a), _zero_one("b", b)
    if len(x) != len(y):
        raise ValueError(f"a has {len(x)} items and b {len(y)}: paired outcomes need one value per item in each")
    n = len(x)
    both = sum(1 for i, j in zip(x, y, strict=True) if i and j)
    only_a = sum(1 for i, j in zip(x, y, strict=True) if i and not j)
    only_b = sum(1 for i, j in zip(x, y, strict=True) if j and not i)
    neither = n - both - only_a - only_b
    p1, l1, u1 = wilson(both + only_a, n, level)
    p2, l2, u2 = wilson(both + only_b, n, level)
    num = both * neither - only_a * only_b
    if num > 0:
        num = max(num - n / 2, 0.0)  # Newcombe's continuity adjustment of a positive correlation
    den = (both + only_a) * (only_b + neither) * (both + only_b) * (only_a + neither)
    phi = num / math.sqrt(den) if den else 0.0
    d = p1 - p2
    low = d - math.sqrt(max((p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2, 0.0))
    high = d + math.sqrt(max((u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2, 0.0))
    return d, max(-1.0, low), min(1.0, high)


def permutation_p(
    a: Sequence[float], b: Sequence[float], paired: bool = True, n: int = 20_000, seed: int = SEED
) -> float:
    """Two-sided permutation p-value of ``mean(a) - mean(b)``.

    Paired: each item's difference keeps or flips its sign (the two systems swapped on that query); not paired:
    the group labels are shuffled. Exact (every rearrangement) when there are at most :data:`MAX_EXACT` of them,
    otherwise ``n`` random ones with the (count + 1) / (n + 1) correction, so a p is never 0.
    """
    import numpy as np

    x, y = _pair(a, b, paired)
    n = args.whole_number("n", n, minimum=100, maximum=1_000_000)
    tol = 1e-12
    if paired:
        d = x - y
        observed = abs(d.mean())
        if 2 ** len(d) <= MAX_EXACT:
            signs = np.array(list(itertools.product((1.0, -1.0), repeat=len(d))))
            return float(np.mean(np.abs((signs * d).mean(axis=1)) >= observed - tol))
        rng = np.random.default_rng(seed)
        signs = rng.choice((1.0, -1.0), size=(n, len(d)))
        hits = int(np.sum(np.abs((signs * d).mean(axis=1)) >= observed - tol))
        return (hits + 1) / (n + 1)
    pooled = np.concatenate([x, y])
    observed = abs(x.mean() - y.mean())
    if math.comb(len(pooled), len(x)) <= MAX_EXACT:
        stats = []
        for idx in itertools.combinations(range(len(pooled)), len(x)):
            mask = np.zeros(len(pooled), dtype=bool)
            mask[list(idx)] = True
            stats.append(abs(pooled[mask].mean() - pooled[~mask].mean()))
        return float(np.mean(np.array(stats) >= observed - tol))
    rng = np.random.default_rng(seed)
    hits = 0
    for _ in range(n):
        perm = rng.permutation(pooled)
        hits += abs(perm[: len(x)].mean() - perm[len(x) :].mean()) >= observed - tol
    return (hits + 1) / (n + 1)


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values (Holm 1979), in the input's order.

    Reject every comparison whose adjusted p is below 0.05 and the chance of *any* false rejection among them
    stays at most 5 %, however many were scanned. Uniformly more powerful than Bonferroni (``p × m``).
    """
    ps = args.numbers("pvalues", pvalues, allow_empty=False, minimum=0)
    if any(p > 1 for p in ps):
        raise ValueError(f"pvalues must lie in [0, 1], got {max(ps)}")
    m = len(ps)
    order = sorted(range(m), key=lambda i: ps[i])
    out, running = [0.0] * m, 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * ps[i]))
        out[i] = running
    return out


def interaction_ci(
    d1: Sequence[float], d2: Sequence[float], paired: bool = False, n: int = 2000, level: float = 0.95,
    seed: int = SEED,
) -> dict[str, Any]:  # fmt: skip
    """A difference of differences, ``mean(d1) - mean(d2)``: does an effect differ between two groups?

    ``d1[i]`` is the effect on item ``i`` in group 1 (per question, the 0.5B's accuracy with ten passages minus
    with the gold alone), ``d2`` the same effect in group 2 (the 1.5B). With the same items in both
    (``paired=True``: both models on the same questions) the items are resampled together; otherwise each group
    on its own. This is the test "A suffers more than B" needs: two separate tests, one resolved and one not,
    do not show that the effects differ.
    """
    out = diff_ci(d1, d2, paired=paired, n=n, level=level, seed=seed)
    out["interaction"] = out.pop("difference")
    return out
