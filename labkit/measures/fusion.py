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
from typing import Any

from labkit.core import args
from labkit.measures.metrics import compare_runs, registry

__all__ = ["rrf", "explain_rrf", "combsum", "fuse_runs", "hybrid_table", "check_c", "check_weights", "DEFAULT_C"]

DEFAULT_C = 60
"""RRF's constant as Cormack et al. (2009) set it (their ``k``): every labkit default, one source."""
MAX_C = 1_000_000
"""Beyond this, ``1 / (c + rank)`` differs between neighbouring ranks by less than the ties are rounded to."""


def _check_ranking(name: str, ranking: Any) -> list[str]:
    ids = args.ranking(name, ranking, example='["D7", "D2", "D9"]')
    if len(set(ids)) != len(ids):
        dup = next(d for d, n in Counter(ids).items() if n > 1)
        raise ValueError(
            f"{name} lists {dup!r} more than once: de-duplicate each ranking before fusing "
            "(a duplicate would be counted twice)"
        )
    return ids


def _check_rankings(rankings: Sequence[Sequence[str]]) -> list[list[str]]:
    lists = args.sequence("rankings", rankings, example="[bm25_ids, dense_ids]")
    if not lists:
        raise ValueError("rankings must be a non-empty list of ranked lists, e.g. [bm25_ids, dense_ids]")
    out = []
    for i, r in enumerate(lists):
        if isinstance(r, str | bytes):
            raise ValueError(f"rankings[{i}] must be a list of document ids, got {type(r).__name__} {r!r:.40}")
        out.append(_check_ranking(f"rankings[{i}]", r))
    return out


def check_weights(weights: Sequence[float] | None, n: int) -> list[float]:
    """One weight >= 0 per ranking (None: all 1.0), not all 0."""
    n = args.whole_number("n", n, minimum=0, hint="the number of rankings to weigh")
    if weights is None:
        return [1.0] * n
    weights = args.sequence("weights", weights, example="[1.0, 0.5]")
    if len(weights) != n:
        raise ValueError(f"weights has {len(weights)} values for {n} rankings: give one weight per ranking")
    for i, w in enumerate(weights):
        if isinstance(w, bool) or not _is_real(w) or not math.isfinite(w) or w < 0:
            raise ValueError(f"weights[{i}] = {w!r}: weights must be numbers >= 0 (and finite)")
    if not any(weights):
        raise ValueError(
            "weights are all 0: every document would score 0 and the order would be alphabetical; "
            "give at least one weight > 0 (0 switches a retriever off)"
        )
    return [float(w) for w in weights]


def _is_real(x: Any) -> bool:
    return isinstance(x, Real) and not isinstance(x, bool)


def check_c(c: Any) -> float:
    """RRF's constant ``c`` (the paper's ``k``): a finite number, 0 <= c <= MAX_C."""
    if isinstance(c, bool) or not _is_real(c) or math.isnan(c) or c < 0:
        raise ValueError(f"c must be a number >= 0 (the paper uses 60), got {c!r}")
    if math.isinf(c) or c > MAX_C:
        raise ValueError(
            f"c must be a finite number <= {MAX_C:,} (the paper uses 60), got {c!r}: with a larger c every rank scores "
            "about the same and the fused order would be decided by document id"
        )
    return float(c)


def _check_top_n(top_n: Any) -> int | None:
    return None if top_n is None else args.whole_number("top_n", top_n, hint="or None to keep every document")


def _tie_key(score: float) -> float:
    # Order on scores rounded to 12 significant digits: sums of the same fractions in another order can differ in
    # the last bit, and a tie must stay a tie (broken by id) whatever the order of the rankings. Relative, not
    # absolute, rounding, so small scores (a large c, small weights) are not all rounded to one tie.
    return float(f"{score:.12g}")


def _order(score: Mapping[str, float], top_n: int | None) -> list[str]:
    if top_n is None:
        return sorted(score, key=lambda d: (-_tie_key(score[d]), d))
    best = heapq.nsmallest(top_n, score.items(), key=lambda kv: (-_tie_key(kv[1]), kv[0]))
    return [d for d, _ in best]


