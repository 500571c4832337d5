"""The 06 faithfulness explorer (``labkit.ui.widgets.FaithfulnessExplorer``) on the page, built on replayed
recordings."""

from __future__ import annotations

from functools import lru_cache

from labdriver import ExplorerPage

STEM = "06_faithfulness"


@lru_cache(maxsize=1)
def ch06_inputs():
    """The rows and judges the notebook hands the explorer, rebuilt here from replayed recordings."""
    from labkit.chapters import chapter
    from labkit.generation import llm
    from labkit.judges import faithfulness
    from labkit.studies import faithfulness_data as fdata

    rows = {r["qid"]: r for r in fdata.answered()}
    judges = faithfulness.judges_from(chapter("06").judges, llm.Replay)
    return rows, judges


def faithfulness_explorer(page, stem: str = STEM) -> ExplorerPage:
    from labkit.ui import widgets

    rows, judges = ch06_inputs()
    return ExplorerPage(page, stem, widgets.FaithfulnessExplorer(list(rows.values()), judges))
