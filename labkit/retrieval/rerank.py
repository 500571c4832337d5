"""Stage 2: reorder stage 1's top ``k1`` by a reranker's scores and keep ``k2`` (04b).

:func:`rerank` is the one place a reordering happens, for every reranker: it refuses a score list that does not
match its candidates, a NaN, ``k2 > k1``, and it breaks ties by stage 1's order, so nothing is silently reordered.

The learned reranker (:class:`LambdaRanker`) is LightGBM's lambdarank (Burges 2010, "From RankNet to
LambdaRank to LambdaMART") over cheap features of each (query, chunk) pair (:data:`FEATURES`): the BM25 and
MiniLM scores and ranks, the fused RRF score and rank, how many query terms the document's title, the chunk's
section heading and the chunk itself contain, and the chunk's length. No language model is involved: it is
trained on the dev queries' graded qrels and scores a query's candidates in well under a millisecond.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from numbers import Real
from typing import Any

from labkit import SEED
from labkit.core import args

__all__ = ["rerank", "check_depths", "FEATURES", "features", "LambdaRanker", "PARAMS"]

FEATURES = ("bm25", "bm25_log_rank", "dense", "dense_log_rank", "rrf", "hybrid_log_rank", "title_match",
            "heading_match", "coverage", "n_words")  # fmt: skip
"""What the learned reranker sees of a (query, chunk) pair; a rank r is given as log2(r)."""

PARAMS = {
    "objective": "lambdarank",
    "metric": "ndcg",
    "ndcg_eval_at": [3, 5, 10],
    "label_gain": [0, 1, 2, 3],  # linear gain, as labkit.measures.metrics' nDCG
    "learning_rate": 0.05,
    "num_leaves": 7,
    "min_data_in_leaf": 20,
    "num_threads": 1,
    "deterministic": True,
    "force_row_wise": True,
    "seed": SEED,
    "verbosity": -1,
}
"""Fixed before looking at the test queries: small trees (7 leaves), a slow learning rate, one thread, seeded."""
ROUNDS = 150
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*$", re.MULTILINE)


def check_depths(k1: Any, k2: Any, n_candidates: int | None = None) -> tuple[int, int]:
    """``(k1, k2)`` checked: stage 2 keeps ``k2`` of stage 1's ``k1``, so ``k2 <= k1``; ``k1`` at most the corpus."""
    k1 = args.whole_number("k1", k1)
    k2 = args.whole_number("k2", k2)
    if k2 > k1:
        raise ValueError(f"k2 ({k2}) must be <= k1 ({k1}): stage 2 keeps k2 of stage 1's k1 candidates")
    if n_candidates is not None and k1 > n_candidates:
        raise ValueError(f"k1 ({k1}) must be <= {n_candidates}, the chunks there are to retrieve from")
    return k1, k2


def rerank(candidates: Sequence[str], scores: Sequence[float], k2: int | None = None) -> list[str]:
    """``candidates`` (stage 1's order) sorted by ``scores``, highest first, ties kept in stage 1's order; the top
    ``k2`` (all when None). One score per candidate, every score a finite number."""
    cands = args.ranking("candidates", candidates, allow_empty=False, example='["c1", "c7", "c3"]')
    if len(set(cands)) != len(cands):
        dup = next(c for c in cands if cands.count(c) > 1)
        raise ValueError(f"candidates holds {dup!r} twice: stage 1 must give each chunk once")
    if isinstance(scores, str | bytes | Mapping) or not hasattr(scores, "__len__"):
        raise ValueError(f"scores must be a list of numbers, one per candidate; got {type(scores).__name__}")
    scores = list(scores)
    if len(scores) != len(cands):
        raise ValueError(
            f"scores has {len(scores)} values for {len(cands)} candidates: a reranker must score every candidate "
            "(nothing is reordered with a score missing)"
        )
    bad = [i for i, s in enumerate(scores) if isinstance(s, bool) or not isinstance(s, Real) or not math.isfinite(s)]
    if bad:
        i = bad[0]
        raise ValueError(f"scores[{i}] is {scores[i]!r}: a reranker returned a value that is not a finite number "
                         f"for candidate {cands[i]!r} ({len(bad)} such); nothing was reordered")  # fmt: skip
    if k2 is not None:
        _, k2 = check_depths(len(cands), k2)
    order = sorted(range(len(cands)), key=lambda i: (-float(scores[i]), i))
    return [cands[i] for i in order][: k2 or len(cands)]


