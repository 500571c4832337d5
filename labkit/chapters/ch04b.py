"""Chapter 04b's manifest: what the chapter is made of, read by the build, the tests, the bench and the navigation."""

from __future__ import annotations

from typing import Any

from labkit.chapters.manifest import Bench, Chapter, Explorer
from labkit.studies import rerank_study as rs


def rerank_inputs(data=None) -> dict[str, Any]:
    """What the RerankExplorer is given: ``rerank_study.explorer_data()`` (the notebook passes its ``data``; with
    none it is computed), opened on the model reranker at its one recorded k1 = 10, k2 = 3."""
    return {"data": rs.explorer_data() if data is None else data, "k1": rs.MODEL_K1, "k2": 3, "reranker": rs.MODEL}


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
    explorers=(
        # the model reranker has k1 = 10 only: the bench moves k1 with the learned one
        Explorer(
            "RerankExplorer",
            rerank_inputs,
            bench=Bench("k1", (20, 50, 100, 50, 20, 10), start=(("reranker", "lambdarank"), ("k1", 20))),
        ),
    ),
    label_sets=(),
    plans=("04b-rerank", "04b-answers"),
    probe=(),
)