def rrf(
    rankings: Sequence[Sequence[str]],
    c: float = DEFAULT_C,
    top_n: int | None = None,
    weights: Sequence[float] | None = None,
) -> tuple[list[str], dict[str, float]]:
    """Fuse ranked lists by reciprocal rank; returns ``(fused ids, {id: score})``.

    ``c``: the smoothing constant (> 0 keeps a single first place from
    dominating; the paper's ``k`` = 60), finite and at most 1,000,000. ``top_n``: keep only the first
    ``top_n`` fused ids (the scores dict still holds every document).
    ``weights``: one finite, non-negative weight per ranking (default 1 each), not all 0. A ranking
    with weight 0 is switched off: its documents are not fused at all.
    Ties are broken by document id, so the result is deterministic.

    >>> fused, s = rrf([["D7", "D2", "D9", "D4", "D1"], ["D4", "D3", "D7", "D8", "D2"]], top_n=5)
    >>> fused
    ['D7', 'D4', 'D2', 'D3', 'D9']
    """
    lists = _check_rankings(rankings)
    w = check_weights(weights, len(lists))
    c = check_c(c)
    top_n = _check_top_n(top_n)
    parts: dict[str, list[float]] = {}
    for ranking, weight in zip(lists, w, strict=True):
        if weight == 0:
            continue
        for rank, doc in enumerate(ranking, start=1):
            parts.setdefault(doc, []).append(weight / (c + rank))
    # fsum is exactly rounded, so a document's score does not depend on the order of the rankings.
    score = {doc: math.fsum(p) for doc, p in parts.items()}
    return _order(score, top_n), score


def explain_rrf(
    rankings: Mapping[str, Sequence[str]],
    c: float = DEFAULT_C,
    weights: Sequence[float] | None = None,
    top_n: int = 5,
    also: Sequence[str] = (),
):
    """Why each document got its fused rank: its rank in every list, what each list gave it, and the sum.

    ``rankings``: ``{name: ranked ids}``, e.g. ``{"bm25": [...], "dense": [...]}``; ``c`` and ``weights`` as for
    :func:`rrf`. One row per document of the fused top ``top_n``, then one per id of ``also`` (say, the gold
    chunks) wherever it landed, so a relevant document that fusion pushed down is shown next to the ones that
    beat it. Columns: ``fused rank``; for each list ``<name> rank`` and ``<name> gives`` (``weight / (c + rank)``,
    0 when the list does not hold the document, whose rank is then ``<NA>``); and ``score``, their sum. An id of
    ``also`` that no list holds gets score 0 and no fused rank. Returns a new DataFrame indexed by document id.
    """
    import pandas as pd

    args.mapping("rankings", rankings, example='{"bm25": bm25_ids, "dense": dense_ids}')
    if not rankings:
        raise ValueError('rankings is empty: give one ranked list per retriever, e.g. {"bm25": [...], "dense": [...]}')
    names = list(rankings)
    for name in names:
        if not isinstance(name, str) or not name:
            raise ValueError(f"rankings must be keyed by retriever names (non-empty strings), got {name!r}")
    lists = _check_rankings([rankings[name] for name in names])
    w = check_weights(weights, len(lists))
    top_n = args.whole_number("top_n", top_n)
    extra = args.ranking("also", also, example='["hr-parental-leave#5"]')
    c = check_c(c)
    fused, score = rrf(lists, c=c, weights=w)
    place = {doc: i for i, doc in enumerate(fused, start=1)}
    shown = list(dict.fromkeys([*fused[:top_n], *extra]))
    rows = []
    for doc in shown:
        row: dict[str, Any] = {"fused rank": place.get(doc)}
        for name, ranking, weight in zip(names, lists, w, strict=True):
            rank = ranking.index(doc) + 1 if doc in ranking else None
            row[f"{name} rank"] = rank
            row[f"{name} gives"] = weight / (c + rank) if rank is not None and weight > 0 else 0.0
        row["score"] = score.get(doc, 0.0)
        rows.append(row)
    out = pd.DataFrame(rows, index=pd.Index(shown, name="doc"))
    for col in ["fused rank", *(f"{name} rank" for name in names)]:
        out[col] = out[col].astype("Int64")
    return out


