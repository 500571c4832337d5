"""labkit.measures.metrics: the source chapter's figures, trec_eval agreement, properties, bad input."""

import itertools
import math
import re

import numpy as np
import pandas as pd
import pytest
import pytrec_eval
from hypothesis import given, settings
from hypothesis import strategies as st

from labkit.data.toys import RUNNING_GRADES as RELS
from labkit.data.toys import RUNNING_UNRETRIEVED, TRAP_JUDGED, TRAP_X, TRAP_Y
from labkit.measures import metrics
from labkit.measures.metrics import graded

# ---------------------------------------------------------------- the chapter's printed figures


def test_source_chapter_figures():
    assert metrics.precision_at_k(RELS, 5) == 0.6
    assert metrics.recall_at_k(RELS, 5, n_relevant_total=4) == 0.75
    assert metrics.reciprocal_rank(RELS, 5) == 0.5
    assert round(metrics.dcg(RELS), 4) == 2.9407
    assert round(metrics.dcg([3, 2, 1, 0, 0]), 4) == 4.7619
    assert round(metrics.ndcg_at_k(RELS, 5), 4) == 0.6176
    assert round(metrics.ndcg_at_k(RELS, 5, all_grades=[0, 2, 0, 3, 1, 2]), 4) == 0.5166
    assert metrics.precision_at_k(RELS, 5, thr=2) == 0.4
    assert metrics.recall_at_k(RELS, 5, 3, thr=2) == pytest.approx(0.6666666666666666)
    assert metrics.ndcg_at_k(TRAP_X, 5) == 1.0
    assert round(metrics.ndcg_at_k(TRAP_Y, 5), 4) == 0.4307
    assert round(metrics.ndcg_at_k(TRAP_X, 5, all_grades=TRAP_JUDGED), 4) == 0.4671
    assert round(metrics.ndcg_at_k(TRAP_Y, 5, all_grades=TRAP_JUDGED), 4) == 0.2832


def test_hand_worked_small_cases():
    assert metrics.hit_at_k([0, 0, 1], 2) == 0.0
    assert metrics.hit_at_k([0, 0, 1], 3) == 1.0
    assert metrics.reciprocal_rank([0, 0, 0], 3) == 0.0
    assert metrics.precision_at_k([1, 1], 5) == 0.4  # short run: divide by k
    assert metrics.recall_at_k([0, 0], 2, 0) is None  # no relevant document: undefined
    assert metrics.ndcg_at_k([0, 0, 0], 3) == 0.0
    assert metrics.dcg([-1, 2]) == pytest.approx(2 / math.log2(3))  # negative grade gains nothing


def test_ranking_metrics_matches_single_functions():
    r = metrics.ranking_metrics(RELS, 5, thr=2, unretrieved=[2], idcg="all_judged")
    assert r["P@k"] == 0.4 and r["R@k"] == pytest.approx(2 / 3)
    assert r["nDCG@k"] == pytest.approx(metrics.ndcg_at_k(RELS, 5, all_grades=RELS + [2]))


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda: metrics.precision_at_k(RELS, 0), "k must be >= 1"),
        (lambda: metrics.precision_at_k(RELS, 2.5), "k must be a whole number"),
        (lambda: metrics.recall_at_k(RELS, 5, 4, thr="high"), "thr must be a number"),
        (lambda: metrics.hit_at_k(RELS, 5, thr=0), "thr must be > 0"),
        (lambda: metrics.precision_at_k([0, "2"], 2), "rels[1]"),
        (lambda: metrics.dcg([0, float("nan")]), "NaN"),
        (lambda: metrics.recall_at_k(RELS, 5, 2), "n_relevant_total (2) is smaller"),
        (lambda: metrics.ndcg_at_k(RELS, 5, all_grades=[3]), "all_grades must list"),
        (lambda: metrics.evaluate({}, {"q": {"d": 1}}), "run is empty"),
        (lambda: metrics.evaluate({"q": ["a", "b", "a"]}, {"q": {"a": 1}}), "more than once"),
        (lambda: metrics.evaluate({"q": {"a": float("nan")}}, {"q": {"a": 1}}), "NaN"),
        (lambda: metrics.evaluate({"q": {"a": "high"}}, {"q": {"a": 1}}), "must be numbers"),
        (lambda: metrics.evaluate({"q": ["a"]}, {"q": {"a": 1}}, metrics=("MAP",)), "unknown metric"),
        (lambda: metrics.evaluate({"q": ["a"]}, {"q": {"a": 1}}, metrics=("P@0",)), "k in 'P@0'"),
        (lambda: metrics.evaluate({"q": ["a"]}, {"q": {"a": 1}}, idcg="ideal"), "idcg must be"),
        (lambda: metrics.evaluate({"q": ["a"]}, {"q": {"a": "x"}}), "must be numbers"),
        (
            lambda: metrics.evaluate(
                pd.DataFrame({"qid": ["q", "q"], "doc": ["a", "a"], "score": [1, 2]}), {"q": {"a": 1}}
            ),
            "more than once",
        ),
        (lambda: metrics.evaluate(pd.DataFrame({"qid": ["q"], "doc": ["a"]}), {"q": {"a": 1}}), "needs columns"),
        # a missing id must not be filed under another query or doc (it once was, silently)
        (
            lambda: metrics.evaluate(
                pd.DataFrame({"qid": ["q", None, "q"], "doc": ["a", "b", "c"], "score": [3, 2, 1]}), {"q": {"a": 1}}
            ),
            "run row 1 has no qid",
        ),
        (
            lambda: metrics.evaluate(
                pd.DataFrame({"qid": ["q", "q", "q"], "doc": ["a", None, "c"], "score": [3, 2, 1]}), {"q": {"a": 1}}
            ),
            "a doc id is missing (nan for qid 'q' in the run)",
        ),
        (
            lambda: metrics.evaluate({"q": ["a", None]}, {"q": {"a": 1}}),
            "a doc id is missing (None for qid 'q' in the run)",
        ),
        (
            lambda: metrics.evaluate({"q": ["a"]}, pd.DataFrame({"qid": ["q"], "doc": [None], "grade": [1]})),
            "for qid 'q' in qrels",
        ),
        (
            lambda: metrics.evaluate({"q": ["a"]}, pd.DataFrame({"qid": [None], "doc": ["a"], "grade": [1]})),
            "qrels row 0 has no qid",
        ),
    ],
)
def test_bad_input_names_the_problem(call, words):
    with pytest.raises(ValueError, match=None) as info:
        call()
    assert words in str(info.value)


