"""The 06 faithfulness explorer (``labkit.widgets.FaithfulnessExplorer``) on the page, built on replayed recordings."""

from __future__ import annotations

from functools import lru_cache

from labdriver import ExplorerPage

STEM = "06_faithfulness"


@lru_cache(maxsize=1)
def ch06_inputs():
    """The rows and judges the notebook hands the explorer, rebuilt here from replayed recordings."""
    from labkit import faithfulness, llm
    from labkit.studies import faithfulness_data as fdata

    rows = {r["qid"]: r for r in fdata.answered()}
    judges = {
        "1.5B": faithfulness.model_judge(llm.Replay(llm.DEFAULT_MODEL)),
        "1.5B + quote guard": faithfulness.model_judge(llm.Replay(llm.DEFAULT_MODEL), guard=True),
        "0.5B": faithfulness.model_judge(llm.Replay(llm.SMALL_MODEL)),
        "lexical": faithfulness.lexical_judge,
        "always supported": faithfulness.always_supported,
    }
    return rows, judges


def faithfulness_explorer(page, stem: str = STEM) -> ExplorerPage:
    from labkit import widgets

    rows, judges = ch06_inputs()
    return ExplorerPage(page, stem, widgets.FaithfulnessExplorer(list(rows.values()), judges))