def combsum(
    scored: Sequence[Mapping[str, float]], top_n: int | None = None, weights: Sequence[float] | None = None
) -> tuple[list[str], dict[str, float]]:
    """Score-based fusion for contrast: min-max normalise each run's scores to [0, 1], then add them.

    Unlike RRF it needs the scores, and its result depends on the normalisation:
    one outlier score squeezes every other document of that run towards 0. A run whose scores are
    all equal gives each of its documents 1. Scores must be finite numbers (a NaN or an infinite
    score would erase the rest of its run's ranking); a run with weight 0 is left out.
    """
    runs = args.sequence("scored", scored, example="[bm25_scores, dense_scores]")
    if not runs:
        raise ValueError("scored must be a non-empty list of {doc: score} dicts")
    checked = []
    for i, run in enumerate(runs):
        args.mapping(f"scored[{i}]", run, example='{"D7": 12.3, "D2": 9.1}')
        for doc, s in run.items():
            if not isinstance(doc, str) or not doc:
                raise ValueError(f"scored[{i}] has a document id {doc!r}: ids must be non-empty strings")
            args.finite_number(f"scored[{i}][{doc!r}]", s)
        checked.append({doc: float(s) for doc, s in run.items()})
    w = check_weights(weights, len(checked))
    top_n = _check_top_n(top_n)
    parts: dict[str, list[float]] = {}
    for run, weight in zip(checked, w, strict=True):
        if not run or weight == 0:
            continue
        lo, hi = min(run.values()), max(run.values())
        for doc, s in run.items():
            norm = (s - lo) / (hi - lo) if hi > lo else 1.0
            parts.setdefault(doc, []).append(weight * norm)
    total = {doc: math.fsum(p) for doc, p in parts.items()}
    return _order(total, top_n), total


def fuse_runs(
    runs: Sequence[Mapping[str, Sequence[str]]],
    c: float = DEFAULT_C,
    weights: Sequence[float] | None = None,
    top_n: int | None = 10,
) -> dict[str, list[str]]:
    """RRF applied query by query to several ranked runs ``{qid: [doc, ...]}``; returns a new run.

    A query missing from one run is fused from the others. A run with weight 0 is switched off (a
    query only it answers is left out of the result).
    """
    runs = args.sequence("runs", runs, example="[bm25_run, dense_run]")
    if not runs:
        raise ValueError("runs is empty: give e.g. [bm25_run, dense_run]")
    for i, run in enumerate(runs):
        args.mapping(f"runs[{i}]", run, example='{"q1": ["D7", "D2"]}')
    args.ids_as_text("the runs' qids", [q for run in runs for q in run])
    w = check_weights(weights, len(runs))
    c = check_c(c)
    top_n = _check_top_n(top_n)
    active = [(i, run, wi) for i, (run, wi) in enumerate(zip(runs, w, strict=True)) if wi > 0]
    qids = sorted(set().union(*(run for _, run, _ in active)), key=str)
    out = {}
    for qid in qids:
        present = [(_check_ranking(f"runs[{i}][{qid!r}]", run[qid]), wi) for i, run, wi in active if qid in run]
        fused, _ = rrf([r for r, _ in present], c=c, top_n=top_n, weights=[wi for _, wi in present])
        out[qid] = fused
    return out


