"""Chapter 10's manifest: what the chapter is made of, read by the build, the tests, the bench and the navigation."""

from labkit.chapters.manifest import Chapter

CHAPTER = Chapter(
    number="10",
    slug="your_own_documents",
    title="Your own documents",
    summary="the workflow on any folder, proven on a real corpus",
    does=(
        "the 7.12 workflow on any folder of Markdown, text and HTML (bad files skipped and said), proven on 78 pages "
        "of the Python documentation and the FAQ's own questions (gold by AI raters, a second rater's κ): 60 "
        "questions written by the local 1.5B (30 kept) against the FAQ's, retrieval per slice at the reader's k, "
        "hybrid vs each retriever, a learned reranker trained here and one carried over from the handbook, the 1.5B "
        "reader's 80 answers rated by two AI raters (κ) and triaged in the 2×2, chunking by structure confirmed, k by "
        "question type, which of the handbook's findings hold; you label the retriever's first passages and the "
        "reader's answers; `python -m labkit report` for any folder"
    ),
    status="ready",
    explorers=("Labeller",),
    label_sets=("10-relevance", "10-answers"),
    plans=("10-generate", "10-answers"),
    probe=(),
)
