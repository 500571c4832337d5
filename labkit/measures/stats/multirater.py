"""How far a class of raters agrees: Fleiss' kappa and Krippendorff's alpha, with intervals that say their rules.

Taught with a class's labels (``python -m labkit labels merge``) and the instructor's simulated class.

Ratings come as ``{rater: {item: label}}`` (what :func:`~labkit.measures.stats.agreement.class_agreement` reads)
or as a raters x items list of lists; ``None`` (or NaN) is a missing rating, and a rater may skip any item.

- :func:`fleiss_from_counts` — Fleiss' kappa (1971) from an items x categories table of counts. Fleiss' formula
  needs the **same number of ratings on every item**; the raters themselves may differ from item to item. With
  missing ratings :func:`fleiss_report` keeps the items that carry the most common number of ratings and says
  how many it left out; Krippendorff's alpha is the figure that uses every item.
- :func:`krippendorff_alpha` — Krippendorff's alpha, nominal or ordinal, from the coincidence matrix: every item
  with at least two ratings counts, whatever the rest skipped (Krippendorff 2011, "Computing Krippendorff's
  alpha-reliability"). Ordinal alpha weighs a disagreement by how many ratings lie between the two labels.
- :func:`fleiss_report`, :func:`alpha_report` — the figure with its interval. The interval is a **percentile
  bootstrap over items** (seeded); a resample where the figure does not exist (one label only: chance agreement
  is 1, the figure 0/0) is left out and the share of such resamples is reported. When every item is unanimous
  each resample gives 1, and "[1, 1]" would be no interval at all: the low end is then the Wilson low end for
  n unanimous items out of n, put on the figure's scale with its chance agreement, ``(w - a_e) / (1 - a_e)``
  (the agreement not seen is taken to look like chance's). Below ``min_raters`` ratings on an item the item is
  left out; below ``min_items`` items (or with fewer than 2 raters) there is no figure: ``value`` is None and
  ``why`` says why in a sentence.

Per-item and per-rater tables and a simulated class are in :mod:`labkit.measures.stats.raters`.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from labkit import SEED
from labkit.core import args

from .intervals import wilson

__all__ = ["fleiss_from_counts", "krippendorff_alpha", "fleiss_report", "alpha_report", "MIN_ITEMS", "MIN_RATERS"]

MIN_RATERS = 2
"""Ratings an item needs to count: agreement is about pairs of ratings."""
MIN_ITEMS = 10
"""Items a figure needs: below this each item is more than a tenth of the evidence, and resampling so few items
gives no interval worth reading."""
SCALES = ("nominal", "ordinal")
EXAMPLE = '{"ana": {"cl-01": "supported"}, "ben": {"cl-01": "unsupported"}} or [["s", None], ["s", "u"]]'


def _label(x: Any) -> Any:
    if type(x).__module__ == "numpy" and hasattr(x, "item"):
        x = x.item()  # np.int64(3) -> 3, np.nan -> nan
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return None
    try:
        hash(x)
    except TypeError:
        raise ValueError(f"a label must be a plain value (text, a number), got {type(x).__name__} {x!r:.40}") from None
    return x


def _ratings(ratings: Any) -> tuple[list, list, list[list]]:
    """``(raters, items, rows)``: ``rows[r][i]`` is rater ``r``'s label for item ``i``, None when missing."""
    if isinstance(ratings, Mapping):
        if not ratings:
            raise ValueError(f"ratings is empty: give each rater's labels, e.g. {EXAMPLE}")
        raters, items, seen = list(ratings), [], set()
        for r in raters:
            for item in args.mapping(f"ratings[{r!r}]", ratings[r], example='{"cl-01": "supported"}'):
                if item not in seen:
                    seen.add(item)
                    items.append(item)
        return raters, items, [[_label(ratings[r].get(i)) for i in items] for r in raters]
    rows = args.sequence("ratings", ratings, allow_empty=False, example=EXAMPLE)
    rows = [
        args.sequence(f"ratings[{r}]", row, allow_empty=False, example="one label per item")
        for r, row in enumerate(rows)
    ]
    if len({len(row) for row in rows}) > 1:
        raise ValueError(
            f"every rater's row must have one entry per item (None when skipped), got lengths "
            f"{[len(row) for row in rows]}"
        )
    return list(range(len(rows))), list(range(len(rows[0]))), [[_label(x) for x in row] for row in rows]


