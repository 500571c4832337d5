"""labkit.measures.fusion: the source chapter's RRF printout, no mutation, properties, bad input; the RRF credit
plot."""

import copy

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labkit.data.toys import RRF_BM25 as BM25
from labkit.data.toys import RRF_DENSE as DENSE
from labkit.measures import fusion
from labkit.measures.fusion import combsum, explain_rrf, fuse_runs, rrf
from labkit.ui.plots import plot_rrf_credit


def test_source_chapter_printout():
    fused, s = rrf([BM25, DENSE])
    lines = [str(fused[:5])] + [f"{d} {round(s[d], 5)}" for d in fused[:5]]
    assert lines == [
        "['D7', 'D4', 'D2', 'D3', 'D9']",
        "D7 0.03227",
        "D4 0.03202",
        "D2 0.03151",
        "D3 0.01613",
        "D9 0.01587",
    ]


def test_inputs_are_not_mutated_and_results_are_new_objects():
    rankings = [list(BM25), list(DENSE)]
    before = copy.deepcopy(rankings)
    fused, scores = rrf(rankings, top_n=3)
    assert rankings == before
    fused.append("X")
    scores["X"] = 1.0
    again, _ = rrf(rankings, top_n=3)
    assert again == ["D7", "D4", "D2"]


def test_weights_and_top_n():
    fused, s = rrf([BM25, DENSE], weights=[0.2, 1.0], top_n=2)
    assert fused == ["D4", "D7"]
    assert s["D4"] == pytest.approx(0.2 / 64 + 1 / 61)
    assert rrf([BM25, DENSE], weights=[1, 0])[0][:5] == BM25  # weight 0 switches a retriever off


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda: rrf([["a", "b", "a"]]), "lists 'a' more than once"),
        (lambda: rrf([BM25, DENSE], weights=[1]), "weights has 1 values for 2 rankings"),
        (lambda: rrf([BM25], weights=[-1]), "weights must be numbers >= 0"),
        (lambda: rrf([BM25], c=-5), "c must be a number >= 0"),
        (lambda: rrf([BM25], top_n=0), "top_n must be"),
        (lambda: rrf([]), "non-empty list"),
        (lambda: rrf(["D1"]), "must be a list of document ids"),
        (lambda: fuse_runs([]), "runs is empty"),
        (lambda: combsum([]), "non-empty"),
    ],
)
def test_bad_input(call, words):
    with pytest.raises(ValueError) as info:
        call()
    assert words in str(info.value)


rankings_st = st.lists(
    st.lists(st.sampled_from([f"d{i}" for i in range(12)]), unique=True, min_size=0, max_size=8), min_size=1, max_size=4
)


@settings(max_examples=200, deadline=None)
@given(rankings_st, st.randoms(use_true_random=False), st.integers(0, 100))
def test_permuting_the_retrievers_changes_nothing(rankings, rnd, c):
    shuffled = list(rankings)
    rnd.shuffle(shuffled)
    a, sa = rrf(rankings, c=c)
    b, sb = rrf(shuffled, c=c)
    assert a == b and sa.keys() == sb.keys()
    assert all(sa[d] == pytest.approx(sb[d]) for d in sa)


@settings(max_examples=200, deadline=None)
@given(rankings_st)
def test_every_document_is_fused_once_and_scores_are_bounded(rankings):
    fused, s = rrf(rankings, c=60)
    assert sorted(fused) == sorted({d for r in rankings for d in r})
    assert all(0 < s[d] <= len(rankings) / 61 for d in fused)
    assert [s[d] for d in fused] == sorted((s[d] for d in fused), reverse=True)


def test_fuse_runs_and_combsum():
    runs = [{"q1": BM25, "q2": ["a"]}, {"q1": DENSE}]
    fused = fuse_runs(runs, top_n=3)
    assert fused == {"q1": ["D7", "D4", "D2"], "q2": ["a"]}
    order, total = combsum([{"a": 10.0, "b": 0.0}, {"b": 0.9, "a": 0.1, "c": 0.5}])
    assert order[0] == "a" and total["a"] == pytest.approx(1.0) and total["b"] == pytest.approx(1.0)


def test_exact_ties_survive_any_order_of_the_rankings():
    """Found by hypothesis: 1/3 * 3 + 1/2 and 1/2 * 3 tie exactly but not in floating point, order-dependently."""
    rankings = [["d0", "d2", "d1"], ["d0", "d2", "d1"], ["d0", "d2", "d1"], ["d0", "d1"]]
    for order in (rankings, rankings[::-1], [rankings[3], *rankings[:3]]):
        assert rrf(order, c=0)[0] == ["d0", "d1", "d2"]


