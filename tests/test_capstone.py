"""labkit.studies.capstone: the workflow on any folder with its questions file; the bundled corpus by default."""

from __future__ import annotations

import json

import pytest

from labkit.generation import reader as rd
from labkit.generation import synth
from labkit.studies import capstone, labelling, own_folder

DOCS = {
    "guide/vpn.md": "# VPN\n\nConnect to the VPN before you open Jira. The gateway abroad is SG-1.\n",
    "guide/leave.md": "# Leave\n\nFull-time staff get 18 days of annual leave a year.\n",
    "faq.html": "<html><body><main><h1>FAQ</h1><p>Expense claims are due within 30 days of the trip.</p></main>"
    "</body></html>",
}


def folder_with_questions(tmp_path, questions):
    for name, text in DOCS.items():
        (tmp_path / "docs" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "docs" / name).write_text(text, encoding="utf-8")
    path = tmp_path / "questions.jsonl"
    path.write_text("".join(json.dumps(q) + "\n" for q in questions), encoding="utf-8")
    return str(tmp_path / "docs"), str(path)


def question(qid, text, doc, quote, split="test"):
    start = DOCS[doc].index(quote) if not doc.endswith(".html") else None
    if start is None:  # HTML: offsets into the extracted text
        from labkit.data import folder

        extracted = folder.html_to_text(DOCS[doc])[1]
        start = extracted.index(quote)
    return {"qid": qid, "question": text, "answer": quote, "slice": "real", "kind": "fact", "split": split,
            "gold": [{"doc": doc, "start": start, "end": start + len(quote), "grade": 3}]}  # fmt: skip


def test_a_folder_of_your_own_is_measured_like_the_handbook(tmp_path):
    qs = [question("q1", "how many days of annual leave", "guide/leave.md", "18 days of annual leave", "dev"),
          question("q2", "which vpn gateway abroad", "guide/vpn.md", "The gateway abroad is SG-1."),
          question("q3", "when are expense claims due", "faq.html", "due within 30 days of the trip")]  # fmt: skip
    docs, path = folder_with_questions(tmp_path, qs)
    s = capstone.setting(docs, path, 8, 2)
    assert sorted(s.corpus) == ["faq.html", "guide/leave.md", "guide/vpn.md"] and len(s.queries) == 3
    frame = capstone.per_query(s, 3)
    assert list(frame.index) == ["q1", "q2", "q3"] and set(frame["split"]) == {"dev", "test"}
    assert frame["hit@k bm25"].tolist() == [1.0, 1.0, 1.0]  # each answer's words are in one small document
    assert {f"{m}@k {r}" for m in ("R", "nDCG", "hit", "ER") for r in capstone.RETRIEVERS} <= set(frame.columns)


def test_the_default_is_the_bundled_python_documentation():
    s = capstone.setting()
    assert len(s.corpus) == 78 and len(s.queries) >= 60 and s.loaded.skipped == []
    assert all(q.slice == "real" for q in s.queries)


@pytest.mark.parametrize(
    ("bad", "words"),
    [
        ({"doc": "guide/nope.md"}, "unknown doc id 'guide/nope.md'"),
        ({"start": 0, "end": 10_000}, "outside"),
    ],
)
def test_a_gold_span_outside_its_document_or_an_unknown_document_names_the_line(tmp_path, bad, words):
    q = question("q1", "annual leave", "guide/leave.md", "18 days of annual leave")
    q["gold"][0].update(bad)
    docs, path = folder_with_questions(tmp_path, [q])
    with pytest.raises(ValueError) as info:
        capstone.setting(docs, path)
    assert "questions.jsonl line 1" in str(info.value) and words in str(info.value)


def test_a_folder_without_its_questions_file_and_a_repeated_qid_are_refused(tmp_path):
    q = question("q1", "annual leave", "guide/leave.md", "18 days of annual leave")
    docs, path = folder_with_questions(tmp_path, [q, q])
    with pytest.raises(ValueError, match="questions is missing"):
        capstone.setting(docs)
    with pytest.raises(ValueError, match="qid 'q1' appears twice"):
        capstone.setting(docs, path)


def test_generated_questions_and_answers_on_your_folder_name_whose_documents_they_are(tmp_path):
    long = "# Leave\n\n" + " ".join(f"Staff member {i} gets 18 days of annual leave." for i in range(12)) + "\n"
    DOCS_LONG = {**DOCS, "guide/leave.md": long}
    for name, text in DOCS_LONG.items():
        (tmp_path / "docs" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "docs" / name).write_text(text, encoding="utf-8")
    qs = [{"qid": "q1", "question": "how many days of leave", "answer": "18", "slice": "real", "kind": "fact",
           "split": "test", "gold": [{"doc": "guide/leave.md", "start": long.index("Staff member 0"),
                                      "end": long.index("Staff member 1") - 1, "grade": 3}]}]  # fmt: skip
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps(qs[0]) + "\n", encoding="utf-8")
    s = capstone.setting(str(tmp_path / "docs"), str(path), 60, 10)
    about = capstone.About("the staff guide of Acme", "a new hire")
    seen = []

    def model(prompt, schema=None, max_tokens=None):
        seen.append(prompt)
        if schema:  # a question quoting its target chunk, then one whose quote is not in the passage
            passage = prompt.split("PASSAGE:\n", 1)[1]
            quote = " ".join(passage.split()[:6]) if len(seen) == 1 else "not in the passage at all"
            return json.dumps({"question": "How many days?", "answer": "18", "quote": quote})
        return "18 days."

    targets = capstone.targets(s)
    assert [t.doc for t in targets] == ["guide/leave.md"] * 2  # only its two chunks have 40 words or more
    kept, dropped = capstone.generated(s, model, about)
    assert len(kept) == 1 and [d.reason for d in dropped] == ["quote not found in the document"]
    assert "from the staff guide of Acme" in seen[0] and "a new hire could ask" in seen[0]
    (q,) = capstone.generated_queries(kept)
    assert q.qid == "gen-001" and q.slice == "synthetic" and q.gold[0].doc == "guide/leave.md"
    assert long[q.gold[0].start : q.gold[0].end].split() == seen[0].split("PASSAGE:\n", 1)[1].split()[:6]
    table = capstone.answers(s, model, about, k=2)
    assert table["answer"].tolist() == ["18 days."] and table["retrieved"].tolist() == [True]
    assert seen[-1].startswith("You are a help bot for the staff guide of Acme. A new hire asked a question.")
    with pytest.raises(ValueError, match="about must be"):
        capstone.About("", "someone")


