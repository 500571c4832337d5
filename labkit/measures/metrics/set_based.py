"""Set-based measures: Precision@k, Recall@k and hit@k.

Taught in ``03_metrics_by_hand`` (one ranking) and ``04_mrr_hit_rate_lost_in_the_middle`` (hit rate).

They treat the top ``k`` as an unordered *set* and relevance as yes/no: a document is relevant
when ``grade >= thr``. Everything they need is one count per query, the hits:

``hits@k = |{i <= k : grade_i >= thr}|``

- ``P@k   = hits@k / k`` — how much of what is shown is useful;
- ``R@k   = hits@k / n_relevant`` — how much of what exists was found;
- ``hit@k = 1 if hits@k > 0 else 0`` — did anything useful reach the reader (its mean over
  queries is the *hit rate*, trec_eval's ``success@k``).

Edge cases, as in trec_eval unless said otherwise:

- ``P@k`` divides by ``k`` even when fewer than ``k`` documents came back: empty slots are misses.
- ``R@k`` divides by every relevant document of the query, retrieved or not. A query with none has
  no recall: ``None`` (``NaN`` in a batch), left out of means. trec_eval reports 0 instead.

References: C. D. Manning, P. Raghavan & H. Schütze, *Introduction to Information Retrieval*,
Cambridge University Press 2008, ch. 8 (8.3 set-based, 8.4 ranked evaluation); trec_eval's
``m_P.c``, ``m_recall.c`` and ``m_success.c``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from labkit.core import args
from labkit.measures.metrics._arrays import one_query, per_query
from labkit.measures.metrics._checks import check_grades, check_k, check_thr

__all__ = ["precision_at_k", "recall_at_k", "hit_at_k", "hits_at_k", "precision", "recall", "hit"]


# ---------------------------------------------------------------- the formulas, over a whole run


def hits_at_k(q: np.ndarray, rank: np.ndarray, relevant: np.ndarray, k: int, nq: int) -> np.ndarray:
    """Per query, how many relevant documents sit at ranks ``1..k``."""
    top = rank <= k
    return per_query(q[top], relevant[top], nq)


def precision(hits: np.ndarray, k: int) -> np.ndarray:
    """``P@k = hits / k`` (empty slots of a short ranking count as misses)."""
    return hits / k


def recall(hits: np.ndarray, n_relevant: np.ndarray) -> np.ndarray:
    """``R@k = hits / n_relevant``; NaN (undefined) where the query has nothing relevant."""
    has = n_relevant > 0
    return np.where(has, hits / np.where(has, n_relevant, 1), np.nan)


def hit(hits: np.ndarray) -> np.ndarray:
    """``hit@k = 1.0`` when at least one relevant document is in the top k, else ``0.0``."""
    return (hits > 0).astype(float)


def _hits_of(rels: Sequence[float], k: int, thr: float) -> np.ndarray:
    q, rank, grade = one_query(rels)
    return hits_at_k(q, rank, grade >= thr, k, 1)


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
    grades, k, thr = check_grades(rels), check_k(k), check_thr(thr)
    return float(precision(_hits_of(grades, k, thr), k)[0])


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
    grades, k, thr = check_grades(rels), check_k(k), check_thr(thr)
    n_relevant_total = args.whole_number("n_relevant_total", n_relevant_total, minimum=0)
    hits = _hits_of(grades, k, thr)
    if hits[0] > n_relevant_total:
        raise ValueError(
            f"n_relevant_total ({n_relevant_total}) is smaller than the {int(hits[0])} relevant documents "
            f"already in the top {k}: count every document with grade >= {thr:g}, retrieved or not"
        )
    value = recall(hits, np.array([n_relevant_total]))[0]
    return None if np.isnan(value) else float(value)


def hit_at_k(rels: Sequence[float], k: int, thr: float = 1) -> float:
    """Hit@k: 1.0 when at least one relevant document is in the top ``k``, else 0.0.

    Averaged over queries it is the *hit rate*: the share of queries where the
    reader got at least one useful document.

    >>> hit_at_k([0, 0, 1], 2), hit_at_k([0, 0, 1], 3)
    (0.0, 1.0)
    """
    grades, k, thr = check_grades(rels), check_k(k), check_thr(thr)
    return float(hit(_hits_of(grades, k, thr))[0])
