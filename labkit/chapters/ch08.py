"""Chapter 08's manifest: what the chapter is made of, read by the build, the tests, the bench and the navigation."""

from __future__ import annotations

from typing import Any

from labkit.chapters.manifest import Bench, Chapter, Explorer
from labkit.generation import llm
from labkit.generation import reader as rd
from labkit.measures import fusion, triage
from labkit.retrieval.retrievers import make_run
from labkit.studies import answers_data
from labkit.studies import handbook as hb


def slice_triage_inputs(traces=None) -> dict[str, Any]:
    """What the SliceTriageExplorer is given: the 1.5B's answers over the hybrid top 3 (BM25 + dense, RRF c = 60 over
    each one's top 100) for every handbook query, judged by the rater labels (``traces``: the notebook passes its
    own; with none, they are made as the notebook makes them, the model ``LABKIT_LLM`` chooses: its recorded
    answers by default), k = 3, opened on the ``real`` slice's RET_FAIL traces."""
    if traces is None:
        h = hb.handbook()
        runs = [make_run(h.bm25, h.queries, 100), make_run(h.dense, h.queries, 100)]
        hybrid = fusion.fuse_runs(runs, c=60, top_n=100)
        corpus_texts = {d: doc.text for d, doc in h.corpus.items()}
        model = rd.llm_reader(llm.from_env(llm.DEFAULT_MODEL))
        traces = triage.reader_traces(h.queries, hybrid, h.texts, h.qrels, model, answers_data.label_check(),
                                      corpus_texts, hb.READER_K)  # fmt: skip
    return {"traces": traces, "k": hb.READER_K, "group": "real", "cell": "RET_FAIL"}


CHAPTER = Chapter(
    number="08",
    slug="case_study",
    title="Case study",
    summary="the internal-docs bot end to end: easy vs hard vs real",
    does=(
        "the internal-docs bot end to end: the 7.12 workflow on the handbook, retrieval per slice at the reader's k, "
        "every pitfall of 7.11 measured (synthetic-vs-real gap, wrong k, hit rate vs all the evidence for multi-hop "
        "questions, follow-ups without query rewriting, chunking), answers scored and triaged separately with the "
        "local 1.5B reader and rater labels, the checklist filled in; a slice × cell triage explorer"
    ),
    status="ready",
    explorers=(
        Explorer(
            "SliceTriageExplorer", slice_triage_inputs, bench=Bench("group", ("real", "hard", "easy", "all", "real"))
        ),
    ),
    label_sets=(),
    plans=("08-swap", "08-rewrite"),
    probe=(),
)
