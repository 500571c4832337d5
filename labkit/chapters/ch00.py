"""Chapter 00's manifest: what the chapter is made of, read by the build, the tests, the bench and the navigation."""

from labkit.chapters.manifest import Chapter

CHAPTER = Chapter(
    number="00",
    slug="welcome",
    title="Welcome",
    summary="the two-stage pipeline, the handbook corpus, sliders and self-checks",
    does=(
        "the two-stage pipeline, the handbook corpus, sliders and self-checks, the language-model switch with a "
        "recorded answer of the local model"
    ),
    status="ready",
    explorers=(),
    label_sets=(),
    plans=("00-welcome",),
    probe=(),
)
