"""Chapter 02's manifest: what the chapter is made of, read by the build, the tests, the bench and the navigation."""

from labkit.chapters.manifest import Chapter

CHAPTER = Chapter(
    number="02",
    slug="synthetic_hard_questions",
    title="Synthetic and hard questions",
    summary="generate, make hard, filter",
    does=(
        "generate → make hard → filter with a local 1.5B model: 322 generated questions (164 easy, 158 hard) located "
        "as spans (every drop counted), a rater audit of their labels checked by a second rater (κ), recall against "
        "authored and real-style questions, the realism rater measured on held-out ratings and on two raters' ratings "
        "of generated questions (the prevalence trap of κ); you rate questions yourself; a threshold × method × "
        "retriever explorer"
    ),
    status="ready",
    explorers=("SynthExplorer", "Labeller"),
    label_sets=("02-realism",),
    plans=("02-easy", "02-hard", "02-realism"),
    probe=(),
)
