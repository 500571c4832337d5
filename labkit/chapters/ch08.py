"""Chapter 08's manifest: what the chapter is made of, read by the build, the tests, the bench and the navigation."""

from labkit.chapters.manifest import Chapter

CHAPTER = Chapter(
    number="08",
    slug="case_study",
    title="Case study",
    summary="the internal-docs bot end to end: easy vs hard vs real",
    does=(
        "the internal-docs bot end to end: the 7.12 workflow on the handbook, retrieval per slice at the reader's k, "
        "every pitfall of 7.11 measured (synthetic-vs-real gap, wrong k, hit rate vs all the evidence for multi-hop "
        "questions, follow-ups without query rewriting, chunking), answers scored and triaged separately with the "
        "local 1.5B reader and rater labels, the checklist filled in; a slice × cell triage explorer"
    ),
    status="ready",
    explorers=("SliceTriageExplorer",),
    label_sets=(),
    plans=("08-swap",),
    probe=(),
)
