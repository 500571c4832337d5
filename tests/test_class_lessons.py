"""The instructor's chapter (11): a simulated class written into a class folder and read back, the agreement the
simulation implies, and the chapters' lessons re-run on a class's majority beside the AI rater's labels."""

import krippendorff
import numpy as np
import pytest
from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

from labkit.chapters import chapter
from labkit.data import class_read
from labkit.measures import stats
from labkit.studies import class_lessons, class_sim


@pytest.fixture(scope="module")
def simulated(tmp_path_factory):
    return class_sim.simulate_class(tmp_path_factory.mktemp("sim") / "class", exercises=["3.1", "3.2"])


@pytest.fixture(scope="module")
def sets():
    return class_sim.chapter_sets()


def test_the_simulated_class_is_seeded_and_read_back_whole(tmp_path, simulated, sets):
    again = class_sim.simulate_class(tmp_path / "again", exercises=["3.1", "3.2"])
    for label_set, _, _ in sets.values():
        a, b = class_read.read_class(label_set, simulated), class_read.read_class(label_set, again)
        assert a.ratings == b.ratings and a.rows == b.rows and a.skipped == [] and a.simulated
        assert sorted(a.ratings) == sorted(class_sim.FLIPS) and "12 simulated raters" in a.summary()
    rows, skipped = class_read.read_progress(simulated, ["3.1", "3.2"])
    assert rows and skipped == [] and {r["learner"] for r in rows} <= set(class_sim.FLIPS)


def test_the_planted_bad_input_is_refused_as_said(tmp_path, sets):
    sim = class_sim.simulate_class(tmp_path / "class")
    label_set = sets["06-claims"][0]
    planted = class_sim.plant_bad_input(sim, label_set)
    got = class_read.read_class(label_set, sim)
    assert len(got.skipped) == len(planted) == 6
    reasons = " | ".join(str(s) for s in got.skipped)
    for why in ("not a learner's file", "writable by other accounts", "nothing is read from outside",
                "'maybe' is not one of", "'../x' is not an id", "incomplete"):  # fmt: skip
        assert why in reasons
    assert "sim-99" not in got.ratings and "sim-98" not in got.ratings


def test_the_instructors_figures_equal_statsmodels_and_krippendorff_on_the_class(simulated, sets):
    for label_set, _, _ in sets.values():
        ratings = class_read.read_class(label_set, simulated).ratings
        raters, items = list(ratings), list(dict.fromkeys(i for r in ratings.values() for i in r))
        code = {lab: n for n, lab in enumerate(label_set.labels)}
        data = np.array([[code[ratings[r][i]] if i in ratings[r] else np.nan for i in items] for r in raters])
        alpha = stats.alpha_report(ratings, labels=label_set.labels)
        assert alpha["value"] == pytest.approx(
            krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
        )
        fleiss = stats.fleiss_report(ratings, labels=label_set.labels)
        full = data[:, ~np.isnan(data).any(axis=0)].T  # the items every rater labelled (the most common count here)
        assert fleiss["items"] == len(full)
        table, _ = aggregate_raters(full.astype(int), n_cat=len(label_set.labels))
        assert fleiss["value"] == pytest.approx(fleiss_kappa(table))


def test_implied_agreement_by_hand_and_the_recovered_verdict():
    reference = {f"i{n}": "a" if n % 2 else "b" for n in range(10)}
    both = {r: dict(reference) for r in ("x", "y")}
    # two raters, flip 0.1 each, two labels: agree 0.9 * 0.9 + 0.1 * 0.1 = 0.82; chance 0.5; kappa 0.64
    assert class_sim.implied_agreement(both, reference, ["a", "b"], {"x": 0.1, "y": 0.1}) == pytest.approx(0.64)
    assert class_sim.implied_agreement(both, reference, ["a", "b"], {"x": 0.0, "y": 0.0}) == pytest.approx(1.0)
    report = {"coefficient": "Fleiss' kappa", "value": 0.6, "ci": (0.5, 0.7), "items": 10, "why": None}
    assert class_sim.recovered(report, 0.64).endswith("covers it: the noise is recovered")
    assert class_sim.recovered(report, 0.8).endswith("misses it: the noise is not recovered")
    assert "no figure (too few)" in class_sim.recovered({**report, "value": None, "ci": None, "why": "too few"}, 0.6)


def test_rater_noise_puts_the_careless_raters_last(simulated, sets):
    label_set, _, reference = sets["06-claims"]
    table = class_sim.rater_noise(class_read.read_class(label_set, simulated).ratings, reference, class_sim.FLIPS)
    worst = table.sort_values("rank by others").index[-2:].tolist()
    assert sorted(worst) == ["sim-11", "sim-12"] and table.loc["sim-12", "flip"] == 0.5


def test_the_lessons_on_a_class_that_copies_the_reference_are_the_ai_raters_figures(sets):
    label_set, texts, reference = sets["06-claims"]
    copies = {r: {i: reference[i] for i in label_set.items[:30]} for r in ("a", "b", "c")}
    lesson = class_lessons.claims_lesson(copies, chapter("06").judges)
    assert lesson["items"] == 30 and lesson["differ"] == 0 and lesson["chosen"] in chapter("06").candidates
    ai, cls = lesson["reports"].values()
    assert ai[["TPR", "TNR", "J"]].equals(cls[["TPR", "TNR", "J"]])
    assert "lies inside" in class_lessons.inside("x", ai, cls, lesson["chosen"], "TNR")
    assert lesson["corrected"]["corrected"].nunique() == 1
    split = class_lessons.split_items({**copies, "d": {label_set.items[0]: "contradicted"}}, {i: d["claim"] for i, d in
                                                                                   texts.items()}, n=2)  # fmt: skip
    assert split.index[0] == label_set.items[0] and split.iloc[0]["text"] == texts[label_set.items[0]]["claim"]


def test_one_flipped_answer_moves_the_2x2_and_is_counted(sets):
    label_set, _, reference = sets["07-answers"]
    items = label_set.items[:20]
    first = next(i for i in items if reference[i] == "right")
    flipped = {i: ("wrong" if i == first else reference[i]) for i in items}
    lesson = class_lessons.answers_lesson({"a": flipped, "b": flipped, "c": {i: reference[i] for i in items}})
    assert lesson["items"] == 20 and lesson["differ"] == 1
    assert lesson["cells"]["AI rater"].sum() == lesson["cells"]["class"].sum() == 20
    assert int(lesson["moves"].to_numpy().trace()) == 19  # one answer changed cell


def test_the_realism_and_relevance_lessons_read_the_class(sets):
    label_set, _, reference = sets["02-realism"]
    ratings = {r: {i: reference[i] for i in label_set.items} for r in ("a", "b")}
    lesson = class_lessons.realism_lesson(ratings)
    assert lesson["kappa"].loc["AI rater", "weighted kappa"] == lesson["kappa"].loc["class", "weighted kappa"]
    assert class_lessons.median_rating({"a": {"q": "1"}, "b": {"q": "5"}, "c": {"q": "4"}}) == {"q": 4}
    label_set, _, reference = sets["10-relevance"]
    lesson = class_lessons.relevance_lesson({r: {i: reference[i] for i in label_set.items} for r in ("a", "b")})
    assert lesson["agree"] == lesson["items"] == len(label_set.items)