# ---------------------------------------------------------------- batch evaluate


def test_evaluate_shapes_agree_and_ties_follow_trec_eval():
    qrels = {"q1": {"a": 2, "b": 0, "c": 1}, "q2": {"x": 1}}
    scored = {"q1": {"a": 1.0, "b": 1.0, "c": 0.5}, "q2": {"y": 3.0}}
    # tie between a and b at 1.0: doc id descending puts b first
    ranked = {"q1": ["b", "a", "c"], "q2": ["y"]}
    frame = pd.DataFrame([(q, d, s) for q, r in scored.items() for d, s in r.items()], columns=["qid", "doc", "score"])
    names = ("nDCG@3", "P@2", "R@3", "RR@3", "hit@1")
    results = [metrics.evaluate(run, qrels, names).per_query for run in (scored, ranked, frame)]
    pd.testing.assert_frame_equal(results[0], results[1])
    pd.testing.assert_frame_equal(results[0], results[2])
    assert results[0].loc["q1", "RR@3"] == 0.5


def test_missing_and_unjudged_queries_are_reported():
    res = metrics.evaluate({"q1": ["a"], "zz": ["a"]}, {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 0}}, ("R@5", "P@5"))
    assert res.missing == ["q2", "q3"] and res.unjudged == ["zz"]
    assert res.per_query.loc["q2", "P@5"] == 0.0
    assert np.isnan(res.per_query.loc["q3", "R@5"])  # nothing relevant: left out of the mean
    assert res.mean["R@5"] == pytest.approx(0.5)


def test_idcg_retrieved_matches_the_book_function():
    qrels = {"q": {"a": 3, "b": 2, "c": 1, "z": 3}}
    res = metrics.evaluate({"q": ["c", "a", "x", "b"]}, qrels, ("nDCG@4",), idcg="retrieved")
    assert res.mean["nDCG@4"] == pytest.approx(metrics.ndcg_at_k([1, 3, 0, 2], 4))


def test_an_ideal_ranking_scores_exactly_one():
    # DCG and IDCG are one formula (graded.discounted_gain): they once differed in the last bit
    # (gain * (1 / log2) vs gain / log2), and 169 of these 3,279 ideal rankings scored 0.9999999999999999.
    cases = [sorted(g, reverse=True) for n in range(1, 8) for g in itertools.product([1, 2, 3], repeat=n)]
    run = {f"q{i}": [f"d{j}" for j in range(len(g))] for i, g in enumerate(cases)}
    qrels = {f"q{i}": {f"d{j}": x for j, x in enumerate(g)} for i, g in enumerate(cases)}
    assert (metrics.evaluate(run, qrels, ("nDCG@10",)).per_query["nDCG@10"] == 1.0).all()
    assert all(metrics.ndcg_at_k(g, 10) == 1.0 for g in cases[::50])


