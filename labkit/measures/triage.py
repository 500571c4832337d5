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

What "gold retrieved" means is a choice, and it changes the counts. Here a trace's ``gold`` lists the chunks
that can answer alone: in :func:`extractive_traces`, the chunks holding a grade-3 span whole. That is hit@k
with threshold 3, not the hit@k of chapter 04 (threshold 1), which also counts a chunk holding only a piece of
the answer or only a supporting (grade-2) span.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from labkit.core import args
from labkit.measures import stats

__all__ = [
    "QUADRANTS", "quadrant", "triage", "priority", "stage_gap", "drill_down", "extractive_traces", "reader_traces",
]  # fmt: skip

QUADRANTS = ("OK", "GEN_FAIL", "LUCKY", "RET_FAIL")


def _is_bool(x: Any) -> bool:
    if isinstance(x, bool):
        return True
    return type(x).__name__ == "bool" and type(x).__module__ == "numpy"  # numpy.bool_ (np.True_)


def _quadrant(trace: Any, k: int, where: str) -> str:
    args.mapping(where, trace, example='{"gold": ["hr-07#2"], "retrieved": ["hr-07#2"], "answer_pass": True}')
    for key in ("gold", "retrieved", "answer_pass"):
        if key not in trace:
            raise ValueError(f"a trace needs {key!r}; this one has {sorted(trace)}")
    gold = args.strings(f"{where}['gold']", trace["gold"], example='["hr-07#2"]')
    retrieved = args.ranking(f"{where}['retrieved']", trace["retrieved"], example='["hr-07#2", "hr-07#5"]')
    passed = trace["answer_pass"]
    if not _is_bool(passed):
        raise ValueError(f"answer_pass must be True or False, got {passed!r}")
    top = set(retrieved[:k])
    retrieved_ok = any(g in top for g in gold)
    return {
        (True, True): "OK",
        (True, False): "GEN_FAIL",
        (False, True): "LUCKY",
        (False, False): "RET_FAIL",
    }[(retrieved_ok, bool(passed))]


def quadrant(trace: Mapping[str, Any], k: int = 5) -> str:
    """The cell of one trace: ``trace`` has ``gold`` (chunk ids), ``retrieved`` (ranked) and ``answer_pass``.

    A trace with no gold chunk (e.g. a chunking that cut every answer in two) has no gold to retrieve:
    its retrieval counts as failed.
    """
    k = args.whole_number("k", k)
    return _quadrant(trace, k, "trace")


def triage(traces: Iterable[Mapping[str, Any]], k: int = 5) -> dict[str, int]:
    """Count the traces in each cell (every cell present, possibly 0)."""
    k = args.whole_number("k", k)
    traces = args.sequence("traces", traces, example="[trace, ...] (a list of dicts, even for one trace)")
    if not traces:
        raise ValueError("traces is empty: nothing to triage")
    counts = Counter(_quadrant(t, k, f"traces[{i}]") for i, t in enumerate(traces))
    return {q: counts[q] for q in QUADRANTS}


def priority(counts: Mapping[str, int]) -> str:
    """Which stage causes more wrong answers: ``"retrieval"``, ``"generation"`` or a tie to read by hand.

    ``counts``: the cells of :func:`triage` (``RET_FAIL`` and ``GEN_FAIL`` are needed), or a pandas row
    with those labels.
    """
    if not isinstance(counts, Mapping) and not (hasattr(counts, "keys") and hasattr(counts, "__getitem__")):
        args.mapping("counts", counts, example="triage(traces, k)")  # raises, naming counts
    for key in ("RET_FAIL", "GEN_FAIL"):
        if key not in counts:
            raise ValueError(
                f"counts needs {key!r} (pass the dict returned by triage()); it has {sorted(map(str, counts.keys()))}"
            )
        args.whole_number(f"counts[{key!r}]", counts[key], minimum=0)
    ret, gen = int(counts["RET_FAIL"]), int(counts["GEN_FAIL"])
    if ret == gen:
        return "a tie - read the traces to decide"
    return "retrieval" if ret > gen else "generation"


