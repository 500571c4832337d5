"""Retrieval failure or generation failure? The 2x2 triage of traces.

Taught in ``07_triage``.

For every trace ask two independent questions: did retrieval put a gold chunk in the top ``k``
that the generator read, and did the final answer pass? The four cells say where to invest:

==================  ================  ================
                    answer passes     answer fails
==================  ================  ================
gold retrieved      ``OK``            ``GEN_FAIL``
gold not retrieved  ``LUCKY``         ``RET_FAIL``
==================  ================  ================

``LUCKY`` answers pass without the evidence: the model answered from what it already knew (or
guessed). They are right today and unsupported, which is a grounding problem (chapter 06).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

__all__ = ["QUADRANTS", "quadrant", "triage", "priority", "extractive_traces"]

QUADRANTS = ("OK", "GEN_FAIL", "LUCKY", "RET_FAIL")


def quadrant(trace: Mapping[str, Any], k: int = 5) -> str:
    """The cell of one trace: ``trace`` has ``gold`` (chunk ids), ``retrieved`` (ranked) and ``answer_pass``."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a whole number >= 1, got {k!r}")
    for key in ("gold", "retrieved", "answer_pass"):
        if key not in trace:
            raise ValueError(f"a trace needs {key!r}; this one has {sorted(trace)}")
    if not isinstance(trace["answer_pass"], bool):
        raise ValueError(f"answer_pass must be True or False, got {trace['answer_pass']!r}")
    retrieved_ok = any(g in trace["retrieved"][:k] for g in trace["gold"])
    return {
        (True, True): "OK",
        (True, False): "GEN_FAIL",
        (False, True): "LUCKY",
        (False, False): "RET_FAIL",
    }[(retrieved_ok, trace["answer_pass"])]


def triage(traces: Iterable[Mapping[str, Any]], k: int = 5) -> dict[str, int]:
    """Count the traces in each cell (every cell present, possibly 0)."""
    traces = list(traces)
    if not traces:
        raise ValueError("traces is empty: nothing to triage")
    counts = Counter(quadrant(t, k) for t in traces)
    return {q: counts[q] for q in QUADRANTS}


def priority(counts: Mapping[str, int]) -> str:
    """Which stage causes more wrong answers: ``"retrieval"``, ``"generation"`` or a tie to read by hand."""
    if counts["RET_FAIL"] == counts["GEN_FAIL"]:
        return "a tie - read the traces to decide"
    return "retrieval" if counts["RET_FAIL"] > counts["GEN_FAIL"] else "generation"


def extractive_traces(
    queries: Sequence[Any],
    run: Mapping[str, Sequence[str]],
    texts: Mapping[str, str],
    qrels: Mapping[str, Mapping[str, int]],
    reader: Callable[[str, Sequence[str]], str],
    corpus_texts: Mapping[str, str],
    k: int,
) -> list[dict]:
    """Traces of a RAG pipeline whose generator is ``reader`` over the top ``k`` chunks.

    ``answer_pass`` is True when the answer contains a grade-3 gold span verbatim; ``gold`` lists the
    chunks judged grade 3 for this chunking.
    """
    out = []
    for q in queries:
        retrieved = list(run[q.qid][:k])
        answer = reader(q.search_text, [texts[c] for c in retrieved]) if retrieved else ""
        spans = [corpus_texts[s.doc][s.start : s.end] for s in q.gold if s.grade >= 3]
        out.append(
            {
                "qid": q.qid,
                "slice": q.slice,
                "question": q.search_text,
                "gold": [c for c, g in qrels.get(q.qid, {}).items() if g >= 3],
                "retrieved": retrieved,
                "answer": answer,
                "answer_pass": any(s in answer for s in spans),
            }
        )
    return out
