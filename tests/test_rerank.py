"""Stage 2: rerank() refuses what it cannot do honestly; the learned reranker learns an order, guards its features."""

from __future__ import annotations

import math

import numpy as np
import pytest

from labkit.measures.stats import compare
from labkit.retrieval import rerank


def test_rerank_sorts_by_score_and_keeps_stage_one_order_on_ties():
    assert rerank.rerank(["a", "b", "c", "d"], [0.1, 0.9, 0.9, 0.5]) == ["b", "c", "d", "a"]
    assert rerank.rerank(["a", "b", "c", "d"], np.array([1, 3, 2, 0], dtype=np.float32), k2=2) == ["b", "c"]


@pytest.mark.parametrize(
    ("cands", "scores", "k2", "message"),
    [
        (["a", "b"], [1.0], None, "scores has 1 values for 2 candidates"),
        (["a", "b"], [1.0, float("nan")], None, r"scores\[1\] is nan.*'b'"),
        (["a", "b"], [math.inf, 1.0], None, r"scores\[0\] is inf"),
        (["a", "b"], [True, 1.0], None, r"scores\[0\]"),
        (["a", "b"], "12", None, "list of numbers"),
        ([], [], None, "candidates"),
        (["a", "a"], [1.0, 2.0], None, "candidates"),
        (["a", "b"], [1.0, 2.0], 3, r"k2 \(3\) must be <= k1 \(2\)"),
        (["a", "b"], [1.0, 2.0], 0, "k2 must be >= 1"),
    ],
)
def test_rerank_refuses_with_a_message_naming_the_argument(cands, scores, k2, message):
    with pytest.raises(ValueError, match=message):
        rerank.rerank(cands, scores, k2)


def test_check_depths():
    assert rerank.check_depths(20, 3, 542) == (20, 3)
    with pytest.raises(ValueError, match=r"k2 \(10\) must be <= k1 \(5\)"):
        rerank.check_depths(5, 10)
    with pytest.raises(ValueError, match=r"k1 \(600\) must be <= 542"):
        rerank.check_depths(600, 3, 542)


def _toy(seed: int, n_queries: int = 40, n_cands: int = 12):
    """Candidates whose grade is set by the second feature; the first feature is noise."""
    rng = np.random.default_rng(seed)
    rows, grades = [], []
    for _ in range(n_queries):
        signal = rng.random(n_cands)
        rows.append([[float(rng.random()), float(s), float(rng.integers(50, 150))] for s in signal])
        grades.append([int(3 * s > 2.2) + int(3 * s > 2.7) for s in signal])
    return rows, grades


def _ndcg3(ranked_grades):
    dcg = sum(g / math.log2(i + 2) for i, g in enumerate(ranked_grades[:3]))
    ideal = sorted(ranked_grades, reverse=True)
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal[:3]))
    return dcg / idcg if idcg else 0.0


def test_the_learned_reranker_learns_the_order_on_held_out_queries():
    names = ("noise", "signal", "length")
    rows, grades = _toy(1)
    model = rerank.LambdaRanker(rounds=50).fit(rows, grades, names)
    test_rows, test_grades = _toy(2)
    before, after = [], []
    for r, g in zip(test_rows, test_grades, strict=True):
        ids = [str(i) for i in range(len(r))]
        order = rerank.rerank(ids, model.scores(r, names))
        before.append(_ndcg3(g))
        after.append(_ndcg3([g[int(i)] for i in order]))
    d = compare.diff_ci(after, before)
    assert d["low"] > 0.2, d
    assert "50 trees on 3 features" in repr(model)


def test_scoring_refuses_features_it_was_not_trained_on():
    rows, grades = _toy(3, 10)
    model = rerank.LambdaRanker(rounds=5).fit(rows, grades, ("noise", "signal", "length"))
    with pytest.raises(ValueError, match=r"unknown \['title'\], missing \['length'\]"):
        model.scores(rows[0], ("noise", "signal", "title"))
    with pytest.raises(ValueError, match="has 2 features"):
        model.scores([r[:2] for r in rows[0]], ("noise", "signal", "length"))
    with pytest.raises(ValueError, match="not fitted"):
        rerank.LambdaRanker().scores(rows[0], ("noise", "signal", "length"))


@pytest.mark.parametrize(
    ("grades", "message"),
    [([[0] * 12] * 10, "all 0"), ([[5] * 12] * 10, "whole numbers 0-3"), ([[0] * 12] * 9, "one grade per candidate")],
)
def test_fit_refuses_bad_grades(grades, message):
    rows, _ = _toy(4, 10)
    with pytest.raises(ValueError, match=message):
        rerank.LambdaRanker(rounds=5).fit(rows, grades, ("noise", "signal", "length"))


def test_paired_newcombe_matches_the_published_example_and_never_collapses():
    # Fagerland, Lydersen & Laake, Statistical Analysis of Contingency Tables (2017), ch. 8; the example of the
    # contingencytables R package's tests: table [[59, 6], [16, 80]], estimate -0.0621, 95% CI -0.1186 to -0.0046.
    a = [1] * 59 + [1] * 6 + [0] * 16 + [0] * 80
    b = [1] * 59 + [0] * 6 + [1] * 16 + [0] * 80
    d, low, high = compare.paired_newcombe(a, b)
    assert (round(d, 4), round(low, 4), round(high, 4)) == (-0.0621, -0.1186, -0.0046)
    d, low, high = compare.paired_newcombe([1] * 30 + [0] * 9, [1] * 30 + [0] * 9)
    assert d == 0 and low < -0.01 and high > 0.01
    # uncorrelated pairs (a*d = b*c): the interval of two independent proportions
    x = [1] * 4 + [1] * 2 + [0] * 2 + [0] * 1
    y = [1] * 4 + [0] * 2 + [1] * 2 + [0] * 1
    assert compare.paired_newcombe(x, y) == pytest.approx(compare.newcombe(6, 9, 6, 9))
    with pytest.raises(ValueError, match=r"a\[0\] is 2"):
        compare.paired_newcombe([2, 0], [1, 0])
    with pytest.raises(ValueError, match="a has 2 items and b 3"):
        compare.paired_newcombe([1, 0], [1, 0, 1])
