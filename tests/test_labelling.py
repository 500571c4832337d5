"""The labelling widget without a browser: what each key does, and that every label reaches the store."""

import pytest

from labkit.data import labels as lb
from labkit.ui.widgets import labelling

SET = lb.LabelSet("t-claims", ("supported", "unsupported", "contradicted"), ("a", "b", "c", "d"))


def _labeller(tmp_path, target=3):
    store = lb.LabelStore(SET, tmp_path / "t.jsonl")
    return labelling.Labeller(SET, lambda i: f"<p>item {i}</p>", store, target=target), store


def test_keys_label_skip_back_and_undo(tmp_path):
    w, store = _labeller(tmp_path)
    assert w.current == "a" and w.progress.startswith("0 of 3 labelled · item 1 of 4")
    assert w.buttons == [["s", "supported"], ["u", "unsupported"], ["c", "contradicted"]]
    w.press("s")
    assert store.labels() == {"a": "supported"} and w.current == "b" and "saved: a = supported" in w.message
    w.press("n")
    assert w.current == "c"
    w.press("u")
    assert w.current == "d" and store.labels() == {"a": "supported", "c": "unsupported"}
    w.press("z")
    assert w.current == "c" and store.labels() == {"a": "supported"} and "undone" in w.message
    w.press("b")
    assert w.current == "b"
    w.press("q")
    assert "s = supported" in w.message and w.current == "b"
    assert w.view == "<p>item b</p>"


def test_a_new_labeller_starts_at_the_first_unlabelled_item_and_counts_past_the_target(tmp_path):
    w, store = _labeller(tmp_path, target=2)
    for key in "ssc":
        w.press(key)
    again = labelling.Labeller(SET, lambda i: i, store, target=2)
    assert again.current == "d"
    assert again.progress.startswith("2 of 2 labelled (+1 more)")


def test_undo_with_nothing_to_undo_says_so(tmp_path):
    w, store = _labeller(tmp_path)
    w.press("z")
    assert "nothing to undo" in w.message and store.labels() == {}


def test_renderers_escape_and_mark_the_claims_numbers_in_the_context():
    out = labelling.claim_html(
        "How long?", "File within <45> days (ERR-4031).", "File within 30 days. Code ERR-4031; 45 x."
    )
    assert "&lt;45&gt;" in out
    assert "<mark>ERR-4031</mark>" in out and "<mark>45</mark>" in out and "<mark>30</mark>" not in out
    assert "(empty)" in labelling.answer_html("q?", "", "ref")
    assert "lk-lab-question" in labelling.question_html("wfh tmrw?", "1 = unusable ... 5 = real")


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda s: labelling.Labeller(SET, lambda i: i, s, target=9), "target"),
        (lambda s: labelling.Labeller(SET, "not callable", s), "render"),
        (lambda s: labelling.Labeller(lb.LabelSet("x", ("right", "wrong"), ("a",)), lambda i: i, s), "same label_set"),
    ],
)
def test_bad_input_names_the_argument(tmp_path, make, match):
    with pytest.raises(ValueError, match=match):
        make(lb.LabelStore(SET, tmp_path / "t.jsonl"))


def test_before_its_cell_runs_the_labeller_shows_a_line_and_the_first_item(tmp_path):
    w, _ = _labeller(tmp_path)
    bundle = w._repr_mimebundle_()
    bundle = bundle[0] if isinstance(bundle, tuple) else bundle
    assert "Run this cell" in bundle["text/html"] and "<p>item a</p>" in bundle["text/html"]
    assert "Labeller(" not in bundle["text/plain"]


def test_a_chapter_uses_the_learners_labels_from_ten_on_and_says_which(tmp_path, monkeypatch):
    from labkit.studies import labelling  # noqa: F811 - the study module here, not the widget module

    monkeypatch.setenv("LABKIT_LABELS", str(tmp_path))
    claim_set, _, reference = labelling.claims_set()
    assert set(reference) == set(claim_set.items)
    store = lb.LabelStore(claim_set, labelling.store_path(claim_set.id))
    for item in claim_set.items[:9]:
        store.add(item, "supported")
    chosen = labelling.labels_for(claim_set, reference)
    assert not chosen.mine and chosen.labels == reference and "fewer than 10" in chosen.source
    store.add(claim_set.items[9], "unsupported")
    chosen = labelling.labels_for(claim_set, reference)
    assert chosen.mine and chosen.n_mine == 10 and chosen.source.startswith("your 10 labels")
    assert (tmp_path / "06-claims.jsonl").is_file()


def test_labeller_at_a_path_writes_its_labels_there(tmp_path):
    w = labelling.Labeller.at(SET, lambda i: i, tmp_path / "at.jsonl", target=2)
    w.press("s")
    assert lb.read_labels(tmp_path / "at.jsonl", SET) == {"a": "supported"}


def test_the_agreement_line_says_kappa_only_for_the_learners_labels():
    from labkit.studies import labelling  # noqa: F811 - the study module here, not the widget module

    reference = {"a": "supported", "b": "unsupported", "c": "supported"}
    theirs = labelling.Chosen(dict(reference), False, 0, "the reference")
    assert "no kappa" in labelling.agreement_line(theirs, reference)
    mine = labelling.Chosen({"a": "supported", "b": "supported", "c": "supported"}, True, 3, "yours")
    assert labelling.agreement_line(mine, reference).startswith("you and the rater agree on 2 of 3; kappa 0.000")


def test_chapter_10_labels_the_hybrids_first_passage_of_each_test_question_against_the_gold():
    from labkit.studies import (
        capstone,
        labelling,  # noqa: F811 - the study module here, not the widget module
    )

    relevance, items, reference = labelling.relevance_set()
    s = capstone.setting()
    test = {q.qid for q in s.queries if q.split == "test"}
    assert set(relevance.items) == set(items) == set(reference) == test
    assert set(reference.values()) <= set(labelling.RELEVANCE) and not set(relevance.keys) & set(lb.RESERVED_KEYS)
    first = capstone.runs(s, 1)["hybrid"]
    for qid, label in reference.items():
        grade = s.qrels.get(qid, {}).get(first[qid][0], 0)
        assert label == ("answers" if grade == 3 else "partly" if grade else "no")
        assert items[qid]["passage"] == s.texts[first[qid][0]]
    from labkit.ui import widgets

    item = items[relevance.items[0]]
    shown = widgets.passage_html(item["question"], item["passage"] + " <b>&")
    assert shown.count("<pre>") == 1 and shown.endswith(" &lt;b&gt;&amp;</pre>")  # the passage shown, escaped


def test_chapter_10_labels_the_readers_answers_against_the_raters_labels():
    from labkit.studies import (
        labelling,  # noqa: F811 - the study module here, not the widget module
        pydocs,
    )

    answers, items, reference = labelling.pydocs_answers_set()
    assert answers.id == "10-answers" and set(answers.items) == set(items) == set(reference)
    assert reference == {q: r["label"] for q, r in pydocs.answer_labels().items()}
    assert not set(answers.keys) & set(lb.RESERVED_KEYS)
    item = items[answers.items[0]]
    assert item["reference"].startswith("The FAQ's answer: ") and "From the documentation:" in item["reference"]
