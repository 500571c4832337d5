"""Exercises of chapter 08 case study: expected values from the toys or the chapter's own objects."""

from __future__ import annotations

from labkit.exercises._base import Exercise


def _supported(change) -> str:
    """The direction a paired interval supports: "up" or "down" when it excludes 0, "same" when it is 0 with no
    width, else "tell" (the sample cannot tell)."""
    d, low, high = (float(x) for x in change)
    return "up" if low > 0 else "down" if high < 0 else "same" if low == high == 0 else "tell"


def _from_finding(found) -> str:
    """The answer a finding supports: "yes" (the first system ahead) or "no" when it is resolved, else "cannot
    tell"; a lead (no declared family) is not a finding, so it is never graded "yes" or "no"."""
    if getattr(found, "lead", True) or found.verdict != "resolved":
        return "cannot tell"
    return "yes" if found.estimate > 0 else "no"


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
        "predict: with 5 chunks instead of 3, does the share of right answers on the real slice go up, down, stay "
        "the same, or can the sample not tell",
        lambda change_by_slice: _supported(change_by_slice["real"]),
        "read the real row of the paired interval: a direction only when the interval excludes 0",
        objects={"change_by_slice": "{slice: (difference, low, high)} of right at 5 minus right at 3, paired"},
    ),
    "8.5": Exercise(
        "predict: by chapter 01's declared family of 18 comparisons, is the hybrid ahead of BM25 on real by Recall@10 "
        '("yes", "no" or "cannot tell")',
        lambda found: _from_finding(found),
        "read the declared finding's sentence, not the lead's: 'not shown' means the queries cannot tell",
        objects={"found": "the Finding of 'real · R@10: hybrid - bm25' in chapter 01's scan (its attrs['findings'])"},
    ),
}
