"""labkit.measures.stats: each interval and test against a reference implementation (statsmodels, scipy) on seeded
data."""

import math

import numpy as np
import pytest
from scipy import stats as sps
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint

from labkit.measures import stats


@pytest.mark.parametrize("successes, n", [(0, 10), (3, 60), (28, 31), (35, 49), (10, 10), (1, 1), (50, 100)])
def test_wilson_matches_statsmodels(successes, n):
    p, low, high = stats.wilson(successes, n)
    ref_low, ref_high = proportion_confint(successes, n, alpha=0.05, method="wilson")
    assert p == successes / n
    assert low == pytest.approx(ref_low, abs=1e-9) and high == pytest.approx(ref_high, abs=1e-9)


def test_wilson_never_collapses_where_the_normal_interval_does():
    # the normal (Wald) interval p +- 1.96 sqrt(p(1-p)/n) has zero width at 0/n and leaves [0, 1] near it
    _, low, high = stats.wilson(0, 20)
    assert low == 0 and high > 0.1
    wald = stats.normal_interval(1, 20)
    assert wald[1] < 0 and stats.normal_interval(0, 20)[1:] == (0.0, 0.0)


@pytest.mark.parametrize("x1, n1, x2, n2", [(14, 33, 4, 12), (55, 80, 44, 80), (0, 20, 3, 20), (20, 20, 18, 25)])
def test_newcombe_matches_statsmodels(x1, n1, x2, n2):
    d, low, high = stats.newcombe(x1, n1, x2, n2)
    ref_low, ref_high = confint_proportions_2indep(x1, n1, x2, n2, method="newcomb", compare="diff")
    assert d == pytest.approx(x1 / n1 - x2 / n2)
    assert low == pytest.approx(ref_low, abs=1e-9) and high == pytest.approx(ref_high, abs=1e-9)


def test_holm_matches_statsmodels(rng):
    for m in (1, 3, 18):
        p = rng.uniform(0, 0.2, m)
        assert stats.holm(p.tolist()) == pytest.approx(multipletests(p, method="holm")[1].tolist())
    assert stats.holm([0.05, 0.05, 0.05]) == pytest.approx([0.15, 0.15, 0.15])  # three at p = 0.05: none survives
    with pytest.raises(ValueError, match="pvalues"):
        stats.holm([0.1, 1.5])


def test_permutation_p_matches_scipy_exactly_for_small_samples(rng):
    a, b = rng.normal(0.3, 1, 12), rng.normal(0, 1, 12)
    ref = sps.permutation_test((a, b), lambda x, y: np.mean(x) - np.mean(y), permutation_type="samples",
                               n_resamples=np.inf, alternative="two-sided").pvalue  # fmt: skip
    assert stats.permutation_p(a, b, paired=True) == pytest.approx(ref, abs=1e-12)
    x, y = rng.normal(0.5, 1, 7), rng.normal(0, 1, 6)
    # unequal groups: the null distribution is not symmetric, so "two-sided" means |difference| >= |observed|
    ref = sps.permutation_test((x, y), lambda u, v: abs(np.mean(u) - np.mean(v)), permutation_type="independent",
                               n_resamples=np.inf, alternative="greater").pvalue  # fmt: skip
    assert stats.permutation_p(x, y, paired=False) == pytest.approx(ref, abs=1e-12)


def test_permutation_p_sampled_is_close_to_scipy_and_never_zero(rng):
    a, b = rng.normal(0.2, 1, 60), rng.normal(0, 1, 60)
    ref = sps.permutation_test((a, b), lambda x, y: np.mean(x) - np.mean(y), permutation_type="samples",
                               n_resamples=20_000, alternative="two-sided", rng=1).pvalue  # fmt: skip
    assert stats.permutation_p(a, b, paired=True) == pytest.approx(ref, abs=0.02)
    assert stats.permutation_p([1.0] * 40, [0.0] * 40, n=1000) > 0


