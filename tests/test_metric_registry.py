"""labkit.measures.metrics.registry: one table of metrics, read by every place that turns a name into a number.

The trec_eval cross-check of every entry that names a trec_eval measure is ``test_metrics.test_agrees_with_trec_eval``;
here: that the cross-check can fail, the entries trec_eval lacks, names, and each entry's two formulas.
"""

import dataclasses

import numpy as np
import pandas as pd
import pytest
import pytrec_eval
from test_metrics import random_case, trec_cut, trec_disagreements  # tests/ is on the path

from labkit.data.toys import RUNNING_GRADES, RUNNING_UNRETRIEVED
from labkit.measures import fusion, metrics
from labkit.measures.metrics import registry

WITHOUT_TREC = {
    "DCG@k": "trec_eval has no unnormalised DCG (only ndcg, ndcg_cut, ndcg_rel, Rndcg)",
    "IDCG@k": "the ideal DCG is internal to trec_eval's ndcg measures, never printed",
}
"""Every registered metric that names no trec_eval measure, each with the reason: listed, not forgotten."""


def test_the_metrics_without_a_trec_eval_measure_are_listed_explicitly():
    assert {m.name for m in metrics.REGISTRY if m.trec is None} == set(WITHOUT_TREC)
    assert all(m.trec_measure(10) is None and not m.trec_cuts_run for m in metrics.REGISTRY if m.trec is None)


def test_every_entry_is_complete_and_named_once():
    names = [m.name for m in metrics.REGISTRY]
    assert names == list(metrics.METRIC_NAMES) == ["P@k", "R@k", "RR@k", "hit@k", "DCG@k", "IDCG@k", "nDCG@k"]
    spellings = [p.lower() for m in metrics.REGISTRY for p in (m.prefix, *m.aliases)]
    assert len(spellings) == len(set(spellings))
    for m in metrics.REGISTRY:
        assert m.family in registry.FAMILIES and callable(m.formula) and callable(m.batch)
        assert m.definition and "\n" not in m.definition and m.reference
        assert m.column(10) == m.name.replace("@k", "@10") and metrics.metric(m.column(7)) is m
        assert metrics.metric(m.name) is m and metrics.metric(m.name.upper()) is m
        with pytest.raises(dataclasses.FrozenInstanceError):
            m.name = "X@k"
    assert metrics.metric("MRR@10") is metrics.metric("RR@k")
    assert [metrics.metric(n).trec_measure(5) for n in ("P@k", "R@k", "RR@k", "hit@k", "nDCG@k")] == [
        "P_5", "recall_5", "recip_rank", "success_5", "ndcg_cut_5"]  # fmt: skip
    assert [m.name for m in metrics.REGISTRY if m.trec_cuts_run] == ["RR@k"]


@pytest.mark.parametrize(
    "name, wrong",
    [
        ("R@k", "P_{k}"),  # a valid measure, the wrong one
        ("P@k", "recall_{k}"),
        ("hit@k", "P_{k}"),
        ("RR@k", "success_{k}"),
        ("nDCG@k", "ndcg"),  # no cutoff: trec_eval's ideal is not cut at k
        ("nDCG@k", "P_{k}"),
        ("P@k", "P_10"),  # a fixed cutoff: right only at k = 10
        ("P@k", "precision_{k}"),  # no such measure
    ],
)
def test_a_wrong_trec_eval_name_fails_the_cross_check(rng, name, wrong):
    entry = dataclasses.replace(metrics.metric(name), trec=wrong)
    run, qrels = random_case(rng)
    assert trec_disagreements([metrics.metric(name)], run, qrels, 5, 1)[0] == []  # the registered name agrees
    bad, _ = trec_disagreements([entry], run, qrels, 5, 1)
    assert bad, f"{name} registered as trec_eval's {wrong!r} passed the cross-check"


def test_recip_rank_has_no_cutoff_so_the_cross_check_cuts_the_run(rng):
    run, qrels = random_case(rng)
    names = {"recip_rank"}
    ours = metrics.evaluate(run, qrels, ("RR@3",)).per_query["RR@3"]
    uncut = pytrec_eval.RelevanceEvaluator(qrels, names).evaluate(run)
    cut = pytrec_eval.RelevanceEvaluator(qrels, names).evaluate(trec_cut(run, 3))
    assert all(len(trec_cut(run, 3)[q]) == min(3, len(run[q])) for q in run)
    assert any(abs(ours[q] - uncut[q]["recip_rank"]) > 1e-9 for q in qrels)  # the uncut run: a relevant doc below 3
    assert all(ours[q] == pytest.approx(cut[q]["recip_rank"], abs=1e-9) for q in qrels)