def hybrid_table(
    runs: Mapping[str, Mapping[str, Sequence[str]]],
    qrels: Mapping[str, Mapping[str, int]],
    groups: Mapping[str, str],
    c: float = DEFAULT_C,
    weights: Sequence[float] | None = None,
    k: int = 10,
    metrics: Sequence[str] = ("R@10", "nDCG@10"),
):
    """Per-slice metrics of each run and of their RRF fusion (named ``hybrid``): the chapter 01 table.

    ``runs``: ``{name: {qid: [doc, ...]}}``, ideally deeper than ``k`` (fusion
    can lift a document from rank 30 of one list into the top ``k``).
    """

    k = args.whole_number("k", k)
    args.mapping("runs", runs, example='{"bm25": bm25_run, "dense": dense_run}')
    if not runs:
        raise ValueError('runs is empty: give e.g. {"bm25": bm25_run, "dense": dense_run}')
    if "hybrid" in runs:
        raise ValueError("runs already has a run named 'hybrid', the name of the fused run: rename it")
    for name, run in runs.items():
        args.mapping(f"runs[{name!r}]", run, example='{"q1": ["D7", "D2"]}')
    fused = fuse_runs(list(runs.values()), c=c, weights=weights, top_n=k)
    cut = {name: {q: list(r[:k]) for q, r in run.items()} for name, run in runs.items()}
    return compare_runs({**cut, "hybrid": fused}, qrels, groups, metrics)


