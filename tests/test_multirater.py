"""labkit.measures.stats.multirater and .raters: Fleiss' kappa against statsmodels and Krippendorff's alpha against
the ``krippendorff`` package on seeded label sets with missing ratings, hand-worked tables, the rules for intervals
(all agree, too few, degenerate resamples), the per-item and per-rater tables, and simulated raters."""

import inspect
import math

import krippendorff
import numpy as np
import pytest
from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

from labkit.measures import stats


def _random_sets(n_sets=25, missing=0.25):
    """Seeded label sets: raters x items arrays of labels 1..k (NaN where a rater skipped), noisy copies of a truth."""
    rng = np.random.default_rng(42)
    for _ in range(n_sets):
        raters, items, k = int(rng.integers(2, 7)), int(rng.integers(10, 80)), int(rng.integers(2, 6))
        truth = rng.integers(1, k + 1, items)
        data = np.where(rng.random((raters, items)) < 0.6, truth, rng.integers(1, k + 1, (raters, items)))
        data = data.astype(float)
        data[rng.random((raters, items)) < missing] = np.nan
        yield data


# ---------------------------------------------------------------- against the reference implementations


@pytest.mark.parametrize("scale", ["nominal", "ordinal"])
def test_alpha_matches_the_krippendorff_package_with_missing_ratings(scale):
    diffs = []
    for data in _random_sets():
        ours = stats.krippendorff_alpha(data, scale)
        ref = krippendorff.alpha(reliability_data=data, level_of_measurement=scale)
        assert ours is not None
        diffs.append(abs(ours - ref))
        # the same ratings as {rater: {item: label}}, the skipped items simply absent
        by_rater = {f"r{r}": {f"i{i}": int(x) for i, x in enumerate(row) if not math.isnan(x)} for r, row in
                    enumerate(data)}  # fmt: skip
        assert stats.krippendorff_alpha(by_rater, scale) == pytest.approx(ours, abs=1e-12)
    assert max(diffs) < 1e-12, max(diffs)


def test_nominal_alpha_reads_text_labels_like_numbers():
    names = {1: "supported", 2: "partly", 3: "unsupported", 4: "contradicted", 5: "unclear"}
    for data in _random_sets(8):
        text = [[None if math.isnan(x) else names[int(x)] for x in row] for row in data]
        ref = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
        assert stats.krippendorff_alpha(text) == pytest.approx(ref, abs=1e-12)


def test_fleiss_matches_statsmodels_on_complete_sets():
    diffs = []
    for data in _random_sets(missing=0.0):
        table, _ = aggregate_raters(data.T.astype(int))
        ref = fleiss_kappa(table)
        diffs.append(abs(stats.fleiss_from_counts(table) - ref))
        rep = stats.fleiss_report(data, n_boot=200, min_items=5)
        diffs.append(abs(rep["value"] - ref))
        assert rep["left_out"].startswith("0 of")
    assert max(diffs) < 1e-12, max(diffs)


def test_fleiss_with_missing_ratings_uses_the_items_with_the_usual_count():
    for data in _random_sets(10, missing=0.15):
        sizes = (~np.isnan(data)).sum(axis=0)
        values, counts = np.unique(sizes[sizes >= 2], return_counts=True)
        m = max(zip(counts, values, strict=True))[1]  # the most common count, the larger on a tie
        kept = data[:, sizes == m]
        if kept.shape[1] < 5:
            continue
        rows = [[int(x) for x in col if not math.isnan(x)] for col in kept.T]
        table, _ = aggregate_raters(np.array(rows))
        rep = stats.fleiss_report(data, n_boot=200, min_items=5)
        assert rep["raters_per_item"] == m and rep["items"] == kept.shape[1]
        assert rep["value"] == pytest.approx(fleiss_kappa(table), abs=1e-12)
        assert rep["left_out"].startswith(f"{data.shape[1] - kept.shape[1]} of {data.shape[1]}")


# ---------------------------------------------------------------- hand-worked and published tables

# Fleiss (1971): 30 patients, 6 psychiatrists each (not the same six), 5 diagnoses; as in R irr's ``diagnoses``,
# where kappam.fleiss gives 0.4302445 (Fleiss reports 0.430).
# one string per patient, the six diagnoses (1-5) it received
DIAGNOSES = [[int(c) for c in row] for row in (
    "444444 222555 233335 555555 222444 113333 333355 113334 114444 555555 144444 124444 222333 144444 224445 "
    "333335 111455 111112 224444 133555 555555 244444 224555 114444 144445 222224 111155 224444 133333 555555"
).split()]  # fmt: skip