def _categories(rows: list[list], labels: Sequence[Any] | None, ordered: bool) -> list:
    seen = {x for row in rows for x in row if x is not None}
    if labels is None:
        numbers = all(isinstance(x, int | float) and not isinstance(x, bool) for x in seen)
        if ordered and not numbers:
            raise ValueError(f"ordinal alpha needs the labels' order: pass labels=[...] lowest first, got {seen}")
        return sorted(seen) if numbers else sorted(seen, key=repr)
    cats = [_label(x) for x in args.sequence("labels", labels, allow_empty=False, example='["u", "p", "s"]')]
    if None in cats or len(set(cats)) != len(cats):
        raise ValueError(f"labels must list each label once and no None, got {cats}")
    extra = seen - set(cats)
    if extra:
        raise ValueError(f"the ratings use {sorted(extra, key=repr)}, which labels={cats} does not list")
    return cats


def _counts(rows: list[list], cats: list) -> Any:
    """items x categories counts of the ratings given."""
    import numpy as np

    index = {c: j for j, c in enumerate(cats)}
    counts = np.zeros((len(rows[0]), len(cats)))
    for row in rows:
        for i, x in enumerate(row):
            if x is not None:
                counts[i, index[x]] += 1
    return counts


def _weights(n: int, n_boot: int, rng: Any) -> Any:
    """``n_boot`` x ``n``: how often each item is drawn in each resample of the items."""
    import numpy as np

    idx = rng.integers(0, n, size=(n_boot, n)) + n * np.arange(n_boot)[:, None]
    return np.bincount(idx.ravel(), minlength=n_boot * n).reshape(n_boot, n).astype(float)


def _fleiss(counts: Any, w: Any) -> tuple[Any, Any]:
    """(kappa, chance agreement) for each row of weights ``w``; NaN where chance agreement is 1."""
    import numpy as np

    m = counts[0].sum()
    p_item = ((counts**2).sum(axis=1) - m) / (m * (m - 1))
    total = w.sum(axis=1)
    shares = (w @ counts) / (total[:, None] * m)
    chance = (shares**2).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa = np.where(1 - chance > 1e-12, (w @ p_item / total - chance) / (1 - chance), np.nan)
    return kappa, chance


def _alpha(counts: Any, w: Any, scale: str) -> tuple[Any, Any]:
    """(alpha, nominal chance agreement) for each row of weights ``w``, from the coincidence matrix; NaN where no
    disagreement is expected by chance (one label only)."""
    import numpy as np

    k = counts.shape[1]
    m = counts.sum(axis=1)
    per_item = (counts[:, :, None] * counts[:, None, :] - counts[:, :, None] * np.eye(k)) / (m - 1)[:, None, None]
    coincide = np.einsum("bn,nij->bij", w, per_item)
    n_c = coincide.sum(axis=2)
    n = n_c.sum(axis=1)
    if scale == "nominal":
        delta = np.broadcast_to(1.0 - np.eye(k), coincide.shape)
    else:  # (sum of n_g from c to k, minus half of n_c and n_k) squared
        lo, hi = np.minimum.outer(np.arange(k), np.arange(k)), np.maximum.outer(np.arange(k), np.arange(k))
        cum = np.cumsum(n_c, axis=1)
        between = cum[:, hi] - cum[:, lo] + n_c[:, lo]
        delta = (between - (n_c[:, lo] + n_c[:, hi]) / 2) ** 2
    expected = (n_c[:, :, None] * n_c[:, None, :] - n_c[:, :, None] * np.eye(k)) / (n - 1)[:, None, None]
    observed_d, expected_d = (coincide * delta).sum(axis=(1, 2)), (expected * delta).sum(axis=(1, 2))
    with np.errstate(divide="ignore", invalid="ignore"):
        alpha = np.where(expected_d > 1e-12, 1 - observed_d / expected_d, np.nan)
        chance = (n_c * (n_c - 1)).sum(axis=1) / (n * (n - 1))
    return alpha, chance


