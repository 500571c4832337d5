"""Hostile input across labkit: a clear error that names what to fix, or a correct answer.

Never a plausible wrong number, never a bare KeyError/IndexError from deep inside. Property tests feed every
public function of fusion, text, chunking, data, retrieval, triage, router, positions, grid, embeddings, check
and plots.plot_gain_discount generated bad values of one kind at a time (numbers that are not whole, not
finite or out of range; a string or bytes where a list is expected; something else where a dict is
expected) and assert a ``ValueError``/``TypeError`` whose message names the argument. The file formats get
one test per case (BOM, Latin-1, empty file, folder, bool grade, empty question, infinite score, stale cache,
round trip of near-tied scores).
"""

from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import labkit
from labkit import data_dir
from labkit.data import corpus as data
from labkit.data import trec
from labkit.data.corpus import Query, Span
from labkit.exercises import check
from labkit.generation import llm, positions
from labkit.measures import fusion, metrics, router, triage
from labkit.retrieval import embeddings, grid
from labkit.retrieval import retrievers as retrieval
from labkit.text import chunking
from labkit.text import words as text
from labkit.ui import plots, widgets

FAST = settings(derandomize=True, deadline=None, max_examples=25, database=None)

TEXT = "the vpn guide says connect before jira and git"
CHUNKS = chunking.chunk_document(
    "d", TEXT, 4, 1
)  # d#0 "the vpn guide says", d#1 "says connect ...", d#2 "jira and git"
TEXTS = {c.id: c.text for c in CHUNKS}
Q = Query("q1", "vpn guide", "the guide", "easy", "fact", "dev", (Span("d", 4, 7, 3),))
QRELS = chunking.spans_to_qrels([Q], CHUNKS)
RUN = {"q1": ["d#0", "d#1", "d#2"]}
BM25 = retrieval.BM25Retriever(CHUNKS)
TRACE = {"gold": ["d#0"], "retrieved": ["d#0", "d#1"], "answer_pass": True}
COST = {"nano": 0.1, "mini": 0.4}
WINDOWS = {"nano": 10, "mini": 100}
CONTEXTS = positions.build_contexts([Q], CHUNKS, QRELS, RUN, n_docs=2)
CORPUS_TEXTS = {"d": TEXT}


def raises_naming(call, name):
    with pytest.raises((ValueError, TypeError)) as info:
        call()
    assert name in str(info.value), f"the message does not name {name!r}: {info.value}"
    assert not isinstance(info.value, KeyError | IndexError)
    return str(info.value)


# ---------------------------------------------------------------- whole numbers (k, sizes, counts)


def bad_whole(minimum: int = 1, maximum: int | None = None):
    """Values that are not a whole number in [minimum, maximum]: below, above, fractions, NaN/inf, bools, None, text."""
    kinds = [
        st.integers(min_value=-(2**40), max_value=minimum - 1),
        st.integers(min_value=-(2**40), max_value=minimum - 1).map(np.int64),
        st.floats(allow_nan=True, allow_infinity=True).filter(
            lambda x: not (math.isfinite(x) and x.is_integer() and x >= minimum)
        ),
        st.sampled_from([True, False, None, "3", b"3", [3], {"k": 3}, 2.5, np.float64("nan")]),
    ]
    if maximum is not None:
        kinds.append(st.integers(min_value=maximum + 1, max_value=maximum + 10**6))
    return st.one_of(kinds)


WHOLE = {
    "rrf top_n": (lambda v: fusion.rrf([["a", "b"]], top_n=v), "top_n", 1, None),
    "combsum top_n": (lambda v: fusion.combsum([{"a": 1.0}], top_n=v), "top_n", 1, None),
    "fuse_runs top_n": (lambda v: fusion.fuse_runs([RUN], top_n=v), "top_n", 1, None),
    "hybrid_table k": (lambda v: fusion.hybrid_table({"bm25": RUN}, QRELS, {"q1": "easy"}, k=v), "k", 1, None),
    "chunk_spans n_tokens": (lambda v: chunking.chunk_spans(v, 4, 1), "n_tokens", 1, None),
    "chunk_spans size": (lambda v: chunking.chunk_spans(10, v, 0), "size", 1, None),
    "chunk_spans overlap": (lambda v: chunking.chunk_spans(10, 4, v), "overlap", 0, 3),
    "chunk_document size": (lambda v: chunking.chunk_document("d", TEXT, v, 0), "size", 1, None),
    "chunk_corpus overlap": (lambda v: chunking.chunk_corpus({"d": TEXT}, 4, v), "overlap", 0, 3),
    "split_stats size": (lambda v: chunking.split_stats([(10, 2, 3)], v, 0), "size", 1, None),
    "split_stats gold": (lambda v: chunking.split_stats([(10, v, 3)], 4, 0), "gold[0]", 0, 7),
    "contains_span a": (lambda v: chunking.contains_span([(0, 4)], v, 10**9), "a", 0, None),
    "BM25 search k": (lambda v: BM25.search("vpn", v), "k", 1, None),
    "BM25 search_many k": (lambda v: BM25.search_many(["vpn"], v), "k", 1, None),
    "Hybrid depth": (lambda v: retrieval.HybridRetriever([BM25], depth=v), "depth", 1, None),
    "Hybrid search k": (lambda v: retrieval.HybridRetriever([BM25], depth=5).search("vpn", v), "k", 1, 5),
    "make_run k": (lambda v: retrieval.make_run(BM25, [Q], v), "k", 1, None),
    "side_by_side k": (lambda v: retrieval.side_by_side("vpn", {"bm25": BM25}, v), "k", 1, None),
    "quadrant k": (lambda v: triage.quadrant(TRACE, v), "k", 1, None),
    "triage k": (lambda v: triage.triage([TRACE], v), "k", 1, None),
    "priority counts": (lambda v: triage.priority({"RET_FAIL": v, "GEN_FAIL": 1}), "RET_FAIL", 0, None),
    "extractive_traces k": (
        lambda v: triage.extractive_traces([Q], RUN, TEXTS, QRELS, lambda q, p: p[0], CORPUS_TEXTS, v),
        "k",
        1,
        None,
    ),
    "evaluate_router k": (lambda v: router.evaluate_router({"r": ["nano"]}, {"r": {"nano"}}, COST, v), "k", 1, None),
    "rag_prompts k": (lambda v: router.rag_prompts([Q], RUN, TEXTS, v), "k", 1, None),
    "cheapest_fitting n_tokens": (lambda v: router.cheapest_fitting(v, WINDOWS, COST), "n_tokens", 0, None),
    "window_filter_errors tokens": (
        lambda v: router.window_filter_errors([v], [5], WINDOWS, COST),
        "true_tokens[0]",
        0,
        None,
    ),
    "routing_at_k tokens": (lambda v: router.routing_at_k([v], [5], WINDOWS, COST), "true_tokens[0]", 1, None),
    "windows": (lambda v: router.cheapest_fitting(5, {"nano": v}, COST), "windows['nano']", 1, None),
    "TruncatingReader window_words": (lambda v: positions.TruncatingReader(v), "window_words", 1, None),
    "build_contexts n_docs": (lambda v: positions.build_contexts([Q], CHUNKS, QRELS, RUN, v), "n_docs", 2, None),
    "position_accuracy positions": (
        lambda v: positions.position_accuracy(CONTEXTS, positions.LexicalReader(), [v], CORPUS_TEXTS),
        "position",
        1,
        2,
    ),
    "gold_split_rate min_grade": (lambda v: grid.gold_split_rate([Q], CHUNKS, v), "min_grade", 1, 3),
    "evidence_recall k": (lambda v: grid.evidence_recall(RUN, [Q], CHUNKS, v), "k", 1, None),
    "MiniLM batch_size": (lambda v: embeddings.MiniLM(batch_size=v), "batch_size", 1, None),
}


