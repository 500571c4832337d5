"""Chapter 03's manifest: what the chapter is made of, read by the build, the tests, the bench and the navigation."""

from labkit.chapters.manifest import Chapter

CHAPTER = Chapter(
    number="03",
    slug="metrics_by_hand",
    title="Metrics by hand",
    summary="P@k, R@k, RR, DCG, nDCG, thresholds, which metric when",
    does="P@k, R@k, RR, DCG, nDCG (two IDCG conventions), thresholds, the X/Y trap, which metric when; a playground",
    status="ready",
    explorers=("metrics_playground",),
    label_sets=(),
    plans=(),
    probe=(),
)
