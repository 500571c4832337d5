"""Graded measures: DCG and nDCG, with the two ideal-DCG conventions named.

Taught in ``03_metrics_by_hand`` (gain, discount, the two IDCGs, the X/Y trap).

Graded measures use the grades themselves, not a yes/no threshold:

``DCG@k = sum_{i=1..k} gain_i / log2(i + 1)``, with linear gain ``gain_i = max(grade_i, 0)``

Rank 1 keeps its full gain, rank 2 about 63 %, rank 10 about 29 %. A negative grade means
"judged, not relevant" and gains 0. (Some libraries use the exponential gain ``2**grade - 1``;
trec_eval, and labkit, use the grade.)

``nDCG@k = DCG@k / IDCG@k``, in [0, 1], and 0 when ``IDCG@k = 0`` (nothing to find or order).

``IDCG@k`` is the DCG@k of the *ideal* ranking, and which ranking is ideal is a convention that
changes the number, so both are named (``idcg=``) and written once, in :func:`ideal_ranking`:

- ``"retrieved"`` — the book's: re-sort the retrieved top ``k`` by grade. It measures ordering
  only: a ranking that missed a grade-3 document entirely can still score 1.0.
- ``"all_judged"`` — trec_eval's (``ndcg_cut``): sort the grades of *every* judged document of
  the query, retrieved or not, so relevant documents the retriever missed cost points.

Edge cases: a ranking shorter than ``k`` just has fewer terms; grades are finite numbers (NaN and
±inf are refused); grades so large (near 1e308) that a sum overflows are divided, per query, by
the largest ideal gain first, which leaves nDCG unchanged, while DCG itself refuses them.

Reference: K. Järvelin & J. Kekäläinen, "Cumulated gain-based evaluation of IR techniques",
*ACM Transactions on Information Systems* 20(4), 2002, pp. 422-446. The paper discounts by
``log_b(rank)`` from rank ``b`` on; the ``log2(rank + 1)`` form used here (and by trec_eval's
``m_ndcg_cut.c``) discounts every rank after the first.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np

from labkit.measures.metrics._arrays import group_ranks, one_query, per_query
from labkit.measures.metrics._checks import check_finite_total, check_grades, check_idcg, check_k

__all__ = [
    "dcg",
    "ndcg_at_k",
    "ideal_gains",
    "ideal_ranking",
    "discounted_gain",
    "dcg_per_query",
    "ndcg_per_query",
]

Rows = tuple[np.ndarray, np.ndarray, np.ndarray]


# ---------------------------------------------------------------- the formulas, over a whole run


def discounted_gain(grade: np.ndarray, rank: np.ndarray) -> np.ndarray:
    """``max(grade, 0) / log2(rank + 1)``: one document's term of the DCG sum."""
    return np.maximum(grade, 0.0) / np.log2(rank + 1.0)


def dcg_per_query(q: np.ndarray, rank: np.ndarray, grade: np.ndarray, nq: int) -> np.ndarray:
    """DCG of every query: the sum of its rows' discounted gains (cut the rows at k first)."""
    return per_query(q, discounted_gain(grade, rank), nq)


def ideal_ranking(idcg: str, k: int, retrieved: Rows, judged: tuple[np.ndarray, np.ndarray] | None = None) -> Rows:
    """The IDCG rule, the one place it is written: ``(q, rank, gain)`` of each query's ideal top ``k``.

    ``retrieved``: ``(q, rank, grade)`` rows of the ranking(s); ``judged``: ``(q, grade)`` of every
    judged document (needed for ``idcg="all_judged"``, unused for ``"retrieved"``).

    - ``idcg="retrieved"`` (the book): the pool is the retrieved documents at ranks ``1..k``;
    - ``idcg="all_judged"`` (trec_eval): the pool is every judged document of the query.

    Either way the pool's gains ``max(grade, 0)`` are sorted in decreasing order and the first
    ``k`` are the ideal ranking; IDCG@k is their DCG (:func:`dcg_per_query`).
    """
    if idcg == "retrieved":
        q, rank, grade = retrieved
        top = rank <= k
        q, grade = q[top], grade[top]
    elif idcg == "all_judged":
        if judged is None:
            raise ValueError("idcg='all_judged' needs the grades of every judged document (all_grades)")
        q, grade = judged
    else:
        raise ValueError(f"idcg must be 'retrieved' (the book) or 'all_judged' (trec_eval), got {idcg!r}")
    gain = np.maximum(grade, 0.0)
    order = np.lexsort((-gain, q))
    q, gain = q[order], gain[order]
    rank = group_ranks(q)
    top = rank <= k
    return q[top], rank[top], gain[top]


