"""Exercises of chapter 00 welcome: expected values from the toys or the chapter's own objects."""

from __future__ import annotations

from labkit.data.corpus import load_corpus
from labkit.exercises._base import Exercise
from labkit.measures import metrics


def _n_documents() -> int:

    return len(load_corpus())


def _kept_share(rank: int) -> float:
    """The share of a grade-1 document's gain that DCG keeps at ``rank``: DCG of a ranking with it alone there."""

    return metrics.dcg([0] * (rank - 1) + [1])


def _first_rank_below_half() -> int:
    rank = 1
    while _kept_share(rank) >= 0.5:
        rank += 1
    return rank


EXERCISES: dict[str, Exercise] = {
    "0.1": Exercise(
        "how many documents does the handbook hold?",
        _n_documents,
        "len(corpus) counts the documents loaded by load_corpus()",
        tol=0,
    ),
    "0.2": Exercise(
        "predict the share of its gain a document keeps at rank 15",
        lambda: _kept_share(15),
        "the share is 1 / log2(rank + 1); log2(16) = 4. Set the slider to 15 and read it",
    ),
    "0.3": Exercise(
        "predict the first rank at which a document keeps less than half of its gain",
        _first_rank_below_half,
        "the share is 1 / log2(rank + 1), exactly one half where log2(rank + 1) = 2; walk the slider up from 1",
        tol=0,
    ),
}