@pytest.mark.parametrize("idcg", ["all_judged", "retrieved"])
def test_one_ranking_functions_agree_with_evaluate(rng, idcg):
    # the per-ranking functions and the batch evaluate run the same per-family code: they agree exactly
    run, qrels = random_case(rng, n_queries=40)
    ours = metrics.evaluate(run, qrels, ("P@5", "R@10", "RR@10", "hit@3", "nDCG@10"), thr=2, idcg=idcg).per_query
    for qid, scores in run.items():
        ranked = sorted(scores, key=lambda d: (scores[d], d), reverse=True)  # trec_eval's order
        rels = [qrels[qid].get(d, 0) for d in ranked]
        judged = list(qrels[qid].values())
        n_rel = sum(g >= 2 for g in judged)
        unretrieved = [g for d, g in qrels[qid].items() if d not in scores]
        table = metrics.ranking_metrics(rels, 10, 2, unretrieved, idcg)
        assert ours.loc[qid, "P@5"] == metrics.precision_at_k(rels, 5, thr=2)
        recall = metrics.recall_at_k(rels, 10, n_rel, thr=2)
        assert (recall is None and np.isnan(ours.loc[qid, "R@10"])) or ours.loc[qid, "R@10"] == recall
        assert ours.loc[qid, "RR@10"] == metrics.reciprocal_rank(rels, 10, thr=2) == table["RR@k"]
        assert ours.loc[qid, "hit@3"] == metrics.hit_at_k(rels, 3, thr=2)
        all_grades = None if idcg == "retrieved" else rels + unretrieved
        assert ours.loc[qid, "nDCG@10"] == metrics.ndcg_at_k(rels, 10, all_grades) == table["nDCG@k"]


def test_idcg_rule_is_the_one_the_figure_draws():
    rels, unretrieved = RELS, RUNNING_UNRETRIEVED
    for idcg in ("retrieved", "all_judged"):
        ideal = graded.ideal_gains(rels, 5, unretrieved, idcg)
        assert ideal == ([3.0, 2.0, 1.0, 0.0, 0.0] if idcg == "retrieved" else [3.0, 2.0, 2.0, 1.0, 0.0])
        assert metrics.dcg(ideal) == metrics.ranking_metrics(rels, 5, 1, unretrieved, idcg)["IDCG@k"]


def random_case(rng, n_queries=200, pool=60):
    run, qrels = {}, {}
    for i in range(n_queries):
        qid = f"q{i:03d}"
        n_ret = int(rng.integers(1, 25))  # often shorter than k
        docs = rng.choice(pool, n_ret, replace=False)
        run[qid] = {f"d{d}": float(rng.integers(0, 6)) for d in docs}  # integer scores: many ties
        n_judged = int(rng.integers(1, 15))
        judged = rng.choice(pool, n_judged, replace=False)
        grades = rng.integers(-1, 4, n_judged)  # negative grades and queries with nothing relevant
        qrels[qid] = {f"d{d}": int(g) for d, g in zip(judged, grades, strict=True)}
    return run, qrels


def trec_cut(run, k):
    """Each query's top ``k`` in trec_eval's order (score descending, then doc id descending)."""
    return {q: dict(sorted(r.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)[:k]) for q, r in run.items()}


def trec_disagreements(entries, run, qrels, k, thr):
    """Where ``evaluate`` and trec_eval (``pytrec_eval``) differ, for registry ``entries`` that name a trec_eval
    measure, at cutoff ``k`` and threshold ``thr``, in trec_eval's conventions (idcg='all_judged'; ties by score
    descending, then doc id descending; a measure without a cutoff sees the run cut at ``k``; where labkit says
    undefined, NaN, trec_eval says 0). Returns ``(disagreements, {metric name: queries compared})``."""
    ours = metrics.evaluate(run, qrels, [m.column(k) for m in entries], thr=thr, idcg="all_judged").per_query
    bad, compared = [], {}
    for m in entries:
        measure = m.trec_measure(k)
        base = re.sub(r"_(\{k\}|\d+)$", "", m.trec)  # "P_{k}", "P_10" -> "P"
        if base not in pytrec_eval.supported_measures:  # checked first: a malformed parameter can crash trec_eval
            bad.append(f"{m.name}: trec_eval has no measure {measure!r}")
            continue
        try:
            ref = pytrec_eval.RelevanceEvaluator(qrels, {measure}, relevance_level=thr).evaluate(
                trec_cut(run, k) if m.trec_cuts_run else run
            )
        except ValueError as err:
            bad.append(f"{m.name}: {err}")
            continue
        compared[m.name] = 0
        for qid in qrels:
            mine, theirs = ours.loc[qid, m.column(k)], ref.get(qid, {}).get(measure)
            if theirs is None:
                bad.append(f"{m.name}: trec_eval gave no {measure!r} for {qid}")
            elif np.isnan(mine):
                if theirs != 0.0:  # trec_eval says 0 where labkit says "undefined"
                    bad.append(f"{m.name} {qid}: undefined here, {measure} = {theirs}")
            elif abs(mine - theirs) > 1e-9:
                bad.append(f"{m.name} {qid}: {mine} here, {measure} = {theirs}")
            else:
                compared[m.name] += 1
    return bad, compared