def _terms(retriever: Any, texts: Sequence[str]) -> list[set[str]]:
    return [set(t) for t in retriever.tokenize(list(texts))]


def _heading_of(text: str, start: int) -> str:
    """The last Markdown heading at or before character ``start`` of ``text`` ("" when none)."""
    last = ""
    for m in _HEADING.finditer(text, 0, start + 1):
        last = m.group(1)
    return last


def features(
    queries: Sequence[str],
    candidates: Sequence[Sequence[str]],
    setting: Any,
) -> tuple[list[list[list[float]]], tuple[str, ...]]:
    """``(rows, FEATURES)``: for each query, one feature row per candidate chunk (its stage-1 order).

    ``setting`` holds ``chunks``, ``corpus``, ``bm25``, ``dense`` and ``hybrid`` (``studies.handbook.handbook()``).
    A chunk BM25 gives no score (no shared term) gets score 0 and the rank after the last scored one.
    """
    setting = args.attributes("setting", setting, ("chunks", "corpus", "bm25", "dense", "hybrid"),
                              "labkit.studies.handbook.handbook()")  # fmt: skip
    queries = args.strings("queries", queries, allow_empty=False)
    candidates = args.sequence("candidates", candidates)
    if len(candidates) != len(queries):
        raise ValueError(f"candidates has {len(candidates)} lists for {len(queries)} queries: one list per query")
    by_id = {c.id: c for c in setting.chunks}
    for i, cands in enumerate(candidates):
        cands = args.ranking(f"candidates[{i}]", cands, allow_empty=False)
        unknown = [c for c in cands if c not in by_id]
        if unknown:
            raise ValueError(f"candidates[{i}] holds {unknown[0]!r}, not a chunk of setting.chunks")
    n = len(by_id)
    bm25 = setting.bm25.search_many(queries, k=n)
    dense = setting.dense.search_many(queries, k=n)
    fused = setting.hybrid.search_many(queries, k=setting.hybrid.depth)
    q_terms = _terms(setting.bm25, queries)
    ids = list(dict.fromkeys(c for cands in candidates for c in cands))  # each chunk's terms once, not per query
    chunks = [by_id[c] for c in ids]
    titles = dict(zip(ids, _terms(setting.bm25, [setting.corpus[c.doc].title for c in chunks]), strict=True))
    heads = dict(zip(ids, _terms(setting.bm25, [_heading_of(setting.corpus[c.doc].text, c.start_char)
                                                 for c in chunks]), strict=True))  # fmt: skip
    bodies = dict(zip(ids, _terms(setting.bm25, [c.text for c in chunks]), strict=True))
    rows = []
    for qi, cands in enumerate(candidates):
        b = {d: (s, r) for r, (d, s) in enumerate(bm25[qi], 1)}
        dn = {d: (s, r) for r, (d, s) in enumerate(dense[qi], 1)}
        f = {d: (s, r) for r, (d, s) in enumerate(fused[qi], 1)}
        qt = q_terms[qi] or {""}
        out = []
        for cid in cands:
            bs, br = b.get(cid, (0.0, len(b) + 1))
            ds, dr = dn[cid]
            fs, fr = f.get(cid, (0.0, len(f) + 1))
            out.append([bs, math.log2(br), ds, math.log2(dr), fs, math.log2(fr), len(qt & titles[cid]) / len(qt),
                        len(qt & heads[cid]) / len(qt), len(qt & bodies[cid]) / len(qt),
                        float(by_id[cid].n_words)])  # fmt: skip
        rows.append(out)
    return rows, FEATURES


