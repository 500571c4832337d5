"""Chapter 04b's manifest: what the chapter is made of, read by the build, the tests, the bench and the navigation."""

from labkit.chapters.manifest import Chapter

CHAPTER = Chapter(
    number="04b",
    slug="reranking",
    title="Reranking",
    summary="the second stage: retrieve wide, rerank, keep a few",
    does=(
        "the two stages and their metrics (Recall@k1, nDCG@k2); stage 1's ceiling; a learned reranker (LightGBM "
        "lambdarank over ten cheap features, trained on dev, reported on test) and the local 1.5B as a pointwise "
        "yes/no reranker (300 recorded requests); what each buys per slice with paired intervals, what a deeper stage "
        "1 buys, what the model costs, whether the reader gets more answers right, where reranking hurts; a k1 × k2 × "
        "reranker explorer"
    ),
    status="ready",
    explorers=("RerankExplorer",),
    label_sets=(),
    plans=("04b-rerank", "04b-answers"),
    probe=(),
)
