"""Exercises of chapter 03 metrics by hand: expected values from the toys or the chapter's own objects."""

from __future__ import annotations

from labkit.data import toys
from labkit.exercises._base import Exercise
from labkit.measures import metrics


def _y_with_answer_at(rank: int) -> list[int]:
    """The trap's system Y with its one answering document moved to ``rank`` (1-based)."""
    grades = [0] * len(toys.TRAP_Y)
    grades[rank - 1] = max(toys.TRAP_Y)
    return grades


def _deepest_winning_rank() -> int:
    """The deepest rank (largest number) at which Y's answer still lifts Y above X on nDCG@5 (trec_eval's ideal)."""
    x = metrics.ndcg_at_k(toys.TRAP_X, 5, all_grades=toys.TRAP_JUDGED)
    ranks = range(1, len(toys.TRAP_Y) + 1)
    return max(r for r in ranks if metrics.ndcg_at_k(_y_with_answer_at(r), 5, all_grades=toys.TRAP_JUDGED) > x)


def _direction(before: float, after: float) -> str:
    return "same" if abs(after - before) < 1e-9 else "up" if after > before else "down"


def _recall_direction(by_thr) -> str:
    """How the run's mean R@10 moves when the threshold goes from 1 to 3 (rows of ``by_thr``: thresholds)."""
    return _direction(float(by_thr.loc[1, "R@10"]), float(by_thr.loc[3, "R@10"]))


def _ndcg_direction() -> str:
    """How the running example's nDCG@5 moves when the playground's threshold goes from 1 to 3."""
    at = {
        t: metrics.ranking_metrics(toys.RUNNING_GRADES, 5, thr=t, unretrieved=toys.RUNNING_UNRETRIEVED) for t in (1, 3)
    }
    return _direction(at[1]["nDCG@k"], at[3]["nDCG@k"])


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
        "nDCG@3 (book convention) of the ranking [2, 0, 3]",
        lambda: metrics.ndcg_at_k([2, 0, 3], 3),
        "DCG = 2/log2(2) + 0 + 3/log2(4); the ideal re-sorts the same three grades to [3, 2, 0]",
    ),
    "3.4": Exercise(
        "reorder [0, 2, 0, 3, 1] so that nDCG@5 is 1 (give the list of grades)",
        lambda: sorted(toys.RUNNING_GRADES, reverse=True),
        "nDCG is 1 when every grade sits at or above every smaller grade",
    ),
    "3.5": Exercise(
        "a bot answers single-fact questions from the top 3 chunks: which metric depends only on where the first "
        "relevant chunk is, rewarding it more the higher it sits? ('recall@k', 'ndcg@k', 'mrr' or 'hit@k')",
        lambda: "mrr",
        "one fact needs one good chunk: hit@k ignores where it sits, recall@k counts every relevant chunk, and "
        "nDCG also rewards putting the fact first but counts every other relevant chunk and its grade; which one "
        "reads only the rank of the first",
    ),
    "3.6": Exercise(
        "nDCG@5 of Y = [0, 0, 0, 3, 0] with trec_eval's IDCG, judged grades [3, 1, 1, 1]",
        lambda: metrics.ndcg_at_k(toys.TRAP_Y, 5, all_grades=toys.TRAP_JUDGED),
        "the ideal now sorts all judged grades: [3, 1, 1, 1] -> IDCG = 3 + 1/log2(3) + 1/2 + 1/log2(5)",
    ),
    "3.7": Exercise(
        "predict: the deepest rank Y's grade-3 document may sit at and Y still beat X on nDCG@5 (trec_eval's ideal)",
        _deepest_winning_rank,
        "compare discounted gains: X collects 1 + 1/log2(3) + 1/log2(4); one grade-3 document at rank r collects "
        "3/log2(r + 1), and both share the same ideal",
        tol=0,
    ),
    "3.8": Exercise(
        "predict: does the dev run's mean R@10 go 'up', 'down' or stay the 'same' when thr goes from 1 to 3?",
        _recall_direction,
        "a higher threshold removes relevant documents from recall's denominator too: the grade-2 documents "
        "BM25 left out of its top 10 stop counting against it",
        objects={"by_thr": "the table of the run's means at thresholds 1 and 3 (rows: thresholds)"},
    ),
    "3.9": Exercise(
        "predict: moving the playground's threshold from 1 to 3, does nDCG@5 go 'up', 'down' or stay the 'same'?",
        _ndcg_direction,
        "which measures use the threshold? nDCG reads the grades themselves",
    ),
}