def stage_gap(
    traces: Sequence[Mapping[str, Any]], k: int = 5, by: str = "slice", total: str | None = "all", level: float = 0.95
) -> Any:
    """Per group of traces (and overall): the four cells, the gap between the stages with its interval, the priority.

    The gap is ``(GEN_FAIL - RET_FAIL) / traces``. ``GEN_FAIL`` and ``RET_FAIL`` are two cells of one multinomial
    (a trace sits in one cell), so the gap is a paired 0/1 difference: per trace, "is GEN_FAIL" against "is
    RET_FAIL", the ``OK`` and ``LUCKY`` traces pairs of zeros. Its interval is the findings helper's for that kind
    (``stats.interval_for("paired 0/1", ...)``: the paired Newcombe score interval, the exact McNemar p on the
    ``GEN_FAIL`` and ``RET_FAIL`` counts beside it), at a declared correction:

    - **the groups** (every value of ``by``) are one family, declared by the grouping before any count is read, of
      as many members as groups: each interval at the Bonferroni share ``1 - (1 - level) / groups``
      (:class:`stats.Family` of ``"paired 0/1"`` members), so the chance that any group is called ``clear`` by
      error is at most ``1 - level``;
    - **the overall row** (``total``) asks one question of all traces: a family of one, at ``level``.

    ``gap low`` / ``gap high`` are those ends, ``p`` the p that inverts the interval, adjusted for the family
    (``p <= 1 - level`` exactly when ``clear``), ``among`` the family's size; ``frame.attrs["findings"]`` holds the
    :class:`stats.Finding` of each row (``.sentence`` states it). A group of fewer than ``stats.MIN_N`` (10)
    traces gets no interval (``NaN`` ends, ``p`` missing) and is never ``clear``. ``fix first`` is
    :func:`priority` on the counts; ``clear`` says whether the interval excludes 0. When it does not, these
    traces cannot tell the two stages apart: a few traces more or fewer could flip the advice, so read the traces
    before investing. Each trace needs the key ``by`` (e.g. ``"slice"``); ``total`` names the overall row (None
    for none). Chapters 07, 08 and 10 state the same findings with ``trace_checks.stage_gap_findings`` (the same
    kind, the same families).
    """
    import pandas as pd

    k = args.whole_number("k", k)
    traces = args.sequence("traces", traces, example="extractive_traces(...) or your own list of trace dicts")
    if not traces:
        raise ValueError("traces is empty: nothing to triage")
    args.text("by", by)
    groups: dict[str, list[str]] = {}
    for i, t in enumerate(traces):
        cell = _quadrant(t, k, f"traces[{i}]")
        if by not in t:
            raise ValueError(f"traces[{i}] has no {by!r} to group by: add it to every trace, or pass by=<a key it has>")
        groups.setdefault(str(t[by]), []).append(cell)
    args.ids_as_text(f"the traces' {by!r} values", [t[by] for t in traces if by in t])
    names = sorted(groups)
    if total is not None:
        if args.text("total", total) in groups:
            raise ValueError(f"a group is named {total!r}, like the overall row: pass another total= (or None)")
        groups[total] = [c for cells in list(groups.values()) for c in cells]

    def cells_of(name: str) -> tuple[list[int], list[int]]:
        return [int(c == "GEN_FAIL") for c in groups[name]], [int(c == "RET_FAIL") for c in groups[name]]

    found = stats.Family(f"GEN_FAIL − RET_FAIL by {by}", names, level=level).findings(
        {name: cells_of(name) for name in names}, kind="paired 0/1")  # fmt: skip
    if total is not None:
        found[total] = stats.Family(f"GEN_FAIL − RET_FAIL, {total}", [total], level=level).finding(
            total, cells_of(total), "paired 0/1")  # fmt: skip
    rows = {}
    for name in [*names, *([total] if total is not None else [])]:
        cells, f = groups[name], found[name]
        counts = {q: cells.count(q) for q in QUADRANTS}
        rows[name] = {"n": len(cells), **counts, "gap": f.estimate,
                      "gap low": math.nan if f.low is None else f.low,
                      "gap high": math.nan if f.high is None else f.high, "p": f.p, "among": f.family_size,
                      "fix first": priority(counts), "clear": f.verdict == "resolved"}  # fmt: skip
    out = pd.DataFrame.from_dict(rows, orient="index").rename_axis(by)
    out.attrs["findings"] = found
    return out


