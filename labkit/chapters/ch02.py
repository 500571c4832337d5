"""Chapter 02's manifest: what the chapter is made of, read by the build, the tests, the bench and the navigation."""

from __future__ import annotations

from typing import Any

from labkit.chapters.manifest import Bench, Chapter, Explorer
from labkit.generation import llm, synth
from labkit.studies import synth_data as sd


def synth_inputs(per_query=None, synthetic=None, gen=None) -> dict[str, Any]:
    """What the SynthExplorer is given: the generated queries' per-query results with the realism rater's ratings
    (``synth_data.with_ratings``). The notebook passes its ``gen_q`` (``per_query``), ``synthetic`` and ``gen``
    (its rows, rated); with none, they are made as the notebook makes them (the rater ``LABKIT_LLM`` chooses: its
    recorded ratings by default, with the few-shot examples)."""
    given = [x is None for x in (per_query, synthetic, gen)]
    if any(given) and not all(given):
        raise ValueError("give per_query, synthetic and gen (the notebook's), or none of them")
    if synthetic is None:
        import pandas as pd

        synthetic = sd.load_sets()
        per_query = sd.per_query(synthetic)
        gen = pd.DataFrame(sd.generated())
        gen["realism"] = synth.rate_realism(gen["question"].tolist(), llm.from_env(llm.DEFAULT_MODEL),
                                            sd.realism_labels("fewshot"))  # fmt: skip
    return {"frame": sd.with_ratings(per_query, synthetic, gen)}


CHAPTER = Chapter(
    number="02",
    slug="synthetic_hard_questions",
    title="Synthetic and hard questions",
    summary="generate, make hard, filter",
    does=(
        "generate → make hard → filter with a local 1.5B model: 322 generated questions (164 easy, 158 hard) located "
        "as spans (every drop counted), a rater audit of their labels checked by a second rater (κ), recall against "
        "authored and real-style questions, the realism rater measured on held-out ratings and on two raters' ratings "
        "of generated questions (the prevalence trap of κ); you rate questions yourself; a threshold × method × "
        "retriever explorer"
    ),
    status="ready",
    explorers=(
        Explorer("SynthExplorer", synth_inputs, bench=Bench("threshold", (4, 5, 4, 3, 2, 1, 2, 3))),
        Explorer("Labeller"),
    ),
    label_sets=("02-realism",),
    plans=("02-easy", "02-hard", "02-realism", "02-fact-first", "02-domain"),
    probe=(),
)
