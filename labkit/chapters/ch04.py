"""Chapter 04's manifest: what the chapter is made of, read by the build, the tests, the bench and the navigation."""

from labkit.chapters.manifest import Chapter

CHAPTER = Chapter(
    number="04",
    slug="mrr_hit_rate_lost_in_the_middle",
    title="MRR, hit rate, lost in the middle",
    summary="position matters",
    does=(
        "MRR@k and hit rate@k per slice, retriever and question kind; Liu et al.'s published U-curve; a position "
        "harness on the handbook checked with position-blind and truncating control readers; the local 1.5B in that "
        "harness (80 questions, 5 and 10 passages, closed-book, oracle and no-gold baselines, Wilson intervals beside "
        'Liu\'s curves), what distractors cost, the "best at both ends" reordering, the 0.5B at 10 passages; a '
        "question × trial explorer and a k slider"
    ),
    status="ready",
    explorers=("CutoffExplorer", "PositionExplorer"),
    label_sets=(),
    plans=("04-positions", "04-positions-0.5b", "04-padding"),
    probe=("studies.position_view",),
)