def test_paired_diff_is_the_bootstrap_of_the_differences_and_narrower_than_unpaired(rng):
    difficulty = rng.normal(0, 1, 80)  # shared by both systems on each query: it cancels in the paired difference
    a, b = difficulty + 0.2 + rng.normal(0, 0.2, 80), difficulty + rng.normal(0, 0.2, 80)
    paired, unpaired = stats.diff_ci(a, b), stats.diff_ci(a, b, paired=False)
    assert (paired["difference"], paired["low"], paired["high"]) == stats.bootstrap_ci(a - b)
    assert paired["high"] - paired["low"] < (unpaired["high"] - unpaired["low"]) / 3
    assert paired["low"] > 0 and unpaired["low"] < 0  # the same data: pairing resolves what the groups cannot


def test_two_sample_diff_matches_scipy_bootstrap(rng):
    a, b = rng.binomial(1, 0.6, 50).astype(float), rng.binomial(1, 0.4, 40).astype(float)
    ours = stats.diff_ci(a, b, paired=False, n=20_000)
    ref = sps.bootstrap((a, b), lambda x, y: np.mean(x) - np.mean(y), method="percentile", n_resamples=20_000,
                        vectorized=False, paired=False, rng=3).confidence_interval  # fmt: skip
    assert ours["low"] == pytest.approx(ref.low, abs=0.02) and ours["high"] == pytest.approx(ref.high, abs=0.02)
    with pytest.raises(ValueError, match="paired comparison needs one value per item"):
        stats.diff_ci(a, b)


def test_interaction_is_a_difference_of_effects(rng):
    effect_1, effect_2 = rng.normal(-0.3, 0.5, 80), rng.normal(-0.1, 0.5, 80)
    out = stats.interaction_ci(effect_1, effect_2, paired=True)
    assert out["interaction"] == pytest.approx(effect_1.mean() - effect_2.mean())
    assert out["low"] < out["interaction"] < out["high"]


def test_compare_many_decides_each_row_by_its_simultaneous_interval(rng):
    base = rng.normal(0, 1, 50)
    comparisons = {f"c{i}": (base + rng.normal(0.05 * i, 0.5, 50), base) for i in range(6)}
    frame = stats.compare_many(comparisons)
    assert frame.attrs["comparisons"] == 6 and list(frame.index) == list(comparisons)
    assert list(frame.columns) == ["difference", "low", "high", "p", "verdict"]
    excludes = (frame["low"] > 0) | (frame["high"] < 0)
    assert (frame["verdict"] == "resolved").tolist() == excludes.tolist() == (frame["p"] <= 0.05).tolist()
    marginal = [stats.diff_ci(a, b, paired=True)["high"] - stats.diff_ci(a, b, paired=True)["low"]
                for a, b in comparisons.values()]  # fmt: skip
    assert ((frame["high"] - frame["low"]).to_numpy() > marginal).all()  # simultaneous: wider than each alone
    assert "among 6" in frame.attrs["findings"]["c5"].sentence
    with pytest.raises(ValueError, match="comparisons must be a non-empty dict"):
        stats.compare_many({})


def test_compare_many_of_sixty_refuses_too_few_resamples_and_names_the_fix(rng):
    base = rng.normal(0, 1, 30)
    comparisons = {f"c{i}": (base + rng.normal(0, 0.5, 30), base) for i in range(60)}
    frame = stats.compare_many(comparisons, n=10_000)  # the max-|t| tail: 500 resamples whatever m is
    assert len(frame) == 60 and frame.attrs["findings"]["c0"].family_size == 60
    with pytest.raises(ValueError, match="resamples"):
        stats.compare_many(comparisons, n=200)


def test_percentile_bootstrap_of_a_constant_has_no_width_which_is_why_proportions_use_wilson():
    assert stats.bootstrap_ci([1.0] * 30)[1:] == (1.0, 1.0)
    assert stats.wilson(30, 30)[1] < 0.9
    assert math.isclose(stats.wilson(30, 30)[2], 1.0)


