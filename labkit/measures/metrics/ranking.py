"""Every measure of one ranking at once: what the ``03`` playground shows.

Taught in ``03_metrics_by_hand`` (the playground). One value per entry of the
:mod:`~labkit.measures.metrics.registry`, in its order; each entry's formula comes from its family's module
(:mod:`~labkit.measures.metrics.set_based`, :mod:`~labkit.measures.metrics.rank_based`,
:mod:`~labkit.measures.metrics.graded`) and decides which grades it sees.
"""

from __future__ import annotations

from collections.abc import Sequence

from labkit.measures.metrics.registry import REGISTRY, check_ranking

__all__ = ["ranking_metrics"]


def ranking_metrics(
    rels: Sequence[float], k: int, thr: float = 1, unretrieved: Sequence[float] = (), idcg: str = "retrieved"
) -> dict[str, float | None]:
    """Every registered metric of one ranking at once (the 03 playground shows this dict), keyed by its name
    (``"P@k"``, ``"R@k"``, ``"RR@k"``, ``"hit@k"``, ``"DCG@k"``, ``"IDCG@k"``, ``"nDCG@k"``).

    ``unretrieved``: grades of judged documents the retriever did not return
    in ``rels`` (the source chapter's example has one grade-2 document at
    rank 8). They count for recall's denominator and, with
    ``idcg="all_judged"``, for the ideal DCG.

    >>> ranking_metrics([0, 2, 0, 3, 1], 5, unretrieved=[2])["R@k"]
    0.75
    """
    grades, k, thr, extra, idcg = check_ranking(rels, k, thr, unretrieved, idcg)  # every argument, before any value
    return {m.name: m.formula(grades, k, thr, extra, idcg) for m in REGISTRY}
