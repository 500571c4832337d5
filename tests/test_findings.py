"""labkit.measures.stats.findings: one decision rule, so a finding's verdict, interval, adjusted p and sentence agree.

Hand-worked cases (Holm on 4 p-values, the 64 sign patterns of 6 differences), the score intervals against
statsmodels and scipy, the agreement of p and interval on seeded random families and at the border, a family of
60 comparisons (simultaneous coverage under the null, or a refusal naming the resamples needed), no zero-width
interval, sentences that carry their numbers, and the notebook-output scan (``scan_notebook_intervals``, importable
from here as from :mod:`labkit.measures.stats.output_check`).
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
import re
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats as sps
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint, proportions_ztest

from labkit.measures import stats
from labkit.measures.stats import kindbase, score
from labkit.measures.stats.output_check import scan_notebook_intervals, scan_text

__all__ = ["scan_notebook_intervals"]


def _excludes(f) -> bool:
    return f.low > f.null or (not f.one_sided and f.high < f.null)


def _agrees(f) -> bool:
    """The property: resolved by p exactly when resolved by the interval, and the verdict says the same."""
    if f.verdict == "too few":
        return f.low is None and f.high is None and f.p is None
    by_p, by_interval = f.p <= f.alpha, _excludes(f)
    return by_p == by_interval == (f.verdict == "resolved") and f.high > f.low


# ------------------------------------------------------------------------------------------------ worked by hand


def test_holm_step_down_on_four_p_values_by_hand():
    # sorted: 0.005 x 4 = 0.02; 0.01 x 3 = 0.03; 0.03 x 2 = 0.06; 0.04 x 1 = 0.04, raised to 0.06 (kept in order)
    assert stats.holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert stats.holm([0.2, 0.01, 0.5, 0.012]) == pytest.approx([0.4, 0.04, 0.5, 0.04])


SIX = [0.4, 0.3, 0.2, 0.1, -0.1, 0.2]  # sum 1.1; |d| = {4, 3, 2, 2, 1, 1} tenths, 1.3 in all


def _t(sum_: float, d: list[float]) -> float:
    n, sq = len(d), sum(x * x for x in d)
    mean = sum_ / n
    return abs(mean) / math.sqrt((sq - n * mean * mean) / (n - 1) / n)


def test_sign_flip_on_six_differences_by_hand_all_64_patterns():
    # A pattern's signed sum is 1.3 - 2F, F the |d| it turns against. |1.3 - 2F| >= 1.1 needs F <= 0.1 or F >= 1.2:
    # F = 0 (1 subset), F = 0.1 (either 0.1: 2 subsets), and their 3 complements: 6 of 64 patterns, p = 6/64.
    count = sum(abs(sum(s * x for s, x in zip(signs, SIX, strict=True))) >= 1.1 - 1e-12
                for signs in itertools.product((1, -1), repeat=6))  # fmt: skip
    assert count == 6
    out = stats.max_t_sign_flip([SIX], alpha=Fraction(1, 20))
    assert out["exact"] and out["draws"] == 64 and out["p"] == [Fraction(6, 64)]
    assert stats.permutation_p(SIX, [0.0] * 6) == pytest.approx(6 / 64)  # one comparison: the permutation p
    # at 5 %: floor(0.05 * 64) = 3, c = the 4th largest |t| = the observed |t| (1.3, 1.3, 1.1, 1.1, ...): not resolved
    # and the interval just reaches 0
    assert out["c"] == pytest.approx(_t(1.1, SIX)) and out["t"][0] == pytest.approx(_t(1.1, SIX))
    assert not out["resolved"][0] and out["low"][0] <= 0 and out["low"][0] == pytest.approx(0, abs=1e-9)
    # at 10 %: floor(6.4) = 6, c = the 7th largest |t| = that of a sum of 0.9 (F = 0.2: 3 subsets and 3 complements)
    out = stats.max_t_sign_flip([SIX], alpha=Fraction(1, 10))
    assert out["resolved"][0] and out["c"] == pytest.approx(_t(0.9, SIX))
    mean, se = 1.1 / 6, np.std(SIX, ddof=1) / math.sqrt(6)
    assert out["low"][0] == pytest.approx(mean - _t(0.9, SIX) * se) and out["low"][0] > 0


def _brute_max_t(ds: list[np.ndarray], alpha: Fraction) -> tuple[list[Fraction], float]:
    """The max-|t| sign-flip, written out pattern by pattern (one group, every pattern)."""
    n = len(ds[0])
    observed = [_t(float(d.sum()), list(d)) for d in ds]
    maxima = []
    for signs in itertools.product((1, -1), repeat=n):
        s = np.array(signs)
        ts = []
        for d in ds:
            flipped = s * d
            sd = np.std(flipped, ddof=1)
            ts.append(abs(flipped.mean()) / (sd / math.sqrt(n)) if sd > 1e-12 else math.inf)
        maxima.append(max(ts))
    maxima = np.array(maxima)
    p = [Fraction(int(np.sum(maxima >= t * (1 - 1e-12))), 2**n) for t in observed]
    k = math.floor(alpha * 2**n)
    return p, float(np.sort(maxima)[::-1][k])


def test_max_t_over_a_family_matches_a_pattern_by_pattern_count(rng):
    base = rng.normal(0, 1, 9)
    ds = [base * 0.3 + rng.normal(0.4, 0.5, 9), base * 0.3 + rng.normal(0.0, 0.5, 9), rng.normal(0.6, 0.3, 9)]
    out = stats.max_t_sign_flip(ds, alpha=Fraction(1, 20))
    p, c = _brute_max_t(ds, Fraction(1, 20))
    assert out["exact"] and out["p"] == p
    assert out["c"] == pytest.approx(c, rel=1e-9)
    assert out["resolved"] == [q <= Fraction(1, 20) for q in p]


def test_one_paired_0_1_comparison_by_sign_flip_is_the_exact_mcnemar_test():
    a = [1] * 8 + [0] * 1 + [1] * 4 + [0] * 3  # 16 items: 8 only a, 1 only b, 7 unchanged
    b = [0] * 8 + [1] * 1 + [1] * 4 + [0] * 3
    out = stats.max_t_sign_flip([np.subtract(a, b)], alpha=0.05)
    assert out["exact"] and float(out["p"][0]) == pytest.approx(sps.binomtest(8, 9, 0.5).pvalue, abs=1e-12)


# ------------------------------------------------------------------------------ against statsmodels and scipy


@pytest.mark.parametrize("successes, n", [(0, 10), (3, 60), (28, 31), (35, 49), (10, 10), (50, 100)])
@pytest.mark.parametrize("level", [0.95, 0.999, 0.9999, 1 - 0.05 / 60])
def test_wilson_at_any_level_matches_statsmodels_and_the_capped_helper(successes, n, level):
    z = score.z_of(1 - level)
    ref = proportion_confint(successes, n, alpha=1 - level, method="wilson")
    assert score.wilson_z(successes, n, z) == pytest.approx(ref, abs=1e-6)
    if level <= 0.999:
        assert score.wilson_z(successes, n, z) == pytest.approx(stats.wilson(successes, n, level)[1:], abs=1e-12)


@pytest.mark.parametrize("x1, n1, x2, n2", [(14, 33, 4, 12), (55, 80, 44, 80), (0, 20, 3, 20), (20, 20, 18, 25)])
@pytest.mark.parametrize("level", [0.95, 0.9999])
def test_newcombe_at_any_level_matches_statsmodels(x1, n1, x2, n2, level):
    ref = confint_proportions_2indep(x1, n1, x2, n2, method="newcomb", compare="diff", alpha=1 - level)
    assert score.newcombe_z(x1, n1, x2, n2, score.z_of(1 - level)) == pytest.approx(ref, abs=1e-6)


def test_paired_newcombe_at_any_level_matches_the_capped_helper_and_mcnemar_matches_scipy(rng):
    for _ in range(20):
        a = rng.binomial(1, 0.6, 40)
        b = np.where(rng.random(40) < 0.3, 1 - a, a)
        z = score.z_of(0.05)
        assert score.paired_newcombe_z(a, b, z) == pytest.approx(stats.paired_newcombe(a, b)[1:], abs=1e-12)
        only_a, only_b = int(np.sum(a & (1 - b))), int(np.sum(b & (1 - a)))
        ref = sps.binomtest(only_a, only_a + only_b, 0.5).pvalue if only_a + only_b else 1.0
        assert score.mcnemar_exact_p(only_a, only_b) == pytest.approx(ref, abs=1e-12)
        table = [[int(np.sum(a & b)), only_a], [only_b, int(np.sum((1 - a) & (1 - b)))]]
        assert score.mcnemar_exact_p(only_a, only_b) == pytest.approx(mcnemar(table, exact=True).pvalue, abs=1e-9)
    lead = stats.finding("reranker", (a, b), "paired 0/1")
    assert lead.details["McNemar p"] == score.mcnemar_exact_p(only_a, only_b)
    assert (lead.low, lead.high) == pytest.approx(stats.paired_newcombe(a, b)[1:], abs=1e-12)


@pytest.mark.parametrize("successes, n, null", [(35, 49, 0.5), (12, 40, 0.5), (28, 31, 0.7), (0, 20, 0.1)])
def test_a_proportion_gets_wilson_and_the_score_test_p(successes, n, null):
    f = stats.finding("pass rate", [1] * successes + [0] * (n - successes), "proportion", null=null)
    ref_p = proportions_ztest(successes, n, value=null, prop_var=null)[1]
    assert f.p == pytest.approx(ref_p, abs=1e-6)
    assert (f.low, f.high) == pytest.approx(proportion_confint(successes, n, method="wilson"), abs=1e-6)
    family = stats.Family("rates", ["pass rate", "b", "c", "d", "e"])
    g = family.finding("pass rate", [1] * successes + [0] * (n - successes), "proportion", null=null)
    assert (g.low, g.high) == pytest.approx(proportion_confint(successes, n, alpha=0.01, method="wilson"), abs=1e-6)
    assert g.p == pytest.approx(min(1.0, 5 * ref_p), abs=1e-6)


def test_two_proportions_get_newcombe_and_two_graded_groups_the_percentile_bootstrap(rng):
    a, b = rng.binomial(1, 0.6, 50), rng.binomial(1, 0.4, 40)
    f = stats.finding("a − b", (a, b), "two independent proportions")
    ref = confint_proportions_2indep(a.sum(), 50, b.sum(), 40, method="newcomb", compare="diff")
    assert (f.low, f.high) == pytest.approx(ref, abs=1e-6) and "Newcombe" in f.method
    x, y = rng.beta(2, 5, 60), rng.beta(2, 4, 50)
    g = stats.finding("x − y", (x, y), "two graded groups", n=20_000)
    ref = sps.bootstrap((x, y), lambda u, v: np.mean(u) - np.mean(v), method="percentile", n_resamples=20_000,
                        rng=3).confidence_interval  # fmt: skip
    assert g.low == pytest.approx(ref.low, abs=0.006) and g.high == pytest.approx(ref.high, abs=0.006)
    assert "percentile bootstrap" in g.method


def _brute_bootstrap_t(xs: list[np.ndarray], draws: np.ndarray, alpha: Fraction) -> tuple[list[Fraction], float]:
    """The max-|t| bootstrap written out resample by resample."""
    n = len(xs[0])
    maxima = []
    for row in draws:
        ts = []
        for x in xs:
            r = x[row]
            ts.append(abs(r.mean() - x.mean()) / (np.std(r, ddof=1) / math.sqrt(n)))
        maxima.append(max(ts))
    maxima = np.array(maxima)
    observed = [abs(x.mean()) / (np.std(x, ddof=1) / math.sqrt(n)) for x in xs]
    p = [Fraction(int(np.sum(maxima >= t * (1 - 1e-12))) + 1, len(draws) + 1) for t in observed]
    k = math.floor(alpha * (len(draws) + 1))
    return p, float(np.sort(maxima)[::-1][k - 1])


def test_the_max_t_bootstrap_matches_a_resample_by_resample_count(rng):
    base = rng.normal(0, 1, 25)
    xs = [base * 0.3 + rng.exponential(0.5, 25) - 0.35, base * 0.3 + rng.normal(0.1, 0.5, 25), rng.normal(0.5, 0.4, 25)]
    draws = rng.integers(0, 25, (999, 25))
    out = stats.max_t_bootstrap(xs, alpha=Fraction(1, 20), draws=draws)
    p, c = _brute_bootstrap_t(xs, draws, Fraction(1, 20))
    assert out["p"] == p and out["c"] == pytest.approx(c, rel=1e-9) and out["tail"] == 50
    assert out["resolved"] == [q <= Fraction(1, 20) for q in p]
    for j, x in enumerate(xs):
        se = np.std(x, ddof=1) / math.sqrt(25)
        assert (out["low"][j], out["high"][j]) == pytest.approx((x.mean() - c * se, x.mean() + c * se), rel=1e-9)
    lone = stats.finding("mean", xs[0] + 0.2, "graded mean", null=0.2, n=20_000)
    assert "bootstrap-t" in lone.method and lone.low < lone.estimate < lone.high
    ref = sps.bootstrap((xs[0] + 0.2,), np.mean, method="percentile", n_resamples=20_000, rng=3).confidence_interval
    assert lone.low == pytest.approx(ref.low, abs=0.03) and lone.high == pytest.approx(ref.high, abs=0.03)


def test_interval_for_chooses_by_kind_and_asks_for_what_it_needs(rng):
    words = {"proportion": "Wilson", "two independent proportions": "Newcombe", "paired 0/1": "paired Newcombe",
             "graded mean": "bootstrap-t", "paired graded": "bootstrap-t", "two graded groups": "each group",
             "kappa": "kappa"}  # fmt: skip
    x, y = rng.binomial(1, 0.6, 30), rng.binomial(1, 0.5, 30)
    data = {"proportion": x, "two independent proportions": (x, y), "paired 0/1": (x, y), "graded mean": x * 0.5,
            "paired graded": (x * 0.5, y * 0.4), "two graded groups": (x * 0.5, y), "kappa": (x, y)}  # fmt: skip
    for kind, word in words.items():
        iv = stats.interval_for(kind, data[kind], null=0.5 if kind in ("proportion", "graded mean") else None)
        assert word in iv.method, (kind, iv.method)
    with pytest.raises(ValueError, match="kind must be one of"):
        stats.interval_for("mean", x, null=0.5)
    with pytest.raises(ValueError, match="needs null="):
        stats.interval_for("proportion", x)


# ------------------------------------------------------------------------------------- the agreement property


def _random_family(seed: int, m: int = 6, items: int = 40) -> tuple[dict, dict]:
    """A family mixing kinds, its effects spread so that several rows land near the border."""
    r = np.random.default_rng(seed)
    base = r.normal(0.5, 0.2, items)
    data, kinds = {}, {}
    for j in range(m - 3):
        effect = r.uniform(0, 0.12)
        data[f"paired {j}"] = (np.clip(base + effect + r.normal(0, 0.15, items), 0, 1), np.clip(base, 0, 1))
        kinds[f"paired {j}"] = "paired graded"
    a = r.binomial(1, 0.6, items)
    data["hit"], kinds["hit"] = (a, np.where(r.random(items) < r.uniform(0.1, 0.4), 1 - a, a)), "paired 0/1"
    data["rate"], kinds["rate"] = r.binomial(1, r.uniform(0.5, 0.8), items), "proportion"
    data["groups"], kinds["groups"] = (r.beta(2, 3, items), r.beta(2, r.uniform(2.5, 5), items)), "two graded groups"
    return data, kinds


def test_no_row_is_resolved_by_p_and_not_by_its_interval_on_random_families():
    rows, near = 0, 0
    for seed in range(40):
        data, kinds = _random_family(seed)
        family = stats.Family(f"random {seed}", list(data), n=5000, seed=seed)
        found = family.findings(data, kind=kinds, null={"rate": 0.6})
        for f in found.values():
            assert _agrees(f), f.sentence
            rows += 1
            near += abs(f.p - f.alpha) < 0.02
        leads = [stats.finding(name, data[name], kinds[name], null=0.6 if name == "rate" else None) for name in data]
        assert all(_agrees(f) for f in leads)
    assert rows == 240 and near >= 10  # the property was tried near the border, not only far from it


def _bisect_border(make, lo: float, hi: float, steps: int = 60) -> list:
    """Findings ``make(x)`` along a bisection towards the x where the verdict flips (the border)."""
    seen = [make(lo), make(hi)]
    assert seen[0].verdict != seen[1].verdict
    for _ in range(steps):
        mid = (lo + hi) / 2
        f = make(mid)
        seen.append(f)
        lo, hi = (mid, hi) if f.verdict == seen[0].verdict else (lo, mid)
    return seen


def test_at_the_border_p_and_interval_still_agree(rng):
    base = rng.normal(0.5, 0.2, 30)
    noise = [rng.normal(0, 0.15, 30) for _ in range(4)]
    family = stats.Family("border", ["moved", "b", "c", "d"], n=2000)

    def paired(shift: float):
        data = {"moved": (base + shift + noise[0], base)} | {k: (base + noise[i], base) for i, k in enumerate("bcd", 1)}
        return family.findings(data, kind="paired graded")["moved"]

    x = rng.binomial(1, 0.7, 60)
    cases = [
        _bisect_border(paired, 0.0, 0.3),
        _bisect_border(lambda null: stats.finding("rate", x, "proportion", null=null), 0.45, 0.69),
        _bisect_border(lambda null: stats.finding("mean", base, "graded mean", null=null), 0.3, 0.5),
        _bisect_border(lambda null: family.finding("b", (x, np.roll(x, 1)), "paired 0/1", null=null), -0.5, 0.0),
    ]
    for seen in cases:
        assert all(_agrees(f) for f in seen), [f.sentence for f in seen if not _agrees(f)]
        assert min(abs(f.p - f.alpha) for f in seen) < 1e-3  # it got to the border
    # a null exactly on a bootstrap order statistic: the interval's end touches it, so "not shown", p above alpha
    groups = (base + 0.1, rng.normal(0.5, 0.2, 30))
    f = stats.finding("x − y", groups, "two graded groups", null=-0.3)
    for null in (f.low, math.nextafter(f.low, -1), math.nextafter(f.low, 1)):
        g = stats.finding("x − y", groups, "two graded groups", null=null)
        assert _agrees(g) and (g.verdict == "resolved") == (null < f.low)
    # and a null exactly on the end of a bootstrap-t interval
    f = stats.finding("mean", base, "graded mean", null=0.4)
    for null in (f.low, math.nextafter(f.low, -1), math.nextafter(f.low, 1)):
        assert _agrees(stats.finding("mean", base, "graded mean", null=null))


# ------------------------------------------------------------------------------------------ sixty comparisons


def test_sixty_paired_comparisons_cover_together_under_the_null_and_leads_do_not():
    reps, any_family, any_lead, covered, skew_covered, flip_covered = 150, 0, 0, 0, 0, 0
    r = np.random.default_rng(7)
    names = [f"c{j}" for j in range(60)]
    for rep in range(reps):
        base = r.normal(0.5, 0.2, 30)
        noise = r.standard_t(5, (60, 30)) * 0.1  # heavy tails; no effect anywhere
        null = stats.max_t_bootstrap(list(noise), n=1000, seed=rep)  # what Family.findings runs, without the checks
        any_family += any(null["resolved"])
        if rep < 100:  # ten comparisons, each alone at 5 %
            any_lead += any(stats.max_t_bootstrap([d], n=1000, seed=rep)["resolved"][0] for d in noise[:10])
        shift = r.uniform(-0.1, 0.1, 60)  # with effects, every interval must cover its own
        moved = stats.max_t_bootstrap(list(noise + shift[:, None]), n=1000, seed=rep)
        covered += all(lo <= s <= hi for lo, hi, s in zip(moved["low"], moved["high"], shift, strict=True))
        # skewed per-query differences (most queries change a little, a few a lot) around each true effect, end to end
        skewed = {k: (base + r.exponential(0.1, 30) - 0.1 + s, base) for k, s in zip(names, shift, strict=True)}
        found = stats.Family("sixty", names, n=1000, seed=rep).findings(skewed, kind="paired graded")
        skew_covered += all(f.low <= s <= f.high for f, s in zip(found.values(), shift, strict=True))
        if rep < 50:  # the sign-flip alternative on the same data: its symmetric null misses the skew
            flip = stats.max_t_sign_flip([skewed[k][0] - skewed[k][1] - s for k, s in zip(names, shift, strict=True)],
                                         n=1000, seed=rep)  # fmt: skip
            flip_covered += not any(flip["resolved"])
    # 95 % simultaneous: at most 5 % of families with any false "resolved" (3 standard errors of 150 reps: 0.053)
    assert any_family / reps <= 0.05 + 0.053
    assert covered / reps >= 0.95 - 0.053 and skew_covered / reps >= 0.95 - 0.053
    assert any_lead / 100 > 0.2  # uncorrected, 1 - 0.95^10 = 0.40: the check can tell the difference
    assert flip_covered / 50 < 0.75  # and so can the skewed case (the sign-flip covers about half)


def test_a_family_too_large_for_its_resamples_refuses_and_names_the_fix(rng):
    names = [f"c{j}" for j in range(60)]
    data = {k: rng.uniform(0, 1, 30) for k in names}
    pairs = {k: (data[k], data[names[j - 1]]) for j, k in enumerate(names)}
    with pytest.raises(ValueError, match=r"60 comparisons.*0 of 2,000 .*n >= 47,999 resamples"):
        stats.Family("sixty", names, n=2000).findings(pairs, kind="two graded groups")  # Bonferroni percentiles
    means = stats.Family("sixty", names, n=2000).findings(data, kind="graded mean", null=0.5)  # one max-|t|
    assert len(means) == 60 and all(_agrees(f) for f in means.values())
    with pytest.raises(ValueError, match=r"60 comparisons.*1 of 2,000 resamples.*n >= 23,999"):
        stats.Family("sixty", names, n=2000).finding("c0", (data["c0"], data["c1"]), "paired graded")
    big = stats.Family("sixty", names, n=48_000).finding("c0", data["c0"], "graded mean", null=0.5)
    assert _agrees(big) and big.family_size == 60 and big.level == 0.95
    with pytest.raises(ValueError, match=r"at least 20 are needed"):
        stats.max_t_sign_flip([rng.normal(size=40)], alpha=0.001, n=2000)


# ----------------------------------------------------------------------------------------- never zero width


@pytest.mark.parametrize(
    "kind, data, null",
    [("proportion", [1] * 25, 0.5), ("proportion", [0] * 25, 0.5), ("graded mean", [1.0] * 25, 0.5),
     ("graded mean", [0.0] * 25, 0.5), ("graded mean", [0.4] * 25, 0.5),
     ("paired graded", ([0.3] * 25, [0.3] * 25), None), ("paired graded", ([1.0] * 25, [0.0] * 25), None),
     ("paired 0/1", ([1] * 25, [1] * 25), None), ("two independent proportions", ([1] * 25, [1] * 25), None),
     ("two graded groups", ([0.5] * 25, [0.5] * 25), None),
     ("kappa", (["a"] * 12 + ["b"] * 13, ["a"] * 12 + ["b"] * 13), None)],
)  # fmt: skip
def test_all_values_equal_give_a_bound_never_a_zero_width_interval(kind, data, null):
    f = stats.finding("x", data, kind, null=null)
    assert f.high > f.low and _agrees(f) and "[" in f.sentence
    assert not re.search(r"\[(\S+), \1\]", f.sentence)


def test_n_of_n_gets_wilson_for_n_of_n_and_kappa_near_1_a_one_sided_bound_with_its_undefined_share():
    assert stats.finding("all hit", [1.0] * 30, "graded mean", null=0.5).low == pytest.approx(stats.wilson(30, 30)[1])
    a, b = ["a"] * 30 + ["b"] * 9 + ["a"], ["a"] * 30 + ["b"] * 9 + ["b"]  # one disagreement in 40
    f = stats.finding("kappa", (a, b), "kappa", n=4000)
    assert f.one_sided and f.high == 1.0 and 0 < f.low < f.estimate < 1 and "one-sided" in f.sentence
    assert f.estimate == pytest.approx(stats.cohen_kappa(a, b)) and _agrees(f)
    two_sided = stats.finding("kappa", (["b"] * 6 + a[6:], b), "kappa", n=4000)  # 7 disagreements: far from 1
    assert not two_sided.one_sided and two_sided.high < 1
    a, b = ["a"] * 37 + ["b"] * 2 + ["a"], ["a"] * 37 + ["b"] * 2 + ["b"]  # three items hold a "b"
    f = stats.finding("kappa", (a, b), "kappa", n=4000)
    assert f.details["undefined share"] == pytest.approx((37 / 40) ** 40, abs=0.012)  # resamples without any "b"
    assert f"{f.details['undefined share']:.1%} of resamples undefined" in f.sentence and _agrees(f)


def test_means_with_too_few_differing_items_leave_the_bootstrap_t_and_say_so(rng):
    # hit@10 on 30 queries where 3 changed: a resample without any change (0.9^30 = 4 %) has an infinite |t|
    names = [f"slice {j}" for j in range(7)]
    data = {}
    for k in names:
        a = rng.binomial(1, 0.6, 30)
        b = a.copy()
        b[:3] = 1 - a[:3]
        data[k] = (a, b)
    base = rng.normal(0.5, 0.2, 30)
    data["nDCG"] = (base + 0.1 + rng.normal(0, 0.1, 30), base)
    found = stats.Family("sparse", [*names, "nDCG"], n=5000).findings(data, kind="paired graded")
    assert all(_agrees(f) for f in found.values())
    for k in names:
        assert (
            "decided alone: paired Newcombe" in found[k].method and "paired Newcombe, Bonferroni" in found[k].sentence
        )
    assert found["nDCG"].details.get("max-t") and found["nDCG"].verdict == "resolved"
    lead = stats.finding("slice 0", data["slice 0"], "paired graded")
    assert "decided alone" in lead.method and _agrees(lead)
    graded = stats.finding("sparse graded", (np.r_[np.zeros(27), 0.4, 0.5, 0.3], np.zeros(30)), "paired graded")
    assert "decided alone: sparse bound" in graded.method and _agrees(graded)


# ------------------------------------------------------------------------ ends on the null (few items differ)


def test_few_differing_graded_items_get_the_share_bound_never_an_end_pinned_on_the_null():
    # 3 of 65 queries gain, none lose: a percentile bootstrap's resamples without any of the 3 (62/65)^65 = 4.7 %
    # all give 0, so its low end was exactly 0.000 and the sentence "ruled out less than +0.000"
    f = stats.finding("gain", (np.r_[np.zeros(62), 0.4, 0.5, 0.3], np.zeros(65)), "paired graded")
    assert "sparse bound" in f.method and f.verdict == "not shown" and _agrees(f)
    assert f.low < 0 < f.high and "0.000" not in f.sentence and "(sparse bound)" in f.sentence
    up = score.wilson_z(3, 65, score.z_of(0.05))[1]  # the share that rose, at Wilson's upper bound, each up to +1
    assert (f.low, f.high) == pytest.approx((-score.wilson_z(0, 65, score.z_of(0.05))[1], up))
    assert f.details["sign-flip p"] == 0.25  # 2 of the 2^3 sign patterns reach |mean|: the exact test beside it
    g = stats.finding("groups", (np.r_[np.zeros(62), 1, 1, 1], np.zeros(65)), "two graded groups")
    assert "sparse bound" in g.method and g.low < 0 < g.high and "0.000" not in g.sentence and _agrees(g)
    with pytest.raises(ValueError, match="bounds="):
        stats.finding("cost", (np.r_[np.zeros(62), 4.0, 5.0, 3.0], np.zeros(65)), "paired graded")
    h = stats.finding("cost", (np.r_[np.zeros(62), 4.0, 5.0, 3.0], np.zeros(65)), "paired graded", bounds=(0, 10))
    assert h.high == pytest.approx(10 * up) and _agrees(h)


def test_the_share_bound_covers_sparse_gains_where_the_percentile_bootstrap_does_not():
    # each of 65 items gains U(0, 1) with chance 0.03 (true mean gain 0.015): over 400 samples that take the sparse
    # path, the share bound holds the truth at least 95 % of the time; the percentile bootstrap's pinned low end
    # (exactly 0 whenever at most 3 items gain) makes it miss far more often
    rng = np.random.default_rng(5)
    ctx = kindbase.Ctx(Fraction(1, 20), 0.0, 1000, 1, 10, None, None, None, "test")
    held = pct = runs = 0
    while runs < 400:
        d = np.where(rng.random(65) < 0.03, rng.random(65), 0.0)
        if not 0 < (d > 0).sum() or kindbase.flat_chance(d) <= 0.05 / kindbase.SPARSE:
            continue
        runs += 1
        iv = kindbase.sparse("paired graded", d, ctx, (-1.0, 1.0))
        held += iv.low <= 0.015 <= iv.high
        boots = np.sort(kindbase.boot_means(d, 1000, rng))
        pct += boots[24] <= 0.015 <= boots[975]
    assert held / runs >= 0.95 and pct / runs < held / runs - 0.1


def test_an_end_on_the_null_holds_it_and_its_sentence_rules_nothing_out_beyond():
    # a ratio of two rates that differ on 3 of 60 items: resamples without those give exactly 1
    x = np.r_[np.ones(30), np.zeros(27), 1, 1, 1]
    y = np.r_[np.ones(30), np.zeros(30)]
    f = stats.derived_finding("x / y", {"x": x, "y": y}, lambda v: v["x"].mean() / v["y"].mean(), null=1.0)
    assert f.low == 1.0 and f.verdict == "not shown" and _agrees(f)
    assert "less than 1.000" not in f.sentence and "its lower end sits on 1: nothing below 1 is ruled out" in f.sentence
    assert f.details["resamples at the null"] > 0.025 and "equal 1 exactly" in f.method
    ctx = kindbase.Ctx(Fraction(1, 20), 0.0, 999, 1, 10, None, None, None, "test")
    boots = np.r_[np.zeros(30), np.linspace(0.01, 1, 969)]  # the 25th smallest of 999 is the null itself
    iv = kindbase.percentile("derived", 0.3, boots, ctx, 60, "test")
    assert iv.low == 0.0 and not iv.resolved and iv.p > 0.05


def test_a_resolved_end_never_prints_as_the_null():
    # a low of 0.0004 printed with 3 digits reads [0.000, ...], which holds 0 as printed (the suite's scan says so)
    f = stats.Finding("hybrid − dense", "paired graded", 0.05, 0.0004, 0.1, "max-|t| bootstrap", 0.04, "resolved",
                      0.95, 0.05, 0.0, 65, "retrievers", 3, details={"max-t": True})  # fmt: skip
    assert "0.050 [0.0004, 0.100]" in f.sentence and scan_text(f.sentence) == []
    g = dataclasses.replace(f, low=-0.0002, p=0.2, verdict="not shown")
    assert "[−0.0002, 0.100]" in g.sentence and "less than −0.0002" in g.sentence and scan_text(g.sentence) == []


def test_too_few_items_give_no_interval_and_say_so():
    f = stats.finding("hybrid − dense", ([0.5, 0.6, 0.7, 0.2, 0.9, 0.4], [0.4] * 6), "paired graded")
    assert f.verdict == "too few" and f.low is None and f.p is None
    assert f.sentence == "too few: hybrid − dense: 6 items; at least 10 are needed, so no interval is given"
    family = stats.Family("small", ["hybrid − dense", "other"])
    g = family.findings({"hybrid − dense": ([0.5] * 6, [0.4] * 6)}, kind="paired graded")["hybrid − dense"]
    assert g.verdict == "too few" and "one of 2 declared" in g.sentence


# ------------------------------------------------------------------------------------------- derived figures


def test_a_derived_figure_resamples_its_inputs_together(rng):
    x = rng.uniform(0.2, 1.0, 60)
    y = x + rng.normal(0, 0.05, 60)

    def ratio(v: dict) -> float:
        return v["x"].mean() / v["y"].mean()

    paired = stats.derived_finding("x / y", {"x": x, "y": y}, ratio, null=1.0)
    apart = stats.derived_finding("x / y", [{"x": x}, {"y": y}], ratio, null=1.0)
    assert paired.estimate == apart.estimate == pytest.approx(x.mean() / y.mean())
    assert (paired.high - paired.low) < (apart.high - apart.low) / 3 and _agrees(paired) and _agrees(apart)


def test_a_difference_of_two_judges_j_matches_a_bootstrap_within_each_true_class(rng):
    truth = np.array([True] * 60 + [False] * 60)
    says_a = np.where(truth, rng.random(120) < 0.85, rng.random(120) < 0.25)
    says_b = np.where(truth, rng.random(120) < 0.7, rng.random(120) < 0.4)

    def j_difference(v: dict) -> float:
        t = v["truth"]
        j = {k: (v[k] & t).sum() / t.sum() + (~v[k] & ~t).sum() / (~t).sum() - 1 for k in "ab"}
        return j["a"] - j["b"]

    f = stats.derived_finding("J a − J b", {"a": says_a, "b": says_b, "truth": truth}, j_difference, null=0.0,
                              strata="truth", n=4000)  # fmt: skip
    # the reference: both judges' J on one draw of the items, the true passes and fails each keeping their count
    pos, neg = np.flatnonzero(truth), np.flatnonzero(~truth)
    draw = np.concatenate([rng.choice(pos, (4000, len(pos))), rng.choice(neg, (4000, len(neg)))], axis=1)
    boots = [j_difference({"a": says_a[i], "b": says_b[i], "truth": truth[i]}) for i in draw]
    assert f.estimate == pytest.approx(j_difference({"a": says_a, "b": says_b, "truth": truth}))
    assert (f.low, f.high) == pytest.approx(tuple(np.quantile(boots, [0.025, 0.975])), abs=0.03)


def test_a_rate_divided_by_j_reports_undefined_resamples(rng):
    judged = rng.random(200) < 0.6
    truth = np.array([True] * 12 + [False] * 8)
    said = np.where(truth, rng.random(20) < 0.7, rng.random(20) < 0.5)

    def corrected(v: dict) -> float | None:
        t, s = v["truth"], v["said"]
        j = (s & t).sum() / t.sum() + (~s & ~t).sum() / (~t).sum() - 1
        return None if j <= 0 else (v["judged"].mean() + (~s & ~t).sum() / (~t).sum() - 1) / j

    f = stats.derived_finding("corrected rate", [{"judged": judged}, {"said": said, "truth": truth}], corrected,
                              null=0.5, strata="truth")  # fmt: skip
    assert f.details["undefined resamples"] > 0 and "undefined" in f.method and _agrees(f)


# --------------------------------------------------------------------------------- sentences and determinism


def test_sentences_state_their_numbers_and_never_claim_no_effect(rng):
    base = rng.normal(0.5, 0.2, 50)
    data = {"hybrid − dense": (base + 0.08 + rng.normal(0, 0.1, 50), base),
            "hybrid − bm25": (base + rng.normal(0, 0.1, 50), base)}  # fmt: skip
    found = stats.Family("retrievers", [*data, "a", "b", "c", "d", "e"], n=2000).findings(data, kind="paired graded")
    resolved, null = found["hybrid − dense"], found["hybrid − bm25"]
    assert resolved.verdict == "resolved" and null.verdict == "not shown"
    for f in (resolved, null):
        minus = str.maketrans("-", "−")
        for value in (f.estimate, f.low, f.high):
            assert f"{value:.3f}".translate(minus) in f.sentence
        assert "among 7" in f.sentence and "no effect" not in f.sentence
    assert resolved.sentence.startswith("resolved: hybrid − dense ") and f"p = {resolved.p:.3f}" in resolved.sentence
    assert null.sentence.startswith("not shown: hybrid − dense".replace("dense", "bm25"))
    assert f"rules out more than {null.high:+.3f}".replace("-", "−") in null.sentence
    lead = stats.finding("hybrid − dense", data["hybrid − dense"], "paired graded")
    assert lead.lead and lead.sentence.startswith("lead (uncorrected, picked after looking): hybrid − dense")
    assert stats.findings_table(found).loc["hybrid − dense", "sentence"] == resolved.sentence
    with pytest.raises(ValueError, match="not declared"):
        stats.Family("retrievers", ["hybrid − dense"]).finding("new − idea", data["hybrid − dense"], "paired graded")


def test_findings_are_deterministic_with_a_seed_and_do_not_depend_on_the_order_asked(rng):
    data, kinds = _random_family(3)
    first = stats.Family("f", list(data), n=5000, seed=11).findings(data, kind=kinds, null={"rate": 0.6})
    again = stats.Family("f", list(data), n=5000, seed=11).findings(dict(reversed(data.items())), kind=kinds,
                                                                     null={"rate": 0.6})  # fmt: skip
    other = stats.Family("f", list(data), n=5000, seed=12).findings(data, kind=kinds, null={"rate": 0.6})
    assert first == again and list(first) == list(again)
    assert [f.p for f in first.values()] != [f.p for f in other.values()]


# -------------------------------------------------------------------------------------------- notebook scan


def _notebook(path, outputs_per_cell) -> str:
    cells = [{"cell_type": "code", "source": "", "metadata": {}, "execution_count": 1, "outputs": outputs}
             for outputs in outputs_per_cell]  # fmt: skip
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}), encoding="utf-8")
    return str(path)


def _stdout(text: str) -> dict:
    return {"output_type": "stream", "name": "stdout", "text": text.splitlines(keepends=True)}


def _plain(text: str, html: str | None = None) -> dict:
    data = {"text/plain": text} if html is None else {"text/plain": text, "text/html": html}
    return {"output_type": "execute_result", "execution_count": 1, "metadata": {}, "data": data}


TABLE = """                difference    low   high  sim low  sim high      p  p (Holm)  resolved
comparison
a - b                0.054  0.018  0.095    0.006     0.122  0.005     0.066     False
c - d                0.076  0.025  0.125    0.000     0.156  0.002     0.031      True
e - f                0.138  0.087  0.189    0.064     0.225  0.000     0.001      True
"""


def test_the_scan_finds_planted_zero_widths_and_contradicted_verdicts(tmp_path):
    html = ("<table><thead><tr><th></th><th>hit</th><th>hit low</th><th>hit high</th></tr></thead><tbody>"
            "<tr><th>easy</th><td>1.0</td><td>1.0</td><td>1.0</td></tr></tbody></table>")  # fmt: skip
    path = _notebook(tmp_path / "03_planted.ipynb", [
        [_stdout("per slice\neasy  0.200 [0.200, 0.200]\n")],
        [_stdout("resolved: x 0.050 [−0.010, 0.110], simultaneous 95 % among 3\n"
                 "not shown: y 0.080 [0.020, 0.140] (simultaneous 95 % among 3)\n")],
        [_plain(TABLE)],
        [{"output_type": "display_data", "metadata": {}, "data": {"text/plain": "<Styler>", "text/html": html}}],
    ])  # fmt: skip
    problems = scan_notebook_intervals(path)
    assert problems[0].startswith("03_planted cell 0: zero-width interval [0.200, 0.200]")
    assert any(p.startswith("03_planted cell 1: 'resolved' beside [−0.010, 0.110], which holds 0") for p in problems)
    assert any(p.startswith("03_planted cell 1: 'not shown' beside [0.020, 0.140], which excludes 0") for p in problems)
    assert "03_planted cell 2: row 'a - b': resolved=False but sim low/sim high [0.006, 0.122] excludes 0" in problems
    assert "03_planted cell 2: row 'c - d': resolved=True but sim low/sim high [0.000, 0.156] holds 0" in problems
    assert any(p.startswith("03_planted cell 3: row 'easy': zero-width interval hit low/hit high") for p in problems)
    assert len(problems) == 6


def test_the_scan_passes_a_clean_notebook_of_findings(tmp_path, rng):
    base = rng.normal(0.5, 0.2, 50)
    data = {"up": (base + 0.1 + rng.normal(0, 0.1, 50), base), "flat": (base + rng.normal(0, 0.1, 50), base)}
    found = stats.Family("f", list(data), n=2000).findings(data, kind="paired graded")
    rate = stats.finding("rate", [1] * 30, "proportion", null=0.5)
    table = stats.findings_table(found)[["estimate", "low", "high", "p"]].round(3)
    text = "\n".join(f.sentence for f in [*found.values(), rate])
    text += "\nhandbook 0.090 [0.069, 0.112] resolved; this corpus 0.017 [−0.026, 0.061] not shown"
    path = _notebook(tmp_path / "clean.ipynb", [[_stdout(text)], [_plain(table.to_string(), table.to_html())]])
    assert {f.verdict for f in found.values()} == {"resolved", "not shown"}
    assert scan_notebook_intervals(path) == []


def test_every_chapter_stored_outputs_hold_no_zero_width_interval_and_no_contradicted_verdict():
    """The committed notebooks, scanned: a zero-width interval or a verdict beside an interval that says otherwise
    fails here with its chapter and cell (the two planted tests above show the scan finds both)."""
    from pathlib import Path

    notebooks = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))
    assert len(notebooks) >= 12
    problems = [p for path in notebooks for p in scan_notebook_intervals(path)]
    assert not problems, "\n".join(problems)