class HybridSweep:
    """:func:`hybrid_table` for many ``(c, weights)`` on the same runs, fast enough for a slider.

    The runs, qrels and groups are checked and indexed once (each query's candidates as a rank matrix, their
    grades); :meth:`table` then fuses every query at once with NumPy (a few milliseconds for 200 queries, where
    :func:`hybrid_table` takes ~100 ms) and scores the fused top ``k`` with the metric code of
    :func:`labkit.measures.metrics.compare_runs`. The fused order is :func:`rrf`'s exactly: a query whose top ``k``
    holds
    two scores within 1e-10 of each other (a tie :func:`rrf` breaks by id after rounding) is fused by :func:`rrf`
    itself. The values equal :func:`hybrid_table`'s up to the last bits of a mean (tested to 1e-12).
    ``metrics``: names of :data:`SWEPT` metrics with a number for ``m`` (``R@m``, ``P@m``, ``hit@m`` or ``nDCG@m``, of
    the fused top ``k``), each scored by its registry entry. Taught in 01 (its explorer).
    """

    SWEPT = tuple(registry.metric(name) for name in ("R@k", "P@k", "hit@k", "nDCG@k"))
    """The registered metrics a sweep scores; the others (RR@k, DCG@k, IDCG@k) only through :func:`hybrid_table`."""

    def __init__(self, runs, qrels, groups, k: int = 10, metrics=("R@10", "nDCG@10"), thr: float = 1,
                 idcg: str = "all_judged"):  # fmt: skip
        import numpy as np

        self.base = hybrid_table(runs, qrels, groups, DEFAULT_C, None, k, metrics)  # checks everything, once
        self.k, self.names, self.thr, self.idcg = k, list(runs), thr, idcg
        names = [metrics] if isinstance(metrics, str) else list(metrics)
        self.metrics = [(name, *registry.parse(name, "metrics")) for name in names]
        for name, found, _ in self.metrics:
            if found not in self.SWEPT:
                *most, last = [f"{m.prefix}@m" for m in self.SWEPT]
                raise ValueError(f"metrics must be {', '.join(most)} or {last} (m >= 1), got {name!r}")
        self.qids = sorted(str(q) for q in qrels)
        self.rankings = {q: [list(runs[n].get(q, [])) for n in self.names] for q in self.qids}
        width = max([1] + [len(set().union(*map(set, r))) for r in self.rankings.values()])
        nq, nr = len(self.qids), len(self.names)
        self.docs = [sorted(set().union(*map(set, self.rankings[q]))) for q in self.qids]  # by id: ties by id
        self.ranks = np.full((nq, width, nr), np.inf)
        self.grades = np.zeros((nq, width + 1))  # the last column: "no document" (grade 0)
        for i, q in enumerate(self.qids):
            col = {d: j for j, d in enumerate(self.docs[i])}
            for r, ranking in enumerate(self.rankings[q]):
                for rank, d in enumerate(ranking, start=1):
                    self.ranks[i, col[d], r] = rank
            self.grades[i, : len(col)] = [float(qrels[q].get(d, 0)) for d in self.docs[i]]
        self.by_run = [np.ascontiguousarray(self.ranks[:, :, r]) for r in range(nr)]  # one run's ranks, contiguous
        self.found = [np.isfinite(x) for x in self.by_run]
        jq = [i for i, q in enumerate(self.qids) for _ in qrels[q]]
        jg = [float(g) for q in self.qids for g in qrels[q].values()]
        self.judged = (np.asarray(jq, dtype=np.int64), np.asarray(jg, dtype=float))
        self.n_rel = np.bincount(self.judged[0], weights=self.judged[1] >= thr, minlength=nq)
        self.group_of = np.asarray([groups[q] for q in self.qids], dtype=object)

    def _top(self, c: float, weights):
        """Each query's fused top ``k`` as column indices into its candidates (``-1``: no document there)."""
        import numpy as np

        w = np.asarray(check_weights(weights, len(self.names)))
        c = check_c(c)
        score = np.zeros(self.ranks.shape[:2])
        present = np.zeros(self.ranks.shape[:2], dtype=bool)
        for r in np.flatnonzero(w > 0):  # an absent document's rank is inf: w / (c + inf) adds exactly 0
            score += w[r] / (c + self.by_run[r])
            present |= self.found[r]
        score[~present] = -np.inf
        order = np.argsort(-score, axis=1, kind="stable")[:, : self.k + 1]
        top = np.take_along_axis(score, order, axis=1)
        with np.errstate(invalid="ignore"):
            gap = top[:, :-1] - top[:, 1:]
            near = ((gap > 0) & (gap <= 1e-10 * np.abs(top[:, :-1])) & np.isfinite(top[:, 1:]))[:, : self.k]
        cols = np.where(np.isfinite(top), order, -1)[:, : self.k]
        for i in np.flatnonzero(near.any(axis=1)):  # a near tie: rrf's own order, rounding and all
            active = [(r, wi) for r, wi in zip(self.rankings[self.qids[i]], w.tolist(), strict=True) if wi > 0 and r]
            fused = rrf([r for r, _ in active], c, self.k, [wi for _, wi in active])[0] if active else []
            col = {d: j for j, d in enumerate(self.docs[i])}
            cols[i] = [col[d] for d in fused] + [-1] * (self.k - len(fused))
        return cols

    def fused(self, c: float, weights=None) -> dict[str, list[str]]:
        """Each judged query's fused top ``k``, as :func:`fuse_runs` ``(runs, c, weights, top_n=k)`` gives it (a
        query that no run with weight > 0 holds: ``[]``)."""
        cols = self._top(c, weights)
        return {q: [self.docs[i][j] for j in cols[i] if j >= 0] for i, q in enumerate(self.qids)}

    def table(self, c: float, weights=None):
        """:func:`hybrid_table` ``(runs, qrels, groups, c, weights, k, metrics)``: the same frame, a new one."""
        import numpy as np

        cols = self._top(c, weights)
        nq = len(self.qids)
        grade = np.take_along_axis(self.grades, np.where(cols >= 0, cols, self.grades.shape[1] - 1), axis=1)
        rq, pos = np.nonzero(grade > 0)
        rank, grade = pos + 1, grade[rq, pos]
        fused = registry.Retrieved(rq, rank, grade, grade >= self.thr, nq, self.n_rel, self.judged, self.idcg)
        out = self.base.copy()
        for name, found, m in self.metrics:
            per_q = found.batch(fused, m)
            means = []
            for g in out.index:
                chosen = per_q if g == "all" else per_q[self.group_of == g]
                kept = chosen[~np.isnan(chosen)]
                means.append(float(kept.sum() / len(kept)) if len(kept) else float("nan"))
            out[(name, "hybrid")] = means
        return out
