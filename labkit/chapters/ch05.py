"""Chapter 05's manifest: what the chapter is made of, read by the build, the tests, the bench and the navigation."""

from __future__ import annotations

from typing import Any

from labkit.chapters.manifest import Bench, Chapter, Explorer
from labkit.data.corpus import load_corpus, load_queries
from labkit.retrieval.grid import ChunkGrid

SIZES, OVERLAP_SHARES = (64, 128, 256), (0.0, 0.25, 0.5)  # the grid: chunk size in words x overlap share


def chunk_grid_inputs(grid=None) -> dict[str, Any]:
    """What the ChunkGridExplorer is given: the **dev** queries' ChunkGrid over BM25 and dense (the notebook passes
    its ``dev``; with none it is made as the notebook makes it: each chunking is built on first use), the grid's
    sizes and overlap shares, opened on 128 words, 25 % overlap, k = 10, compared at an equal reading budget of 1280
    words."""
    if grid is None:
        grid = ChunkGrid(load_corpus(), load_queries(split="dev"), retrievers=("bm25", "dense"))
    return {"grid": grid, "sizes": SIZES, "overlap_shares": OVERLAP_SHARES, "size": 128, "overlap_share": 0.25,
            "k": 10, "mode": "equal budget", "budget": 1280}  # fmt: skip


CHAPTER = Chapter(
    number="05",
    slug="chunk_grid",
    title="The chunk grid",
    summary="size x overlap, split rate, re-indexing with remapped gold",
    does=(
        "split rate (the seed's table), a 3×3 size × overlap grid re-indexing the handbook with gold remapped from "
        "character offsets, evidence recall at an equal reading budget, the dev choice checked on test (where it does "
        "not hold), what a bigger chunk dilutes, chunking by structure (a table's header kept with its rows) and a "
        "second embedding model (multilingual-e5-small) against MiniLM, each swap and both; sliders for size, "
        "overlap, the reading budget or a shared k"
    ),
    status="ready",
    explorers=(
        # a chunking the kernel has not built yet is chunked, indexed and its vectors loaded on first use (1-3 s)
        Explorer("ChunkGridExplorer", chunk_grid_inputs, bench=Bench("size", (128, 256, 128, 64, 128)), timeout=60),
    ),
    label_sets=(),
    plans=(),
    probe=(),
)
