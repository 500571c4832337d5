"""Exercises of chapter 07 triage: expected values from the toys or the chapter's own objects."""

from __future__ import annotations

from labkit import toys
from labkit.exercises._base import Exercise


def _toy_priority() -> str:
    from labkit import triage

    return triage.priority(triage.triage(toys.TRIAGE_TRACES))


EXERCISES: dict[str, Exercise] = {
    "7.1": Exercise(
        "triage.priority for the four toy traces",
        _toy_priority,
        "count RET_FAIL and GEN_FAIL: one each",
    ),
    "7.2": Exercise(
        "GEN_FAIL traces of the handbook pipeline at k=10",
        lambda sweep: int(sweep.loc[10, "GEN_FAIL"]),
        "triage.triage(traces_at(10), 10)['GEN_FAIL']",
        tol=0,
        objects={"sweep": "the 2x2 counts per k (one row per k, one column per cell)"},
    ),
}
