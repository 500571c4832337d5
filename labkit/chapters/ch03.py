"""Chapter 03's manifest: what the chapter is made of, read by the build, the tests, the bench and the navigation."""

from __future__ import annotations

from typing import Any

from labkit.chapters.manifest import Bench, Chapter, Explorer
from labkit.data.toys import RUNNING_GRADES, RUNNING_UNRETRIEVED


def playground_inputs() -> dict[str, Any]:
    """What the metrics playground is given: the running example's grades at ranks 1..5 and the relevant document
    ranked below them (``data.toys``), k = 5, relevant from grade 1."""
    return {"grades": RUNNING_GRADES, "k": 5, "thr": 1, "unretrieved": RUNNING_UNRETRIEVED}


CHAPTER = Chapter(
    number="03",
    slug="metrics_by_hand",
    title="Metrics by hand",
    summary="P@k, R@k, RR, DCG, nDCG, thresholds, which metric when",
    does="P@k, R@k, RR, DCG, nDCG (two IDCG conventions), thresholds, the X/Y trap, which metric when; a playground",
    status="ready",
    explorers=(Explorer("metrics_playground", playground_inputs, bench=Bench("k", (5, 6, 7, 6, 5, 4, 3))),),
    label_sets=(),
    plans=(),
    probe=(),
)