def drill_down(trace: Mapping[str, Any], k: int = 5) -> dict[str, Any]:
    """What one trace shows when you read it: its cell, where its gold chunks sat, the gold span and the answer.

    Returns ``qid``, ``cell``, ``question``, ``gold_ranks`` (each gold chunk's rank among the ``k`` chunks read,
    or None when it was not read), ``gold_spans`` (the answer text the labels point at, as
    :func:`extractive_traces` records it), ``answer`` and ``answer_has_span`` (the answer holds a gold span
    verbatim); for a language model's traces (:func:`reader_traces`) also ``reference`` (the authored
    reference answer), ``judged_by`` (the check that set ``answer_pass``) and ``why`` (a label's reason, when
    the notebook adds one). Keys a trace does not carry (the source's toy traces have no question) come back
    empty.
    """
    k = args.whole_number("k", k)
    cell = _quadrant(trace, k, "trace")
    read = list(trace["retrieved"][:k])
    spans = args.strings("trace['gold_spans']", trace.get("gold_spans", []), example='["Replacement costs EUR 15."]')
    answer = args.text("trace['answer']", trace.get("answer") or "", allow_empty=True)
    return {
        "qid": trace.get("qid", ""),
        "cell": cell,
        "question": args.text("trace['question']", trace.get("question", ""), allow_empty=True),
        "gold_ranks": {g: read.index(g) + 1 if g in read else None for g in trace["gold"]},
        "gold_spans": spans,
        "answer": answer,
        "answer_has_span": any(s in answer for s in spans),
        "reference": str(trace.get("reference", "")),
        "judged_by": str(trace.get("judged_by", "")),
        "why": str(trace.get("why", "")),
    }


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

    ``answer_pass`` is True when the answer contains a grade-3 gold span verbatim (``gold_spans`` holds their
    text); ``gold`` lists the chunks judged grade 3 for this chunking, i.e. holding such a span whole. A chunk
    with only part of the span (grade 1) or a supporting span (grade 2) is not gold here, so "gold retrieved"
    is hit@k at threshold 3. Every query needs a ranking in ``run`` (possibly empty).
    """

    k = args.whole_number("k", k)
    queries = args.queries("queries", queries, example="labkit.data.corpus.load_queries()", gold=True)
    run, qrels = args.by_id("run", run), args.by_id("qrels", qrels)  # looked up by qid as text, as in a TREC file
    for name, value in (("texts", texts), ("corpus_texts", corpus_texts)):
        args.mapping(name, value)
    if not callable(reader):
        raise ValueError(f"reader must be a function reader(question, passages) -> answer, got {reader!r:.60}")
    out = []
    for q in queries:
        retrieved = args.top_k(run, q.qid, k, texts)
        answer = reader(q.search_text, [texts[c] for c in retrieved]) if retrieved else ""
        if not isinstance(answer, str):
            raise ValueError(f"reader must return the answer as a string, got {type(answer).__name__} for {q.qid!r}")
        for s in q.gold:
            if s.grade >= 3 and s.doc not in corpus_texts:
                raise ValueError(f"corpus_texts has no document {s.doc!r} (gold of {q.qid!r})")
        spans = [corpus_texts[s.doc][s.start : s.end] for s in q.gold if s.grade >= 3]
        out.append(
            {
                "qid": q.qid,
                "slice": q.slice,
                "question": q.search_text,
                "gold": [c for c, g in args.mapping(f"qrels[{q.qid!r}]", qrels.get(str(q.qid), {})).items() if g >= 3],
                "retrieved": retrieved,
                "answer": answer,
                "gold_spans": spans,
                "answer_pass": any(s in answer for s in spans),
            }
        )
    return out


def reader_traces(
    queries: Sequence[Any],
    run: Mapping[str, Sequence[str]],
    texts: Mapping[str, str],
    qrels: Mapping[str, Mapping[str, int]],
    reader: Callable[[str, Sequence[str]], str],
    check: Callable[[str, Any], bool],
    corpus_texts: Mapping[str, str],
    k: int,
) -> list[dict]:
    """Traces like :func:`extractive_traces` for any reader, with ``answer_pass = check(answer, query)``.

    For a language model (``reader.llm_reader(llm)``) the check is a correctness rule of
    :mod:`labkit.judges.correctness` (``judge_check(...)`` or ``reference_rule()``); the trace also keeps the query's
    ``reference`` answer. ``gold`` and ``gold_spans`` are those of :func:`extractive_traces` (hit@k at threshold
    3). A check that returns None cannot judge that query: leave such queries out (a ValueError names them).
    """
    if not callable(check):
        raise ValueError("check must be a function check(answer, query) -> bool, e.g. correctness.reference_rule()")

    queries = args.queries("queries", queries, example="labkit.data.corpus.load_queries()", gold=True)
    traces = extractive_traces(queries, run, texts, qrels, reader, corpus_texts, k)
    for t, q in zip(traces, queries, strict=True):
        passed = check(t["answer"], q)
        if not _is_bool(passed):
            raise ValueError(
                f"check returned {passed!r} for {t['qid']!r}, not True or False: this rule cannot judge that "
                "query; leave it out (e.g. queries whose reference answer has no key number)"
            )
        t["answer_pass"], t["reference"] = bool(passed), getattr(q, "answer", "")
        t["judged_by"] = getattr(check, "__name__", "check")
    return traces
