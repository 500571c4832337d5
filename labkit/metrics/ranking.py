"""Every measure of one ranking at once: what the ``03`` playground shows.

Taught in ``03_metrics_by_hand`` (the playground). Each value comes from its family's module
(:mod:`~labkit.metrics.set_based`, :mod:`~labkit.metrics.rank_based`, :mod:`~labkit.metrics.graded`);
this module only decides which grades each one sees.
"""

from __future__ import annotations

from collections.abc import Sequence

from labkit.metrics._checks import check_grades, check_idcg, check_k, check_thr
from labkit.metrics.graded import _dcg_value, ideal_gains, ndcg_at_k
from labkit.metrics.rank_based import reciprocal_rank
from labkit.metrics.set_based import hit_at_k, precision_at_k, recall_at_k

__all__ = ["ranking_metrics"]


def ranking_metrics(
    rels: Sequence[float], k: int, thr: float = 1, unretrieved: Sequence[float] = (), idcg: str = "retrieved"
) -> dict[str, float | None]:
    """Every metric of one ranking at once (the 03 playground shows this dict).

    ``unretrieved``: grades of judged documents the retriever did not return
    in ``rels`` (the source chapter's example has one grade-2 document at
    rank 8). They count for recall's denominator and, with
    ``idcg="all_judged"``, for the ideal DCG.

    >>> ranking_metrics([0, 2, 0, 3, 1], 5, unretrieved=[2])["R@k"]
    0.75
    """
    idcg = check_idcg(idcg)
    grades = check_grades(rels)
    extra = check_grades(unretrieved, "unretrieved")
    thr = check_thr(thr)
    k = check_k(k)
    all_grades = grades + extra
    where = "rels" if idcg == "retrieved" else "rels/unretrieved"
    n_rel = sum(g >= thr for g in all_grades)
    return {
        "P@k": precision_at_k(grades, k, thr),
        "R@k": recall_at_k(grades, k, n_rel, thr),
        "RR@k": reciprocal_rank(grades, k, thr),
        "hit@k": hit_at_k(grades, k, thr),
        "DCG@k": _dcg_value(grades[:k], "rels"),
        "IDCG@k": _dcg_value(ideal_gains(grades, k, extra, idcg), where),
        "nDCG@k": ndcg_at_k(grades, k, None if idcg == "retrieved" else all_grades),
    }