def ndcg_per_query(
    idcg: str, k: int, nq: int, retrieved: Rows, judged: tuple[np.ndarray, np.ndarray] | None = None
) -> np.ndarray:
    """nDCG@k of every query: DCG@k of the ranking over :func:`ideal_ranking`'s DCG; 0 when that is 0.

    When a sum overflows (grades near 1e308), that query's gains are divided by its largest ideal
    gain and summed again: nDCG is a ratio, so scaling every gain of a query leaves it unchanged.
    """
    q, rank, grade = retrieved
    top = rank <= k
    q, rank, grade = q[top], rank[top], grade[top]
    iq, irank, igain = ideal_ranking(idcg, k, (q, rank, grade), judged)
    dcg_q, ideal_q = dcg_per_query(q, rank, grade, nq), dcg_per_query(iq, irank, igain, nq)
    overflow = ~(np.isfinite(dcg_q) & np.isfinite(ideal_q))
    if overflow.any():
        scale = np.ones(nq)
        first = irank == 1
        scale[iq[first]] = np.where(igain[first] > 0, igain[first], 1.0)
        dcg_q = np.where(overflow, dcg_per_query(q, rank, grade / scale[q], nq), dcg_q)
        ideal_q = np.where(overflow, dcg_per_query(iq, irank, igain / scale[iq], nq), ideal_q)
    has = ideal_q > 0
    return np.where(has, dcg_q / np.where(has, ideal_q, 1.0), 0.0)


# ---------------------------------------------------------------- one ranking


def _judged(top: list[float], all_grades: Sequence[float] | None) -> list[float] | None:
    """``all_grades`` checked: it must contain the grades of the retrieved top k (they were judged too)."""
    if all_grades is None:
        return None
    pool = check_grades(all_grades, "all_grades")
    have, need = Counter(g for g in pool if g > 0), Counter(g for g in top if g > 0)
    short = {g: n for g, n in need.items() if have[g] < n}
    if short:
        raise ValueError(
            "all_grades must list the grades of every judged document of the query, including "
            f"the retrieved ones; it lacks {', '.join(f'{n - have[g]} x grade {g:g}' for g, n in short.items())}"
        )
    return pool


def _pool(judged: list[float] | None) -> tuple[np.ndarray, np.ndarray] | None:
    """Every judged grade of one query as ``(q, grade)`` rows, for :func:`ideal_ranking`."""
    if judged is None:
        return None
    q, _, grade = one_query(judged)
    return q, grade


def _dcg_value(grades: list[float], name: str) -> float:
    value = float(dcg_per_query(*one_query(grades), 1)[0])
    return check_finite_total(value, name, "DCG")


def dcg(rels: Sequence[float]) -> float:
    """Discounted cumulative gain of a whole ranking (cut it first for DCG@k).

    ``DCG = sum_i max(grade_i, 0) / log2(i + 1)``, ranks ``i`` from 1 (linear gain, as
    trec_eval; some libraries use ``2**grade - 1``). Rank 1 keeps its full gain, rank 2 about
    63 %, rank 10 about 29 %. Negative grades mean "judged not relevant" and gain 0. Grades so
    large that the sum overflows a float are refused (nDCG, a ratio, copes with them).

    >>> round(dcg([0, 2, 0, 3, 1]), 4)
    2.9407
    """
    return _dcg_value(check_grades(rels), "rels")


def ideal_gains(
    rels: Sequence[float], k: int, unretrieved: Sequence[float] = (), idcg: str = "retrieved"
) -> list[float]:
    """The gains of the ideal top ``k`` of one ranking, best first: what IDCG@k sums.

    ``unretrieved``: grades of the query's judged documents that are not in ``rels``. With
    ``idcg="retrieved"`` (the book) the ideal re-sorts ``rels[:k]`` and ignores them; with
    ``idcg="all_judged"`` (trec_eval) it sorts ``rels + unretrieved``.

    >>> ideal_gains([0, 2, 0, 3, 1], 3), ideal_gains([0, 2, 0, 3, 1], 3, unretrieved=[2], idcg="all_judged")
    ([2.0, 0.0, 0.0], [3.0, 2.0, 2.0])
    """
    idcg, k = check_idcg(idcg), check_k(k)
    grades = check_grades(rels)
    judged = grades + check_grades(unretrieved, "unretrieved")
    _, _, gain = ideal_ranking(idcg, k, one_query(grades[:k]), _pool(judged))
    return [float(g) for g in gain]


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
    k = check_k(k)
    top = check_grades(rels)[:k]
    judged = _judged(top, all_grades)
    idcg = "retrieved" if judged is None else "all_judged"
    return float(ndcg_per_query(idcg, k, 1, one_query(top), _pool(judged))[0])