@pytest.mark.parametrize("target", sorted(WHOLE))
@FAST
@given(data=st.data())
def test_whole_numbers_are_checked_and_named(target, data):
    call, name, minimum, maximum = WHOLE[target]
    bad = data.draw(bad_whole(minimum, maximum).filter(lambda v: v is not None or "top_n" not in target))
    raises_naming(lambda: call(bad), name)


@FAST
@given(bad=bad_whole(1, 100))
def test_plot_gain_discount_caps_k(bad):
    from labkit.ui.plots import plot_gain_discount

    raises_naming(lambda: plot_gain_discount([3, 2, 0], bad), "k")


def test_plot_gain_discount_refuses_a_huge_k_quickly():
    from labkit.ui.plots import plot_gain_discount

    message = raises_naming(lambda: plot_gain_discount([3, 2, 0], k=3000), "k")
    assert "100" in message


NUMPY_K = {
    "rrf": lambda k: fusion.rrf([["a", "b", "c"], ["c", "d"]], top_n=k),
    "fuse_runs": lambda k: fusion.fuse_runs([RUN, {"q1": ["d#2"]}], top_n=k),
    "chunk_spans": lambda k: chunking.chunk_spans(20, k + 1, k),
    "BM25": lambda k: BM25.search("vpn git", k),
    "make_run": lambda k: retrieval.make_run(BM25, [Q], k),
    "quadrant": lambda k: triage.quadrant(TRACE, k),
    "rag_prompts": lambda k: router.rag_prompts([Q], RUN, TEXTS, k),
    "evidence_recall": lambda k: grid.evidence_recall(RUN, [Q], CHUNKS, k),
    "evaluate_router": lambda k: router.evaluate_router({"r": ["nano", "mini"]}, {"r": {"mini"}}, COST, k).to_dict(),
}


@pytest.mark.parametrize("target", sorted(NUMPY_K))
@FAST
@given(k=st.integers(1, 6))
def test_numpy_integers_are_accepted_wherever_ints_are(target, k):
    call = NUMPY_K[target]
    assert call(np.int64(k)) == call(k) == call(np.int32(k))


# ---------------------------------------------------------------- finite numbers (scores, constants, weights, costs)


NON_FINITE = st.sampled_from([float("nan"), float("inf"), -float("inf"), np.float64("nan"), np.float32("inf")])
NOT_A_NUMBER = st.sampled_from([None, "1", b"1", True, [1.0], {"w": 1}])


def bad_finite(minimum: float | None = None, maximum: float | None = None):
    kinds = [NON_FINITE, NOT_A_NUMBER]
    if minimum is not None:
        kinds.append(st.floats(max_value=minimum, exclude_max=True, allow_nan=False, allow_infinity=False))
    if maximum is not None:
        kinds.append(st.floats(min_value=maximum, exclude_min=True, allow_nan=False, allow_infinity=False))
    return st.one_of(kinds)


FINITE = {
    "rrf c": (lambda v: fusion.rrf([["a", "b"]], c=v), "c", 0, fusion.MAX_C),
    "rrf weights": (lambda v: fusion.rrf([["a", "b"], ["b"]], weights=[v, 1.0]), "weights", 0, None),
    "fuse_runs c": (lambda v: fusion.fuse_runs([RUN], c=v), "c", 0, fusion.MAX_C),
    "combsum score": (lambda v: fusion.combsum([{"a": 2.0, "b": v, "c": 1.0}]), "scored[0]", None, None),
    "combsum weights": (lambda v: fusion.combsum([{"a": 2.0}], weights=[v]), "weights", 0, None),
    "BM25 k1": (lambda v: retrieval.BM25Retriever(CHUNKS, k1=v), "k1", 0, None),
    "BM25 b": (lambda v: retrieval.BM25Retriever(CHUNKS, b=v), "b", 0, 1),
    "Hybrid c": (lambda v: retrieval.HybridRetriever([BM25], c=v), "c", 0, fusion.MAX_C),
    "Hybrid weights": (lambda v: retrieval.HybridRetriever([BM25], weights=[v]), "weights", 0, None),
    "router cost": (lambda v: router.grade("nano", {"nano", "mini"}, {"nano": v, "mini": 0.4}), "cost", 0, None),
    "evaluate_router cost": (
        lambda v: router.evaluate_router({"r": ["nano", "mini"]}, {"r": {"nano", "mini"}}, {"nano": v, "mini": 1}),
        "cost",
        0,
        None,
    ),
    "write_run score": (lambda v: trec.write_run({"q1": {"a": v}}, os.devnull), "run['q1']['a']", None, None),
    "write_qrels grade": (lambda v: trec.write_qrels({"q1": {"a": v}}, os.devnull), "qrels['q1']['a']", None, None),
}


@pytest.mark.parametrize("target", sorted(FINITE))
@FAST
@given(data=st.data())
def test_non_finite_and_non_numbers_are_refused_and_named(target, data):
    call, name, minimum, maximum = FINITE[target]
    bad = data.draw(bad_finite(minimum, maximum))
    raises_naming(lambda: call(bad), name)