def test_group_means_use_wilson_for_proportions_and_the_bootstrap_for_the_rest():
    import pandas as pd

    frame = pd.DataFrame({"slice": ["a"] * 20 + ["b"] * 20, "hit": [1] * 20 + [1, 0] * 10,
                          "rr": [1.0] * 20 + [0.5, 0.25] * 10})  # fmt: skip
    table = stats.group_means_ci(frame, "slice", ["hit", "rr"])
    assert tuple(table.loc["a", ["hit", "hit low", "hit high"]]) == stats.wilson(20, 20)  # not [1.000, 1.000]
    assert tuple(table.loc["b", ["hit", "hit low", "hit high"]]) == stats.wilson(10, 20)
    rr_b = stats.bootstrap_ci(frame.rr[20:].to_numpy())
    assert tuple(table.loc["b", ["rr", "rr low", "rr high"]]) == pytest.approx(rr_b)
    forced = stats.group_means_ci(frame, "slice", ["hit"], proportions=())
    assert forced.loc["a", "hit low"] == 1.0  # the collapse Wilson avoids
    with pytest.raises(ValueError, match="not all 0 or 1"):
        stats.group_means_ci(frame, "slice", ["rr"], proportions=["rr"])


def _judged(rng, n_pass, n_fail, tpr, tnr):
    import pandas as pd

    truth = [True] * n_pass + [False] * n_fail
    says = [(rng.random() < tpr) if t else (rng.random() >= tnr) for t in truth]
    return pd.DataFrame({"truth": truth, "a": says})


def test_compare_judges_interval_matches_the_normal_approximation_of_two_independent_binomials(rng):
    # Two judges on the same items, independent errors: var(J_a - J_b) is the sum of four binomial variances
    # (TPR and TNR of each) with the class sizes fixed, as the stratified bootstrap keeps them.
    table = _judged(rng, 400, 600, 0.8, 0.7)
    table["b"] = _judged(rng, 400, 600, 0.6, 0.6)["a"]
    out = stats.compare_judges(table, "a", ["b"], truth="truth", n=4000)
    row = out.iloc[0]
    rates = {j: stats.judge_report(table, [j], truth="truth").iloc[0] for j in "ab"}
    assert row["difference"] == pytest.approx(rates["a"].J - rates["b"].J)
    var = sum(r.TPR * (1 - r.TPR) / 400 + r.TNR * (1 - r.TNR) / 600 for r in rates.values())
    half = sps.norm.ppf(0.975) * math.sqrt(var)
    assert (row["high"] - row["low"]) / 2 == pytest.approx(half, rel=0.08)
    assert out.attrs["comparisons"] == 1 and row["sim low"] == row["low"]


def test_compare_judges_pairs_the_items_and_widens_for_a_scan(rng):
    table = _judged(rng, 50, 50, 0.9, 0.5)
    table["same"] = table["a"]
    table["c"] = _judged(rng, 50, 50, 0.5, 0.5)["a"]
    out = stats.compare_judges(table, "a", ["same", "c"], truth="truth")
    assert out.loc["a - same", ["difference", "low", "high"]].tolist() == [0, 0, 0]  # paired: no spread at all
    assert out.attrs["comparisons"] == 2 and not out.loc["a - same", "resolved"]
    c = out.loc["a - c"]
    assert c["sim low"] < c["low"] < c["high"] < c["sim high"]
    with pytest.raises(ValueError, match="against must not contain the judge itself"):
        stats.compare_judges(table, "a", ["a"], truth="truth")
    with pytest.raises(ValueError, match="judges names 'zz'"):
        stats.compare_judges(table, "a", ["zz"], truth="truth")


def test_mean_ci_gives_a_proportion_wilson_and_anything_else_the_bootstrap():
    assert stats.mean_ci([1.0] * 65) == stats.wilson(65, 65)
    assert stats.mean_ci([0.5, 1, 0, 1]) == stats.bootstrap_ci([0.5, 1, 0, 1])
    with pytest.raises(ValueError, match="values must not be empty"):
        stats.mean_ci([])
