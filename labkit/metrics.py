"""Retrieval metrics: one ranking at a time, then a whole run at once.

Taught in ``03_metrics_by_hand`` (per ranking) and ``04_mrr_hit_rate_lost_in_the_middle``
(over a query set).

A *ranking* here is the list of relevance grades of the retrieved documents,
in rank order: ``rels = [0, 2, 0, 3, 1]`` means the document at rank 2 has
grade 2, and so on. Grades are numbers (0 = not relevant, 1 = related,
2 = needed, 3 = states the answer); a negative grade means "judged and
not relevant" and counts like 0.

Binary metrics (precision, recall, reciprocal rank, hit) need a threshold:
a document is relevant when ``grade >= thr``. Changing ``thr`` changes the
number, so report it beside the number.

Conventions (the same as trec_eval unless said otherwise):

- ``P@k`` divides by ``k`` even when fewer than ``k`` documents came back.
- ``R@k`` divides by every relevant document the query has, retrieved or not;
  a query with none has no recall (``None``) and is left out of means.
- nDCG uses linear gain (the grade) and the discount ``log2(rank + 1)``.
  Its ideal DCG has two conventions, both named:
  ``idcg="retrieved"`` re-sorts the retrieved top-k (the book's way; it
  cannot see relevant documents the retriever missed) and ``idcg="all_judged"``
  sorts every judged document of the query (trec_eval's way).
- Ties in a scored run are broken like trec_eval: score descending, then
  document id descending.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from numbers import Integral, Real
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = [
    "precision_at_k",
    "recall_at_k",
    "reciprocal_rank",
    "hit_at_k",
    "dcg",
    "ndcg_at_k",
    "evaluate",
    "Evaluation",
    "parse_metric",
    "ranking_metrics",
    "evaluate_by_group",
    "compare_runs",
]


# ---------------------------------------------------------------- validation


def _check_k(k: Any, name: str = "k") -> int:
    if isinstance(k, bool) or not isinstance(k, Integral):
        raise ValueError(f"{name} must be a whole number >= 1, got {k!r}")
    if k < 1:
        raise ValueError(f"{name} must be >= 1, got {k}: a cutoff below 1 looks at no documents at all")
    return int(k)


def _check_thr(thr: Any) -> float:
    if isinstance(thr, bool) or not isinstance(thr, Real) or math.isnan(thr):
        raise ValueError(f"thr must be a number (the lowest grade that counts as relevant, e.g. 1 or 2), got {thr!r}")
    if thr <= 0:
        raise ValueError(
            f"thr must be > 0, got {thr}: with thr <= 0 every unjudged document (grade 0) would count as relevant"
        )
    return float(thr)


def _check_grades(rels: Any, name: str = "rels") -> list[float]:
    if isinstance(rels, str | bytes | Mapping) or not isinstance(rels, Iterable):
        raise ValueError(f"{name} must be a list of grades such as [0, 2, 0, 3, 1], got {type(rels).__name__}")
    out = []
    for i, r in enumerate(rels):
        if isinstance(r, bool) or not isinstance(r, Real):
            raise ValueError(f"{name}[{i}] = {r!r} is not a number: grades must be numbers such as 0, 1, 2, 3")
        if math.isnan(r):
            raise ValueError(f"{name}[{i}] is NaN: give every document a grade (0 when it is not relevant)")
        out.append(float(r))
    return out


def _hits(rels: list[float], k: int, thr: float) -> int:
    return sum(r >= thr for r in rels[:k])


# ---------------------------------------------------------------- one ranking


def precision_at_k(rels: Sequence[float], k: int, thr: float = 1) -> float:
    """Precision@k: the share of the top ``k`` slots that hold a relevant document.

    ``P@k = |{i <= k : rels[i] >= thr}| / k``

    The denominator is ``k`` even when the ranking is shorter than ``k``
    (empty slots count as misses, as in trec_eval), so ``P@k * k`` is the
    number of hits.

    >>> precision_at_k([0, 2, 0, 3, 1], 5)
    0.6
    """
    k, thr = _check_k(k), _check_thr(thr)
    return _hits(_check_grades(rels), k, thr) / k


def recall_at_k(rels: Sequence[float], k: int, n_relevant_total: int, thr: float = 1) -> float | None:
    """Recall@k: the share of all the query's relevant documents found in the top ``k``.

    ``R@k = |{i <= k : rels[i] >= thr}| / n_relevant_total``

    ``n_relevant_total`` counts every document with ``grade >= thr`` in the
    judgements, including the ones the retriever never returned; the
    ranking alone cannot know it. When it is 0 the query has nothing to
    recall: the result is ``None``, and such a query is left out of means
    (trec_eval reports 0 instead, which drags the mean down for no reason).

    >>> recall_at_k([0, 2, 0, 3, 1], 5, n_relevant_total=4)
    0.75
    """
    k, thr = _check_k(k), _check_thr(thr)
    grades = _check_grades(rels)
    if isinstance(n_relevant_total, bool) or not isinstance(n_relevant_total, Integral) or n_relevant_total < 0:
        raise ValueError(f"n_relevant_total must be a whole number >= 0, got {n_relevant_total!r}")
    if n_relevant_total == 0:
        return None
    hits = _hits(grades, k, thr)
    if hits > n_relevant_total:
        raise ValueError(
            f"n_relevant_total ({n_relevant_total}) is smaller than the {hits} relevant documents "
            f"already in the top {k}: count every document with grade >= {thr:g}, retrieved or not"
        )
    return hits / n_relevant_total


def reciprocal_rank(rels: Sequence[float], k: int, thr: float = 1) -> float:
    """Reciprocal rank: ``1 / rank`` of the first relevant document in the top ``k``, else 0.

    Only the first useful document matters; averaged over queries it is MRR@k.

    >>> reciprocal_rank([0, 2, 0, 3, 1], 5)
    0.5
    """
    k, thr = _check_k(k), _check_thr(thr)
    for i, r in enumerate(_check_grades(rels)[:k], start=1):
        if r >= thr:
            return 1 / i
    return 0.0


def hit_at_k(rels: Sequence[float], k: int, thr: float = 1) -> float:
    """Hit@k: 1.0 when at least one relevant document is in the top ``k``, else 0.0.

    Averaged over queries it is the *hit rate*: the share of queries where the
    reader got at least one useful document.
    """
    k, thr = _check_k(k), _check_thr(thr)
    return float(_hits(_check_grades(rels), k, thr) > 0)


def dcg(rels: Sequence[float]) -> float:
    """Discounted cumulative gain of a whole ranking (cut it first for DCG@k).

    ``DCG = sum_i gain_i / log2(i + 1)``, ranks ``i`` from 1, gain = the grade
    (linear gain, as trec_eval; some libraries use ``2**grade - 1``). Rank 1
    keeps its full gain, rank 2 about 63 %, rank 10 about 29 %. Negative
    grades mean "judged not relevant" and gain 0.

    >>> round(dcg([0, 2, 0, 3, 1]), 4)
    2.9407
    """
    return sum(max(r, 0.0) / math.log2(i + 1) for i, r in enumerate(_check_grades(rels), start=1))


def ndcg_at_k(rels: Sequence[float], k: int, all_grades: Sequence[float] | None = None) -> float:
    """nDCG@k: DCG of the top ``k`` divided by the best DCG@k that was possible.

    ``nDCG@k = DCG(rels[:k]) / DCG(ideal[:k])``, in [0, 1]; 0 when the ideal is 0.

    Which "best" is the convention, and it changes the number:

    - ``all_grades=None`` — the book's way (``idcg="retrieved"``): the ideal
      re-sorts the retrieved top ``k``. It measures ordering only: a ranking
      that missed a grade-3 document entirely can still score 1.0.
    - ``all_grades=[...]`` — trec_eval's way (``idcg="all_judged"``): the
      ideal sorts the grades of *every* judged document of the query,
      retrieved or not, so missing documents cost points. The list must
      include the grades of the retrieved documents.

    >>> round(ndcg_at_k([0, 2, 0, 3, 1], 5), 4)
    0.6176
    >>> round(ndcg_at_k([0, 2, 0, 3, 1], 5, all_grades=[0, 2, 0, 3, 1, 2]), 4)
    0.5166
    """
    k = _check_k(k)
    top = _check_grades(rels)[:k]
    if all_grades is None:
        pool = top
    else:
        pool = _check_grades(all_grades, "all_grades")
        have, need = Counter(g for g in pool if g > 0), Counter(g for g in top if g > 0)
        short = {g: n for g, n in need.items() if have[g] < n}
        if short:
            raise ValueError(
                "all_grades must list the grades of every judged document of the query, including "
                f"the retrieved ones; it lacks {', '.join(f'{n - have[g]} x grade {g:g}' for g, n in short.items())}"
            )
    ideal = dcg(sorted(pool, reverse=True)[:k])
    return dcg(top) / ideal if ideal > 0 else 0.0


# ---------------------------------------------------------------- a whole run

_METRIC = re.compile(r"^(ndcg|p|r|rr|mrr|hit)@(\d+)$", re.IGNORECASE)
_CANON = {"ndcg": "nDCG", "p": "P", "r": "R", "rr": "RR", "mrr": "RR", "hit": "hit"}
METRIC_NAMES = ("nDCG@k", "P@k", "R@k", "RR@k", "hit@k")


def parse_metric(name: str) -> tuple[str, int]:
    """``"nDCG@10"`` -> ``("nDCG", 10)``; names are case-insensitive, ``MRR@k`` means ``RR@k``."""
    m = _METRIC.match(str(name).strip())
    if not m:
        raise ValueError(f"unknown metric {name!r}: use one of {', '.join(METRIC_NAMES)} with a number for k")
    return _CANON[m.group(1).lower()], _check_k(int(m.group(2)), f"k in {name!r}")


@dataclass
class Evaluation:
    """What :func:`evaluate` returns.

    ``per_query``: one row per judged query, one column per metric (recall is
    NaN for a query with no relevant document). ``mean``: the column means,
    NaN left out. ``missing``: judged queries absent from the run (they
    score 0 and are still in the mean). ``unjudged``: run queries with no
    judgements (ignored).
    """

    per_query: pd.DataFrame
    mean: pd.Series
    missing: list[str] = field(default_factory=list)
    unjudged: list[str] = field(default_factory=list)

    def __repr__(self) -> str:
        means = ", ".join(f"{m}={v:.4f}" for m, v in self.mean.items())
        extra = f", {len(self.missing)} missing from the run" if self.missing else ""
        return f"Evaluation({len(self.per_query)} queries{extra}: {means})"


def _numbers(values: list, what: str, where: list[str]):
    """A float array from ``values``; a clear error for anything that is not a real number or is NaN."""
    import numpy as np

    arr = values if isinstance(values, np.ndarray) else np.asarray(values)
    if arr.dtype.kind not in "iuf":  # strings, None, bools mixed in: find the first offender
        _raise_first_not_number(values, what, where)
    arr = arr.astype(float, copy=False)
    nan = np.flatnonzero(np.isnan(arr))
    if len(nan):
        raise ValueError(
            f"{what} for {where[nan[0]]} is NaN ({len(nan)} NaN {what}s in all): "
            f"drop those rows or give them a real {what}"
        )
    return arr


def _raise_first_not_number(values, what: str, where) -> None:
    for i, v in enumerate(values):
        if isinstance(v, bool) or not isinstance(v, Real):
            raise ValueError(f"{what} for {where[i]} is {v!r}: {what}s must be numbers")


def _column_values(col: Any):
    """A numeric column as a float array as is (no Python objects); anything else as a list to check."""
    if col.dtype.kind in "iuf":
        return col.to_numpy(dtype=float)
    return col.tolist()


def _frame_columns(frame: Any, value_cols: tuple[str, ...], kind: str):
    cols = [str(c) for c in frame.columns]
    value = next((c for c in value_cols if c in cols), None)
    if "qid" not in cols or "doc" not in cols or value is None:
        raise ValueError(f"a {kind} DataFrame needs columns qid, doc and {' or '.join(value_cols)}; it has {cols}")
    return frame["qid"].to_numpy(dtype=object), frame["doc"].to_numpy(dtype=object), value


def _run_arrays(run: Any):
    """Flatten any accepted run shape to (qid, doc, score, may_repeat) arrays.

    ``may_repeat`` is False only for ``{qid: {doc: score}}``, where a dict
    cannot hold a doc twice, so the duplicate check can be skipped.
    """
    import numpy as np
    import pandas as pd

    if isinstance(run, pd.DataFrame):
        q, d, col = _frame_columns(run, ("score", "rank"), "run")
        s = _numbers(_column_values(run[col]), col, _Where(q, d))
        s = -s if col == "rank" else s
        may_repeat = True
    elif isinstance(run, Mapping) and run and all(isinstance(r, Mapping) for r in run.values()):
        q, d, s = _flatten_dicts(run, "score")
        may_repeat = False
    elif isinstance(run, Mapping):
        ds: list = []
        ss: list = []
        lengths: list[int] = []
        may_repeat = False
        for qid, ranking in run.items():
            if isinstance(ranking, Mapping):
                ds.extend(ranking)
                ss.extend(ranking.values())
            elif isinstance(ranking, Sequence) and not isinstance(ranking, str | bytes):
                ds.extend(ranking)
                ss.extend(range(-1, -len(ranking) - 1, -1))
                may_repeat = True
            else:
                raise ValueError(f"run[{qid!r}] must be a {{doc: score}} dict or a ranked list of doc ids")
            lengths.append(len(ranking))
        q = _Qids(list(run), lengths)
        d = np.asarray(ds, dtype=object)
        s = _numbers(ss, "score", _Where(q, d))
    else:
        raise ValueError(
            "run must be {qid: {doc: score}}, {qid: [doc, ...]} (ranked) or a DataFrame (qid, doc, score), "
            f"got {type(run).__name__}"
        )
    if len(q) == 0:
        raise ValueError("run is empty: no query has any retrieved document")
    return q, d, s, may_repeat


def _flatten_dicts(nested: Mapping, what: str):
    """``{qid: {doc: value}}`` as (qids, doc array, float array) without building Python lists."""
    from itertools import chain

    import numpy as np

    inner = list(nested.values())
    lengths = [len(x) for x in inner]
    n = sum(lengths)
    q = _Qids(list(nested), lengths)
    d = np.fromiter(chain.from_iterable(inner), dtype=object, count=n)
    types = set(map(type, chain.from_iterable(x.values() for x in inner)))
    if all(issubclass(t, Real) and not issubclass(t, bool) for t in types):
        values = np.fromiter(chain.from_iterable(x.values() for x in inner), dtype=float, count=n)
    else:
        _raise_first_not_number(list(chain.from_iterable(x.values() for x in inner)), what, _Where(q, d))
    return q, d, _numbers(values, what, _Where(q, d))


def _qrels_arrays(qrels: Any):
    import numpy as np
    import pandas as pd

    if isinstance(qrels, pd.DataFrame):
        q, d, col = _frame_columns(qrels, ("grade",), "qrels")
        g = _numbers(_column_values(qrels[col]), "grade", _Where(q, d))
    elif isinstance(qrels, Mapping) and qrels and all(isinstance(j, Mapping) for j in qrels.values()):
        q, d, g = _flatten_dicts(qrels, "grade")
    elif isinstance(qrels, Mapping):
        ds: list = []
        gs: list = []
        lengths: list[int] = []
        for qid, judged in qrels.items():
            if not isinstance(judged, Mapping):
                raise ValueError(f"qrels[{qid!r}] must be a {{doc: grade}} dict")
            lengths.append(len(judged))
            ds.extend(judged)
            gs.extend(judged.values())
        q = _Qids(list(qrels), lengths)
        d = np.asarray(ds, dtype=object)
        g = _numbers(gs, "grade", _Where(q, d))
    else:
        raise ValueError(
            f"qrels must be {{qid: {{doc: grade}}}} or a DataFrame (qid, doc, grade), got {type(qrels).__name__}"
        )
    if len(q) == 0:
        raise ValueError("qrels are empty: there is nothing to evaluate against")
    return q, d, g


class _Qids:
    """The query id of every row, stored as ``keys`` (one per query) and ``idx`` (row -> key)."""

    def __init__(self, keys, lengths=None, idx=None):
        import numpy as np

        self.keys = np.asarray(keys, dtype=object)
        self.idx = np.repeat(np.arange(len(self.keys)), lengths) if idx is None else np.asarray(idx)

    def __len__(self) -> int:
        return len(self.idx)

    def __getitem__(self, i):
        return self.keys[self.idx[i]]


def _as_qids(q, what: str) -> _Qids:
    """Query ids as codes. A long table is usually grouped by query, so only the first row
    of each block of equal ids is hashed; a missing (None/NaN) id is an error."""
    import numpy as np
    import pandas as pd

    if isinstance(q, _Qids):
        return q
    n = len(q)
    starts = np.r_[0, np.flatnonzero(q[1:] != q[:-1]) + 1] if n else np.zeros(0, dtype=np.int64)
    if len(starts) * 4 < n:
        idx, keys = pd.factorize(q[starts])
        idx = np.repeat(idx, np.diff(np.r_[starts, n]))
    else:
        idx, keys = pd.factorize(q)
    if n and idx.min() < 0:
        row = int(np.flatnonzero(idx < 0)[0])
        raise ValueError(f"{what} row {row} has no qid ({q[row]!r}): every row needs a query id")
    return _Qids(keys, idx=idx)


class _Where:
    """Names row ``i`` as "qid 'q1' doc 'd3'" for error messages, lazily."""

    def __init__(self, q, d):
        self.q, self.d = q, d

    def __getitem__(self, i):
        return f"qid {self.q[i]!r} doc {self.d[i]!r}"


def _codes(values, sort: bool, where=lambda row: ""):
    """Integer codes for ids; ids are compared as strings (as trec_eval does)."""
    import numpy as np
    import pandas as pd

    codes, uniq = pd.factorize(values)
    if len(codes) and codes.min() < 0:
        row = int(np.flatnonzero(codes < 0)[0])
        raise ValueError(f"a doc id is missing ({values[row]!r}{where(row)}): every row needs a doc id")
    uniq = np.asarray(uniq, dtype=object)
    if not all(type(u) is str for u in uniq):
        return _codes(np.asarray([str(v) for v in values], dtype=object), sort, where)
    if sort:
        order = np.argsort(uniq.astype(str), kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        codes, uniq = rank[codes], uniq[order]
    return codes.astype(np.int64), uniq


def _first_duplicate(key):
    """Index of one row whose int key repeats an earlier one, or None."""
    import numpy as np
    import pandas as pd

    if pd.Index(key).is_unique:  # a hash table: much cheaper than the sort below, which only names the row
        return None
    order = np.argsort(key, kind="stable")
    same = np.flatnonzero(key[order][1:] == key[order][:-1])
    return None if len(same) == 0 else int(order[same[0] + 1])


def _group_ranks(group):
    """1-based position of each row inside its run of equal, sorted ``group`` codes."""
    import numpy as np

    n = len(group)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
    lengths = np.diff(np.r_[starts, n])
    return np.arange(n) - np.repeat(starts, lengths) + 1


def _sort_run(q, s, d):
    """Order rows by query, score descending, doc code descending (trec_eval's order)."""
    import numpy as np

    uniq_s, s_rank = np.unique(-s, return_inverse=True)  # 0 = highest score
    nq, ns, nd = int(q.max()) + 1, len(uniq_s), int(d.max()) + 1
    if nq * ns * nd < 2**62:  # one int64 key sorts faster than a three-key lexsort
        key = (q * ns + s_rank.astype(np.int64)) * nd + (nd - 1 - d)
        return np.argsort(key)  # keys are unique (one row per query and doc), so stability is moot
    return np.lexsort((-d, -s, q))


def _ranks(q, s, d, sel):
    """1-based rank (score descending, then doc code descending) of each ``sel`` row in its query.

    Rows grouped by query (the usual case) are laid out as a query x position table, and each
    selected row counts the rows of its query that come before it: no sort of the whole run.
    Otherwise, or when that table would be much larger than the run, the whole run is sorted.
    """
    import numpy as np

    n, idx = len(q), np.flatnonzero(sel)
    if n == 0 or len(idx) == 0:
        return np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.r_[True, q[1:] != q[:-1]])
    lengths = np.diff(np.r_[starts, n])
    width = int(lengths.max())
    grouped = len(np.unique(q[starts])) == len(starts)
    if grouped and len(starts) * width <= 4 * n and len(idx) * width <= 64 * n:
        block = np.repeat(np.arange(len(starts)), lengths)
        pos = np.arange(n) - starts[block]
        scores = np.full((len(starts), width), -np.inf)  # padding never comes first: d = -1 loses ties
        docs = np.full((len(starts), width), -1, dtype=np.int64)
        scores[block, pos], docs[block, pos] = s, d
        out = np.empty(len(idx), dtype=np.int64)
        step = max(1, 2_000_000 // width)  # bounded temporaries (~16 MB per array)
        for a in range(0, len(idx), step):
            rows = idx[a : a + step]
            b, sr, dr = block[rows], s[rows][:, None], d[rows][:, None]
            before = (scores[b] > sr) | ((scores[b] == sr) & (docs[b] > dr))
            out[a : a + step] = before.sum(axis=1) + 1
        return out
    order = _sort_run(q, s, d)
    rank = np.empty(n, dtype=np.int64)
    rank[order] = _group_ranks(q[order])
    return rank[idx]


def evaluate(
    run: Any,
    qrels: Any,
    metrics: Iterable[str] = ("nDCG@10", "P@10", "R@100", "RR@10", "hit@5"),
    thr: float = 1,
    idcg: str = "all_judged",
) -> Evaluation:
    """Evaluate a whole run against judgements; one row per judged query.

    ``run``: ``{qid: {doc: score}}`` (ties: score descending, then doc id
    descending, like trec_eval), ``{qid: [doc, ...]}`` already ranked, or a
    long DataFrame with columns ``qid, doc, score`` (or ``rank``).
    ``qrels``: ``{qid: {doc: grade}}`` or a DataFrame ``qid, doc, grade``.
    ``metrics``: names like ``nDCG@10``, ``P@5``, ``R@100``, ``RR@10``
    (``MRR@10`` is accepted), ``hit@5``. ``thr``: the lowest grade that
    counts as relevant for the binary metrics (nDCG always uses the grades).
    ``idcg``: ``"all_judged"`` (trec_eval) or ``"retrieved"`` (the book).

    Every query in ``qrels`` gets a row; one missing from the run scores 0
    and is listed in ``Evaluation.missing``. Unjudged documents have grade 0.
    The work is done with NumPy on flat arrays, whatever shape came in.
    """
    import numpy as np
    import pandas as pd

    thr = _check_thr(thr)
    if idcg not in ("all_judged", "retrieved"):
        raise ValueError(f"idcg must be 'all_judged' (trec_eval) or 'retrieved' (the book), got {idcg!r}")
    if isinstance(metrics, str):
        metrics = (metrics,)
    parsed = [(str(m), *parse_metric(m)) for m in metrics]
    if not parsed:
        raise ValueError("metrics is empty: name at least one, e.g. ('nDCG@10', 'R@100')")

    rq, rd, rs, may_repeat = _run_arrays(run)
    jq, jd, jg = _qrels_arrays(qrels)
    nj = len(jq)

    # Integer codes. Query ids are coded through their few distinct values; documents are
    # coded in sorted order so that "doc id descending" becomes "code descending" (tie-break).
    jq, rq = _as_qids(jq, "qrels"), _as_qids(rq, "run")
    code_of: dict[str, int] = {}
    jmap = np.array([code_of.setdefault(str(k), len(code_of)) for k in jq.keys], dtype=np.int64)
    rmap = np.array([code_of.setdefault(str(k), len(code_of)) for k in rq.keys], dtype=np.int64)
    jq_code, rq_code = jmap[jq.idx], rmap[rq.idx]
    q_uniq = np.array(list(code_of), dtype=object)
    d_code, d_uniq = _codes(
        np.concatenate([jd, rd]),
        sort=True,
        where=lambda i: f" for qid {jq[i]!r} in qrels" if i < nj else f" for qid {rq[i - nj]!r} in the run",
    )
    jd_code, rd_code = d_code[:nj], d_code[nj:]
    nq, ndocs = len(q_uniq), max(len(d_uniq), 1)

    jkey = jq_code * ndocs + jd_code
    if (i := _first_duplicate(jkey)) is not None:
        raise ValueError(f"qrels judge qid {jq[i]!r} doc {jd[i]!r} twice: keep one grade per (qid, doc)")
    rkey = rq_code * ndocs + rd_code
    if may_repeat and (i := _first_duplicate(rkey)) is not None:
        raise ValueError(
            f"run lists doc {rd[i]!r} more than once for qid {rq[i]!r}: de-duplicate each ranking first "
            "(fused lists with duplicates push hit rate and recall above their true values)"
        )

    judged = np.zeros(nq, dtype=bool)
    judged[jq_code] = True
    known = judged[rq_code]
    unjudged: list[str] = []
    if not known.all():
        unjudged = sorted({str(x) for x in rq.keys[np.unique(rq.idx[~known])]})
        rq_code, rd_code, rs, rkey = rq_code[known], rd_code[known], rs[known], rkey[known]
    present = np.zeros(nq, dtype=bool)
    present[rq_code] = True

    # Grade of every retrieved row, looked up by its (query, doc) key. Rows with no positive grade
    # add nothing to any metric (thr > 0, so they are never relevant, and their gain is 0): only
    # the ranks of the rows that earn something are needed.
    hit_row = pd.Index(jkey).get_indexer(rkey)
    earns = hit_row >= 0
    earns[earns] = jg[hit_row[earns]] > 0
    rank = _ranks(rq_code, rs, rd_code, earns)
    rq_code, grade = rq_code[earns], jg[hit_row[earns]]
    keep = rank <= max(k for _, _, k in parsed)
    rq_code, rank, grade = rq_code[keep], rank[keep], grade[keep]
    gain = np.maximum(grade, 0.0)
    relevant = grade >= thr
    n_rel = np.bincount(jq_code, weights=(jg >= thr), minlength=nq)
    discount = 1.0 / np.log2(rank + 1.0)

    # Ideal orderings for the two IDCG conventions.
    jgain = np.maximum(jg, 0.0)
    iorder = np.lexsort((-jgain, jq_code))
    i_q, i_gain = jq_code[iorder], jgain[iorder]
    i_rank = _group_ranks(i_q)

    out: dict[str, np.ndarray] = {}
    for name, kind, k in parsed:
        m = rank <= k
        hits = np.bincount(rq_code[m], weights=relevant[m], minlength=nq)
        if kind == "P":
            val = hits / k
        elif kind == "R":
            with np.errstate(invalid="ignore", divide="ignore"):
                val = np.where(n_rel > 0, hits / np.where(n_rel > 0, n_rel, 1), np.nan)
        elif kind == "hit":
            val = (hits > 0).astype(float)
        elif kind == "RR":
            first = np.full(nq, np.inf)
            sel = m & relevant
            np.minimum.at(first, rq_code[sel], rank[sel])
            val = np.where(np.isfinite(first), 1.0 / first, 0.0)
        else:  # nDCG
            dcg_q = np.bincount(rq_code[m], weights=gain[m] * discount[m], minlength=nq)
            if idcg == "all_judged":
                im = i_rank <= k
                ideal = np.bincount(i_q[im], weights=i_gain[im] / np.log2(i_rank[im] + 1.0), minlength=nq)
            else:
                o = np.lexsort((-gain[m], rq_code[m]))
                g_q, g_gain = rq_code[m][o], gain[m][o]
                r2 = _group_ranks(g_q)
                ideal = np.bincount(g_q, weights=g_gain / np.log2(r2 + 1.0), minlength=nq)
            with np.errstate(invalid="ignore", divide="ignore"):
                val = np.where(ideal > 0, dcg_q / np.where(ideal > 0, ideal, 1), 0.0)
        out[name] = val

    rows = np.flatnonzero(judged)
    rows = rows[np.argsort(q_uniq[rows].astype(str), kind="stable")]
    qids = [str(x) for x in q_uniq[rows]]
    per_query = pd.DataFrame({n: v[rows] for n, v in out.items()}, index=pd.Index(qids, name="qid"))
    missing = [qid for qid, row in zip(qids, rows, strict=True) if not present[row]]
    return Evaluation(per_query=per_query, mean=per_query.mean(), missing=missing, unjudged=unjudged)


def ranking_metrics(
    rels: Sequence[float], k: int, thr: float = 1, unretrieved: Sequence[float] = (), idcg: str = "retrieved"
) -> dict[str, float | None]:
    """Every metric of one ranking at once (the 03 playground shows this dict).

    ``unretrieved``: grades of judged documents the retriever did not return
    in ``rels`` (the source chapter's example has one grade-2 document at
    rank 8). They count for recall's denominator and, with
    ``idcg="all_judged"``, for the ideal DCG.
    """
    if idcg not in ("retrieved", "all_judged"):
        raise ValueError(f"idcg must be 'retrieved' (the book) or 'all_judged' (trec_eval), got {idcg!r}")
    grades = _check_grades(rels)
    extra = _check_grades(unretrieved, "unretrieved")
    thr_f = _check_thr(thr)
    k = _check_k(k)
    all_grades = grades + extra
    n_rel = sum(g >= thr_f for g in all_grades)
    pool = grades[:k] if idcg == "retrieved" else all_grades
    ideal = dcg(sorted(pool, reverse=True)[:k])
    return {
        "P@k": precision_at_k(grades, k, thr),
        "R@k": recall_at_k(grades, k, n_rel, thr),
        "RR@k": reciprocal_rank(grades, k, thr),
        "hit@k": hit_at_k(grades, k, thr),
        "DCG@k": dcg(grades[:k]),
        "IDCG@k": ideal,
        "nDCG@k": ndcg_at_k(grades, k, None if idcg == "retrieved" else all_grades),
    }


def evaluate_by_group(
    run: Any,
    qrels: Any,
    groups: Mapping[str, str],
    metrics: Iterable[str] = ("R@10", "nDCG@10"),
    thr: float = 1,
    idcg: str = "all_judged",
    total: str | None = "all",
) -> pd.DataFrame:
    """Mean of each metric per group of queries (e.g. per slice), plus an overall row named ``total``.

    ``groups``: ``{qid: group}`` for every judged query (a query with no group is an error, not
    silently dropped). Recall's NaNs (no relevant document) are left out of each mean.
    """
    res = evaluate(run, qrels, metrics, thr=thr, idcg=idcg)
    missing = [q for q in res.per_query.index if q not in groups]
    if missing:
        raise ValueError(f"groups has no entry for {len(missing)} judged queries, e.g. {missing[0]!r}")
    table = res.per_query.groupby(res.per_query.index.map(groups)).mean()
    table.index.name = "group"
    if total is not None:
        table.loc[total] = res.mean
    return table


def compare_runs(
    runs: Mapping[str, Any],
    qrels: Any,
    groups: Mapping[str, str],
    metrics: Iterable[str] = ("R@10", "nDCG@10"),
    thr: float = 1,
    idcg: str = "all_judged",
) -> pd.DataFrame:
    """:func:`evaluate_by_group` for several named runs side by side.

    Rows are groups (plus ``all``); columns are ``(metric, run name)``.
    """
    import pandas as pd

    metrics = tuple(metrics)
    tables = {name: evaluate_by_group(run, qrels, groups, metrics, thr, idcg) for name, run in runs.items()}
    out = pd.concat(tables, axis=1).swaplevel(0, 1, axis=1)
    return out[[(m, name) for m in metrics for name in runs]]
