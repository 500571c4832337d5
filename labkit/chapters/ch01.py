"""Chapter 01's manifest: what the chapter is made of, read by the build, the tests, the bench and the navigation.

Its explorers' inputs are built by :func:`fusion_inputs` and :func:`question_box_inputs`, which the notebook, the
browser tests and the bench all call."""

from __future__ import annotations

from typing import Any

from labkit.chapters.manifest import Bench, Chapter, Explorer
from labkit.retrieval.retrievers import make_run
from labkit.studies import handbook as hb

FUSION_QUERY = "hr-r09"  # the dev query the fusion explorer opens on: its gold chunk returns as c falls
BOX_QUESTION = "my vpn says certificate expired what do i do"


def _setting(**given: Any) -> dict[str, Any]:
    """The pieces the notebook hands over, or, when it hands none, the same built from the shared setting
    (``studies.handbook``: the handbook chunked at 128 words with 32 overlap, BM25, dense, each one's top 100)."""
    missing = [name for name, value in given.items() if value is None]
    if len(missing) not in (0, len(given)):
        raise ValueError(f"give all of {', '.join(given)} or none of them (then the shared setting's); "
                         f"{', '.join(missing)} missing")  # fmt: skip
    if not missing:
        return given

    h = hb.handbook()
    built = {"queries": h.queries, "chunks": h.chunks, "qrels": h.qrels,
             "runs": {"bm25": make_run(h.bm25, h.queries, k=100), "dense": make_run(h.dense, h.queries, k=100)},
             "retrievers": {"bm25": h.bm25, "dense": h.dense, "hybrid": h.hybrid}}  # fmt: skip
    return {name: built[name] for name in given}


def fusion_inputs(queries=None, chunks=None, qrels=None, runs=None) -> dict[str, Any]:
    """What the FusionExplorer is given: each retriever's top 100 (``runs``) and the judgements, cut to the **dev**
    queries that have judgements (tune on dev, report on test), their slices and questions, the chunks' texts,
    opened at c = 60 on :data:`FUSION_QUERY`. The notebook passes its ``queries``, ``chunks``, ``qrels`` and
    ``runs``; with none, the shared setting's (the same chunking and retrievers)."""
    s = _setting(queries=queries, chunks=chunks, qrels=qrels, runs=runs)
    dev = {q.qid for q in s["queries"] if q.split == "dev"}
    by_id = {q.qid: q for q in s["queries"]}
    dev_qrels = {qid: grades for qid, grades in s["qrels"].items() if qid in dev}
    return {
        "runs": {n: {qid: r for qid, r in run.items() if qid in dev} for n, run in s["runs"].items()},
        "qrels": dev_qrels,
        "groups": {qid: by_id[qid].slice for qid in dev_qrels},
        "questions": {qid: by_id[qid].search_text for qid in dev_qrels},
        "c": 60,
        "query": FUSION_QUERY,
        "texts": {c.id: c.text for c in s["chunks"]},
    }


def question_box_inputs(retrievers=None) -> dict[str, Any]:
    """What the QuestionBox is given: the three retrievers (BM25, dense, their RRF fusion at c = 60), a first
    question, k = 5. The notebook passes its ``retrievers``; with none, the shared setting's."""
    return {"retrievers": _setting(retrievers=retrievers)["retrievers"], "question": BOX_QUESTION, "k": 5}


CHAPTER = Chapter(
    number="01",
    slug="rrf_hybrid_retrieval",
    title="RRF and hybrid retrieval",
    summary="BM25 vs dense vs Reciprocal Rank Fusion",
    does=(
        "BM25 (`bm25s`) vs MiniLM embeddings vs Reciprocal Rank Fusion on the handbook, per slice; sliders for *c* "
        "and weights, a question box"
    ),
    status="ready",
    explorers=(
        Explorer("FusionExplorer", fusion_inputs, bench=Bench("c", (60, 100, 200, 100, 60, 30, 10))),
        Explorer("QuestionBox", question_box_inputs),
    ),
    label_sets=(),
    plans=(),
    probe=(),
)