def test_all_zero_weights_are_refused_instead_of_an_alphabetical_order():
    for call in (
        lambda: fusion.rrf([["b", "a"], ["a"]], weights=[0, 0]),
        lambda: fusion.combsum([{"b": 2.0, "a": 1.0}], weights=[0.0]),
        lambda: fusion.fuse_runs([RUN, RUN], weights=np.zeros(2)),
        lambda: retrieval.HybridRetriever([BM25], weights=[0]),
    ):
        assert "all 0" in raises_naming(call, "weights")


def test_an_infinite_c_is_refused_and_a_large_finite_c_still_ranks():
    raises_naming(lambda: fusion.rrf([["b", "a"]], c=float("inf")), "c")
    assert fusion.rrf([["b", "a", "c"]], c=fusion.MAX_C)[0] == ["b", "a", "c"]  # not alphabetical
    assert fusion.rrf([["b", "a"]], weights=[1e-9])[0] == ["b", "a"]  # tiny scores are not one big tie


@FAST
@given(st.dictionaries(st.sampled_from("abcdefgh"), st.floats(-1e6, 1e6), min_size=1), st.sampled_from("abcdefgh"))
def test_combsum_with_one_nan_score_is_an_error_not_an_erased_ranking(scores, doc):
    raises_naming(lambda: fusion.combsum([{**scores, doc: float("nan")}]), f"scored[0][{doc!r}]")


@FAST
@given(st.sampled_from(["hr", "a", "q1 doc", "  "]))
def test_a_string_is_not_a_ranking(ranking):
    raises_naming(lambda: fusion.rrf([ranking]), "rankings")
    raises_naming(lambda: fusion.rrf(ranking), "rankings")


def test_weight_zero_switches_a_ranking_off():
    fused, score = fusion.rrf([["a", "b"], ["z", "c"]], weights=[1, 0])
    assert fused == ["a", "b"] and set(score) == {"a", "b"}
    assert fusion.fuse_runs([{"q1": ["a"]}, {"q2": ["b"]}], weights=[1, 0]) == {"q1": ["a"]}


# ---------------------------------------------------------------- a string (or bytes, or a dict) where a list belongs


NOT_A_LIST = st.one_of(
    st.text(min_size=1, max_size=12),
    st.binary(min_size=1, max_size=6),
    st.sampled_from([None, 3, 2.5, {"a": 1}, object()]),
)

LISTS = {
    "rrf rankings": (lambda v: fusion.rrf(v), "rankings"),
    "rrf rankings[0]": (lambda v: fusion.rrf([v]), "rankings[0]"),
    "rrf weights": (lambda v: fusion.rrf([["a"]], weights=v), "weights"),
    "combsum scored": (lambda v: fusion.combsum(v), "scored"),
    "fuse_runs runs": (lambda v: fusion.fuse_runs(v), "runs"),
    "fuse_runs ranking": (lambda v: fusion.fuse_runs([{"q1": v}]), "runs[0]['q1']"),
    "jaccard a": (lambda v: text.jaccard(v, "abc") if not isinstance(v, str) else text.jaccard([v, 1], "a"), "a"),
    "jaccard b": (lambda v: text.jaccard("abc", v) if not isinstance(v, str) else text.jaccard("a", [v, 1]), "b"),
    "split_stats gold": (lambda v: chunking.split_stats(v, 4, 1), "gold"),
    "split_stats gold[0]": (lambda v: chunking.split_stats([v], 4, 1), "gold[0]"),
    "contains_span spans": (lambda v: chunking.contains_span(v, 0, 1), "spans"),
    "spans_to_qrels queries": (lambda v: chunking.spans_to_qrels(v, CHUNKS), "queries"),
    "spans_to_qrels chunks": (lambda v: chunking.spans_to_qrels([Q], v), "chunks"),
    "BM25 chunks": (lambda v: retrieval.BM25Retriever(v), "chunks"),
    "search_many queries": (lambda v: BM25.search_many(v, 3), "queries"),
    "Hybrid retrievers": (lambda v: retrieval.HybridRetriever(v), "retrievers"),
    "make_run queries": (lambda v: retrieval.make_run(BM25, v, 3), "queries"),
    "quadrant gold": (lambda v: triage.quadrant({**TRACE, "gold": v}), "gold"),
    "quadrant retrieved": (lambda v: triage.quadrant({**TRACE, "retrieved": v}), "retrieved"),
    "triage traces": (lambda v: triage.triage(v), "traces"),
    "extractive_traces queries": (
        lambda v: triage.extractive_traces(v, RUN, TEXTS, QRELS, lambda q, p: p[0], CORPUS_TEXTS, 3),
        "queries",
    ),
    "evaluate_router ranking": (lambda v: router.evaluate_router({"r": v}, {"r": {"nano"}}, COST), "rankings['r']"),
    "evaluate_router passing": (lambda v: router.evaluate_router({"r": ["nano"]}, {"r": v}, COST), "passing['r']"),
    "grade passing": (lambda v: router.grade("nano", v, COST), "passing"),
    "window_filter_errors true_tokens": (lambda v: router.window_filter_errors(v, [5], WINDOWS, COST), "true_tokens"),
    "routing_at_k estimated": (lambda v: router.routing_at_k([5], v, WINDOWS, COST), "estimated"),
    "rag_prompts queries": (lambda v: router.rag_prompts(v, RUN, TEXTS, 3), "queries"),
    "LexicalReader passages": (lambda v: positions.LexicalReader()("vpn", v), "passages"),
    "TruncatingReader passages": (lambda v: positions.TruncatingReader(5)("vpn", v), "passages"),
    "position_accuracy contexts": (
        lambda v: positions.position_accuracy(v, positions.LexicalReader(), [1], CORPUS_TEXTS),
        "contexts",
    ),
    "position_accuracy positions": (
        lambda v: positions.position_accuracy(CONTEXTS, positions.LexicalReader(), v, CORPUS_TEXTS),
        "position",
    ),
    "build_contexts chunks": (lambda v: positions.build_contexts([Q], v, QRELS, RUN, 2), "chunks"),
    "gold_split_rate chunks": (lambda v: grid.gold_split_rate([Q], v), "chunks"),
    "evidence_recall queries": (lambda v: grid.evidence_recall(RUN, v, CHUNKS, 3), "queries"),
    "count_tokens texts": (lambda v: embeddings.count_tokens(v), "texts"),
    "cache_path ids": (lambda v: embeddings.cache_path(v, ["a"]), "ids"),
    "write_run ranking": (lambda v: trec.write_run({"q1": v}, os.devnull), "run['q1']"),
}


