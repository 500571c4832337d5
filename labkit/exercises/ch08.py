"""Exercises of chapter 08 case study: expected values from the toys or the chapter's own objects."""

from __future__ import annotations

from labkit.exercises._base import Exercise


def _direction(before: float, after: float) -> str:
    return "up" if after > before else "down" if after < before else "same"


EXERCISES: dict[str, Exercise] = {
    "8.1": Exercise(
        "the hybrid's Recall@3 on the real slice",
        lambda scorecard: round(float(scorecard.loc["real", ("R@3", "hybrid")]), 3),
        "scorecard.loc['real', ('R@3', 'hybrid')]: the reader's k, not 10",
        objects={"scorecard": "the per-slice retrieval scorecard (metric, retriever) of step 2"},
    ),
    "8.2": Exercise(
        "hit rate@10 of the hybrid on the conversational follow-ups as typed",
        lambda rewrite_table: round(float(rewrite_table.loc[("follow-up as typed", "hybrid"), "hit@10"]), 3),
        "rewrite_table.loc[('follow-up as typed', 'hybrid'), 'hit@10']",
        objects={"rewrite_table": "the query-rewriting table, one row per (variant, retriever)"},
    ),
    "8.3": Exercise(
        "share of multi-hop queries with all their evidence in the hybrid's top 10",
        lambda by_kind: round(float(by_kind.loc[by_kind["kind"] == "multihop", "all evidence@10"].mean()), 3),
        "the 'all evidence@10' column of the per-kind table, row multihop",
        objects={"by_kind": "the per-query table with the columns 'kind' and 'all evidence@10'"},
    ),
    "8.4": Exercise(
        "predict: with 5 chunks instead of 3, does the share of passing answers on the real slice go up, down or stay",
        lambda more_chunks: _direction(more_chunks.loc["real", more_chunks.columns[0]], more_chunks.loc["real", 5]),
        "compare the real row of the table at 3 and at 5 chunks: more gold read is not more answers right",
        objects={"more_chunks": "the share of passing answers per slice (rows) at each number of chunks (columns)"},
    ),
    "8.5": Exercise(
        "predict: does the bootstrap interval of the per-query R@10 difference hybrid - BM25 on real exclude 0",
        lambda paired: "yes" if paired[1] > 0 or paired[2] < 0 else "no",
        "read the printed interval: does it contain 0? Overlapping intervals of two means can hide a paired difference",
        objects={"paired": "(difference, low, high) from stats.bootstrap_ci of the per-query differences"},
    ),
}
