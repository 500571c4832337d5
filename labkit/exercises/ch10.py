"""Exercises of chapter 10 (your own documents): expected values from the chapter's objects."""

from __future__ import annotations

from labkit.exercises._base import Exercise

EXERCISES: dict[str, Exercise] = {
    "10.1": Exercise(
        "how many of the corpus's labelled questions are answerable from it",
        lambda rows: sum(bool(r["answerable"]) for r in rows),
        "count the rows of gold marked answerable (the first line of Step 2 prints it)",
        tol=0,
        objects={"rows": "the gold rows of Step 2 (gold: one per question, with its answerable mark)"},
    ),
    "10.2": Exercise(
        "the hybrid's nDCG@3 averaged over all the questions",
        lambda at: float(at[3]["nDCG@k hybrid"].mean()),
        "read the nDCG@k hybrid row of Step 3's table at k = 3 (the estimate before the interval)",
        objects={"at": "Step 3's per-question tables, {k: capstone.per_query(s, k)}"},
    ),
    "10.3": Exercise(
        "how many of the reader's answers on the bundled corpus are RET_FAIL by the reference labels",
        lambda answers, labels: sum(
            not hit and labels[q] != "right" for q, hit in zip(answers["qid"], answers["retrieved"], strict=True)
        ),  # fmt: skip
        "RET_FAIL: retrieved is False and the label is not right (partly, wrong and declined all fail)",
        tol=0,
        objects={"answers": "Step 5's answers table", "labels": "reference_labels, qid -> label"},
    ),
}
