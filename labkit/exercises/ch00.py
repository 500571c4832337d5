"""Exercises of chapter 00 welcome: expected values from the toys or the chapter's own objects."""

from __future__ import annotations

from labkit.exercises._base import Exercise


def _n_documents() -> int:
    from labkit.data import load_corpus

    return len(load_corpus())


EXERCISES: dict[str, Exercise] = {
    "0.1": Exercise(
        "how many documents does the handbook hold?",
        _n_documents,
        "len(corpus) counts the documents loaded by load_corpus()",
        tol=0,
    ),
}
