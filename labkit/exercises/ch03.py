"""Exercises of chapter 03 metrics by hand: expected values from the toys or the chapter's own objects."""

from __future__ import annotations

from labkit import metrics, toys
from labkit.exercises._base import Exercise

EXERCISES: dict[str, Exercise] = {
    "3.1": Exercise(
        "P@3 of the running example [0, 2, 0, 3, 1] with thr=1",
        lambda: metrics.precision_at_k(toys.RUNNING_GRADES, 3),
        "count the grades >= 1 among the first three, then divide by k = 3 (not by how many are relevant)",
    ),
    "3.2": Exercise(
        "R@5 of the running example when only grade 3 counts (thr=3); the query has one grade-3 document",
        lambda: metrics.recall_at_k(toys.RUNNING_GRADES, 5, n_relevant_total=1, thr=3),
        "with thr=3 only the grade-3 document is relevant; is it in the top 5?",
    ),
    "3.3": Exercise(
        "nDCG@3 (book convention) of the ranking [1, 0, 3]",
        lambda: metrics.ndcg_at_k([1, 0, 3], 3),
        "DCG = 1/log2(2) + 0 + 3/log2(4); the ideal re-sorts the same three grades to [3, 1, 0]",
    ),
    "3.4": Exercise(
        "reorder [0, 2, 0, 3, 1] so that nDCG@5 is 1 (give the list of grades)",
        lambda: sorted(toys.RUNNING_GRADES, reverse=True),
        "nDCG is 1 when every grade sits at or above every smaller grade",
    ),
    "3.5": Exercise(
        "a bot answers single-fact questions from the top 3 chunks: which metric first? "
        "('recall@k', 'ndcg@k', 'mrr' or 'hit@k')",
        lambda: "mrr",
        "one fact needs one good chunk, and the earlier it appears the better (lost in the middle)",
    ),
    "3.6": Exercise(
        "nDCG@5 of Y = [0, 0, 0, 3, 0] with trec_eval's IDCG, judged grades [3, 1, 1, 1]",
        lambda: metrics.ndcg_at_k(toys.TRAP_Y, 5, all_grades=toys.TRAP_JUDGED),
        "the ideal now sorts all judged grades: [3, 1, 1, 1] -> IDCG = 3 + 1/log2(3) + 1/2 + 1/log2(5)",
    ),
}
