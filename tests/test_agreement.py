"""labkit.measures.stats.agreement: kappa against statsmodels on seeded data, hand-worked cases, and bad input."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.inter_rater import aggregate_raters, cohens_kappa, fleiss_kappa

from labkit.measures import stats


def _table(a, b, cats):
    t = np.zeros((len(cats), len(cats)))
    for x, y in zip(a, b, strict=True):
        t[cats.index(x), cats.index(y)] += 1
    return t


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("weights, wt", [(None, None), ("linear", "linear"), ("quadratic", "quadratic")])
def test_cohen_kappa_matches_statsmodels(seed, weights, wt):
    rng = np.random.default_rng(seed)
    cats = [1, 2, 3, 4, 5]
    a = rng.integers(1, 6, 60).tolist()
    b = [x if rng.random() < 0.6 else int(rng.integers(1, 6)) for x in a]
    ref = cohens_kappa(_table(a, b, cats), wt=wt).kappa
    assert stats.cohen_kappa(a, b, labels=cats, weights=weights) == pytest.approx(ref, abs=1e-12)


def test_cohen_kappa_hand_worked():
    # 10 items, 8 agree; each rater says "yes" 5 times -> chance agreement 0.5 -> kappa (0.8 - 0.5) / 0.5 = 0.6
    a = ["yes"] * 5 + ["no"] * 5
    b = ["yes"] * 4 + ["no"] + ["yes"] + ["no"] * 4
    assert stats.cohen_kappa(a, b) == pytest.approx(0.6)


def test_high_raw_agreement_can_be_chance():
    # both raters say "supported" to 90%: raw agreement 0.82, kappa near 0
    a = ["s"] * 90 + ["u"] * 10
    b = ["s"] * 81 + ["u"] * 9 + ["s"] * 9 + ["u"] * 1
    rep = stats.kappa_report(a, b)
    assert rep["raw"] == pytest.approx(0.82)
    assert abs(rep["kappa"]) < 0.05
    assert rep["kappa_ci"][0] < 0 < rep["kappa_ci"][1]


def test_kappa_report_interval_holds_the_estimate_and_is_seeded():
    rng = np.random.default_rng(7)
    a = rng.choice(["s", "u", "c"], 80).tolist()
    b = [x if rng.random() < 0.7 else "u" for x in a]
    r1, r2 = stats.kappa_report(a, b), stats.kappa_report(a, b)
    assert r1 == r2
    assert r1["kappa_ci"][0] <= r1["kappa"] <= r1["kappa_ci"][1]
    assert r1["raw_ci"][0] <= r1["raw"] <= r1["raw_ci"][1]


@pytest.mark.parametrize("seed", range(5))
def test_fleiss_kappa_matches_statsmodels(seed):
    rng = np.random.default_rng(seed)
    truth = rng.choice(["a", "b", "c"], 40)
    ratings = [[t if rng.random() < 0.7 else str(rng.choice(["a", "b", "c"])) for _ in range(4)] for t in truth]
    codes = {"a": 0, "b": 1, "c": 2}
    table, _ = aggregate_raters(np.array([[codes[x] for x in r] for r in ratings]))
    assert stats.fleiss_kappa(ratings) == pytest.approx(fleiss_kappa(table), abs=1e-12)


def test_class_agreement_majority_ties_and_partial_items():
    labels = {
        "ana": {"i1": "s", "i2": "u", "i3": "s"},
        "bo": {"i1": "s", "i2": "s", "i3": "s"},
        "cy": {"i1": "s", "i2": "u", "i4": "u"},
    }
    out = stats.class_agreement(labels)
    assert out["raters"] == ["ana", "bo", "cy"]
    assert out["items"] == ["i1", "i2"] and out["partial"] == 2
    assert out["majority"] == {"i1": "s", "i2": "u", "i3": "s", "i4": "u"}
    assert out["per_item"][0]["item"] == "i2"  # the least agreed first
    labels["bo"]["i4"] = "s"
    assert "i4" in stats.class_agreement(labels)["ties"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["s", "u", "c"]), min_size=2, max_size=40))
def test_a_rater_agrees_perfectly_with_itself(labels):
    assert stats.cohen_kappa(labels, labels) == pytest.approx(1.0)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: stats.cohen_kappa(["s"], ["s", "u"]), "same items"),
        (lambda: stats.cohen_kappa([], []), "a"),
        (lambda: stats.cohen_kappa(["s", None], ["s", "u"]), "None"),
        (lambda: stats.cohen_kappa(["s"], ["u"], weights="cubic"), "weights"),
        (lambda: stats.cohen_kappa(["s"], ["x"], labels=["s", "u"]), "not in labels"),
        (lambda: stats.fleiss_kappa([["a", "b"], ["a"]]), "same number of ratings"),
        (lambda: stats.class_agreement({"ana": {"i": "s"}}), "at least 2 raters"),
    ],
)
def test_bad_input_names_the_argument(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_perfect_agreement_reports_no_collapsed_interval():
    rep = stats.kappa_report(["s", "u", "s", "c"] * 10, ["s", "u", "s", "c"] * 10)
    assert rep["kappa"] == 1 and rep["kappa_ci"] == (None, None)
    assert rep["raw_ci"][0] < 1 == rep["raw_ci"][1]
