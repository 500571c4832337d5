"""Chapter 04's manifest: what the chapter is made of, read by the build, the tests, the bench and the navigation."""

from __future__ import annotations

from typing import Any

from labkit.chapters.manifest import Bench, Chapter, Explorer
from labkit.generation import llm
from labkit.generation import reader as rd
from labkit.judges import correctness
from labkit.retrieval.retrievers import make_run
from labkit.studies import handbook as hb
from labkit.studies import position_study as ps

POSITION_TRIAL = "gold at 5 of 10"  # the trial the position explorer opens on: the middle of ten passages


def cutoff_inputs(runs=None) -> dict[str, Any]:
    """What the CutoffExplorer is given: each retriever's top 20 (``runs``: BM25, dense and their fusion, every
    labelled query of the shared setting), the judgements and the slices, opened at k = 5. The notebook passes its
    ``runs``; with none, they are made as the notebook makes them."""
    h = hb.handbook()
    if runs is None:
        runs = {name: make_run(r, h.queries, 20) for name, r in (("bm25", h.bm25), ("dense", h.dense),
                                                                  ("hybrid", h.hybrid))}  # fmt: skip
    return {"runs": runs, "qrels": h.qrels, "groups": {q.qid: q.slice for q in h.queries}, "k": 5}


def position_inputs(table=None, study=None) -> dict[str, Any]:
    """What the PositionExplorer is given: the position study's contexts (``study``), the 1.5B's answers in every
    trial judged by the reference-number rule (``table``), the queries, opened on :data:`POSITION_TRIAL`. The
    notebook passes its ``table`` and ``study``; with none, they are made as the notebook makes them (the model
    chosen by ``LABKIT_LLM``: its recorded answers by default)."""
    if (table is None) != (study is None):
        raise ValueError("give both table and study (the notebook's), or neither (then they are made here)")
    by_qid = hb.handbook().by_qid
    if table is None:
        study = ps.study_contexts()
        reader = rd.llm_reader(llm.from_env(llm.DEFAULT_MODEL))
        table = ps.run_study(ps.study_trials(study), reader, model="1.5B")
        table = ps.add_check(table, correctness.reference_rule("first"), by_qid)
    return {"table": table, "contexts": study, "queries": by_qid, "trial": POSITION_TRIAL}


CHAPTER = Chapter(
    number="04",
    slug="mrr_hit_rate_lost_in_the_middle",
    title="MRR, hit rate, lost in the middle",
    summary="position matters",
    does=(
        "MRR@k and hit rate@k per slice, retriever and question kind; Liu et al.'s published U-curve; a position "
        "harness on the handbook checked with position-blind and truncating control readers; the local 1.5B in that "
        "harness (80 questions, 5 and 10 passages, closed-book, oracle and no-gold baselines, Wilson intervals beside "
        'Liu\'s curves), what distractors cost, the "best at both ends" reordering, the 0.5B at 10 passages; a '
        "question × trial explorer and a k slider"
    ),
    status="ready",
    explorers=(
        Explorer("CutoffExplorer", cutoff_inputs, bench=Bench("k", (5, 6, 7, 8, 7, 6, 5))),
        Explorer("PositionExplorer", position_inputs),
    ),
    label_sets=(),
    plans=("04-positions", "04-positions-0.5b", "04-padding"),
    probe=("studies.position_view",),
)