def test_fleiss_1971_diagnoses():
    counts = [[row.count(c) for c in range(1, 6)] for row in DIAGNOSES]
    assert stats.fleiss_from_counts(counts) == pytest.approx(0.4302445, abs=1e-7)
    rep = stats.fleiss_report(np.array(DIAGNOSES).T.tolist())  # raters x items
    assert rep["value"] == pytest.approx(0.4302445, abs=1e-7) and rep["raters_per_item"] == 6
    assert rep["ci"][0] < rep["value"] < rep["ci"][1] and rep["degenerate"] == 0


def test_three_raters_four_items_by_hand():
    #        ana bo cy   counts (a, b)
    # i1      a  a  a    (3, 0)   P_i = (9 + 0 - 3) / (3 * 2) = 1
    # i2      a  a  b    (2, 1)   P_i = (4 + 1 - 3) / 6 = 1/3
    # i3      b  b  b    (0, 3)   P_i = 1
    # i4      a  b  b    (1, 2)   P_i = 1/3
    # Fleiss: P_bar = 2/3; p_a = p_b = 6/12, P_e = 1/2; kappa = (2/3 - 1/2) / (1/2) = 1/3.
    # Krippendorff: each item adds n_c * (n_k - [c = k]) / (m - 1) to the coincidences: o_aa = 3 + 1 = 4,
    # o_bb = 3 + 1 = 4, o_ab = o_ba = 1 + 1 = 2; n_a = n_b = 6, n = 12.
    # alpha = 1 - (n - 1) * (o_ab + o_ba) / (n_a * n_b + n_b * n_a) = 1 - 11 * 4 / 72 = 7/18.
    # With two labels the ordinal distance is one constant, so ordinal alpha is 7/18 too.
    ratings = {"ana": {"i1": "a", "i2": "a", "i3": "b", "i4": "a"},
               "bo": {"i1": "a", "i2": "a", "i3": "b", "i4": "b"},
               "cy": {"i1": "a", "i2": "b", "i3": "b", "i4": "b"}}  # fmt: skip
    assert stats.fleiss_from_counts([[3, 0], [2, 1], [0, 3], [1, 2]]) == pytest.approx(1 / 3)
    assert stats.fleiss_report(ratings, min_items=4)["value"] == pytest.approx(1 / 3)
    assert stats.krippendorff_alpha(ratings) == pytest.approx(7 / 18)
    assert stats.krippendorff_alpha(ratings, "ordinal", labels=["a", "b"]) == pytest.approx(7 / 18)


def test_ordinal_alpha_with_missing_ratings_by_hand():
    #        r1 r2 r3
    # i1      1  1  1   m = 3: o_11 += 3 * 2 / 2 = 3
    # i2      1  2  -   m = 2: o_12 = o_21 += 1
    # i3      3  3  2   m = 3: o_33 += 2 * 1 / 2 = 1, o_23 = o_32 += 2 * 1 / 2 = 1
    # i4      2  -  -   one rating: nothing to pair, no part in alpha
    # n_1 = 4, n_2 = 2, n_3 = 2, n = 8.
    # nominal: observed off-diagonal 4; expected 2 * (4*2 + 4*2 + 2*2) / 7 = 40/7; alpha = 1 - 4 * 7 / 40 = 0.3
    # ordinal: delta_12 = (n_1 + n_2 - (n_1 + n_2) / 2)^2 = 9, delta_23 = 4, delta_13 = (8 - 3)^2 = 25;
    # observed 2 * (9 + 4) = 26; expected 2 * (8*9 + 8*25 + 4*4) / 7 = 576/7; alpha = 1 - 26 * 7 / 576 = 197/288
    data = [[1, 1, 3, 2], [1, 2, 3, None], [1, None, 2, None]]
    assert stats.krippendorff_alpha(data) == pytest.approx(0.3)
    assert stats.krippendorff_alpha(data, "ordinal") == pytest.approx(197 / 288)
    nan = [[np.nan if x is None else x for x in row] for row in data]
    assert krippendorff.alpha(reliability_data=nan, level_of_measurement="ordinal") == pytest.approx(197 / 288)


