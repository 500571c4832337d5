"""Chapter 01's manifest: what the chapter is made of, read by the build, the tests, the bench and the navigation."""

from labkit.chapters.manifest import Chapter

CHAPTER = Chapter(
    number="01",
    slug="rrf_hybrid_retrieval",
    title="RRF and hybrid retrieval",
    summary="BM25 vs dense vs Reciprocal Rank Fusion",
    does=(
        "BM25 (`bm25s`) vs MiniLM embeddings vs Reciprocal Rank Fusion on the handbook, per slice; sliders for *c* "
        "and weights, a question box"
    ),
    status="ready",
    explorers=("FusionExplorer", "QuestionBox"),
    label_sets=(),
    plans=(),
    probe=(),
)
