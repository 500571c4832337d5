"""Exercises of chapter 07 triage: expected values from the toys or the chapter's own objects."""

from __future__ import annotations

from labkit.data import toys
from labkit.exercises._base import Exercise
from labkit.measures import triage


def _toy_priority() -> str:

    return triage.priority(triage.triage(toys.TRIAGE_TRACES))


def _verdict_of(gen_fail_finding) -> str:
    """The answer the finding gives: "cannot tell" unless it is resolved, then the sign of the difference."""
    if gen_fail_finding.lead or gen_fail_finding.verdict != "resolved":  # a lead is not a finding
        return "cannot tell"
    return "higher" if gen_fail_finding.estimate > 0 else "lower"


def _toy_cells_changed_at_1() -> int:

    return sum(triage.quadrant(t, 5) != triage.quadrant(t, 1) for t in toys.TRIAGE_TRACES)


EXERCISES: dict[str, Exercise] = {
    "7.1": Exercise(
        "triage.priority for the four toy traces",
        _toy_priority,
        "count RET_FAIL and GEN_FAIL: one each",
    ),
    "7.2": Exercise(
        "GEN_FAIL traces of the extractive control at k=10",
        lambda sweep: int(sweep.loc[10, "GEN_FAIL"]),
        "triage.triage(extractive_at(10), 10)['GEN_FAIL']",
        tol=0,
        objects={"sweep": "the 2x2 counts per k (one row per k, one column per cell)"},
    ),
    "7.3": Exercise(
        "predict: how many of the four toy traces change cell when k goes from 5 to 1",
        _toy_cells_changed_at_1,
        "k only matters for a trace whose gold chunk sits below rank k: where is each toy's gold chunk?",
        tol=0,
    ),
    "7.4": Exercise(
        "predict: the slice with the most queries that are a hit@3 (threshold 1) but not 'gold retrieved'",
        lambda definition_gap: str(definition_gap.idxmax()),
        "the cell's output counts them per slice; which slice's questions need look-alikes or two documents?",
        objects={"definition_gap": "the per-slice count of queries where the two definitions disagree at k=3"},
    ),
    "7.5": Exercise(
        "predict: is GEN_FAIL's share higher or lower when the reference-number rule replaces the rater labels, as "
        "far as the traces can tell",
        _verdict_of,
        "the rule's errors flow both ways (1 - TPR into GEN_FAIL, 1 - TNR out of it); then read the printed finding: "
        "an interval that holds 0 cannot tell",
        objects={
            "gen_fail_finding": "the Finding of the GEN_FAIL share, reference number - rater label, paired on "
            "the queries the rule can judge"
        },
    ),
}
