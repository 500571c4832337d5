"""Chapter 07's manifest: what the chapter is made of, read by the build, the tests, the bench and the navigation."""

from labkit.chapters.manifest import Chapter

CHAPTER = Chapter(
    number="07",
    slug="triage",
    title="Triage",
    summary="retrieval failure or generation failure: the 2x2",
    does=(
        "the 2×2 (OK / GEN_FAIL / LUCKY / RET_FAIL) on the seed's traces and on the local 1.5B's answers to every "
        "handbook query, rater-labelled right or wrong (a second rater's κ for both readers); two cheap correctness "
        "rules measured against the labels (TPR/TNR), and against yours after you label answers; how they move the "
        "cells; what LUCKY holds; k = 3 vs 5 for the model and every k for an extractive control; a reader × check × "
        "k explorer with the drill-down"
    ),
    status="ready",
    explorers=("TriageExplorer", "Labeller"),
    label_sets=("07-answers",),
    plans=("07-answers", "07-judge", "07-sweep", "07-fixes"),
    probe=(),
)