def test_explain_rrf_on_the_source_toy():
    table = explain_rrf({"bm25": BM25, "dense": DENSE}, top_n=3, also=["D8", "D0"])
    assert list(table.index) == ["D7", "D4", "D2", "D8", "D0"]  # the top 3, then the extra ids where they landed
    assert table.loc["D7", "bm25 rank"] == 1 and table.loc["D7", "dense rank"] == 3
    assert table.loc["D7", "bm25 gives"] == pytest.approx(1 / 61) and table.loc["D7", "score"] == pytest.approx(
        1 / 61 + 1 / 63
    )
    assert table.loc["D8", "fused rank"] == 6 and pd.isna(table.loc["D8", "bm25 rank"])
    assert table.loc["D8", "bm25 gives"] == 0 and table.loc["D8", "score"] == pytest.approx(1 / 64)
    assert pd.isna(table.loc["D0", "fused rank"]) and table.loc["D0", "score"] == 0  # in no list
    assert (table["bm25 gives"] + table["dense gives"]).tolist() == pytest.approx(table["score"].tolist())
    scores = rrf([BM25, DENSE], c=5, weights=[2, 1])[1]
    weighted = explain_rrf({"bm25": BM25, "dense": DENSE}, c=5, weights=[2, 1], top_n=7)
    assert weighted["score"].to_dict() == pytest.approx(scores)


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda: explain_rrf([BM25, DENSE]), "rankings must be a dict"),
        (lambda: explain_rrf({}), "rankings is empty"),
        (lambda: explain_rrf({"": BM25}), "retriever names"),
        (lambda: explain_rrf({"bm25": BM25}, also="D7"), "also must be a list"),
        (lambda: explain_rrf({"bm25": BM25}, top_n=0), "top_n must be"),
        (lambda: explain_rrf({"bm25": BM25}, c=-1), "c must be a number >= 0"),
        (lambda: explain_rrf({"bm25": ["a", "a"]}), "more than once"),
        (lambda: plot_rrf_credit([]), "cs must not be empty"),
        (lambda: plot_rrf_credit([-1]), "cs[0] must be >= 0"),
        (lambda: plot_rrf_credit(max_rank=1), "max_rank must be >= 2"),
    ],
)
def test_explain_rrf_and_plot_rrf_credit_bad_input(call, words):
    with pytest.raises(ValueError) as info:
        call()
    assert words in str(info.value)


def test_plot_rrf_credit_draws_one_line_per_c_in_each_panel():
    fig = plot_rrf_credit((1, 60), max_rank=10)
    assert [len(ax.get_lines()) for ax in fig.axes] == [2, 2]
    assert fig.axes[1].get_lines()[1].get_ydata()[-1] == pytest.approx(61 / 70)


def test_hybrid_sweep_equals_hybrid_table_and_fuse_runs_on_seeded_runs_with_ties():
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(42)
    docs = [f"d{i:02d}" for i in range(40)]
    qids = [f"q{i}" for i in range(30)]
    # three runs, some queries missing from one, short lists; qrels with grades 0-3 and one query with nothing
    runs = {name: {q: list(rng.choice(docs, size=int(rng.integers(0, 25)), replace=False)) for q in qids
                   if not (name == "c" and q in ("q3", "q4"))} for name in ("a", "b", "c")}  # fmt: skip
    qrels = {q: {d: int(rng.integers(0, 4)) for d in rng.choice(docs, size=6, replace=False)} for q in qids}
    qrels["q7"] = {"d00": 0}
    groups = {q: ("x", "y", "z")[i % 3] for i, q in enumerate(qids)}
    sweep = fusion.HybridSweep(runs, qrels, groups, k=5, metrics=("R@5", "nDCG@5", "P@3", "hit@2", "R@10"))
    # c = 0 with equal weights ties documents at equal ranks in two lists: rrf's order must hold exactly
    for c, weights in [(60, None), (0, [1, 1, 1]), (1, [1, 0, 1]), (3, [0.5, 2, 0]), (200, [0.1, 0.1, 0.1])]:
        want = fusion.hybrid_table(runs, qrels, groups, c=c, weights=weights, k=5,
                                   metrics=("R@5", "nDCG@5", "P@3", "hit@2", "R@10"))  # fmt: skip
        pd.testing.assert_frame_equal(sweep.table(c, weights), want, rtol=1e-12, atol=1e-12)
        fused = fusion.fuse_runs(list(runs.values()), c=c, weights=weights, top_n=5)
        assert sweep.fused(c, weights) == {q: fused.get(q, []) for q in sorted(qids)}, (c, weights)
    with pytest.raises(ValueError, match="R@m, P@m, hit@m or nDCG@m"):
        fusion.HybridSweep(runs, qrels, groups, metrics=("RR@10",))