def fleiss_from_counts(counts: Sequence[Sequence[float]]) -> float | None:
    """Fleiss' kappa from ``counts[i][j]``: how many raters gave item ``i`` category ``j``.

    Every row must sum to the same number of ratings (at least 2): Fleiss' formula has one ``m`` for all items;
    which raters those are may change from item to item. None when the figure does not exist (every rating is one
    category: chance agreement is 1 and kappa 0/0).
    """
    import numpy as np

    rows = args.sequence("counts", counts, allow_empty=False, example="[[3, 0], [1, 2]]: items x categories")
    table = [args.numbers(f"counts[{i}]", r, allow_empty=False, minimum=0) for i, r in enumerate(rows)]
    if len({len(r) for r in table}) > 1 or any(x != int(x) for r in table for x in r):
        raise ValueError("counts must be a table of whole numbers, one row per item and one column per category")
    table = np.array(table, dtype=float)
    sizes = sorted({int(s) for s in table.sum(axis=1)})
    if len(sizes) > 1:
        raise ValueError(
            f"Fleiss' kappa needs the same number of ratings on every item, got {sizes}: use "
            "krippendorff_alpha, or fleiss_report, which keeps the items with the usual count"
        )
    if sizes[0] < 2:
        raise ValueError(f"Fleiss' kappa needs at least 2 ratings per item, got {sizes[0]}")
    kappa = float(_fleiss(table, np.ones((1, len(table))))[0][0])
    return None if math.isnan(kappa) else kappa


def krippendorff_alpha(ratings: Any, scale: str = "nominal", labels: Sequence[Any] | None = None) -> float | None:
    """Krippendorff's alpha of ``ratings`` (``{rater: {item: label}}`` or raters x items, None for missing).

    ``scale`` is the level of measurement: ``"nominal"`` (labels are names) or ``"ordinal"`` (ordered, lowest
    first in ``labels``, or the labels' natural order). Items with fewer than 2 ratings add nothing. None when
    the figure does not exist: no item has two ratings, or one label is all there is.
    """
    import numpy as np

    if scale not in SCALES:
        raise ValueError(f"scale must be one of {SCALES}, got {scale!r}")
    _, _, rows = _ratings(ratings)
    counts = _counts(rows, _categories(rows, labels, scale == "ordinal"))
    counts = counts[counts.sum(axis=1) >= 2]
    if not len(counts):
        return None
    alpha = float(_alpha(counts, np.ones((1, len(counts))), scale)[0][0])
    return None if math.isnan(alpha) else alpha


def _figure(name: str, counts: Any, compute: Any, n_boot: int, level: float, seed: int, left: str) -> dict:
    import numpy as np

    n = len(counts)
    out: dict[str, Any] = {
        "coefficient": name,
        "value": None,
        "ci": None,
        "method": None,
        "why": None,
        "items": n,
        "left_out": left,
        "degenerate": None,
        "level": level,
    }
    value, chance = (float(x[0]) for x in compute(np.ones((1, n))))
    if math.isnan(value):
        out["why"] = (
            f"every rating is the same label, so chance alone explains the agreement and the {name} is "
            "0/0, not a number: rate items that differ"
        )
        return out
    out["value"] = value
    if (counts.max(axis=1) == counts.sum(axis=1)).all():
        w = wilson(n, n, level)[1]
        out["ci"] = ((w - chance) / (1 - chance), 1.0)
        out["method"] = (
            f"every item is unanimous, so every resample gives 1: the low end is the Wilson low end for "
            f"{n} of {n} unanimous items ({w:.3f}) on the {name}'s scale, (w - {chance:.3f}) / "
            f"(1 - {chance:.3f}), the chance agreement being {chance:.3f}"
        )
        return out
    boots = compute(_weights(n, n_boot, np.random.default_rng(seed)))[0]
    bad = np.isnan(boots)
    out["degenerate"] = float(bad.mean())
    if bad.all():
        out["why"] = f"every resample of the {n} items held one label only: no interval for the {name}"
        return out
    tail = (1 - level) / 2
    low, high = (float(x) for x in np.quantile(boots[~bad], [tail, 1 - tail]))
    out["ci"] = (low, high)
    out["method"] = (
        f"percentile bootstrap over the {n} items: {n_boot} resamples, seed {seed}; {bad.sum()} "
        f"({bad.mean():.1%}) held one label only, so no {name}, and were left out"
    )
    return out