@pytest.mark.parametrize("target", sorted(LISTS))
@FAST
@given(bad=NOT_A_LIST)
def test_a_string_or_other_non_list_is_refused_where_a_list_belongs(target, bad):
    call, name = LISTS[target]
    if (target == "rrf weights" and bad is None) or (target == "write_run ranking" and isinstance(bad, dict)):
        return  # None means equal weights; a {doc: score} dict is a run's other form
    raises_naming(lambda: call(bad), name)


def test_the_cases_found_by_the_tester():
    raises_naming(lambda: BM25.search_many("vpn", 3), "queries")
    raises_naming(lambda: triage.quadrant({"gold": "hr-07#2", "retrieved": ["hr-07#2"], "answer_pass": True}), "gold")
    raises_naming(lambda: embeddings.count_tokens("abc"), "texts")
    raises_naming(lambda: text.jaccard(b"abc", "abc"), "a")
    raises_naming(lambda: triage.priority({}), "counts")
    raises_naming(lambda: router.routing_at_k([], [], WINDOWS, COST), "true_tokens")
    raises_naming(lambda: chunking.split_stats([(10, 2)], 4, 1), "gold[0]")
    raises_naming(lambda: fusion.rrf([[1], ["a"]]), "rankings[0]")
    raises_naming(lambda: fusion.hybrid_table({"bm25": RUN}, QRELS, {"q1": "easy"}, k=0), "k")
    raises_naming(lambda: retrieval.BM25Retriever(CHUNKS, k1=-1), "k1")
    raises_naming(lambda: retrieval.HybridRetriever([BM25], c=-1), "c")  # at construction, not at the first search
    raises_naming(lambda: retrieval.make_run(BM25, [Q, Q], 3), "queries")  # a duplicate qid would be overwritten
    raises_naming(lambda: grid.gold_split_rate([Q], []), "chunks")  # was 1.0
    raises_naming(lambda: grid.evidence_recall(RUN, [Q], CHUNKS, k=0), "k")  # was zeros
    raises_naming(lambda: router.grade("nano", {"nano", "mini"}, {"nano": float("nan"), "mini": 0.4}), "cost")


# ---------------------------------------------------------------- a dict where a dict belongs

NOT_A_DICT = st.one_of(
    st.text(max_size=8), st.lists(st.integers(), max_size=3), st.sampled_from([None, 3, ("a", 1), {"a", "b"}])
)

DICTS = {
    "combsum scored[0]": (lambda v: fusion.combsum([v]), "scored[0]"),
    "fuse_runs runs[0]": (lambda v: fusion.fuse_runs([v]), "runs[0]"),
    "hybrid_table runs": (lambda v: fusion.hybrid_table(v, QRELS, {"q1": "easy"}), "runs"),
    "chunk_corpus corpus": (lambda v: chunking.chunk_corpus(v), "corpus"),
    "side_by_side retrievers": (lambda v: retrieval.side_by_side("vpn", v), "retrievers"),
    "quadrant trace": (lambda v: triage.quadrant(v), "trace"),
    "triage traces[0]": (lambda v: triage.triage([v]), "traces[0]"),
    "priority counts": (lambda v: triage.priority(v), "counts"),
    "extractive_traces run": (
        lambda v: triage.extractive_traces([Q], v, TEXTS, QRELS, lambda q, p: p[0], CORPUS_TEXTS, 3),
        "run",
    ),
    "evaluate_router rankings": (lambda v: router.evaluate_router(v, {"r": {"nano"}}, COST), "rankings"),
    "grade cost": (lambda v: router.grade("nano", {"nano"}, v), "cost"),
    "cheapest_fitting windows": (lambda v: router.cheapest_fitting(5, v, COST), "windows"),
    "rag_prompts texts": (lambda v: router.rag_prompts([Q], RUN, v, 3), "texts"),
    "build_contexts qrels": (lambda v: positions.build_contexts([Q], CHUNKS, v, RUN, 2), "qrels"),
    "position_accuracy corpus_texts": (
        lambda v: positions.position_accuracy(CONTEXTS, positions.LexicalReader(), [1], v),
        "corpus_texts",
    ),
    "evidence_recall run": (lambda v: grid.evidence_recall(v, [Q], CHUNKS, 3), "run"),
    "write_qrels qrels": (lambda v: trec.write_qrels(v, os.devnull), "qrels"),
    "write_run run": (lambda v: trec.write_run(v, os.devnull), "run"),
}


@pytest.mark.parametrize("target", sorted(DICTS))
@FAST
@given(bad=NOT_A_DICT)
def test_a_non_dict_is_refused_where_a_dict_belongs(target, bad):
    call, name = DICTS[target]
    raises_naming(lambda: call(bad), name)


