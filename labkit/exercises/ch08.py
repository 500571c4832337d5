"""Exercises of chapter 08 case study: expected values from the toys or the chapter's own objects."""

from __future__ import annotations

from labkit.exercises._base import Exercise

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
}