def _checked(ratings: Any, n_boot: int, level: float, seed: int, min_raters: int, min_items: int) -> tuple:
    raters, items, rows = _ratings(ratings)
    return (
        raters,
        items,
        rows,
        args.whole_number("n_boot", n_boot, minimum=100, maximum=100_000),
        args.finite_number("level", level, minimum=0.5, maximum=0.999),
        args.whole_number("seed", seed, minimum=0),
        args.whole_number("min_raters", min_raters, minimum=2),
        args.whole_number("min_items", min_items),
    )


def _too_few(name: str, raters: list, usable: int, min_raters: int, min_items: int, left: str, level: float) -> dict:
    if len(raters) < 2:
        why = f"only {len(raters)} rater: agreement needs at least 2, so there is no {name}"
    else:
        why = (
            f"only {usable} item(s) carry {min_raters} or more ratings; below {min_items} items (min_items) each "
            f"item weighs too much to report a {name} or its interval"
        )
    return {
        "coefficient": name,
        "value": None,
        "ci": None,
        "method": None,
        "why": why,
        "items": usable,
        "left_out": left,
        "degenerate": None,
        "level": level,
    }


def fleiss_report(
    ratings: Any,
    labels: Sequence[Any] | None = None,
    n_boot: int = 2000,
    level: float = 0.95,
    seed: int = SEED,
    min_raters: int = MIN_RATERS,
    min_items: int = MIN_ITEMS,
) -> dict[str, Any]:
    """Fleiss' kappa of ``ratings`` with its interval (see the module's doc for the rules).

    Fleiss' formula needs one number of ratings per item, so with missing ratings only the items carrying the
    most common count (at least ``min_raters``; on a tie, the larger) are used; ``left_out`` says how many were
    not. Returns ``coefficient``, ``value`` and ``ci`` (None when there is no figure, with ``why``), ``method``
    (how the interval was made), ``items``, ``raters_per_item``, ``left_out``, ``degenerate`` (the share of
    resamples without a figure) and ``level``.
    """
    raters, items, rows, n_boot, level, seed, min_raters, min_items = _checked(
        ratings, n_boot, level, seed, min_raters, min_items
    )
    counts = _counts(rows, _categories(rows, labels, False))
    sizes = Counter(int(s) for s in counts.sum(axis=1) if s >= min_raters)
    m = max(sizes, key=lambda s: (sizes[s], s)) if sizes else 0
    kept = counts[counts.sum(axis=1) == m] if m else counts[:0]
    left = f"{len(items) - len(kept)} of {len(items)} items " + (
        f"(Fleiss uses only those with {m} ratings)" if m else f"(none has {min_raters} ratings or more)"
    )
    if len(raters) < 2 or len(kept) < min_items:
        return {
            **_too_few("Fleiss' kappa", raters, len(kept), min_raters, min_items, left, level),
            "raters_per_item": m or None,
        }
    out = _figure("Fleiss' kappa", kept, lambda w: _fleiss(kept, w), n_boot, level, seed, left)
    return {**out, "raters_per_item": m}


def alpha_report(
    ratings: Any,
    scale: str = "nominal",
    labels: Sequence[Any] | None = None,
    n_boot: int = 2000,
    level: float = 0.95,
    seed: int = SEED,
    min_raters: int = MIN_RATERS,
    min_items: int = MIN_ITEMS,
) -> dict[str, Any]:
    """Krippendorff's alpha of ``ratings`` with its interval (see the module's doc for the rules).

    Every item with at least ``min_raters`` ratings is used, whoever skipped it. Returns the keys of
    :func:`fleiss_report` but ``raters_per_item``.
    """
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {SCALES}, got {scale!r}")
    raters, items, rows, n_boot, level, seed, min_raters, min_items = _checked(
        ratings, n_boot, level, seed, min_raters, min_items
    )
    counts = _counts(rows, _categories(rows, labels, scale == "ordinal"))
    kept = counts[counts.sum(axis=1) >= min_raters]
    name = f"Krippendorff's alpha ({scale})"
    left = f"{len(items) - len(kept)} of {len(items)} items (fewer than {min_raters} ratings)"
    if len(raters) < 2 or len(kept) < min_items:
        return _too_few(name, raters, len(kept), min_raters, min_items, left, level)
    return _figure(name, kept, lambda w: _alpha(kept, w, scale), n_boot, level, seed, left)
