"""labkit.measures.metrics against hostile input: an error that names what to fix, or a correct answer.

Never a plausible wrong number (NaN, 0 for everything, a query filed under 'None'), never a bare
KeyError/IndexError/pandas error from deep inside. First hand-picked examples, one by one; then
hypothesis feeds the public functions generated bad values of one kind at a time (non-finite numbers,
strings where lists belong, bools, cutoffs that are not whole numbers >= 1, bad thresholds, None and
duplicate ids, unknown metric names, messy runs) and asserts a ``ValueError``/``TypeError`` whose message
names the argument, or the answer the same input gives when spelled correctly.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labkit.data.toys import RUNNING_GRADES as RELS
from labkit.measures import metrics

FAST = settings(derandomize=True, deadline=None, max_examples=40, database=None)

RUN = {"q1": ["a", "b", "c"], "q2": ["x", "a"]}
QRELS = {"q1": {"a": 2, "c": 1, "z": 3}, "q2": {"a": 1}}
GROUPS = {"q1": "hr", "q2": "it"}


def raises_naming(call, *names: str) -> str:
    """``call()`` must raise a ValueError/TypeError whose message contains one of ``names``."""
    with pytest.raises((ValueError, TypeError)) as info:
        call()
    assert not isinstance(info.value, KeyError | IndexError), repr(info.value)
    assert any(n in str(info.value) for n in names), f"the message names none of {names}: {info.value}"
    return str(info.value)


# ---------------------------------------------------------------- hand-picked examples


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: metrics.ndcg_at_k([math.inf, 1], 2), "rels[0]"),
        (lambda: metrics.ndcg_at_k(RELS, 5, all_grades=[*RELS, -math.inf]), "all_grades[5]"),
        (lambda: metrics.dcg([1e308] * 3), "rels"),  # the sum overflows: DCG itself cannot be given
        (lambda: metrics.ranking_metrics([1e308] * 3, 3), "rels"),
        (lambda: metrics.hit_at_k(RELS, 5, thr=math.inf), "thr"),
        (lambda: metrics.precision_at_k(RELS, 5, thr=math.nan), "thr"),
        (lambda: metrics.evaluate(RUN, QRELS, thr=math.inf), "thr"),
        (lambda: metrics.precision_at_k("02031", 5), "rels"),
        (lambda: metrics.ranking_metrics(RELS, 5, unretrieved="2"), "unretrieved"),
        (lambda: metrics.recall_at_k(RELS, 5, n_relevant_total="4"), "n_relevant_total"),
        (lambda: metrics.evaluate({None: ["a"]}, QRELS), "run"),
        (lambda: metrics.evaluate(RUN, {None: {"a": 1}}), "qrels"),
        (lambda: metrics.evaluate({"q1": ["a"], 1: ["a"], "1": ["b"]}, QRELS), "run"),
        (lambda: metrics.evaluate_by_group(RUN, QRELS, {"q1": "all", "q2": "it"}), "groups"),
        (lambda: metrics.evaluate_by_group(RUN, QRELS, {"q1": None, "q2": "it"}), "groups"),
        (lambda: metrics.evaluate_by_group(RUN, QRELS, ["hr", "it"]), "groups"),
        (lambda: metrics.compare_runs({"bm25": RUN}, QRELS, GROUPS, metrics="R@x"), "metrics"),
        (lambda: metrics.compare_runs({}, QRELS, GROUPS), "runs"),
        (lambda: metrics.compare_runs({"bm25": {"q1": "abc"}}, QRELS, GROUPS), "runs['bm25']"),
        (lambda: metrics.evaluate(RUN, QRELS, metrics=("MAP@10",)), "metrics"),
        (lambda: metrics.evaluate(RUN, QRELS, metrics=("P@5", "P@5")), "metrics"),
        (lambda: metrics.evaluate(RUN, QRELS, metrics=5), "metrics"),
        (lambda: metrics.evaluate(RUN, QRELS, idcg=np.array(["retrieved"])), "idcg"),
        (lambda: metrics.evaluate({"q1": {"a": math.inf}}, QRELS), "run"),
        (lambda: metrics.evaluate(RUN, {"q1": {"a": math.inf}}), "qrels"),
        (lambda: metrics.evaluate({"q1": ["a", True]}, QRELS), "run"),
        (lambda: metrics.evaluate({"q1": [["a"]]}, QRELS), "run"),
        (
            lambda: metrics.evaluate(pd.DataFrame({"qid": ["q1", pd.NA], "doc": ["a", "b"], "score": [1, 2]}), QRELS),
            "run",
        ),
        (
            lambda: metrics.evaluate(
                pd.DataFrame({"qid": ["q1", "q1"], "doc": ["a", "b"], "score": pd.array([1.0, None], "Float64")}),
                QRELS,
            ),
            "run",
        ),
        (
            lambda: metrics.evaluate(
                pd.DataFrame([["q1", "a", 1, 2]], columns=["qid", "doc", "score", "score"]), QRELS
            ),
            "run",
        ),
        (lambda: metrics.parse_metric(None), "name"),
        (lambda: metrics.precision_at_k(RELS, 10**12), "k"),
    ],
)
def test_hand_picked_examples_are_refused_by_name(call, name):
    raises_naming(call, name)


def test_hand_picked_examples_that_are_fine():
    assert metrics.precision_at_k(RELS, np.int64(5)) == metrics.precision_at_k(RELS, 5) == 0.6
    assert metrics.ndcg_at_k(RELS, np.int64(5), all_grades=np.array([*RELS, 2])) == metrics.ndcg_at_k(
        RELS, 5, [*RELS, 2]
    )
    assert metrics.ndcg_at_k([1e308] * 3, 2) == 1.0  # the overflow is avoided: nDCG is a ratio
    assert metrics.ndcg_at_k([1e308, 0, 1e308], 3) == pytest.approx(metrics.ndcg_at_k([1, 0, 1], 3))
    one = metrics.compare_runs({"bm25": RUN}, QRELS, GROUPS, metrics="R@3")  # one string is one metric
    pd.testing.assert_frame_equal(one, metrics.compare_runs({"bm25": RUN}, QRELS, GROUPS, metrics=("R@3",)))
    table = metrics.evaluate_by_group(RUN, QRELS, {"q1": "all", "q2": "it"}, total="overall")  # 'all' is fine then
    assert list(table.index) == ["all", "it", "overall"]
    assert metrics.evaluate({1: ["a"]}, {"1": {"a": 1}}).mean["RR@10"] == 1.0  # whole-number ids are read as text


# ---------------------------------------------------------------- generated bad values

finite_grades = st.lists(st.integers(min_value=-1, max_value=3), max_size=8)
non_finite = st.sampled_from([math.nan, math.inf, -math.inf, np.float64("nan"), np.float64("inf")])
not_a_list = st.one_of(st.text(max_size=6), st.binary(max_size=4), st.dictionaries(st.text(max_size=2), st.integers()))
not_a_number = st.one_of(st.booleans(), st.none(), st.text(max_size=3), st.just([1]), st.just(np.bool_(True)))
bad_k = st.one_of(
    st.integers(max_value=0),
    st.floats().filter(lambda x: not (math.isfinite(x) and x.is_integer() and x >= 1)),
    not_a_number,
)
bad_thr = st.one_of(st.floats(max_value=0), non_finite, not_a_number)

# every one-ranking function as f(rels, k, thr), with the name its ranking argument has in messages
ONE_RANKING = {
    "precision_at_k": lambda r, k, t: metrics.precision_at_k(r, k, t),
    "recall_at_k": lambda r, k, t: metrics.recall_at_k(r, k, len(r) if isinstance(r, list) else 5, t),
    "reciprocal_rank": lambda r, k, t: metrics.reciprocal_rank(r, k, t),
    "hit_at_k": lambda r, k, t: metrics.hit_at_k(r, k, t),
    "ndcg_at_k": lambda r, k, t: metrics.ndcg_at_k(r, k),
    "ranking_metrics": lambda r, k, t: metrics.ranking_metrics(r, k, t),
    "ranking_metrics all_judged": lambda r, k, t: metrics.ranking_metrics(r, k, t, (1,), "all_judged"),
    "dcg": lambda r, k, t: metrics.dcg(r),
}
one_ranking = st.sampled_from(sorted(ONE_RANKING))


@FAST
@given(one_ranking, finite_grades, non_finite, st.integers(min_value=0, max_value=8))
def test_a_non_finite_grade_is_refused(fn, rels, bad, where):
    at = min(where, len(rels))
    rels = [*rels[:at], bad, *rels[at:]]
    raises_naming(lambda: ONE_RANKING[fn](rels, 3, 1), f"rels[{at}]")


@FAST
@given(one_ranking, finite_grades, not_a_number, st.integers(min_value=0, max_value=8))
def test_a_grade_that_is_not_a_number_is_refused(fn, rels, bad, where):
    at = min(where, len(rels))
    rels = [*rels[:at], bad, *rels[at:]]
    raises_naming(lambda: ONE_RANKING[fn](rels, 3, 1), f"rels[{at}]")


@FAST
@given(one_ranking, not_a_list)
def test_a_string_or_dict_for_the_ranking_is_refused(fn, rels):
    raises_naming(lambda: ONE_RANKING[fn](rels, 3, 1), "rels")


@FAST
@given(finite_grades, st.one_of(non_finite, not_a_number), st.sampled_from(["all_grades", "unretrieved"]))
def test_bad_judged_grades_are_refused(rels, bad, arg):
    if arg == "all_grades":
        raises_naming(lambda: metrics.ndcg_at_k(rels, 3, all_grades=[*rels, bad]), "all_grades[")
    else:
        raises_naming(lambda: metrics.ranking_metrics(rels, 3, unretrieved=[bad]), "unretrieved[0]")


@FAST
@given(st.sampled_from(sorted(set(ONE_RANKING) - {"dcg"})), finite_grades, bad_k)
def test_a_cutoff_that_is_not_a_whole_number_from_1_is_refused(fn, rels, k):
    raises_naming(lambda: ONE_RANKING[fn](rels, k, 1), "k")


@FAST
@given(
    st.sampled_from(sorted(set(ONE_RANKING) - {"dcg"})),
    finite_grades,
    st.integers(min_value=1, max_value=12),
    st.sampled_from([np.int64, np.int32, np.uint8, float, np.float64]),
)
def test_a_whole_number_cutoff_of_any_type_is_accepted(fn, rels, k, kind):
    assert ONE_RANKING[fn](rels, kind(k), 1) == ONE_RANKING[fn](rels, k, 1)


@FAST
@given(st.sampled_from(sorted(set(ONE_RANKING) - {"dcg", "ndcg_at_k"})), finite_grades, bad_thr)
def test_a_threshold_that_is_not_a_finite_positive_number_is_refused(fn, rels, thr):
    raises_naming(lambda: ONE_RANKING[fn](rels, 3, thr), "thr")


@FAST
@given(
    st.lists(st.floats(min_value=1e300, max_value=1.7e308), min_size=1, max_size=6),
    st.lists(st.integers(min_value=0, max_value=1), max_size=6),
    st.integers(min_value=1, max_value=8),
)
def test_huge_grades_give_the_ndcg_of_their_scaled_down_copy(big, small, k):
    rels = [x for pair in zip(big, small, strict=False) for x in pair] + big[len(small) :]
    top = max(rels)
    value = metrics.ndcg_at_k(rels, k)
    assert 0.0 <= value <= 1.0
    assert value == pytest.approx(metrics.ndcg_at_k([x / top for x in rels], k))
    assert metrics.ndcg_at_k(rels, k, all_grades=rels + big) == pytest.approx(
        metrics.ndcg_at_k([x / top for x in rels], k, all_grades=[x / top for x in rels + big])
    )


# ---------------------------------------------------------------- a whole run

bad_ids = st.one_of(st.none(), st.floats(), st.booleans(), st.just(""), st.tuples(st.text(max_size=2)))


@FAST
@given(bad_ids, st.sampled_from(["run", "qrels"]), st.sampled_from(["dict", "frame"]))
def test_a_query_id_that_is_not_text_is_refused(qid, where, shape):
    run, qrels = dict(RUN), dict(QRELS)
    if where == "run":
        run[qid] = ["a"]
    else:
        qrels[qid] = {"a": 1}
    if shape == "frame":
        rows = [(q, d, -i) for q, r in run.items() for i, d in enumerate(r)]
        run = pd.DataFrame(rows, columns=["qid", "doc", "score"])
    raises_naming(lambda: metrics.evaluate(run, qrels), where)


@FAST
@given(bad_ids, st.sampled_from(["run", "qrels"]))
def test_a_doc_id_that_is_not_text_is_refused(doc, where):
    run, qrels = {q: list(r) for q, r in RUN.items()}, {q: dict(j) for q, j in QRELS.items()}
    if where == "run":
        run["q1"].append(doc)
    else:
        qrels["q1"][doc] = 1
    raises_naming(lambda: metrics.evaluate(run, qrels), where)


@FAST
@given(st.sampled_from(["a", "b", "c"]), st.integers(min_value=0, max_value=3), st.sampled_from(["list", "frame"]))
def test_a_document_listed_twice_is_refused(doc, at, shape):
    ranking = ["a", "b", "c"]
    ranking.insert(at, doc)
    run = {"q1": ranking}
    if shape == "frame":
        run = pd.DataFrame({"qid": "q1", "doc": ranking, "score": range(len(ranking), 0, -1)})
    raises_naming(lambda: metrics.evaluate(run, QRELS), "run")


@FAST
@given(st.sampled_from(["a", "c", "z"]))
def test_a_document_judged_twice_is_refused(doc):
    rows = [(q, d, g) for q, j in QRELS.items() for d, g in j.items()] + [("q1", doc, 0)]
    raises_naming(lambda: metrics.evaluate(RUN, pd.DataFrame(rows, columns=["qid", "doc", "grade"])), "qrels")


@FAST
@given(st.one_of(non_finite, not_a_number), st.sampled_from(["run", "qrels"]))
def test_a_score_or_grade_that_is_not_a_finite_number_is_refused(bad, where):
    run = {"q1": {"a": 2.0, "b": 1.0}}
    qrels = {"q1": {"a": 1, "b": 2}}
    (run if where == "run" else qrels)["q1"]["b"] = bad
    raises_naming(lambda: metrics.evaluate(run, qrels), where)


@FAST
@given(bad_thr, st.sampled_from(["evaluate", "evaluate_by_group", "compare_runs"]))
def test_a_bad_threshold_is_refused_by_the_batch_functions(thr, fn):
    call = {
        "evaluate": lambda: metrics.evaluate(RUN, QRELS, thr=thr),
        "evaluate_by_group": lambda: metrics.evaluate_by_group(RUN, QRELS, GROUPS, thr=thr),
        "compare_runs": lambda: metrics.compare_runs({"bm25": RUN}, QRELS, GROUPS, thr=thr),
    }[fn]
    raises_naming(call, "thr")


metric_names = st.one_of(
    st.text(max_size=8),
    st.builds(
        lambda m, k: f"{m}@{k}", st.sampled_from(["nDCG", "p", "R", "MRR", "rr", "HIT", "MAP"]), st.integers(-2, 30)
    ),
)


@FAST
@given(metric_names, st.sampled_from(["evaluate", "compare_runs"]))
def test_a_metric_name_is_understood_or_refused_by_name(name, fn):
    try:
        kind, k = metrics.parse_metric(name)
    except ValueError as err:
        assert "name" in str(err)
        raises_naming(lambda: metrics.evaluate(RUN, QRELS, metrics=(name,)), "metrics")
        return
    if fn == "evaluate":
        res = metrics.evaluate(RUN, QRELS, metrics=name)  # one string is one metric
        expected = metrics.evaluate(RUN, QRELS, metrics=(f"{kind}@{k}",)).per_query[f"{kind}@{k}"]
        np.testing.assert_array_equal(res.per_query[name].to_numpy(), expected.to_numpy())
    else:
        table = metrics.compare_runs({"bm25": RUN}, QRELS, GROUPS, metrics=name)
        assert list(table.columns) == [(name, "bm25")]


@FAST
@given(st.text(max_size=5), st.sampled_from(["all", "overall"]))
def test_a_group_named_like_the_overall_row_is_refused(name, total):
    groups = {"q1": name, "q2": "it"}
    if name in ("", total):
        raises_naming(lambda: metrics.evaluate_by_group(RUN, QRELS, groups, total=total), "groups")
    else:
        table = metrics.evaluate_by_group(RUN, QRELS, groups, total=total)
        assert table.index[-1] == total and len(table) == len({name, "it"}) + 1


ids = st.one_of(st.sampled_from(["q1", "q2", "a", "b"]), st.integers(-1, 2), st.none(), st.floats(), st.booleans())
values = st.one_of(st.integers(-1, 3), st.floats(), st.none(), st.text(max_size=2), st.booleans())
rankings = st.one_of(st.dictionaries(ids, values, max_size=4), st.lists(ids, max_size=4), values)
messy = st.one_of(st.dictionaries(ids, rankings, max_size=3), values, st.lists(ids, max_size=3))


@settings(derandomize=True, deadline=None, max_examples=150, database=None)
@given(messy, messy)
def test_any_messy_run_and_qrels_give_an_answer_or_an_error_naming_them(run, qrels):
    try:
        res = metrics.evaluate(run, qrels, ("P@2", "R@2", "RR@3", "hit@1", "nDCG@3"))
    except ValueError as err:
        assert "run" in str(err) or "qrels" in str(err), str(err)
        return
    values = res.per_query.to_numpy()
    assert np.all(np.isnan(values) | ((values >= 0) & (values <= 1)))
    assert all(type(q) is str and q for q in res.per_query.index)