class LambdaRanker:
    """LightGBM's lambdarank on :data:`FEATURES` (:data:`PARAMS`, :data:`ROUNDS` trees): ``fit`` on graded
    candidates grouped by query, then ``scores`` for new candidates with the same feature names."""

    def __init__(self, params: Mapping[str, Any] | None = None, rounds: int = ROUNDS):
        self.params = {**PARAMS, **dict(params or {})}
        self.rounds = args.whole_number("rounds", rounds)
        self.feature_names: tuple[str, ...] | None = None
        self.booster = None

    def __repr__(self) -> str:
        state = "not fitted" if self.booster is None else f"{self.rounds} trees on {len(self.feature_names)} features"
        return f"LambdaRanker({state})"

    def fit(
        self, rows: Sequence[Sequence[Sequence[float]]], grades: Sequence[Sequence[int]], feature_names: Sequence[str]
    ) -> LambdaRanker:
        """``rows[q][i]``: the features of query q's candidate i; ``grades[q][i]``: its grade (0-3)."""
        import lightgbm as lgb
        import numpy as np

        names = tuple(args.strings("feature_names", feature_names, allow_empty=False, unique=True))
        x, groups = self._matrix(rows, names, "rows")
        y = [g for q in args.sequence("grades", grades) for g in q]
        if len(grades) != len(groups) or len(y) != len(x):
            raise ValueError("grades must hold one grade per candidate of every query in rows, in the same order")
        bad = [g for g in y if isinstance(g, bool) or not isinstance(g, int) or not 0 <= g < len(PARAMS["label_gain"])]
        if bad:
            raise ValueError(f"grades must be whole numbers 0-3, got {bad[0]!r}")
        if not any(y):
            raise ValueError("grades are all 0: nothing to learn an order from")
        data = lgb.Dataset(np.asarray(x), label=np.asarray(y), group=groups, feature_name=list(names),
                           free_raw_data=False)  # fmt: skip
        self.booster = lgb.train(self.params, data, num_boost_round=self.rounds)
        self.feature_names = names
        return self

    def _matrix(self, rows: Any, names: tuple[str, ...], what: str) -> tuple[list[list[float]], list[int]]:
        rows = args.sequence(what, rows)
        x, groups = [], []
        for qi, q in enumerate(rows):
            q = args.sequence(f"{what}[{qi}]", q, allow_empty=False)
            for ci, r in enumerate(q):
                r = args.numbers(f"{what}[{qi}][{ci}]", r)
                if len(r) != len(names):
                    raise ValueError(f"{what}[{qi}][{ci}] has {len(r)} features; the names list {len(names)}")
                x.append(r)
            groups.append(len(q))
        if not x:
            raise ValueError(f"{what} is empty: give at least one query with candidates")
        return x, groups

    def scores(self, rows: Sequence[Sequence[float]], feature_names: Sequence[str]) -> list[float]:
        """One score per candidate row of one query; ``feature_names`` must be those it was fitted on."""
        import numpy as np

        if self.booster is None:
            raise ValueError("this LambdaRanker is not fitted yet: call .fit(rows, grades, feature_names) first")
        names = tuple(args.strings("feature_names", feature_names, allow_empty=False))
        if names != self.feature_names:
            extra = [n for n in names if n not in self.feature_names]
            missing = [n for n in self.feature_names if n not in names]
            raise ValueError(
                f"feature_names differ from the ones it was trained on: unknown {extra}, missing {missing} (order "
                f"matters too); build the rows with the same features, {list(self.feature_names)}"
            )
        x, _ = self._matrix([rows], names, "rows")
        return [float(s) for s in self.booster.predict(np.asarray(x))]
