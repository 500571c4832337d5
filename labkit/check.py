"""Exercise self-checks: ``check.exercise("3.1", answer)`` prints one line.

Used at the end of every chapter. The expected value is computed by
``labkit`` from the exercise's own inputs when you check, never typed in, so
a check cannot drift from the code it teaches. The printout is
deterministic (nbval compares it):

- ``None`` (or ``...``)  ->  "not answered yet"
- the right value        ->  "correct"
- anything else          ->  "not yet" and a hint
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from labkit import metrics

__all__ = ["exercise", "EXERCISES"]


@dataclass(frozen=True)
class Exercise:
    question: str
    expected: Callable[[], Any]
    hint: str
    tol: float = 1e-3


def _is_number(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


def _same(answer: Any, expected: Any, tol: float) -> bool:
    if _is_number(expected):
        return _is_number(answer) and math.isclose(answer, expected, abs_tol=tol)
    if isinstance(expected, str):
        return isinstance(answer, str) and answer.strip().lower() == expected.lower()
    if isinstance(expected, list | tuple):
        return (
            isinstance(answer, list | tuple)
            and len(answer) == len(expected)
            and all(_same(a, e, tol) for a, e in zip(answer, expected, strict=True))
        )
    return answer == expected


def _best_order(grades: list[int]) -> list[int]:
    return sorted(grades, reverse=True)


RUNNING = [0, 2, 0, 3, 1]


def _n_documents() -> int:
    from labkit.data import load_corpus

    return len(load_corpus())


EXERCISES: dict[str, Exercise] = {
    "0.1": Exercise(
        "how many documents does the handbook hold?",
        _n_documents,
        "len(corpus) counts the documents loaded by load_corpus()",
    ),
    "3.1": Exercise(
        "P@3 of the running example [0, 2, 0, 3, 1] with thr=1",
        lambda: metrics.precision_at_k(RUNNING, 3),
        "count the grades >= 1 among the first three, then divide by k = 3 (not by how many are relevant)",
    ),
    "3.2": Exercise(
        "R@5 of the running example when only grade 3 counts (thr=3); the query has one grade-3 document",
        lambda: metrics.recall_at_k(RUNNING, 5, n_relevant_total=1, thr=3),
        "with thr=3 only the grade-3 document is relevant; is it in the top 5?",
    ),
    "3.3": Exercise(
        "nDCG@3 (book convention) of the ranking [1, 0, 3]",
        lambda: metrics.ndcg_at_k([1, 0, 3], 3),
        "DCG = 1/log2(2) + 0 + 3/log2(4); the ideal re-sorts the same three grades to [3, 1, 0]",
    ),
    "3.4": Exercise(
        "reorder [0, 2, 0, 3, 1] so that nDCG@5 is 1 (give the list of grades)",
        lambda: _best_order(RUNNING),
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
        lambda: metrics.ndcg_at_k([0, 0, 0, 3, 0], 5, all_grades=[3, 1, 1, 1]),
        "the ideal now sorts all judged grades: [3, 1, 1, 1] -> IDCG = 3 + 1/log2(3) + 1/2 + 1/log2(5)",
    ),
}


def exercise(number: str, answer: Any) -> None:
    """Print whether ``answer`` solves exercise ``number`` (e.g. ``"3.1"``)."""
    if number not in EXERCISES:
        raise ValueError(f"unknown exercise {number!r}; this chapter's are {sorted(EXERCISES)}")
    ex = EXERCISES[number]
    if answer is None or answer is Ellipsis:
        print(f"Exercise {number}: not answered yet - replace None with your answer.")
    elif _same(answer, ex.expected(), ex.tol):
        print(f"Exercise {number}: correct.")
    else:
        print(f"Exercise {number}: not yet. Hint: {ex.hint}.")