def test_krippendorff_2011_example():
    # Krippendorff (2011), "Computing Krippendorff's alpha-reliability": 4 observers, 12 units, missing values;
    # nominal alpha 0.743 as published; ordinal as the krippendorff package computes it
    data = [[1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None], [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
            [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None], [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None]]  # fmt: skip
    assert stats.krippendorff_alpha(data) == pytest.approx(0.743, abs=5e-4)
    assert stats.krippendorff_alpha(data, "ordinal") == pytest.approx(0.8153875, abs=1e-7)
    rep = stats.alpha_report(data, min_items=5)
    assert rep["items"] == 11 and rep["left_out"].startswith("1 of 12")


# ---------------------------------------------------------------- the rules for intervals and missing figures


def test_every_rater_agreeing_gives_the_n_of_n_bound_never_1_1():
    items = {f"i{i:02d}": "s" if i % 2 else "u" for i in range(20)}
    ratings = {r: dict(items) for r in ("ana", "bo", "cy", "dee")}
    w = stats.wilson(20, 20)[1]
    kappa = stats.fleiss_report(ratings)
    # Fleiss: chance agreement (1/2)^2 + (1/2)^2 = 1/2
    assert kappa["value"] == 1 and kappa["ci"] == pytest.approx(((w - 0.5) / 0.5, 1.0))
    # alpha: chance agreement from the 80 pairable values, 40 of each label: 2 * 40 * 39 / (80 * 79)
    a_e = 2 * 40 * 39 / (80 * 79)
    for scale in ("nominal", "ordinal"):
        alpha = stats.alpha_report(ratings, scale, labels=["u", "s"])
        assert alpha["value"] == 1 and alpha["ci"] == pytest.approx(((w - a_e) / (1 - a_e), 1.0))
    for rep in (kappa, alpha):
        assert rep["ci"][0] < 1 and "unanimous" in rep["method"] and "20 of 20" in rep["method"]
        assert rep["degenerate"] is None and rep["why"] is None


def test_one_label_everywhere_gives_a_sentence_not_a_number():
    ratings = [["s"] * 12] * 3
    for rep in (stats.fleiss_report(ratings), stats.alpha_report(ratings)):
        assert rep["value"] is None and rep["ci"] is None and "same label" in rep["why"]
    assert stats.krippendorff_alpha(ratings) is None
    assert stats.fleiss_from_counts([[3, 0]] * 12) is None


def test_too_few_raters_or_items_give_a_sentence_not_a_number():
    one = stats.alpha_report({"ana": {f"i{i}": "s" for i in range(20)}})
    assert one["value"] is None and "only 1 rater" in one["why"]
    few = [["s", "u", "s", "u", "s"], ["s", "u", "u", "u", "s"]]
    for rep in (stats.fleiss_report(few), stats.alpha_report(few)):
        assert rep["value"] is None and rep["ci"] is None and "only 5 item(s)" in rep["why"] and "10" in rep["why"]
    assert stats.alpha_report(few, min_items=5)["value"] is not None
    # items rated once do not count towards the minimum
    sparse = [["s", "u"] * 10, ["s", "u", "s"] + [None] * 17]
    rep = stats.alpha_report(sparse)
    assert rep["value"] is None and "only 3 item(s)" in rep["why"] and rep["left_out"].startswith("17 of 20")
    rep = stats.fleiss_report([["s", "u"] * 10] * 3, min_raters=4)
    assert rep["value"] is None and "4 or more ratings" in rep["why"]


def test_degenerate_resamples_are_counted_and_left_out():
    # 9 items everyone calls "a", one split: a resample without the split item holds one label, (9/10)^10 ~ 0.35
    ratings = [["a"] * 9 + ["a"], ["a"] * 9 + ["b"], ["a"] * 9 + ["b"]]
    rep = stats.alpha_report(ratings)
    assert 0.30 < rep["degenerate"] < 0.40 and "left out" in rep["method"] and "percentile bootstrap" in rep["method"]
    assert rep["ci"][0] <= rep["value"] <= rep["ci"][1]


def test_reports_are_seeded():
    data = next(_random_sets(1, missing=0.1))
    a, b = stats.alpha_report(data, "ordinal"), stats.alpha_report(data, "ordinal")
    assert a == b and "seed 42" in a["method"]
    assert stats.alpha_report(data, "ordinal", seed=7)["ci"] != a["ci"]
    assert a["ci"][0] <= a["value"] <= a["ci"][1]


# ---------------------------------------------------------------- per item, per rater


def test_item_table_flags_ties_and_counts_raters():
    ratings = {"ana": {"i1": "s", "i2": "u", "i3": "s"}, "bo": {"i1": "s", "i2": "s"}, "cy": {"i1": "u"}}
    rows = {r["item"]: r for r in stats.item_table(ratings)}
    assert rows["i1"] == {"item": "i1", "raters": 3, "labels": {"s": 2, "u": 1}, "majority": "s", "tie": False,
                          "top_share": pytest.approx(2 / 3)}  # fmt: skip
    assert rows["i2"]["majority"] is None and rows["i2"]["tie"] and rows["i2"]["top_share"] == 0.5
    assert rows["i3"]["raters"] == 1 and rows["i3"]["majority"] == "s"
    assert stats.item_table([[None, "s"], [None, "s"]])[0]["top_share"] is None


def test_rater_table_leave_one_out_and_reference():
    #        ana bo cy dee    the others' majority for ana: i1 s (s s u), i2 u (u u s), i3 tie (s u) skipped
    # i1      s  s  s  u
    # i2      u  u  u  s
    # i3      s  s  u  -
    ratings = {"ana": {"i1": "s", "i2": "u", "i3": "s"}, "bo": {"i1": "s", "i2": "u", "i3": "s"},
               "cy": {"i1": "s", "i2": "u", "i3": "u"}, "dee": {"i1": "u", "i2": "s"}}  # fmt: skip
    rows = {r["rater"]: r for r in stats.rater_table(ratings, reference={"i1": "s", "i2": "u"})}
    ana = rows["ana"]
    assert ana["items"] == 3 and ana["loo_skipped"] == 1
    assert ana["loo"]["n"] == ana["loo"]["agree"] == 2 and ana["loo"]["ci"] == pytest.approx(stats.wilson(2, 2)[1:])
    # dee against the others: i1 s (s s s), i2 u (u u u); dee says u, s: agrees with neither
    assert rows["dee"]["loo"]["share"] == 0 and rows["dee"]["ref"]["share"] == 0 and rows["dee"]["ref"]["ci"][1] > 0
    assert rows["cy"]["ref"] == {"n": 2, "agree": 2, "share": 1.0, "ci": stats.wilson(2, 2)[1:], "why": None}
    assert stats.rater_table(ratings)[0]["ref"] is None
    lonely = stats.rater_table({"ana": {"i1": "s"}, "bo": {"i2": "s"}})[0]["loo"]
    assert lonely["share"] is None and lonely["ci"] is None and "no item" in lonely["why"]


# ---------------------------------------------------------------- simulated raters


def test_simulate_raters_is_seeded_and_says_it_simulates():
    reference = {f"c{i:03d}": ["s", "u", "c"][i % 3] for i in range(60)}
    sim = stats.simulate_raters(reference, [0.0, 0.3, 1.0], labels=["s", "u", "c"], seed=3)
    assert sim == stats.simulate_raters(reference, [0.0, 0.3, 1.0], labels=["s", "u", "c"], seed=3)
    assert list(sim) == ["sim-01", "sim-02", "sim-03"]
    assert sim["sim-01"] == reference
    assert all(sim["sim-03"][i] != reference[i] for i in reference)
    assert {x for row in sim.values() for x in row.values()} <= {"s", "u", "c"}
    named = stats.simulate_raters(reference, {"a": 0.3}, labels=["s", "u", "c"], seed=3)
    assert "simulated raters, never people" in inspect.getdoc(stats.simulate_raters)
    assert list(named) == ["a"]


def test_a_higher_flip_rate_flips_a_superset_of_items():
    reference = {i: ["s", "u", "c"][i % 3] for i in range(200)}
    low = stats.simulate_raters(reference, {"r": 0.1}, ["s", "u", "c"], seed=42)["r"]
    high = stats.simulate_raters(reference, {"r": 0.4}, ["s", "u", "c"], seed=42)["r"]
    assert all(high[i] == low[i] for i in reference if low[i] != reference[i])


def test_kappa_and_alpha_recover_the_noise_level():
    labels = ["s", "u", "c"]
    reference = {i: labels[i % 3] for i in range(300)}
    kappas, alphas = [], []
    for p in (0.0, 0.1, 0.2, 0.3, 0.4, 0.5):
        sim = stats.simulate_raters(reference, [p] * 6, labels, seed=42)
        kappa, alpha = stats.fleiss_report(sim, n_boot=200), stats.alpha_report(sim, n_boot=200)
        kappas.append(kappa["value"])
        alphas.append(alpha["value"])
        # two raters agree when both keep the label or both flip to the same other one: (1-p)^2 + p^2/2;
        # chance is 1/3 with balanced labels, so kappa = ((1-p)^2 + p^2/2 - 1/3) / (2/3)
        expected = ((1 - p) ** 2 + p**2 / 2 - 1 / 3) / (2 / 3)
        assert kappa["value"] == pytest.approx(expected, abs=0.06)
        if p:
            assert kappa["ci"][0] - 0.02 < expected < kappa["ci"][1] + 0.02
        for row in stats.rater_table(sim, reference=reference):
            assert row["ref"]["share"] == pytest.approx(1 - p, abs=0.08)
    assert kappas == sorted(kappas, reverse=True) and len(set(kappas)) == len(kappas)
    assert alphas == sorted(alphas, reverse=True) and len(set(alphas)) == len(alphas)


def test_raters_with_more_noise_agree_less_with_the_reference():
    labels = [1, 2, 3, 4, 5]
    reference = {i: labels[i % 5] for i in range(400)}
    sim = stats.simulate_raters(reference, [0.05, 0.15, 0.3, 0.5], labels, seed=42)
    shares = [row["ref"]["share"] for row in stats.rater_table(sim, reference=reference)]
    loo = [row["loo"]["share"] for row in stats.rater_table(sim)]
    assert shares == sorted(shares, reverse=True) and loo == sorted(loo, reverse=True)


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: stats.krippendorff_alpha([[1, 2], [1]]), "one entry per item"),
        (lambda: stats.krippendorff_alpha([[1, 2]], scale="interval"), "scale"),
        (lambda: stats.krippendorff_alpha([["lo", "hi"], ["hi", "hi"]], "ordinal"), "order"),
        (lambda: stats.krippendorff_alpha([["a", "b"]], labels=["a"]), "does not list"),
        (lambda: stats.krippendorff_alpha([[[1], 2]]), "plain value"),
        (lambda: stats.krippendorff_alpha({"ana": ["s"]}), "ratings\\['ana'\\]"),
        (lambda: stats.fleiss_from_counts([[2, 1], [1, 1]]), "same number of ratings"),
        (lambda: stats.fleiss_from_counts([[1, 0], [0, 1]]), "at least 2"),
        (lambda: stats.fleiss_from_counts([[1.5, 0.5]]), "whole numbers"),
        (lambda: stats.alpha_report([[1, 2]], n_boot=5), "n_boot"),
        (lambda: stats.fleiss_report([[1, 2]], seed=-1), "seed"),
        (lambda: stats.rater_table([[1, 2]], reference=[1, 2]), "reference"),
        (lambda: stats.simulate_raters({"i": "s"}, [1.5], ["s", "u"]), "flip"),
        (lambda: stats.simulate_raters({"i": "x"}, [0.1], ["s", "u"]), "not in labels"),
        (lambda: stats.simulate_raters({"i": "s"}, [0.1], ["s"]), "at least 2"),
        (lambda: stats.simulate_raters({"i": "s"}, [], ["s", "u"]), "flip is empty"),
    ],
)
def test_bad_input_names_the_argument(call, match):
    with pytest.raises(ValueError, match=match):
        call()


PUBLIC = ["fleiss_from_counts", "krippendorff_alpha", "fleiss_report", "alpha_report", "item_table", "rater_table",
          "simulate_raters"]  # fmt: skip


@pytest.mark.parametrize("name", PUBLIC)
def test_no_raw_error_on_nonsense(name):
    # what tests/test_bad_input.py probes for every public function: a clear ValueError, never a TypeError
    f = getattr(stats, name)
    required = [p for p in inspect.signature(f).parameters.values() if p.default is p.empty]
    for bad in (None, [], {}, "", 1.5, (), object(), [None], [[]], {"ana": None}, [["s"], "s"]):
        with pytest.raises(ValueError):
            f(*[bad] * len(required))