# ---------------------------------------------------------------- missing keys, empty inputs, duplicates


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: triage.priority({"GEN_FAIL": 1}), "RET_FAIL"),
        (lambda: triage.extractive_traces([Q], {}, TEXTS, QRELS, lambda q, p: p[0], CORPUS_TEXTS, 3), "run"),
        (lambda: triage.extractive_traces([Q], RUN, {}, QRELS, lambda q, p: p[0], CORPUS_TEXTS, 3), "texts"),
        (lambda: triage.extractive_traces([Q], RUN, TEXTS, QRELS, lambda q, p: 3, CORPUS_TEXTS, 3), "reader"),
        (lambda: triage.extractive_traces([Q], RUN, TEXTS, QRELS, "reader", CORPUS_TEXTS, 3), "reader"),
        (lambda: router.rag_prompts([Q], {}, TEXTS, 3), "run"),
        (lambda: router.rag_prompts([Q], RUN, {}, 3), "texts"),
        (lambda: router.cheapest_fitting(5, {"gpt": 10}, COST), "windows"),
        (lambda: router.evaluate_router({"r": ["nano"]}, {"r": {"gpt"}}, COST), "passing['r']"),
        (lambda: router.evaluate_router({}, {}, COST), "rankings"),
        (lambda: router.grade("nano", {"nano"}, {}), "cost"),
        (lambda: router.window_filter_errors(np.array([]), np.array([]), WINDOWS, COST), "no requests"),
        (lambda: router.routing_at_k([0], [5], WINDOWS, COST), "true_tokens[0]"),
        (lambda: fusion.hybrid_table({}, QRELS, {"q1": "easy"}), "runs"),
        (lambda: fusion.hybrid_table({"hybrid": RUN}, QRELS, {"q1": "easy"}), "hybrid"),
        (lambda: chunking.spans_to_qrels([Q, Q], CHUNKS), "queries"),
        (lambda: chunking.spans_to_qrels([Q], CHUNKS + CHUNKS[:1]), "chunks"),
        (lambda: chunking.chunk_spans(10**12, 1, 0), "n_tokens"),
        (lambda: chunking.chunk_corpus({"d": 5}), "corpus['d']"),
        (lambda: chunking.chunk_document(None, TEXT), "doc"),
        (lambda: positions.build_contexts([Q], CHUNKS, {"q1": {"nope#0": 3}}, RUN, 2), "qrels['q1']"),
        (lambda: positions.build_contexts([Q], CHUNKS, QRELS, {"q1": ["nope#0"]}, 2), "run['q1']"),
        (lambda: positions.position_accuracy(CONTEXTS, positions.LexicalReader(), [], CORPUS_TEXTS), "positions"),
        (lambda: positions.position_accuracy(CONTEXTS, lambda q, p: None, [1], CORPUS_TEXTS), "reader"),
        (lambda: positions.position_accuracy(CONTEXTS, positions.LexicalReader(), [1], {}), "corpus_texts"),
        (
            lambda: positions.position_accuracy(
                [*CONTEXTS, {**CONTEXTS[0], "distractors": []}], positions.LexicalReader(), [2], CORPUS_TEXTS
            ),
            "contexts[1]",
        ),
        (lambda: positions.LexicalReader()(None, ["a"]), "question"),
        (lambda: grid.evidence_recall({}, [Q], CHUNKS, 3), "run"),
        (lambda: grid.evidence_recall({"q1": ["nope#0"]}, [Q], CHUNKS, 3), "run['q1']"),
        (lambda: grid.gold_split_rate([Q], chunking.chunk_document("other", TEXT, 4, 1)), "no chunks"),
        (lambda: grid.ChunkGrid({"d": TEXT}, [Q], retrievers="bm25"), "retrievers"),
        (lambda: grid.ChunkGrid({"d": TEXT}, [Q], retrievers=()), "retrievers"),
        (lambda: grid.ChunkGrid({"d": TEXT}, [Q, Q], retrievers=("bm25",)), "queries"),
        (lambda: grid.ChunkGrid({"d": TEXT}, [Q], retrievers=("bm25",)).evaluate(4, 1, k=101), "k"),
        (lambda: grid.ChunkGrid({"d": TEXT}, [Q], retrievers=("bm25",)).costs(4, 1, k=0), "k"),
        (lambda: grid.ChunkGrid({"d": TEXT}, [Q], retrievers=("bm25",)).table((4,), (1.0,)), "overlap_shares[0]"),
        (lambda: grid.ChunkGrid({"d": TEXT}, [Q], retrievers=("bm25",)).table((4,), (0,), k={8: 3}), "k"),
        (lambda: grid.ChunkGrid({"d": TEXT}, [Q], retrievers=("bm25",)).table((4,), (0,), slice="x"), "slice"),
        (lambda: grid.ChunkGrid({"d": TEXT}, [Q], retrievers=("bm25",)).table((), (0,)), "sizes"),
        (lambda: retrieval.HybridRetriever([BM25], depth=5).search("vpn", 6), "depth"),
        (lambda: retrieval.HybridRetriever(["bm25"]), "retrievers[0]"),
        (lambda: retrieval.BM25Retriever(CHUNKS, method="okapi"), "method"),
        (lambda: retrieval.BM25Retriever(CHUNKS + CHUNKS[:1]), "chunk ids"),
        (lambda: retrieval.make_run("bm25", [Q], 3), "retriever"),
        (lambda: retrieval.make_run(BM25, [{"qid": "q1"}], 3), "queries[0]"),
        (lambda: retrieval.side_by_side("vpn", {"bm25": BM25}, judged=["d#0"]), "judged"),
        (lambda: embeddings.count_tokens(["ok", None]), "texts[1]"),
        (lambda: embeddings.cache_path(["a", "a"], ["x", "y"]), "ids"),
        (lambda: data.load_reference("../queries"), "name"),
        (lambda: data.load_reference(None), "name"),
        (lambda: data.load_queries(slice="Easy"), "slice"),
        (lambda: trec.write_run({"q1": ["a"]}, os.devnull, tag="two words"), "tag"),
        (lambda: trec.write_run({"q 1": ["a"]}, os.devnull), "q 1"),
        (lambda: trec.write_run({}, os.devnull), "run"),
        (lambda: trec.write_qrels({"q1": {"a b": 1}}, os.devnull), "a b"),
        (lambda: trec.write_qrels({"q1": {}}, os.devnull), "qrels"),
        (lambda: check.exercise(3.4, [3, 2, 1, 0, 0]), "number"),
    ],
)
def test_missing_and_empty_inputs_get_a_clear_error(call, name):
    raises_naming(call, name)


def test_query_vectors_of_the_wrong_shape_are_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(embeddings, "cache_dir", lambda: tmp_path)  # never write a cache file into data/

    class Fake:
        def encode(self, texts, progress=False):
            rng = np.random.default_rng(42)
            v = rng.normal(size=(len(texts), 8)).astype(np.float32)
            return v / np.linalg.norm(v, axis=1, keepdims=True)

    dense = retrieval.DenseRetriever(CHUNKS, model=Fake())
    raises_naming(lambda: dense.search_vectors(np.zeros(8), 3), "query_vectors")
    raises_naming(lambda: dense.search_vectors(np.full((1, 8), np.nan), 3), "query_vectors")
    raises_naming(lambda: dense.search_many("vpn", 3), "queries")
    assert len(dense.search("vpn", 100)) == len(CHUNKS)  # k larger than the chunks: every chunk, no error


# ---------------------------------------------------------------- correct answers where an error would be wrong


def test_k_larger_than_what_exists_is_a_shorter_answer_not_an_error():
    assert [d for d, _ in BM25.search("vpn guide", 50)] == ["d#0"]
    assert fusion.rrf([["a", "b"]], top_n=50)[0] == ["a", "b"]
    assert chunking.chunk_spans(3, 100, 10) == [(0, 3)]
    assert triage.quadrant({"gold": ["g"], "retrieved": ["a"], "answer_pass": np.False_}, k=50) == "RET_FAIL"


def test_exercise_answers_given_as_numpy_are_compared_as_lists_and_numbers(capsys):
    check.exercise("3.4", np.array([3, 2, 1, 0, 0]))
    check.exercise("3.4", (np.int64(3), np.int64(2), np.int64(1), np.int64(0), np.int64(0)))
    check.exercise("3.1", np.float64(1 / 3))
    check.exercise("3.1", np.array(1 / 3))
    check.exercise("3.4", np.array([3, 2, 0, 1, 0]))
    check.exercise("3.1", np.True_)
    out = capsys.readouterr().out.splitlines()
    assert [line.split(": ")[1] for line in out[:4]] == ["correct."] * 4
    assert all(line.split(": ")[1].startswith("not yet") and ". Hint: " in line for line in out[4:])


