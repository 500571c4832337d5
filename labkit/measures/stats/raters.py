"""A class of raters item by item and rater by rater, and a simulated class to teach with.

Taught with a class's labels (``python -m labkit labels merge``) and the instructor's simulated class; the
class-wide figures (Fleiss' kappa, Krippendorff's alpha) are in :mod:`labkit.measures.stats.multirater`, and
ratings come in the same two shapes: ``{rater: {item: label}}`` or raters x items with None for missing.

- :func:`item_table` — per item: its rating count, the majority label (None on a tie, flagged), the top share.
- :func:`rater_table` — per rater: agreement with the majority of the *other* raters (leave one out), and with
  reference labels when given; each a proportion with its Wilson interval.
- :func:`simulate_raters` — a simulated class, seeded: each simulated rater flips the reference label with its
  own probability. Simulated raters, never people.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from labkit import SEED
from labkit.core import args

from .intervals import wilson
from .multirater import _label, _ratings

__all__ = ["item_table", "rater_table", "simulate_raters"]


def _majority(got: Counter) -> tuple[Any, bool, int]:
    """(the most common label or None on a tie, tie, its count)."""
    if not got:
        return None, False, 0
    (top, n_top), *rest = got.most_common()
    tie = bool(rest) and rest[0][1] == n_top
    return (None if tie else top), tie, n_top


def item_table(ratings: Any) -> list[dict[str, Any]]:
    """One row per item, in the ratings' order: ``item``, ``raters`` (how many rated it), ``labels`` (label ->
    count), ``majority`` (None on a tie, never broken silently), ``tie`` and ``top_share`` (the most common
    label's share; None for an item nobody rated)."""
    raters, items, rows = _ratings(ratings)
    out = []
    for i, item in enumerate(items):
        got = Counter(row[i] for row in rows if row[i] is not None)
        majority, tie, n_top = _majority(got)
        n = sum(got.values())
        out.append(
            {
                "item": item,
                "raters": n,
                "labels": dict(got),
                "majority": majority,
                "tie": tie,
                "top_share": n_top / n if n else None,
            }
        )
    return out


def _share(agree: int, n: int, level: float, why: str) -> dict[str, Any]:
    if not n:
        return {"n": 0, "agree": 0, "share": None, "ci": None, "why": why}
    p, low, high = wilson(agree, n, level)
    return {"n": n, "agree": agree, "share": p, "ci": (low, high), "why": None}


def rater_table(ratings: Any, reference: Mapping[Any, Any] | None = None, level: float = 0.95) -> list[dict]:
    """One row per rater: how often they agree with the majority of the *other* raters, and with ``reference``.

    ``loo`` compares a rater's label with the majority of the others on each item they rated; an item where the
    others tie or nobody else rated it is skipped (counted in ``loo_skipped``). ``ref`` compares with
    ``reference[item]`` on the items both hold (None without a reference). Each is a dict: ``n`` items compared,
    ``agree``, ``share`` and its Wilson ``ci`` (None, with ``why``, when nothing could be compared).
    """
    raters, items, rows = _ratings(ratings)
    level = args.finite_number("level", level, minimum=0.5, maximum=0.999)
    if reference is not None:
        reference = args.mapping("reference", reference, example='{"cl-01": "supported"}')
    out = []
    for r, rater in enumerate(raters):
        agree = n = skipped = ref_agree = ref_n = 0
        for i, item in enumerate(items):
            mine = rows[r][i]
            if mine is None:
                continue
            others, _, _ = _majority(Counter(row[i] for s, row in enumerate(rows) if s != r and row[i] is not None))
            if others is None:
                skipped += 1
            else:
                n, agree = n + 1, agree + (mine == others)
            if reference is not None and item in reference and _label(reference[item]) is not None:
                ref_n, ref_agree = ref_n + 1, ref_agree + (mine == _label(reference[item]))
        rated = sum(x is not None for x in rows[r])
        out.append(
            {
                "rater": rater,
                "items": rated,
                "loo_skipped": skipped,
                "loo": _share(agree, n, level, "no item this rater labelled has a majority among the other raters"),
                "ref": None if reference is None else _share(ref_agree, ref_n, level, "no item rated has a reference"),
            }
        )
    return out


def simulate_raters(
    reference: Mapping[Any, Any], flip: Mapping[Any, float] | Sequence[float], labels: Sequence[Any], seed: int = SEED
) -> dict[Any, dict[Any, Any]]:
    """A simulated class: these are **simulated raters, never people**, for the instructor's notebook.

    Each simulated rater copies ``reference[item]`` and, with its own probability ``flip[rater]`` (a dict, or a
    list of probabilities for raters named ``sim-01``, ``sim-02``...), replaces it by another of ``labels`` chosen
    uniformly. Seeded with ``np.random.default_rng(seed)``: each rater draws, item by item in the reference's
    order, one uniform number (flip when below its probability) and one index among the other labels; with the
    same seed, a rater in the same place given a larger probability flips every item a smaller one flips, to the
    same label (a grid over the probability moves one way). Returns
    ``{rater: {item: label}}``, what :func:`alpha_report` and ``class_agreement`` read.
    """
    import numpy as np

    reference = args.mapping("reference", reference, example='{"cl-01": "supported", "cl-02": "unsupported"}')
    if not reference:
        raise ValueError("reference is empty: give the reference label of each item to simulate")
    labels = [_label(x) for x in args.sequence("labels", labels, allow_empty=False, example='["s", "u"]')]
    if len(set(labels)) != len(labels) or len(labels) < 2 or None in labels:
        raise ValueError(f"labels must list at least 2 distinct labels, got {labels}")
    wrong = [i for i, v in reference.items() if _label(v) not in labels]
    if wrong:
        raise ValueError(f"reference labels of {wrong[:3]} are not in labels={labels}")
    if isinstance(flip, Mapping):
        rates = dict(flip)
    else:
        rates = {f"sim-{j + 1:02d}": p for j, p in enumerate(args.sequence("flip", flip, example="[0.1, 0.2]"))}
    if not rates:
        raise ValueError("flip is empty: give one flip probability per simulated rater, e.g. [0.1, 0.2]")
    rates = {r: args.finite_number(f"flip[{r!r}]", p, minimum=0, maximum=1) for r, p in rates.items()}
    rng = np.random.default_rng(args.whole_number("seed", seed, minimum=0))
    items = list(reference)
    out = {}
    for rater, p in rates.items():
        draws, picks = rng.random(len(items)), rng.integers(0, len(labels) - 1, len(items))
        row = {}
        for item, u, j in zip(items, draws, picks, strict=True):
            true = _label(reference[item])
            row[item] = [x for x in labels if x != true][j] if u < p else true
        out[rater] = row
    return out
