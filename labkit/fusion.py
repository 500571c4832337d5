"""Reciprocal Rank Fusion (and, for contrast, score-based CombSUM).

Taught in ``01_rrf_hybrid_retrieval``.

RRF (Cormack, Clarke & Büttcher, SIGIR 2009, doi:10.1145/1571941.1572114)::

    score(d) = sum over rankings r of  w_r / (c + rank_r(d))      ranks from 1

The constant is called ``c`` here, as in the source chapter; the paper calls
it ``k`` and fixed it at 60 in a pilot study ("near-optimal, but not
critical"). A document missing from a ranking gets nothing from it. Only
ranks are used, so retrievers whose scores live on different scales (BM25's
unbounded sums, cosine similarities in [-1, 1]) fuse without normalisation.

Every function returns new objects and never mutates its input.
"""

from __future__ import annotations

import heapq
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from numbers import Real

__all__ = ["rrf", "combsum", "fuse_runs", "hybrid_table"]


def _check_rankings(rankings: Sequence[Sequence[str]]) -> list[list[str]]:
    if isinstance(rankings, str) or not isinstance(rankings, Sequence) or not rankings:
        raise ValueError("rankings must be a non-empty list of ranked lists, e.g. [bm25_ids, dense_ids]")
    out = []
    for i, r in enumerate(rankings):
        if isinstance(r, str) or not isinstance(r, Sequence):
            raise ValueError(f"rankings[{i}] must be a list of document ids, got {type(r).__name__}")
        if len(set(r)) != len(r):
            dup = next(d for d, n in Counter(r).items() if n > 1)
            raise ValueError(
                f"rankings[{i}] lists {dup!r} more than once: de-duplicate each ranking before fusing "
                "(a duplicate would be counted twice)"
            )
        out.append(list(r))
    return out


def _check_weights(weights: Sequence[float] | None, n: int) -> list[float]:
    if weights is None:
        return [1.0] * n
    weights = list(weights)
    if len(weights) != n:
        raise ValueError(f"weights has {len(weights)} values for {n} rankings: give one weight per ranking")
    for i, w in enumerate(weights):
        if isinstance(w, bool) or not isinstance(w, Real) or math.isnan(w) or w < 0:
            raise ValueError(f"weights[{i}] = {w!r}: weights must be numbers >= 0")
    return [float(w) for w in weights]


def rrf(
    rankings: Sequence[Sequence[str]],
    c: float = 60,
    top_n: int | None = None,
    weights: Sequence[float] | None = None,
) -> tuple[list[str], dict[str, float]]:
    """Fuse ranked lists by reciprocal rank; returns ``(fused ids, {id: score})``.

    ``c``: the smoothing constant (> 0 keeps a single first place from
    dominating; the paper's ``k`` = 60). ``top_n``: keep only the first
    ``top_n`` fused ids (the scores dict still holds every document).
    ``weights``: one non-negative weight per ranking (default 1 each).
    Ties are broken by document id, so the result is deterministic.

    >>> fused, s = rrf([["D7", "D2", "D9", "D4", "D1"], ["D4", "D3", "D7", "D8", "D2"]], top_n=5)
    >>> fused
    ['D7', 'D4', 'D2', 'D3', 'D9']
    """
    lists = _check_rankings(rankings)
    w = _check_weights(weights, len(lists))
    if isinstance(c, bool) or not isinstance(c, Real) or math.isnan(c) or c < 0:
        raise ValueError(f"c must be a number >= 0 (the paper uses 60), got {c!r}")
    if top_n is not None and (isinstance(top_n, bool) or not isinstance(top_n, int) or top_n < 1):
        raise ValueError(f"top_n must be a whole number >= 1 or None, got {top_n!r}")
    score: dict[str, float] = {}
    for ranking, weight in zip(lists, w, strict=True):
        for rank, doc in enumerate(ranking, start=1):
            score[doc] = score.get(doc, 0.0) + weight / (c + rank)
    # Order on scores rounded to 12 decimals: sums of the same fractions in another order can differ in the
    # last bit, and a tie must stay a tie (broken by id) whatever the order of the rankings.
    if top_n is None:
        return sorted(score, key=lambda d: (-round(score[d], 12), d)), score
    best = heapq.nsmallest(top_n, score.items(), key=lambda kv: (-round(kv[1], 12), kv[0]))
    return [d for d, _ in best], score


def combsum(
    scored: Sequence[Mapping[str, float]], top_n: int | None = None, weights: Sequence[float] | None = None
) -> tuple[list[str], dict[str, float]]:
    """Score-based fusion for contrast: min-max normalise each run's scores to [0, 1], then add them.

    Unlike RRF it needs the scores, and its result depends on the normalisation:
    one outlier score squeezes every other document of that run towards 0.
    """
    if not scored:
        raise ValueError("scored must be a non-empty list of {doc: score} dicts")
    w = _check_weights(weights, len(scored))
    total: dict[str, float] = {}
    for run, weight in zip(scored, w, strict=True):
        if not run:
            continue
        lo, hi = min(run.values()), max(run.values())
        for doc, s in run.items():
            norm = (s - lo) / (hi - lo) if hi > lo else 1.0
            total[doc] = total.get(doc, 0.0) + weight * norm
    fused = sorted(total, key=lambda d: (-round(total[d], 12), d))
    return (fused if top_n is None else fused[:top_n]), total


def fuse_runs(
    runs: Sequence[Mapping[str, Sequence[str]]],
    c: float = 60,
    weights: Sequence[float] | None = None,
    top_n: int | None = 10,
) -> dict[str, list[str]]:
    """RRF applied query by query to several ranked runs ``{qid: [doc, ...]}``; returns a new run.

    A query missing from one run is fused from the others.
    """
    if not runs:
        raise ValueError("runs is empty: give e.g. [bm25_run, dense_run]")
    w = _check_weights(weights, len(runs))
    qids = sorted(set().union(*runs))
    out = {}
    for qid in qids:
        present = [(run[qid], wi) for run, wi in zip(runs, w, strict=True) if qid in run]
        fused, _ = rrf([r for r, _ in present], c=c, top_n=top_n, weights=[wi for _, wi in present])
        out[qid] = fused
    return out


def hybrid_table(
    runs: Mapping[str, Mapping[str, Sequence[str]]],
    qrels: Mapping[str, Mapping[str, int]],
    groups: Mapping[str, str],
    c: float = 60,
    weights: Sequence[float] | None = None,
    k: int = 10,
    metrics: Sequence[str] = ("R@10", "nDCG@10"),
):
    """Per-slice metrics of each run and of their RRF fusion (named ``hybrid``): the chapter 01 table.

    ``runs``: ``{name: {qid: [doc, ...]}}``, ideally deeper than ``k`` (fusion
    can lift a document from rank 30 of one list into the top ``k``).
    """
    from labkit.metrics import compare_runs

    fused = fuse_runs(list(runs.values()), c=c, weights=weights, top_n=k)
    cut = {name: {q: list(r[:k]) for q, r in run.items()} for name, run in runs.items()}
    return compare_runs({**cut, "hybrid": fused}, qrels, groups, metrics)