@FAST
@given(st.lists(st.text(alphabet="abc -", max_size=12), max_size=4), st.text(alphabet="abc -", max_size=12))
def test_jaccard_of_a_text_equals_jaccard_of_its_terms(words, other):
    a = " ".join(words)
    assert text.jaccard(a, other) == text.jaccard(set(text.terms(a)), set(text.terms(other)))


# ---------------------------------------------------------------- files


def _write(path, raw: bytes):
    path.write_bytes(raw)
    return path


def _query_line(**changes) -> str:
    first = (data_dir() / "queries.jsonl").read_text(encoding="utf-8").splitlines()[0]
    return json.dumps({**json.loads(first), **changes})


def test_bom_is_skipped_in_qrels_run_queries_and_documents(tmp_path):
    bom = b"\xef\xbb\xbf"
    assert trec.read_qrels(_write(tmp_path / "x.qrels", bom + b"q1 0 a 1\n")) == {"q1": {"a": 1}}
    assert trec.read_run(_write(tmp_path / "x.run", bom + b"q1 Q0 a 1 0.5 t\n")) == {"q1": {"a": 0.5}}
    path = _write(tmp_path / "q.jsonl", bom + _query_line().encode() + b"\n")
    assert data.load_queries(path=path)[0].qid == "adm-e01"
    folder = tmp_path / "docs"
    folder.mkdir()
    _write(folder / "d.md", bom + b"# Title\n\nBody text.\n")
    doc = data.load_corpus(folder)["d"]
    assert doc.title == "Title" and doc.text.startswith("# Title")


@pytest.mark.parametrize("reader, name", [(trec.read_qrels, "x.qrels"), (trec.read_run, "x.run")])
def test_latin1_bytes_name_the_file_and_line(tmp_path, reader, name):
    good = b"q1 0 a 1\n" if name.endswith("qrels") else b"q1 Q0 a 1 0.5 t\n"
    path = _write(tmp_path / name, good + good.replace(b"a", b"caf\xe9"))
    message = raises_naming(lambda: reader(path), f"{name}:2")
    assert "UTF-8" in message


def test_latin1_bytes_in_queries_name_the_file_and_line(tmp_path):
    path = _write(tmp_path / "q.jsonl", _query_line().encode() + b"\n" + _query_line(qid="x").encode("latin-1"))
    path.write_bytes(path.read_bytes().replace(b'"x"', b'"caf\xe9"'))
    raises_naming(lambda: data.load_queries(path=path), "q.jsonl:2")


@pytest.mark.parametrize("reader, name", [(trec.read_qrels, "x.qrels"), (trec.read_run, "x.run"), (None, "q.jsonl")])
@pytest.mark.parametrize("content", [b"", b"\n\n", b"\xef\xbb\xbf"])
def test_empty_files_are_refused(tmp_path, reader, name, content):
    path = _write(tmp_path / name, content)
    call = (lambda: reader(path)) if reader else (lambda: data.load_queries(path=path))
    assert "empty" in raises_naming(call, name)


def test_a_folder_given_as_a_file_says_it_is_a_folder(tmp_path):
    for call in (
        lambda: trec.read_qrels(tmp_path),
        lambda: trec.read_run(tmp_path),
        lambda: data.load_queries(path=tmp_path),
    ):
        with pytest.raises(IsADirectoryError, match="is a folder, not a"):
            call()
    with pytest.raises(NotADirectoryError, match="is a file, not a folder"):
        data.load_corpus(_write(tmp_path / "f.md", b"# x\n"))
    with pytest.raises(FileNotFoundError, match="not found"):
        trec.read_run(tmp_path / "nope.run")


@pytest.mark.parametrize(
    "changes, words",
    [
        ({"gold": [{"doc": "adm-office-access-badges", "start": 2513, "end": 2647, "grade": True}]}, "grade True"),
        ({"gold": [{"doc": "adm-office-access-badges", "start": 2513, "end": 2647, "grade": 2.0}]}, "grade 2.0"),
        ({"gold": [{"doc": "adm-office-access-badges", "start": False, "end": 2647, "grade": 3}]}, "start False"),
        ({"question": ""}, "question must be a non-empty string"),
        ({"question": "   "}, "question must be a non-empty string"),
        ({"question": None}, "question must be a non-empty string"),
        ({"answer": ""}, "answer must be a non-empty string"),
        ({"qid": "a b"}, "without spaces"),
        ({"qid": 7}, "qid 7"),
        ({"gold": {"doc": "adm-office-access-badges"}}, "gold must be a list"),
        ({"history": "earlier question", "rewritten": "x"}, "history must be a list"),
        ({"rewritten": ""}, "rewritten must be"),
        ({"slice": ["easy"]}, "slice"),
    ],
)
def test_query_fields_are_validated_with_file_and_line(tmp_path, changes, words):
    path = _write(
        tmp_path / "q.jsonl", (_query_line() + "\n" + _query_line(**{"qid": "x2", **changes}) + "\n").encode()
    )
    message = raises_naming(lambda: data.load_queries(path=path), "q.jsonl:2")
    assert words in message


@pytest.mark.parametrize("score", ["inf", "-inf", "Infinity", "nan"])
def test_a_non_finite_score_in_a_run_file_is_refused(tmp_path, score):
    path = _write(tmp_path / "x.run", f"q1 Q0 a 1 0.5 t\nq1 Q0 b 2 {score} t\n".encode())
    raises_naming(lambda: trec.read_run(path), "x.run:2")


def test_near_tied_scores_keep_their_order_through_a_file(tmp_path):
    run = {"q1": {"a": 0.1 + 1e-12, "b": 0.1, "c": 1 / 3}}
    trec.write_run(run, tmp_path / "x.run")
    back = trec.read_run(tmp_path / "x.run")
    assert back == run and list(back["q1"]) == ["c", "a", "b"]


@FAST
@given(
    st.dictionaries(
        st.sampled_from(["q1", "q2", "q-3"]),
        st.dictionaries(
            st.text(alphabet="abcdef#-_", min_size=1, max_size=5),
            st.floats(allow_nan=False, allow_infinity=False) | st.sampled_from([0.1, 0.1 + 1e-15, 1e-300, -0.0]),
            min_size=1,
            max_size=6,
        ),
        min_size=1,
    )
)
def test_any_finite_run_reads_back_exactly_and_in_the_same_order(tmp_path_factory, run):
    path = tmp_path_factory.mktemp("run") / "x.run"
    trec.write_run(run, path)
    back = trec.read_run(path)
    assert back == run
    for qid, scores in run.items():
        expected = [d for d, _ in sorted(scores.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)]
        assert list(back[qid]) == expected


