"""Retrieval metrics: one ranking at a time, then a whole run at once.

Taught in ``03_metrics_by_hand`` (per ranking) and ``04_mrr_hit_rate_lost_in_the_middle``
(over a query set).

One module per family of measures, each with its formula, edge cases and reference:

- :mod:`~labkit.measures.metrics.set_based`   P@k, R@k, hit@k (the top k as a set)
- :mod:`~labkit.measures.metrics.rank_based`  reciprocal rank, MRR (Voorhees 1999)
- :mod:`~labkit.measures.metrics.graded`      DCG, nDCG and the IDCG rule (Järvelin & Kekäläinen 2002)
- :mod:`~labkit.measures.metrics.registry`    every metric written down once: name, family, formula, definition,
  reference, trec_eval's name (``REGISTRY``, ``metric("nDCG@k")``)
- :mod:`~labkit.measures.metrics.ranking`     every measure of one ranking at once (the 03 playground)
- :mod:`~labkit.measures.metrics.batch`       ``evaluate`` a whole run, per group, several runs side by side

Each formula is written once over flat arrays (query, rank, grade); one ranking is the case of
a single query, so the per-ranking functions and the batch ``evaluate`` run the same code.

A *ranking* here is the list of relevance grades of the retrieved documents,
in rank order: ``rels = [0, 2, 0, 3, 1]`` means the document at rank 2 has
grade 2, and so on. Grades are finite numbers (0 = not relevant, 1 = related,
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

Bad input is refused with a ``ValueError`` that names the argument: a cutoff that is not a
whole number >= 1 (``np.int64(5)`` is fine), a threshold that is not a finite number > 0, a
NaN/infinite/non-numeric grade or score, a string where a list belongs, a missing or non-text
query/doc id, an unknown metric name (the error lists the registered ones).
"""

from __future__ import annotations

from labkit.measures.metrics.batch import (
    METRIC_NAMES,
    Evaluation,
    compare_runs,
    evaluate,
    evaluate_by_group,
    parse_metric,
)
from labkit.measures.metrics.graded import dcg, ndcg_at_k
from labkit.measures.metrics.rank_based import reciprocal_rank
from labkit.measures.metrics.ranking import ranking_metrics
from labkit.measures.metrics.registry import REGISTRY, Metric, metric
from labkit.measures.metrics.set_based import hit_at_k, precision_at_k, recall_at_k

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
    "METRIC_NAMES",
    "REGISTRY",
    "Metric",
    "metric",
]
