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
    assert stats.bootstrap_ci([1.0] * 20)[1] == 1.0  # the collapse Wilson avoids; a graded all-1 group gets the
    assert tuple(forced.loc["a", ["hit", "hit low", "hit high"]]) == pytest.approx(stats.wilson(20, 20))  # rule bound
    with pytest.raises(ValueError, match="not all 0 or 1"):
        stats.group_means_ci(frame, "slice", ["rr"], proportions=["rr"])


def _sparse_bound(x, lo=0.0, hi=1.0, z=1.959963984540054):
    """The sparse bound written out: the commonest value ``v``, the shares above and below it at Wilson's bound."""
    from collections import Counter

    v = Counter(x).most_common(1)[0][0]
    up, down = sum(1 for y in x if y > v), sum(1 for y in x if y < v)
    wide = [proportion_confint(c, len(x), alpha=2 * sps.norm.sf(z), method="wilson")[1] for c in (down, up)]
    return pytest.approx((float(np.mean(x)), v - (v - lo) * wide[0], v + (hi - v) * wide[1]), abs=1e-9)


def test_group_means_give_a_sparse_slice_the_findings_sparse_bound_not_a_bootstrap_end_pinned_at_one():
    import pandas as pd

    from labkit.measures.stats.kindbase import SPARSE, flat_chance

    rr = [1.0] * 37 + [0.5, 1 / 3]  # chapter 03's shape: RR@10 of 1 on all but two queries
    spread = [1.0] * 15 + [0.5] * 12 + [0.25] * 12
    frame = pd.DataFrame({"slice": ["sparse"] * 39 + ["spread"] * 39, "rr": rr + spread})
    table = stats.group_means_ci(frame, "slice", "rr")
    assert flat_chance(rr) > 0.05 / SPARSE >= flat_chance(spread)  # the rule findings.py uses to leave the bootstrap
    got = tuple(table.loc["sparse", ["rr", "rr low", "rr high"]])
    assert got == _sparse_bound(rr)
    old = stats.bootstrap_ci(rr)  # its upper end is 1 because resamples that drop both queries give 1
    assert old[2] == 1.0 and got[1] < old[1] - 0.05  # the bound holds what those resamples hid
    assert tuple(table.loc["spread", ["rr", "rr low", "rr high"]]) == pytest.approx(stats.bootstrap_ci(spread))
    mostly_zero = pd.DataFrame({"s": "a", "x": [0.0] * 36 + [0.2, 0.4, 0.6, 0.3]})  # chapter 05's "[0.000, 0.096]"
    ends = tuple(stats.group_means_ci(mostly_zero, "s", "x").loc["a", ["x", "x low", "x high"]])
    assert ends == _sparse_bound(mostly_zero["x"].tolist()) and ends[2] > stats.bootstrap_ci(mostly_zero["x"])[2]


def test_group_means_sparse_bound_needs_the_score_range_and_names_bounds():
    import pandas as pd

    counts = pd.DataFrame({"s": "a", "relevant": [2.0] * 38 + [3.0, 5.0]})  # a count, not a score in [0, 1]
    with pytest.raises(ValueError, match=r"bounds=\{'relevant': \(low, high\)\}"):
        stats.group_means_ci(counts, "s", "relevant")
    ones = pd.DataFrame({"s": ["easy"] * 30 + ["hard"] * 30, "relevant": [1.0] * 30 + [1.0, 2.0, 3.0] * 10})
    with pytest.raises(ValueError, match="not a score in \\[0, 1\\]"):  # easy's all-1 count is no score in [0, 1]
        stats.group_means_ci(ones, "s", "relevant")
    with pytest.raises(ValueError, match="outside bounds"):
        stats.group_means_ci(counts, "s", "relevant", bounds=(0, 4))
    table = stats.group_means_ci(counts, "s", "relevant", bounds={"relevant": (0, 10)})
    assert tuple(table.loc["a", ["relevant", "relevant low", "relevant high"]]) == _sparse_bound(
        counts["relevant"].tolist(), 0, 10)  # fmt: skip
    with pytest.raises(ValueError, match="bounds names"):
        stats.group_means_ci(counts, "s", "relevant", bounds={"other": (0, 1)})
    with pytest.raises(ValueError, match="low < high"):
        stats.group_means_ci(counts, "s", "relevant", bounds=(3, 1))


def _judged(rng, n_pass, n_fail, tpr, tnr):
    import pandas as pd

    truth = [True] * n_pass + [False] * n_fail
    says = [(rng.random() < tpr) if t else (rng.random() >= tnr) for t in truth]
    return pd.DataFrame({"truth": truth, "a": says})


def test_a_j_difference_as_a_derived_finding_matches_the_normal_approximation_of_two_independent_binomials(rng):
    # Two judges on the same items, independent errors: var(J_a - J_b) is the sum of four binomial variances
    # (TPR and TNR of each) with the class sizes fixed, as the bootstrap within each true class keeps them.
    table = _judged(rng, 400, 600, 0.8, 0.7)
    table["b"] = _judged(rng, 400, 600, 0.6, 0.6)["a"]

    def j_difference(v: dict) -> float:
        t = v["truth"]
        j = {k: (v[k] & t).sum() / t.sum() + (~v[k] & ~t).sum() / (~t).sum() - 1 for k in "ab"}
        return j["a"] - j["b"]

    inputs = {k: table[k].to_numpy() for k in ("a", "b", "truth")}
    f = stats.derived_finding("J a − J b", inputs, j_difference, null=0.0, strata="truth", n=4000)
    rates = {j: stats.judge_report(table, [j], truth="truth").iloc[0] for j in "ab"}
    assert f.estimate == pytest.approx(rates["a"].J - rates["b"].J) and f.verdict == "resolved"
    var = sum(r.TPR * (1 - r.TPR) / 400 + r.TNR * (1 - r.TNR) / 600 for r in rates.values())
    half = sps.norm.ppf(0.975) * math.sqrt(var)
    assert (f.high - f.low) / 2 == pytest.approx(half, rel=0.08)


def test_mean_ci_gives_a_proportion_wilson_and_anything_else_the_bootstrap():
    assert stats.mean_ci([1.0] * 65) == stats.wilson(65, 65)
    spread = [0.5, 0.25, 0.75, 0.1] * 10  # no value common enough to pin an end: the bootstrap
    assert stats.mean_ci(spread) == stats.bootstrap_ci(spread)
    assert stats.mean_ci([0.5, 1, 0, 1]) == _sparse_bound([0.5, 1, 0, 1])  # four items: a resample is often flat
    with pytest.raises(ValueError, match="values must not be empty"):
        stats.mean_ci([])
