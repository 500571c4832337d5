"""Chapter 07's manifest: what the chapter is made of, read by the build, the tests, the bench and the navigation."""

from __future__ import annotations

from functools import lru_cache
from types import SimpleNamespace
from typing import Any

from labkit.chapters.manifest import Bench, Chapter, Explorer
from labkit.generation import llm
from labkit.generation import reader as rd
from labkit.generation.positions import LexicalReader
from labkit.judges import correctness, faithfulness
from labkit.measures import triage
from labkit.retrieval.retrievers import make_run
from labkit.studies import answers_data
from labkit.studies import handbook as hb

READERS = ("1.5B · rater label", "1.5B · reference number", "1.5B · lexical judge", "extractive control")
"""The triage explorer's readers: the 1.5B's recorded answers under each of three checks, and the extractive
control (which can read any k)."""


@lru_cache(maxsize=1)
def _setting():
    h = hb.handbook()
    corpus_texts = {d: doc.text for d, doc in h.corpus.items()}
    checks = {"rater label": answers_data.label_check(),
              "reference number": correctness.reference_rule("first"),
              "lexical judge": correctness.judge_check(faithfulness.lexical_judge, corpus_texts)}  # fmt: skip
    labels = answers_data.correctness_labels()
    why = labels[(labels["model"] == llm.DEFAULT_MODEL) & (labels["k"] == hb.READER_K)].set_index("qid")["why"]
    return SimpleNamespace(h=h, run=make_run(h.hybrid, h.queries, 20), corpus_texts=corpus_texts, checks=checks,
                           why=why, model=rd.llm_reader(llm.from_env(llm.DEFAULT_MODEL)), k=hb.READER_K)  # fmt: skip


@lru_cache(maxsize=64)
def traces_at(k: int, reader: str) -> list[dict]:
    """The chapter's traces for ``reader`` (one of :data:`READERS`) at ``k``, as the notebook's ``traces_for``
    makes them: the 1.5B's answers (the model ``LABKIT_LLM`` chooses: its recorded answers by default) over the
    hybrid top k of a top 20, judged by the rater labels (with their reason), the reference-number rule (on the
    queries it can judge) or the lexical judge against the gold; the extractive control at any k. The model at
    another k than its recorded one raises."""
    s = _setting()
    h = s.h
    if reader == "extractive control":
        return triage.extractive_traces(h.queries, s.run, h.texts, h.qrels, LexicalReader(), s.corpus_texts, k)
    if reader not in READERS:
        raise ValueError(f"reader must be one of {', '.join(READERS)}; got {reader!r}")
    if k != s.k:
        raise ValueError(f"the 1.5B's answers are recorded at k = {s.k} (every query); set k to {s.k}, or pick "
                         "the extractive control to sweep k")  # fmt: skip
    name = reader.split(" · ")[1]
    check = s.checks[name]
    queries = [q for q in h.queries if name != "reference number" or check("", q) is not None]
    traces = triage.reader_traces(queries, s.run, h.texts, h.qrels, s.model, check, s.corpus_texts, k)
    for t in traces:
        t["why"] = s.why[t["qid"]] if name == "rater label" else ""
    return traces


def triage_inputs(traces_for=None) -> dict[str, Any]:
    """What the TriageExplorer is given: a function of (k, reader) returning traces (the notebook passes its
    ``traces_for``; with none, :func:`traces_at`), the readers, k = 3 (the reader's), and the one k each 1.5B
    reader was recorded at."""
    return {"traces_at": traces_at if traces_for is None else traces_for, "k": hb.READER_K, "readers": list(READERS),
            "recorded_k": {r: hb.READER_K for r in READERS if r != "extractive control"}}  # fmt: skip


CHAPTER = Chapter(
    number="07",
    slug="triage",
    title="Triage",
    summary="retrieval failure or generation failure: the 2x2",
    does=(
        "the 2×2 (OK / GEN_FAIL / LUCKY / RET_FAIL) on the seed's traces and on the local 1.5B's answers to every "
        "handbook query, rater-labelled right or wrong (a second rater's κ for both readers); two cheap correctness "
        "rules measured against the labels (TPR/TNR), and against yours after you label answers; how they move the "
        "cells; what LUCKY holds; k = 3 vs 5 for the model and every k for an extractive control; a reader × check × "
        "k explorer with the drill-down"
    ),
    status="ready",
    explorers=(
        # the 1.5B was recorded at one k: the bench sweeps k with the extractive control
        Explorer(
            "TriageExplorer",
            triage_inputs,
            bench=Bench("k", (3, 4, 5, 4, 3, 2, 1), start=(("reader", "extractive control"),)),
        ),
        Explorer("Labeller"),
    ),
    label_sets=("07-answers",),
    plans=("07-answers", "07-judge", "07-sweep", "07-fixes"),
    probe=(),
)
