"""Exercises of chapter 01 RRF and hybrid retrieval: expected values from the toys or the chapter's own objects."""

from __future__ import annotations

from labkit.data import toys
from labkit.exercises._base import Exercise
from labkit.measures import fusion, metrics


def _toy_rrf(**kwargs):

    return fusion.rrf([toys.RRF_BM25, toys.RRF_DENSE], **kwargs)


def _first_at_60(lists) -> str:

    return fusion.rrf(lists, c=60)[0][0]


def _tuned_holds_on_test(test_table) -> str:
    rows = [name for name in test_table.index if str(name).startswith("all · nDCG@10")]
    if len(rows) != 1:
        raise ValueError("test_table must have one row 'all · nDCG@10: ...' (the chapter's scan of the test half)")
    row = test_table.loc[rows[0]]
    if "verdict" in test_table.columns:  # graded from the finding the chapter printed: resolved and above 0
        return "yes" if row["verdict"] == "resolved" and float(row["difference"]) > 0 else "no"
    return "yes" if float(row["low"]) > 0 else "no"


def _only_dense(runs, qrels) -> int:
    hit = {
        name: metrics.evaluate({q: r[:10] for q, r in runs[name].items()}, qrels, ("hit@10",)).per_query["hit@10"]
        for name in ("bm25", "dense")
    }
    return int(((hit["bm25"] == 0) & (hit["dense"] == 1)).sum())


EXERCISES: dict[str, Exercise] = {
    "1.1": Exercise(
        "predict the first document of the two flip lists at c=60",
        _first_at_60,
        "at a large c each list gives about 1/c - rank/c², so the smaller sum of ranks wins: A has 1 + 5, C has 3 + 2",
        objects={"lists": "the two ranked lists of the c sweep (flip_lists)"},
    ),
    "1.2": Exercise(
        "predict whether dev's best setting beats c=60 on test, the interval of the nDCG@10 difference above 0",
        _tuned_holds_on_test,
        "read the 'all · nDCG@10' row of the test table: is it resolved, its interval wholly above 0? A flat dev grid "
        "leaves little for the test half to confirm",
        objects={"test_table": "the paired test differences, dev's best minus the default (test_table)"},
    ),
    "1.3": Exercise(
        "predict the hybrid R@10 on the real dev slice with dense's weight at 0",
        lambda dev_table: float(dev_table.loc["real", ("R@10", "bm25")]),
        "with weight 0 the dense list gives nothing: the fused order is BM25's own order. Read the bm25 column",
        objects={"dev_table": "the per-slice dev table of fusion.hybrid_table at c=60 (dev_table)"},
    ),
    "1.4": Exercise(
        "the fused score of D2 in the toy example (c=60)",
        lambda: round(_toy_rrf(c=60)[1]["D2"], 5),
        "D2 is rank 2 for BM25 and rank 5 for dense: 1/(60+2) + 1/(60+5)",
        tol=1e-5,
    ),
    "1.5": Exercise(
        "the first document of the toy fusion with weights [0.2, 1.0]",
        lambda: _toy_rrf(c=60, weights=[0.2, 1.0])[0][0],
        "multiply each list's contribution by its weight: BM25's ranks now count five times less",
    ),
    "1.6": Exercise(
        "the retriever with the highest Recall@10 on the real slice",
        lambda by_slice: by_slice.loc["real", "R@10"].idxmax(),
        "read the R@10 column of the per-slice table, rows of the slice 'real'",
        objects={"by_slice": "the per-slice table with intervals, stats.group_means_ci by slice and retriever"},
    ),
    "1.7": Exercise(
        "queries with the gold chunk in the dense top 10 but not in the BM25 top 10",
        _only_dense,
        "count queries where hit@10 is 1 for dense and 0 for bm25 (the 'only dense' column, summed)",
        tol=0,
        objects={"runs": "the BM25 and dense runs ({'bm25': ..., 'dense': ...})", "qrels": "the chunk qrels"},
    ),
}
