"""Exercises of chapter 02 (synthetic and hard questions): expected values from toys or chapter objects."""

from __future__ import annotations

from labkit.data import toys
from labkit.exercises._base import Exercise
from labkit.generation import synth
from labkit.studies import synth_data as sd


def _toy_similar() -> list[str]:

    return synth.similar_chunks(toys.SYNTH_SOURCE_TARGET, toys.SYNTH_CHUNKS_VI, 2)


def _best_bm25_set(scores) -> str:
    bm25 = scores.xs("bm25", level="retriever")["R@10"]
    return str(bm25.loc[["synthetic-easy", "real"]].idxmax())


def _hard_kept_at_5(frame) -> int:

    return int(sd.filter_view(frame, threshold=5).counts.loc["synthetic-hard", "kept"])


EXERCISES: dict[str, Exercise] = {
    "2.1": Exercise(
        "the two chunks the source's Jaccard search returns for hr-12#3 (a list of ids, most similar first)",
        _toy_similar,
        "count shared words over all words for each other chunk; 'đăng ký trên HRM' is shared with the leave chunk",
    ),
    "2.2": Exercise(
        "which has the higher BM25 Recall@10: 'synthetic-easy' or 'real'?",
        _best_bm25_set,
        "compare the two rows of the scores table for bm25: questions written from a chunk borrow its words",
        objects={"scores": "the per-set table of Recall@10 with intervals (group_means_ci by set and retriever)"},
    ),
    "2.3": Exercise(
        "the rater's exact agreement with the held-out reference ratings (a share, e.g. 0.4)",
        lambda heldout: round(float((heldout["model"] == heldout["rating"]).mean()), 3),
        "the share of held-out questions where the model's rating equals the reference rating (unreadable replies "
        "count as disagreements)",
        objects={"heldout": "the held-out realism labels with the model's rating in the column 'model'"},
    ),
    "2.4": Exercise(
        "how many generated hard questions a threshold of 5 keeps (distractor method 'both')",
        _hard_kept_at_5,
        "set the slider to 5 and read the 'kept' cell of synthetic-hard, or sum(frame rating == 5) for one retriever",
        tol=0,
        objects={"frame": "the per-query frame with ratings (sd.with_ratings)"},
    ),
}
