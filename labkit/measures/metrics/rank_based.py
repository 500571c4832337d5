"""Rank-based measures: reciprocal rank and its mean over queries, MRR.

Taught in ``03_metrics_by_hand`` (one ranking) and ``04_mrr_hit_rate_lost_in_the_middle`` (MRR@k per slice).

Only the *first* relevant document counts, and it counts by its position:

``RR@k = 1 / min{i <= k : grade_i >= thr}``, and ``0`` when no relevant document is in the top ``k``.

``MRR@k`` is the mean of ``RR@k`` over the queries: ``evaluate(run, qrels, ["RR@10"]).mean``
(the name ``MRR@10`` is accepted as a synonym). It rewards putting *one* useful document near the
top and ignores the others, which suits a reader that needs a single passage (factoid question
answering, where it was introduced) and misleads when the answer needs several.

Edge cases: a document with ``grade >= thr`` is relevant (binary, like the set-based measures);
a ranking with no relevant document in the top ``k`` scores 0, not "undefined", and is kept in the
mean. trec_eval's ``recip_rank`` has no cutoff; cut the run at ``k`` to compare.

Reference: E. M. Voorhees, "The TREC-8 Question Answering Track Report", *Proceedings of the
Eighth Text REtrieval Conference (TREC-8)*, NIST Special Publication 500-246, 1999 (MRR over
each question's top 5 answers); trec_eval's ``m_recip_rank.c``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from labkit.measures.metrics._arrays import one_query
from labkit.measures.metrics._checks import check_grades, check_k, check_thr

__all__ = ["reciprocal_rank", "first_relevant_rank", "reciprocal"]


# ---------------------------------------------------------------- the formula, over a whole run


def first_relevant_rank(q: np.ndarray, rank: np.ndarray, relevant: np.ndarray, k: int, nq: int) -> np.ndarray:
    """Per query, the rank of the first relevant document in the top ``k`` (``inf`` when there is none)."""
    first = np.full(nq, np.inf)
    sel = (rank <= k) & relevant
    np.minimum.at(first, q[sel], rank[sel])
    return first


def reciprocal(first: np.ndarray) -> np.ndarray:
    """``RR = 1 / first relevant rank``; ``1 / inf = 0`` for a query with none in the top k."""
    return 1.0 / first


# ---------------------------------------------------------------- one ranking


def reciprocal_rank(rels: Sequence[float], k: int, thr: float = 1) -> float:
    """Reciprocal rank: ``1 / rank`` of the first relevant document in the top ``k``, else 0.

    Only the first useful document matters; averaged over queries it is MRR@k
    (Voorhees 1999, TREC-8 QA track).

    >>> reciprocal_rank([0, 2, 0, 3, 1], 5)
    0.5
    >>> reciprocal_rank([0, 0, 1], 2)
    0.0
    """
    grades, k, thr = check_grades(rels), check_k(k), check_thr(thr)
    q, rank, grade = one_query(grades)
    return float(reciprocal(first_relevant_rank(q, rank, grade >= thr, k, 1))[0])