def test_write_qrels_validates_what_the_reader_would_refuse(tmp_path):
    raises_naming(lambda: trec.write_qrels({"q1": {"doc a": 1}}, tmp_path / "x"), "doc a")
    raises_naming(lambda: trec.write_qrels({"q1": {"a": float("nan")}}, tmp_path / "x"), "qrels['q1']['a']")
    raises_naming(lambda: trec.write_qrels({"q1": {"a": 1.5}}, tmp_path / "x"), "qrels['q1']['a']")
    raises_naming(lambda: trec.write_qrels({"q1": {"a": True}}, tmp_path / "x"), "qrels['q1']['a']")
    assert not (tmp_path / "x").exists()  # nothing half-written
    qrels = {"q1": {"a": np.int64(2), "b": 1.0, "c": -1}}
    trec.write_qrels(qrels, tmp_path / "y")
    assert trec.read_qrels(tmp_path / "y") == {"q1": {"a": 2, "b": 1, "c": -1}}


def test_load_queries_sees_an_edited_file(tmp_path):
    path = tmp_path / "q.jsonl"
    path.write_text(_query_line() + "\n", encoding="utf-8")
    assert [q.qid for q in data.load_queries(path=path)] == ["adm-e01"]
    path.write_text(_query_line() + "\n" + _query_line(qid="adm-new") + "\n", encoding="utf-8")
    assert [q.qid for q in data.load_queries(path=path)] == ["adm-e01", "adm-new"]
    path.write_text(_query_line(qid="adm-e02") + "\n", encoding="utf-8")  # same size: the mtime tells
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert [q.qid for q in data.load_queries(path=path)] == ["adm-e02"]


def test_load_corpus_sees_an_edited_document(tmp_path):
    (tmp_path / "d.md").write_text("# One\n", encoding="utf-8")
    assert data.load_corpus(tmp_path)["d"].title == "One"
    (tmp_path / "d.md").write_text("# Two, longer\n", encoding="utf-8")
    assert data.load_corpus(tmp_path)["d"].title == "Two, longer"


@pytest.mark.parametrize("value", ["", "   "])
def test_an_empty_labkit_data_is_an_error_not_the_current_folder(monkeypatch, value):
    monkeypatch.setenv("LABKIT_DATA", value)
    raises_naming(data_dir, "LABKIT_DATA")
    raises_naming(data.load_corpus, "LABKIT_DATA")


def test_labkit_data_unset_or_pointing_to_a_folder_works(monkeypatch, tmp_path):
    monkeypatch.delenv("LABKIT_DATA", raising=False)
    assert (data_dir() / "handbook").is_dir()
    monkeypatch.setenv("LABKIT_DATA", str(tmp_path))
    assert data_dir() == tmp_path


def test_spans_to_qrels_and_friends_accept_any_iterable_of_queries():
    assert chunking.spans_to_qrels(iter([Q]), CHUNKS) == QRELS
    assert grid.evidence_recall(RUN, (q for q in [Q]), CHUNKS, 1) == {"q1": 1.0}


def test_priority_reads_a_pandas_row_as_well_as_a_dict():
    import pandas as pd

    rows = pd.DataFrame([triage.triage([TRACE]), {"OK": 0, "GEN_FAIL": 1, "LUCKY": 0, "RET_FAIL": 3}])
    assert [triage.priority(row) for _, row in rows.iterrows()] == ["a tie - read the traces to decide", "retrieval"]
    raises_naming(lambda: triage.priority(pd.Series({"RET_FAIL": 1})), "GEN_FAIL")


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda: fusion.fuse_runs([{1: ["a"]}, {"1": ["b"]}]), "holds both 1 and '1'"),
        (lambda: llm.Replay("m", path="/no/such/cassette.jsonl"), "is not a cassette file"),
        (lambda: widgets.metrics_playground(thr=5), "thr must be 1, 2 or 3"),
    ],
)
def test_values_that_used_to_pass_silently_are_refused(call, words):
    # each of these once passed: qids 1 and "1" became one query once written; a missing cassette was an empty replay; a
    # threshold of 5 became the slider's 3
    with pytest.raises(ValueError, match=re.escape(words)):
        call()


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda: labkit.setup(seed=1.5), "seed must be"),
        (lambda: metrics.evaluate({"q": ["a"]}, {}), "qrels is empty"),
        (lambda: llm.Replay(llm.DEFAULT_MODEL)(None), "prompt must be the text to send"),
        (lambda: widgets.MetricsPlayground(grades=()), "grades must hold at least one"),
        (lambda: plots.plot_grid(pd.DataFrame({"a": [1.0]}), []), "columns must not be empty"),
        (lambda: plots.plot_positions(pd.DataFrame()), "published must be load_reference"),
    ],
)  # fmt: skip
def test_raw_errors_became_errors_that_name_the_argument(call, words):
    with pytest.raises(ValueError, match=re.escape(words)):
        call()


# ---------------------------------------------------------------- ids read as text
# A TREC file holds ids as text, so labkit matches qids (and request ids) as text everywhere: a mapping keyed by
# 1 answers the query "1", and one that holds both 1 and "1" is refused, naming both, wherever it comes in.

Q_TEXT_ID = Query("7", "vpn guide", "the guide", "easy", "fact", "dev", (Span("d", 4, 7, 3),))
RUN_7 = {"7": ["d#2", "d#1", "d#0"]}
QRELS_7 = chunking.spans_to_qrels([Q_TEXT_ID], CHUNKS)


def _int_keys(mapping):
    return {int(k): v for k, v in mapping.items()}


