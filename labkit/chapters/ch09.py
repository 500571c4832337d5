"""Chapter 09's manifest: what the chapter is made of, read by the build, the tests, the bench and the navigation."""

from labkit.chapters.manifest import Chapter

CHAPTER = Chapter(
    number="09",
    slug="router_eval",
    title="Router evaluation",
    summary="a model router evaluated as a retriever",
    does=(
        "a router as a retriever over models (the seed's MRR / Hit@1 / nDCG@3 / cascade-regret table); a real cascade "
        "of the local 0.5B and 1.5B on 120 handbook questions (pass rates, tokens, seconds, hosted prices, the "
        "check's errors, the long-prompt slice); the context-window filter measured with real token counts vs "
        "chars/4, k ↔ routing cost; a request explorer and a k slider"
    ),
    status="ready",
    explorers=("CascadeExplorer", "RoutingExplorer"),
    label_sets=(),
    plans=("09-answers", "09-judge"),
    probe=("studies.cascade",),
)
