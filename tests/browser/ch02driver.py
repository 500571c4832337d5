"""The 02 synthetic-questions explorer (``labkit.ui.widgets.SynthExplorer``) on the page, built on replayed
recordings."""

from __future__ import annotations

from functools import lru_cache

from labdriver import ExplorerPage

STEM = "02_synthetic_hard_questions"


@lru_cache(maxsize=1)
def ch02_frame():
    """The per-query frame with ratings that the notebook hands the explorer, rebuilt here from the recordings."""
    import pandas as pd

    from labkit.generation import llm, synth
    from labkit.studies import synth_data as sd

    synthetic = sd.load_sets()
    gen = pd.DataFrame(sd.generated())
    gen["realism"] = synth.rate_realism(gen["question"].tolist(), llm.Replay(llm.DEFAULT_MODEL),
                                        sd.realism_labels("fewshot"))  # fmt: skip
    return sd.with_ratings(sd.per_query(synthetic), synthetic, gen)


def synth_explorer(page, stem: str = STEM) -> ExplorerPage:
    from labkit.ui import widgets

    return ExplorerPage(page, stem, widgets.SynthExplorer(ch02_frame()))