@pytest.mark.parametrize(
    "call",
    [
        lambda run, qrels: grid.evidence_recall(run, [Q_TEXT_ID], CHUNKS, 3),
        lambda run, qrels: positions.build_contexts([Q_TEXT_ID], CHUNKS, qrels, run, n_docs=2),
        lambda run, qrels: triage.extractive_traces(
            [Q_TEXT_ID], run, TEXTS, qrels, positions.LexicalReader(), CORPUS_TEXTS, 2
        ),
        lambda run, qrels: router.rag_prompt_parts([Q_TEXT_ID], run, TEXTS, 2),
        lambda run, qrels: metrics.evaluate_by_group(run, qrels, {7: "easy"}).to_dict(),
    ],
)
def test_a_mapping_keyed_by_whole_numbers_answers_the_text_qid(call):
    # before: qrels keyed by 7 gave query "7" no gold (no context, a trace without gold) without a word
    as_text = call(RUN_7, QRELS_7)
    assert as_text  # something was found under "7"
    assert call(_int_keys(RUN_7), _int_keys(QRELS_7)) == as_text
    assert call(RUN_7, _int_keys(QRELS_7)) == as_text


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda: grid.evidence_recall({7: ["d#0"], "7": ["d#1"]}, [Q_TEXT_ID], CHUNKS, 3), "run's keys holds both"),
        (lambda: positions.build_contexts([Q_TEXT_ID], CHUNKS, {**QRELS_7, 7: {}}, RUN_7), "qrels's keys holds both"),
        (lambda: triage.extractive_traces([Q_TEXT_ID], {**RUN_7, 7: []}, TEXTS, QRELS_7, positions.LexicalReader(),
                                          CORPUS_TEXTS, 2), "run's keys holds both"),
        (lambda: metrics.evaluate(RUN_7, QRELS_7 | {7: {"d#0": 1}}), "the same id once written as text"),
        (lambda: metrics.evaluate_by_group(RUN_7, QRELS_7, {7: "a", "7": "b"}), "groups's keys holds both"),
        (lambda: chunking.spans_to_qrels([Q_TEXT_ID, _replace_qid(Q_TEXT_ID, 7)], CHUNKS), "qids holds both"),
        (lambda: fusion.fuse_runs([{7: ["d#0"]}, RUN_7]), "holds both 7 and '7'"),
        (lambda: router.evaluate_router({1: ["nano"], "1": ["mini"]}, {"1": {"nano"}}, COST), "holds both"),
        (lambda: router.evaluate_router({1: ["nano", "mini"]}, {1: {"nano"}, "1": {"mini"}}, COST), "holds both"),
        (lambda: triage.stage_gap([{**TRACE, "slice": 1}, {**TRACE, "slice": "1"}]), "holds both 1 and '1'"),
        (lambda: trec.write_run({1: ["a"]}, os.devnull), "must be a non-empty string"),
    ],
)  # fmt: skip
def test_ids_that_collide_as_text_are_refused_everywhere(call, words):
    with pytest.raises(ValueError, match=re.escape(words)):
        call()


def _replace_qid(q, qid):
    import dataclasses

    return dataclasses.replace(q, qid=qid)


def test_the_fusion_explorer_names_a_query_a_run_lacks():
    from labkit.ui.widgets import rankings

    runs = {"bm25": {"q1": ["d#0"]}, "dense": {"q2": ["d#1"]}}
    with pytest.raises(ValueError, match=r"qid 'q1' has no ranking in runs\['dense'\]"):
        rankings.fusion_view(runs, QRELS, {"q1": "easy"}, 60, [1, 1], "q1")
    view = rankings.fusion_view({"bm25": {1: ["d#0"]}}, {"1": {"d#0": 3}}, {"1": "easy"}, 60, [1], 1)
    assert view["judged"] == {"d#0": 3}


@FAST
@given(st.dictionaries(st.integers(0, 30), st.lists(st.sampled_from(sorted(TEXTS)), unique=True), min_size=1))
def test_by_id_keeps_every_entry_under_its_text(mapping):
    from labkit.core import args

    assert args.by_id("run", mapping) == {str(k): v for k, v in mapping.items()}
    clash = {**mapping, str(next(iter(mapping))): []}
    with pytest.raises(ValueError, match="same id as text"):
        args.by_id("run", clash)


# ---------------------------------------------------------------- a probe of every public function

NOT_PROBED = {
    "core.args": "the checks themselves: labkit calls them where input enters, a learner never does",
    "retrieval.each_text": "inside MiniLM.encode_each, which checks the texts where they enter",
}


def _probed() -> list[str]:
    """Every module a learner or a practitioner calls: each module and subpackage directly in the parts' folders
    from Core to Judges, the self-checks, the UI's two namespaces, the report, and the Studies modules a chapter's
    manifest lists under ``probe``."""
    from labkit.chapters import CHAPTERS

    root = Path(labkit.__file__).parent
    found = []
    for folder in ("core", "text", "data", "measures", "retrieval", "generation", "judges"):
        for path in sorted((root / folder).iterdir()):
            name = path.stem if path.suffix == ".py" else path.name if (path / "__init__.py").is_file() else None
            if name and not name.startswith("_") and f"{folder}.{name}" not in NOT_PROBED:
                found.append(f"{folder}.{name}")
    found += ["exercises.check", "ui.plots", "ui.widgets", "commands.report"]
    return found + [m for c in CHAPTERS for m in c.probe]


PROBED = _probed()
# every public function, the chapters' explorer views included (they once answered bad input with raw errors)
STILL_RAW: set[str] = set()
RAW = (TypeError, AttributeError, KeyError, IndexError, StopIteration, ZeroDivisionError)


def _public_functions():
    import importlib
    import inspect

    for m in PROBED:
        mod = importlib.import_module("labkit." + m)
        for n in getattr(mod, "__all__", [n for n in dir(mod) if not n.startswith("_")]):
            f = getattr(mod, n, None)
            if inspect.ismodule(f) or not callable(f) or (inspect.isclass(f) and issubclass(f, BaseException)):
                continue
            try:
                params = inspect.signature(f).parameters.values()
            except (TypeError, ValueError):
                continue
            required = [
                p for p in params if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
            ]
            yield f"{m}.{n}", f, len(required)


def test_no_public_function_answers_bad_input_with_a_raw_error():
    # every public function, every required argument None / [] / {} / "" / 1.5 / () / an object: a ValueError (or
    # FileNotFoundError...) naming what to fix, never a TypeError or AttributeError from deep inside
    import matplotlib.pyplot as plt

    raw = {}
    for name, f, n in _public_functions():
        if name == "setup" or name.startswith("llm.from_env"):
            continue
        for bad in (None, [], {}, "", 1.5, (), object()):
            try:
                f(*[bad] * n)
            except RAW as err:
                raw.setdefault(name, f"{type(err).__name__}: {err} (given {bad!r:.20})")
            except Exception:  # noqa: S110 - any clear error is what we want
                pass
    plt.close("all")
    assert not set(raw) - STILL_RAW, {k: v for k, v in raw.items() if k not in STILL_RAW}
    assert set(raw) == STILL_RAW, f"fixed, take them off STILL_RAW: {sorted(STILL_RAW - set(raw))}"
