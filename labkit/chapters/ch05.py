"""Chapter 05's manifest: what the chapter is made of, read by the build, the tests, the bench and the navigation."""

from labkit.chapters.manifest import Chapter

CHAPTER = Chapter(
    number="05",
    slug="chunk_grid",
    title="The chunk grid",
    summary="size x overlap, split rate, re-indexing with remapped gold",
    does=(
        "split rate (the seed's table), a 3×3 size × overlap grid re-indexing the handbook with gold remapped from "
        "character offsets, evidence recall at an equal reading budget, the dev choice checked on test (where it does "
        "not hold); sliders for size, overlap, k"
    ),
    status="ready",
    explorers=("ChunkGridExplorer",),
    label_sets=(),
    plans=(),
    probe=(),
)
