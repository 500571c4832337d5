"""One critical value for a whole family of means: the max-|t| over the family, from one set of resamples.

Each member ``j`` is a list of per-item values ``x_j`` (per-query differences of two systems, or scores minus the
value they are tested against), and the question is whether its mean is 0. Per resample the studentised
``|t*_j|`` of every member is computed and their **maximum** ``M*`` kept (single-step max-T, Westfall & Young
1993). From the same resamples:

- the adjusted p of member ``j`` is the share of resamples whose maximum reaches its observed ``|t_j|``
  (``(count + 1) / (resamples + 1)``; ``count / 2^n`` when every sign pattern is used);
- the critical value ``c`` is the order statistic of ``M*`` at which that p crosses ``alpha``, and the
  simultaneous interval of member ``j`` is ``mean(x_j) ± c · se(x_j)``.

So ``p <= alpha`` exactly when ``|t_j| > c``, which is exactly when the interval excludes 0: verdict and interval
are one count and cannot disagree. Two ways to resample:

- :func:`max_t_bootstrap` — the rule :mod:`findings` uses. Items are drawn with replacement (the same draw for
  members on the same items) and ``t*_j = (mean*_j − mean_j) / se*_j`` (the symmetric bootstrap-t, Hall 1988):
  it carries the skew of per-query differences into the far tail a family of 60 reads.
- :func:`max_t_sign_flip` — the permutation under "the two systems are interchangeable on every item": each
  difference keeps or flips its sign. Exact for that null (with one member it is ``compare.permutation_p``; for
  0/1 outcomes the exact McNemar p), but its null distribution is symmetric, so with skewed differences its
  intervals miss the mean: simultaneous coverage 0.49 for 60 comparisons of skewed differences at a nominal
  0.95, where the bootstrap-t keeps 0.96 (``tests/test_findings.py`` checks the bootstrap's).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from labkit import SEED
from labkit.core import args
from labkit.measures.stats.compare import MAX_EXACT

__all__ = ["max_t_bootstrap", "max_t_sign_flip", "MIN_TAIL", "needed_resamples"]

MIN_TAIL = 20
"""Fewest resamples that may lie beyond a critical value or a bound: a tail of 3 (a 0.9972 percentile of 2,000
resamples) moves with every seed. Below it the functions refuse and say how many resamples are needed."""
REL_TOL = 1e-12  # |t| computed along two float paths: ties within this relative distance count as reached


def needed_resamples(tail_share: Fraction | float) -> int:
    """Fewest resamples ``B`` with ``floor(tail_share · (B + 1)) >= MIN_TAIL``."""
    if not isinstance(tail_share, Fraction):
        tail_share = args.finite_number("tail_share", tail_share, minimum=0, maximum=1)
    if not 0 < tail_share <= 1:
        raise ValueError(f"tail_share must be a share in (0, 1], e.g. 0.05 / 60; got {tail_share}")
    return max(100, math.ceil(MIN_TAIL / Fraction(tail_share)) - 1)


def _abs_t(deviation: Any, sums_sq: Any, sums: Any, n: int) -> Any:
    """|deviation| / se from per-draw sums and sums of squares; inf (or 0 for no deviation) where the spread is 0."""
    import numpy as np

    mean = sums / n
    var = np.maximum((sums_sq - n * mean * mean) / (n - 1), 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.abs(deviation) / np.sqrt(var / n)
    spread = var > 1e-12 * sums_sq / n
    return np.where(spread, out, np.where(np.abs(deviation) > 1e-12 * (np.abs(sums) / n + 1e-300), np.inf, 0.0))


def _prepare(samples: Sequence[Any], alpha: Any, n: int, groups: Any) -> tuple[list, Fraction, int, dict]:
    import numpy as np

    xs = [np.asarray(args.numbers(f"samples[{j}]", x, allow_empty=False), dtype=float)
          for j, x in enumerate(args.sequence("samples", samples, allow_empty=False))]  # fmt: skip
    for j, x in enumerate(xs):
        if len(x) < 2 or float(np.ptp(x)) == 0.0:
            raise ValueError(f"samples[{j}] needs at least 2 items that are not all equal (got {len(x)})")
    alpha = Fraction(alpha).limit_denominator(10**9) if isinstance(alpha, float) else Fraction(alpha)
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1), got {float(alpha)}")
    n = args.whole_number("n", n, minimum=100, maximum=10_000_000)
    keys = [len(x) for x in xs] if groups is None else list(groups)
    if len(keys) != len(xs):
        raise ValueError(f"groups has {len(keys)} keys for {len(xs)} members")
    by_key: dict[Any, list[int]] = {}
    for j, key in enumerate(keys):
        by_key.setdefault(key, []).append(j)
    for members in by_key.values():
        if len({len(xs[j]) for j in members}) != 1:
            raise ValueError("members of one group must have the same items (the same number, in the same order)")
    return xs, alpha, n, by_key


def _tail(alpha: Fraction, draws: int, exact: bool, what: str, members: int) -> int:
    """``k``: resolved when at most ``k`` draws reach ``|t|``; the critical value is the ``(k + 1)``-th largest."""
    if exact:
        return math.floor(alpha * draws)
    k = math.floor(alpha * (draws + 1)) - 1  # (count + 1) / (draws + 1) <= alpha
    if k + 1 < MIN_TAIL:
        raise ValueError(f"{what}: {members} member(s) at a tail of {float(alpha):.3g} leave {k + 1} of {draws:,} "
                         f"resamples beyond the critical value (at least {MIN_TAIL} are needed for a stable one); use "
                         f"n >= {needed_resamples(alpha):,} resamples")  # fmt: skip
    return k


def _finish(xs: list, maxima: Any, t_obs: Any, k: int, exact: bool, what: str) -> dict[str, Any]:
    import numpy as np

    draws = len(maxima)
    ordered = np.sort(maxima)[::-1]
    c_eff = float(ordered[k]) / (1 - REL_TOL)
    if not math.isfinite(c_eff):
        share = float(np.mean(np.isinf(maxima)))
        raise ValueError(f"{what}: in {share:.1%} of the resamples some member's items were all equal (no spread), so "
                         "the largest |t| has no finite critical value: those members have too few items that differ; "
                         "give them more items or their own kind ('paired 0/1': paired Newcombe)")  # fmt: skip
    counts = [int(np.sum(maxima >= t * (1 - REL_TOL))) for t in t_obs]
    p = [Fraction(cnt, draws) if exact else Fraction(cnt + 1, draws + 1) for cnt in counts]
    resolved = [cnt <= k for cnt in counts]
    means = [float(x.mean()) for x in xs]
    ses = [float(np.std(x, ddof=1) / math.sqrt(len(x))) for x in xs]
    low, high = [], []
    for mean, se, ok in zip(means, ses, resolved, strict=True):
        half = c_eff * se
        if ok != (abs(mean) > half):  # the two float paths of |t| > c disagree only at a knife edge: follow the count
            if abs(abs(mean) - half) > 1e-9 * half:
                raise AssertionError(f"{what}: count and interval disagree beyond rounding: a bug")
            half = abs(mean) * (1 - 1e-15) if ok else abs(mean)
        low.append(mean - half)
        high.append(mean + half)
    return {"mean": means, "se": ses, "t": [float(t) for t in t_obs], "c": c_eff, "low": low, "high": high, "p": p,
            "resolved": resolved, "draws": draws, "exact": exact, "tail": k + (0 if exact else 1)}  # fmt: skip


def max_t_bootstrap(
    samples: Sequence[Any],
    alpha: float | Fraction = 0.05,
    n: int = 10_000,
    seed: Any = SEED,
    groups: Sequence[Any] | None = None,
    what: str = "this family",
    draws: Any = None,
) -> dict[str, Any]:
    """Simultaneous intervals and single-step adjusted p-values for several means at once (bootstrap-t max).

    ``samples[j]``: member ``j``'s per-item values (at least 2, not all equal), its mean tested against 0.
    Members in the same ``groups`` key (by default: of the same length) are resampled with the same items, so
    items must be in the same order across them; other groups are resampled on their own. ``draws`` (for
    checking by hand): the resamples as rows of item indices, for a single group.

    Returns ``mean``, ``se``, ``t``, ``low``, ``high`` (lists), ``c`` (the critical |t|), ``p`` (adjusted, exact
    fractions), ``resolved`` (``p <= alpha``: the interval excludes 0), ``draws``, ``tail``. Raises ``ValueError``
    when fewer than :data:`MIN_TAIL` resamples would lie beyond ``c``, naming the resamples needed.
    """
    import numpy as np

    xs, alpha, n, by_key = _prepare(samples, alpha, n, groups)
    if draws is not None:
        draws = np.asarray(draws, dtype=int)
        if len(by_key) != 1 or draws.ndim != 2 or draws.shape[1] != len(xs[0]):
            raise ValueError("draws must be rows of item indices for a single group")
        n = len(draws)
    k = _tail(alpha, n, False, what, len(xs))
    means = np.array([x.mean() for x in xs])
    t_obs = np.abs(means) / np.array([np.std(x, ddof=1) / math.sqrt(len(x)) for x in xs])
    rng = np.random.default_rng(seed)
    maxima = np.zeros(n)
    for members in by_key.values():
        size = len(xs[members[0]])
        values = np.stack([xs[j] for j in members], axis=1)
        block = max(1, 2_000_000 // (size * len(members)))
        for start in range(0, n, block):
            stop = min(n, start + block)
            if draws is None:
                counts = rng.multinomial(size, np.full(size, 1.0 / size), size=stop - start).astype(float)
            else:
                counts = np.stack([np.bincount(row, minlength=size) for row in draws[start:stop]]).astype(float)
            sums = counts @ values
            t = _abs_t(sums / size - means[members], counts @ (values * values), sums, size)
            np.maximum(maxima[start:stop], t.max(axis=1), out=maxima[start:stop])
    return _finish(xs, maxima, t_obs, k, False, what)


def max_t_sign_flip(
    differences: Sequence[Any],
    alpha: float | Fraction = 0.05,
    n: int = 10_000,
    seed: Any = SEED,
    groups: Sequence[Any] | None = None,
    what: str = "this family",
) -> dict[str, Any]:
    """The same, by sign flips: exact under "interchangeable on every item" (see the module docstring for why
    :mod:`findings` uses :func:`max_t_bootstrap` instead). With a single group of at most 16 items every one of
    the ``2^n`` patterns is used (``exact``); otherwise ``n`` random ones."""
    import numpy as np

    ds, alpha, n, by_key = _prepare(differences, alpha, n, groups)
    exact = len(by_key) == 1 and 2 ** len(ds[0]) <= MAX_EXACT
    draws = 2 ** len(ds[0]) if exact else n
    k = _tail(alpha, draws, exact, what, len(ds))
    squares = np.array([float(d @ d) for d in ds])
    sums = np.array([d.sum() for d in ds])
    t_obs = _abs_t(sums / [len(d) for d in ds], squares, sums, np.array([len(d) for d in ds]))
    rng = np.random.default_rng(seed)
    every = np.array(list(itertools.product((1.0, -1.0), repeat=len(ds[0])))) if exact else None
    maxima = np.zeros(draws)
    block = max(1, 4_000_000 // max(len(d) for d in ds))
    for start in range(0, draws, block):
        stop = min(draws, start + block)
        for members in by_key.values():
            size = len(ds[members[0]])
            signs = every[start:stop] if exact else rng.choice((1.0, -1.0), size=(stop - start, size))
            flipped = signs @ np.stack([ds[j] for j in members], axis=1)
            t = _abs_t(flipped / size, squares[members], flipped, size)
            np.maximum(maxima[start:stop], t.max(axis=1), out=maxima[start:stop])
    return _finish(ds, maxima, t_obs, k, exact, what)