WITH_TREC = [m for m in metrics.REGISTRY if m.trec is not None]


@pytest.mark.parametrize("thr", [1, 2])
@pytest.mark.parametrize("k", [1, 5, 10, 20])
def test_agrees_with_trec_eval(rng, k, thr):
    # every registered metric that names a trec_eval measure, read from the registry (no hand-kept map here)
    assert {m.name for m in WITH_TREC} >= {"P@k", "R@k", "RR@k", "hit@k", "nDCG@k"}
    run, qrels = random_case(rng)
    bad, compared = trec_disagreements(WITH_TREC, run, qrels, k, thr)
    assert not bad, f"{len(bad)} disagreements with trec_eval, e.g. {bad[:5]}"
    assert all(n > 50 for n in compared.values()) and set(compared) == {m.name for m in WITH_TREC}, compared


def test_dataframe_run_agrees_with_dict_run(rng):
    run, qrels = random_case(rng, n_queries=50)
    frame = pd.DataFrame([(q, d, s) for q, r in run.items() for d, s in r.items()], columns=["qid", "doc", "score"])
    qframe = pd.DataFrame([(q, d, g) for q, r in qrels.items() for d, g in r.items()], columns=["qid", "doc", "grade"])
    a = metrics.evaluate(run, qrels).per_query
    split_blocks = pd.concat([frame.iloc[::2], frame.iloc[1::2]])  # each query's rows in two separate blocks
    for shape, rows in [
        ("grouped", frame),
        ("shuffled", frame.sample(frac=1, random_state=1)),
        ("split", split_blocks),
    ]:
        b = metrics.evaluate(rows, qframe).per_query
        pd.testing.assert_frame_equal(a, b, obj=f"{shape} DataFrame run")


# ---------------------------------------------------------------- properties

grades_lists = st.lists(st.integers(min_value=-1, max_value=3), min_size=0, max_size=15)
ks = st.integers(min_value=1, max_value=20)


@settings(max_examples=200, deadline=None)
@given(grades_lists, grades_lists, ks, st.integers(min_value=1, max_value=3))
def test_all_metrics_in_unit_interval(rels, unretrieved, k, thr):
    r = metrics.ranking_metrics(rels, k, thr, unretrieved, idcg="all_judged")
    for name in ("P@k", "RR@k", "hit@k", "nDCG@k"):
        assert 0.0 <= r[name] <= 1.0 + 1e-12
    assert r["R@k"] is None or 0.0 <= r["R@k"] <= 1.0
    assert 0.0 <= metrics.ndcg_at_k(rels, k) <= 1.0 + 1e-12


@settings(max_examples=200, deadline=None)
@given(grades_lists, ks)
def test_ideal_order_gives_ndcg_one(rels, k):
    ideal = sorted(rels, reverse=True)
    if any(g > 0 for g in ideal[:k]):
        assert metrics.ndcg_at_k(ideal, k) == pytest.approx(1.0)
        assert metrics.ndcg_at_k(ideal, k, all_grades=rels) == pytest.approx(1.0)


@settings(max_examples=200, deadline=None)
@given(grades_lists, st.integers(min_value=0, max_value=5), st.integers(min_value=1, max_value=3))
def test_recall_never_falls_as_k_grows(rels, extra_relevant, thr):
    n_rel = sum(g >= thr for g in rels) + extra_relevant
    values = [metrics.recall_at_k(rels, k, n_rel, thr) for k in range(1, len(rels) + 3)]
    if n_rel == 0:
        assert all(v is None for v in values)
    else:
        assert values == sorted(values)


@settings(max_examples=200, deadline=None)
@given(grades_lists, ks, st.integers(min_value=1, max_value=3))
def test_precision_times_k_is_hits(rels, k, thr):
    hits = sum(g >= thr for g in rels[:k])
    assert metrics.precision_at_k(rels, k, thr) * k == pytest.approx(hits)