def test_the_handbook_prompts_are_unchanged_when_no_corpus_is_named():
    assert synth.generate_prompt("p").startswith("Below is a passage from the internal handbook of Quillbridge")
    assert "that an employee could ask" in synth.generate_prompt("p")
    assert rd.reader_prompt("q", ["p"]).startswith(rd.HEAD)
    with pytest.raises(ValueError, match="head"):
        rd.reader_prompt("q", ["p"], head="use {braces}")


def test_a_model_step_without_a_model_is_skipped_with_one_line(tmp_path, capsys):
    from labkit.generation import llm

    qs = [question("q1", "how many days of annual leave", "guide/leave.md", "18 days of annual leave", "dev")]
    s = capstone.setting(*folder_with_questions(tmp_path, qs), 8, 2)
    called = []
    assert own_folder.model_step("Step 5's answers", None, lambda: called.append(1)) is None and called == []
    replay = llm.Replay(llm.DEFAULT_MODEL)  # the bundled recordings hold nothing for this folder
    assert own_folder.model_step("Step 5's reader", replay, capstone.answers, s, replay, capstone.FOLDER) is None
    lines = capsys.readouterr().out.splitlines()
    recorded = "nothing is recorded for these documents"
    assert lines == [f"Step 5's answers skipped: {own_folder.NO_MODEL}",
                     f"Step 5's reader skipped: {own_folder.NO_MODEL}; {recorded}"]  # fmt: skip
    assert "USE_MODEL = True" in own_folder.NO_MODEL and "`make llm`" in own_folder.NO_MODEL

    def not_installed():
        raise ImportError("llama-cpp-python is not installed")

    assert own_folder.model_step("Step 5's answers", "local", not_installed) is None
    assert own_folder.model_step("Step 5's answers", "a model", lambda: 7) == 7
    assert own_folder.model_step("Step 5's answers", "a model", not_installed) is None
    assert "llama-cpp-python is not installed" in capsys.readouterr().out

    def broken():
        raise ValueError("a real bug")

    with pytest.raises(ValueError, match="a real bug"):  # only a missing model is skipped, never a bug
        own_folder.model_step("Step 5's answers", "a model", broken)
    with pytest.raises(ValueError, match="fn must be the step's function"):
        own_folder.model_step("Step 5's answers", "a model", "capstone.answers")


def test_a_folder_gets_its_own_label_sets_with_references_from_its_gold(tmp_path):
    qs = [question("q1", "how many days of annual leave", "guide/leave.md", "18 days of annual leave", "dev"),
          question("q2", "which vpn gateway abroad", "guide/vpn.md", "The gateway abroad is SG-1."),
          question("q3", "when are expense claims due", "faq.html", "due within 30 days of the trip"),
          {**question("u1", "what is the parking fee", "faq.html", "due"), "gold": [],
           "answerable": False}]  # fmt: skip
    s = capstone.setting(*folder_with_questions(tmp_path, qs), 8, 2)
    ranked = capstone.runs(s)
    label_set, items, reference = own_folder.relevance_set(s, ranked)
    assert sorted(label_set.items) == ["q2", "q3", "u1"]  # the test questions, in a seeded order
    assert label_set.id.startswith("10-relevance-") and label_set.id != labelling.relevance_set()[0].id
    assert label_set.labels == labelling.RELEVANCE
    for qid in label_set.items:
        top = ranked["hybrid"][qid][0]
        assert items[qid]["passage"] == s.texts[top]
        grade = s.qrels.get(qid, {}).get(top, 0)
        assert reference[qid] == {3: "answers", 2: "partly", 1: "partly", 0: "no"}[grade]
    assert reference["u1"] == "no"  # no gold: no passage answers it by the gold
    other = capstone.setting(*folder_with_questions(tmp_path / "other", qs[:3]), 8, 2)
    assert own_folder.relevance_set(other, capstone.runs(other))[0].id != label_set.id  # another folder's own file

    def model(prompt, schema=None, max_tokens=None):
        return "I cannot tell from these passages."

    table = capstone.answers(s, model, capstone.FOLDER, k=2)
    answer_set, answer_items = own_folder.answers_set(s, table)
    assert sorted(answer_set.items) == ["q1", "q2", "q3", "u1"] and answer_set.id.startswith("10-answers-")
    assert "18 days of annual leave" in answer_items["q1"]["reference"]
    assert "marked unanswerable" in answer_items["u1"]["reference"]
    with pytest.raises(ValueError, match="nothing to label for 10-answers"):
        own_folder.answers_set(s, table.iloc[:0])
