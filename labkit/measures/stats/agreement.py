"""How far two raters, or a class of raters, agree: Cohen's and Fleiss' kappa, raw agreement, majority labels.

Taught in 02, 06 and 07 (a second rater against the reference labels, the learner against them, a class).

Raw agreement (the share of items given the same label) rewards luck: two raters who both say "supported" to
90% of claims agree on at least 80% of items by chance. Kappa subtracts the agreement chance alone would give:

    kappa = (p_observed - p_chance) / (1 - p_chance)

1 is perfect agreement, 0 is what chance gives, below 0 is worse than chance. Cohen's kappa compares two raters
who labelled the same items; Fleiss' kappa generalises it to many raters per item (a class). For ordered labels
(a 1-5 rating) a disagreement by one step is less bad than by four: ``weights="linear"`` or ``"quadratic"``
weighs disagreements by distance (weighted kappa). Intervals resample the items (a seeded bootstrap).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from labkit import SEED
from labkit.core import args

from .intervals import wilson

__all__ = ["cohen_kappa", "kappa_report", "fleiss_kappa", "class_agreement"]

WEIGHTS = (None, "linear", "quadratic")


def _pairs(a: Sequence[Any], b: Sequence[Any]) -> tuple[list, list]:
    a, b = args.sequence("a", a, allow_empty=False), args.sequence("b", b, allow_empty=False)
    if len(a) != len(b):
        raise ValueError(f"a and b must label the same items: a has {len(a)} labels, b has {len(b)}")
    if any(x is None for x in (*a, *b)):
        raise ValueError("a and b must not hold None: drop the items one rater skipped before comparing")
    return a, b


def _categories(a: list, b: list, labels: Sequence[Any] | None) -> list:
    if labels is None:
        return sorted(set(a) | set(b), key=str)
    labels = list(labels)
    extra = (set(a) | set(b)) - set(labels)
    if extra:
        raise ValueError(f"labels {sorted(extra, key=str)} are not in labels={labels}: add them or fix the data")
    return labels


def _kappa(a: list, b: list, cats: list, weights: str | None) -> float:
    import numpy as np

    index = {c: i for i, c in enumerate(cats)}
    k = len(cats)
    table = np.zeros((k, k))
    for x, y in zip(a, b, strict=True):
        table[index[x], index[y]] += 1
    table /= table.sum()
    i, j = np.indices((k, k))
    if weights is None:
        w = (i != j).astype(float)
    elif weights == "linear":
        w = np.abs(i - j) / max(k - 1, 1)
    else:
        w = ((i - j) / max(k - 1, 1)) ** 2
    expected = np.outer(table.sum(axis=1), table.sum(axis=0))
    disagreement_chance = float((w * expected).sum())
    if disagreement_chance == 0:
        return 1.0 if float((w * table).sum()) == 0 else 0.0
    return 1.0 - float((w * table).sum()) / disagreement_chance


def cohen_kappa(
    a: Sequence[Any], b: Sequence[Any], labels: Sequence[Any] | None = None, weights: str | None = None
) -> float:
    """Cohen's kappa of two raters' labels for the same items, in the same order.

    ``labels`` fixes the categories and their order (needed for weighted kappa on ordered labels, e.g.
    ``[1, 2, 3, 4, 5]``); by default the labels seen. When both raters always give one and the same label,
    chance already explains everything and kappa is defined here as 1 (there is nothing to disagree on).
    """
    a, b = _pairs(a, b)
    if weights not in WEIGHTS:
        raise ValueError(f"weights must be one of {WEIGHTS}, got {weights!r}")
    return _kappa(a, b, _categories(a, b, labels), weights)


def kappa_report(
    a: Sequence[Any],
    b: Sequence[Any],
    labels: Sequence[Any] | None = None,
    weights: str | None = None,
    n_boot: int = 2000,
    level: float = 0.95,
    seed: int = SEED,
) -> dict[str, Any]:
    """Kappa with a bootstrap interval (the items resampled), and raw agreement with its Wilson interval.

    Returns ``n``, ``agree`` (items with the same label), ``raw`` and ``raw_ci``, ``kappa`` and ``kappa_ci``
    (``(None, None)`` when every resample gives the same kappa, as when the raters agree on every item: a
    percentile bootstrap has nothing to resample then, and the Wilson interval of ``raw`` is the bound to read).
    """
    import numpy as np

    a, b = _pairs(a, b)
    if weights not in WEIGHTS:
        raise ValueError(f"weights must be one of {WEIGHTS}, got {weights!r}")
    n_boot = args.whole_number("n_boot", n_boot, minimum=100)
    cats = _categories(a, b, labels)
    kappa = _kappa(a, b, cats, weights)
    rng = np.random.default_rng(seed)
    n = len(a)
    boots = []
    for _ in range(n_boot):
        idx = rng.integers(0, n, n)
        boots.append(_kappa([a[i] for i in idx], [b[i] for i in idx], cats, weights))
    tail = (1 - level) / 2
    agree = sum(x == y for x, y in zip(a, b, strict=True))
    raw, lo, hi = wilson(agree, n, level)
    low, high = float(np.quantile(boots, tail)), float(np.quantile(boots, 1 - tail))
    return {
        "n": n,
        "agree": agree,
        "raw": raw,
        "raw_ci": (lo, hi),
        "kappa": kappa,
        # when no item disagrees every resample agrees too, and the percentile interval collapses to a point:
        # that is no interval at all, so it is reported as (None, None); raw_ci still bounds the agreement
        "kappa_ci": (None, None) if low == high else (low, high),
    }


def fleiss_kappa(ratings: Sequence[Sequence[Any]], labels: Sequence[Any] | None = None) -> float:
    """Fleiss' kappa: ``ratings[i]`` holds every label item ``i`` received (the same number of raters per item).

    Items with fewer raters than the others are refused, not silently dropped: keep only the items every rater
    labelled (:func:`class_agreement` does).
    """
    import numpy as np

    ratings = args.sequence("ratings", ratings, allow_empty=False, example='[["s", "s", "u"], ["u", "u", "u"]]')
    ratings = [list(args.sequence(f"ratings[{i}]", r, allow_empty=False)) for i, r in enumerate(ratings)]
    if not ratings:
        raise ValueError("ratings is empty: give one list of labels per item")
    sizes = {len(r) for r in ratings}
    if len(sizes) != 1:
        raise ValueError(f"every item needs the same number of ratings, got {sorted(sizes)}: keep the items all rated")
    m = sizes.pop()
    if m < 2:
        raise ValueError("fleiss_kappa needs at least 2 ratings per item")
    flat = [x for r in ratings for x in r]
    cats = _categories(flat, [], labels)
    counts = np.array([[Counter(r)[c] for c in cats] for r in ratings], dtype=float)
    p_item = ((counts**2).sum(axis=1) - m) / (m * (m - 1))
    p_bar = float(p_item.mean())
    shares = counts.sum(axis=0) / counts.sum()
    p_chance = float((shares**2).sum())
    if p_chance == 1:
        return 1.0
    return (p_bar - p_chance) / (1 - p_chance)


def class_agreement(labels_by_rater: Mapping[str, Mapping[str, Any]], labels: Sequence[Any] | None = None) -> dict:
    """What a class's label files say together: ``labels_by_rater[rater][item] = label``.

    Returns ``raters``, ``items`` (labelled by every rater), ``fleiss`` (on those items), ``per_item`` (a list of
    dicts: item, the count of each label, the share of the most common one) sorted from least to most agreed,
    and ``majority`` (item -> the most common label; a tie is ``None`` and listed, never broken silently).
    Items not labelled by every rater are counted in ``partial`` and left out of Fleiss' kappa.
    """
    labels_by_rater = args.mapping("labels_by_rater", labels_by_rater, example='{"ana": {"cl-01": "supported"}}')
    if len(labels_by_rater) < 2:
        raise ValueError(f"class agreement needs at least 2 raters, got {len(labels_by_rater)}")
    raters = sorted(labels_by_rater)
    every = set.intersection(*(set(labels_by_rater[r]) for r in raters))
    union = set().union(*(set(labels_by_rater[r]) for r in raters))
    items = sorted(every)
    per_item, majority = [], {}
    for item in sorted(union):
        got = Counter(labels_by_rater[r][item] for r in raters if item in labels_by_rater[r])
        (top, n_top), *rest = got.most_common()
        tie = bool(rest) and rest[0][1] == n_top
        majority[item] = None if tie else top
        n = sum(got.values())
        per_item.append({"item": item, "raters": n, "labels": dict(got), "top_share": n_top / n})
    per_item.sort(key=lambda r: (r["top_share"], r["item"]))
    return {
        "raters": raters,
        "items": items,
        "partial": len(union) - len(items),
        "fleiss": fleiss_kappa([[labels_by_rater[r][i] for r in raters] for i in items], labels) if items else None,
        "per_item": per_item,
        "majority": majority,
        "ties": [i for i, v in majority.items() if v is None],
    }