@pytest.mark.parametrize(
    "name, words",
    [
        ("MAP@10", "unknown metric 'MAP@10'"),
        ("AP@5", "unknown metric"),
        ("nDCG", "unknown metric"),
        ("", "unknown metric"),
        ("P@k", "without its cutoff"),
        ("R@0", "k in 'R@0'"),
    ],
)
def test_an_unknown_name_raises_and_lists_the_registered_ones(name, words):
    for call in (lambda: metrics.evaluate({"q": ["a"]}, {"q": {"a": 1}}, (name,)), lambda: metrics.parse_metric(name)):
        with pytest.raises(ValueError) as info:
            call()
        assert words in str(info.value)
        if "unknown" in words:
            assert all(m.name in str(info.value) for m in metrics.REGISTRY)
    if name != "P@k":  # metric() takes "P@k" itself: the registered name
        with pytest.raises(ValueError, match=words):
            metrics.metric(name)
    with pytest.raises(ValueError, match="must name metrics"):
        metrics.metric(None)


@pytest.mark.parametrize("idcg", ["all_judged", "retrieved"])
def test_each_entry_scores_a_run_as_it_scores_each_ranking(rng, idcg):
    # the batch formula (evaluate) and the per-ranking formula (ranking_metrics) of every entry agree
    run, qrels = random_case(rng, n_queries=60)
    names = [m.column(k) for m in metrics.REGISTRY for k in (1, 4, 10)]
    ours = metrics.evaluate(run, qrels, names, thr=2, idcg=idcg).per_query
    for qid, scores in run.items():
        ranked = sorted(scores, key=lambda d: (scores[d], d), reverse=True)  # trec_eval's order
        rels = [qrels[qid].get(d, 0) for d in ranked]
        unretrieved = [g for d, g in qrels[qid].items() if d not in scores]
        for k in (1, 4, 10):
            one = metrics.ranking_metrics(rels, k, 2, unretrieved, idcg)
            for m in metrics.REGISTRY:
                value = m.formula(rels, k, 2, unretrieved, idcg)
                assert value == one[m.name]
                if value is None:
                    assert np.isnan(ours.loc[qid, m.column(k)])
                else:  # DCG sums in row order in a batch, in rank order here: equal to the last bits
                    assert ours.loc[qid, m.column(k)] == pytest.approx(value, rel=1e-12, abs=1e-15), (qid, m.name, k)


def test_dcg_of_a_run_refuses_an_overflow_by_naming_the_qrels():
    run, qrels = {"q": ["a", "b", "c"]}, {"q": {"a": 1e308, "b": 1e308, "c": 1e308}}
    for name in ("DCG@3", "IDCG@3"):
        with pytest.raises(ValueError, match="qrels: the .*DCG of these grades overflows"):
            metrics.evaluate(run, qrels, (name,))
    assert metrics.evaluate(run, qrels, ("nDCG@3",)).mean["nDCG@3"] == 1.0  # a ratio: scaled, not refused


def test_ranking_metrics_is_one_row_of_the_registry():
    row = metrics.ranking_metrics(RUNNING_GRADES, 5, 1, RUNNING_UNRETRIEVED, "all_judged")
    assert list(row) == list(metrics.METRIC_NAMES)
    assert row["nDCG@k"] == pytest.approx(row["DCG@k"] / row["IDCG@k"])
    assert row == {m.name: m.formula(RUNNING_GRADES, 5, 1, RUNNING_UNRETRIEVED, "all_judged") for m in metrics.REGISTRY}


def test_a_formula_checks_its_arguments_like_ranking_metrics():
    for m in metrics.REGISTRY:
        for args, words in [(("02", 5), "rels"), (([1], 0), "k"), (([1], 5, 0), "thr"), (([1], 5, 1, (), "x"), "idcg")]:
            with pytest.raises(ValueError, match=words):
                m.formula(*args)


def test_the_sweep_scores_through_the_registry():
    runs = {"a": {"q1": ["x", "y", "z"], "q2": ["y"]}, "b": {"q1": ["z", "x"], "q2": ["w", "y"]}}
    qrels = {"q1": {"x": 2, "z": 1}, "q2": {"y": 3, "v": 1}}
    groups = {"q1": "g", "q2": "h"}
    names = [m.column(2) for m in fusion.HybridSweep.SWEPT]
    sweep = fusion.HybridSweep(runs, qrels, groups, k=3, metrics=names)
    want = fusion.hybrid_table(runs, qrels, groups, k=3, metrics=names)
    pd.testing.assert_frame_equal(sweep.table(60), want, rtol=1e-12, atol=1e-12)
    assert set(fusion.HybridSweep.SWEPT) <= set(metrics.REGISTRY)
