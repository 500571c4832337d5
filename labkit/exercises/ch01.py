"""Exercises of chapter 01 RRF and hybrid retrieval: expected values from the toys or the chapter's own objects."""

from __future__ import annotations

from labkit import metrics, toys
from labkit.exercises._base import Exercise


def _toy_rrf(**kwargs):
    from labkit import fusion

    return fusion.rrf([toys.RRF_BM25, toys.RRF_DENSE], **kwargs)


def _only_dense(runs, qrels) -> int:
    hit = {
        name: metrics.evaluate({q: r[:10] for q, r in runs[name].items()}, qrels, ("hit@10",)).per_query["hit@10"]
        for name in ("bm25", "dense")
    }
    return int(((hit["bm25"] == 0) & (hit["dense"] == 1)).sum())


EXERCISES: dict[str, Exercise] = {
    "1.1": Exercise(
        "the fused score of D2 in the toy example (c=60)",
        lambda: round(_toy_rrf(c=60)[1]["D2"], 5),
        "D2 is rank 2 for BM25 and rank 5 for dense: 1/(60+2) + 1/(60+5)",
        tol=1e-5,
    ),
    "1.2": Exercise(
        "the first document of the toy fusion with weights [0.2, 1.0]",
        lambda: _toy_rrf(c=60, weights=[0.2, 1.0])[0][0],
        "multiply each list's contribution by its weight: BM25's ranks now count five times less",
    ),
    "1.3": Exercise(
        "the retriever with the highest Recall@10 on the real slice",
        lambda table: table["R@10"].loc["real"].idxmax(),
        "read the R@10 columns of the per-slice table, row 'real'",
        objects={"table": "the per-slice table of fusion.hybrid_table (c=60, k=10)"},
    ),
    "1.4": Exercise(
        "queries with the gold chunk in the dense top 10 but not in the BM25 top 10",
        _only_dense,
        "count queries where hit@10 is 1 for dense and 0 for bm25 (the 'only dense' column, summed)",
        tol=0,
        objects={"runs": "the BM25 and dense runs ({'bm25': ..., 'dense': ...})", "qrels": "the chunk qrels"},
    ),
}
