"""The bundled real corpus (data/pydocs): the snapshot is what its manifest says, the FAQ questions and their gold."""

from __future__ import annotations

import hashlib
import json

import pytest

from labkit import SEED
from labkit.generation import llm
from labkit.generation import reader as rd
from labkit.studies import capstone, pydocs


def test_the_snapshot_matches_its_manifest_byte_for_byte():
    lines = (pydocs.root() / "MANIFEST.tsv").read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("# python3.11-doc ") and lines[1] == "path\tbytes\tsha256"
    listed = {}
    for line in lines[2:]:
        path, size, digest = line.split("\t")
        data = (pydocs.root() / path).read_bytes()
        assert len(data) == int(size) and hashlib.sha256(data).hexdigest() == digest, path
        listed[path] = digest
    on_disk = {p.relative_to(pydocs.root()).as_posix() for p in pydocs.root().rglob("*.html")}
    assert on_disk == set(listed)
    assert "PSF" in (pydocs.root() / "COPYING").read_text(encoding="utf-8")


def test_the_corpus_is_the_linked_pages_and_the_faq_is_not_in_it():
    corpus = pydocs.corpus()
    assert len(corpus) == 78 and not any(d.startswith("faq/") for d in corpus)
    assert {"library/copy.html", "library/stdtypes.html", "reference/expressions.html"} <= set(corpus)
    assert corpus["library/copy.html"].title.startswith("copy")


def test_every_faq_question_is_found_with_its_answer_and_links():
    questions = pydocs.faq_questions()
    assert len(questions) == 121 and len({q["qid"] for q in questions}) == 121
    copy = next(q for q in questions if q["qid"] == "faq-programming-how-do-i-copy-an-object-in-python")
    assert copy["question"] == "How do I copy an object in Python?"
    assert copy["answer"].startswith("In general, try copy.copy() or copy.deepcopy()")
    assert copy["links"] == ["library/copy.html", "library/stdtypes.html"]


def test_the_gold_labels_every_question_and_its_quotes_are_where_they_say():
    rows = pydocs.gold_rows()
    assert sorted(r["qid"] for r in rows) == sorted(q["qid"] for q in pydocs.faq_questions())
    corpus = pydocs.corpus()
    for r in rows:
        for ev, span in zip(r["evidence"], r["gold"], strict=True):
            assert corpus[span["doc"]].text[span["start"] : span["end"]] == ev["quote"]
    queries = pydocs.load_queries()
    assert len(queries) == sum(r["answerable"] for r in rows) >= 60
    assert {q.slice for q in queries} == {"real"}
    assert abs(sum(q.split == "dev" for q in queries) * 2 - len(queries)) <= 1
    assert all(max(s.grade for s in q.gold) == 3 for q in queries)


@pytest.mark.parametrize(
    ("row", "words"),
    [
        ({"qid": "faq-nope", "evidence": []}, "unknown qid 'faq-nope'"),
        ({"qid": "QID", "evidence": [{"doc": "library/nope.html", "quote": "x", "grade": 3}]}, "unknown page"),
        ({"qid": "QID", "evidence": [{"doc": "library/copy.html", "quote": "not in the page at all", "grade": 3}]},
         "quote not found in library/copy.html"),
        ({"qid": "QID", "evidence": [{"doc": "library/copy.html", "quote": "copy", "grade": 3}]}, "found"),
        ({"qid": "QID", "evidence": [{"doc": "library/copy.html", "quote": "Shallow and deep copy operations",
                                      "grade": 4}]}, "grade 4 must be one of"),
        ({"qid": "QID", "evidence": [{"doc": "library/copy.html", "quote": "Shallow and deep copy operations",
                                      "grade": 2}]}, "no grade-3 quote"),
        ({"qid": "QID", "answerable": False, "evidence": [{"doc": "library/copy.html",
                                                           "quote": "Shallow and deep copy operations", "grade": 3}]},
         "marked not answerable but lists evidence"),
    ],
)  # fmt: skip
def test_bad_gold_is_refused_with_its_line(tmp_path, row, words):
    qid = pydocs.faq_questions()[0]["qid"]
    path = tmp_path / "gold.jsonl"
    path.write_text(json.dumps({**row, "qid": qid if row["qid"] == "QID" else row["qid"]}) + "\n", encoding="utf-8")
    with pytest.raises(ValueError) as info:
        pydocs.gold_rows(path)
    assert "gold.jsonl line 1" in str(info.value) and words in str(info.value)


def test_a_second_rater_labelled_a_seeded_sixty_and_agreement_is_measured_not_assumed():
    import random

    qids = sorted(q["qid"] for q in pydocs.faq_questions())
    assert sorted(r["qid"] for r in pydocs.second_rater()) == sorted(random.Random(20261203).sample(qids, 60))
    report = pydocs.agreement()
    first = {r["qid"]: r["answerable"] for r in pydocs.gold_rows()}
    second = {r["qid"]: r["answerable"] for r in pydocs.second_rater()}
    assert report["answerable"]["agree"] == sum(first[q] == second[q] for q in second)
    assert report["disagree on answerable"] == sorted(q for q in second if first[q] != second[q])
    assert report["a passage in common"] + len(report["no passage in common"]) == report["both answerable"]


def test_every_recorded_answer_is_rated_and_a_second_rater_rated_a_seeded_sixty_blind():
    import random

    s = capstone.setting()
    table = capstone.answers(s, llm.Replay(llm.DEFAULT_MODEL))
    first = pydocs.answer_labels()
    assert list(first) == list(table["qid"]) and {r["rater"] for r in first.values()} == {"pydocs-answers-a"}
    second = pydocs.answer_labels(pydocs.root() / "answer_labels_second.jsonl")
    assert sorted(second) == sorted(random.Random(SEED + 10).sample(list(table["qid"]), 60))
    report = pydocs.answer_agreement()
    assert report["labels"]["agree"] == sum(first[q]["label"] == second[q]["label"] for q in second)
    assert [d[0] for d in report["disagreements"]] == sorted(
        q for q in second if first[q]["label"] != second[q]["label"]
    )


def test_every_label_says_why_and_an_answer_that_declines_is_labelled_declined():
    assert all(row["why"].strip() for row in pydocs.answer_labels().values())
    table = capstone.answers(capstone.setting(), llm.Replay(llm.DEFAULT_MODEL))
    labels = pydocs.answer_labels()
    declined = {q for q, a in zip(table["qid"], table["answer"], strict=True) if rd.says_dont_know(a)}
    assert declined <= {q for q, r in labels.items() if r["label"] == "declined"}
