"""python -m labkit report: an HTML page and TREC files for any folder, written only where it is told."""

from __future__ import annotations

import json
import os
import re

import pytest
from test_llm_local import llm_installed  # tests/ is on the path

from labkit.commands.cli import main
from labkit.data import trec
from labkit.judges import correctness
from labkit.studies import capstone

DOCS = {
    "a/vpn.md": "# VPN\n\nConnect to the VPN before you open Jira. The gateway abroad is SG-1.\n",
    "b/leave.txt": "Full-time staff get 18 days of annual leave a year.\n",
    "c/notes.html": "<html><body><main><h1>Expenses</h1><p>Claims are due within 30 days.</p></main></body></html>",
    "d/logo.png": "\x89PNG not text",
}


def make_folder(tmp_path):
    docs = tmp_path / "docs"
    for name, text in DOCS.items():
        (docs / name).parent.mkdir(parents=True, exist_ok=True)
        (docs / name).write_text(text, encoding="utf-8")
    rows = []
    for qid, doc, quote in (("q1", "a/vpn.md", "The gateway abroad is SG-1."),
                            ("q2", "b/leave.txt", "18 days of annual leave")):  # fmt: skip
        start = DOCS[doc].index(quote)
        gold = [{"doc": doc, "start": start, "end": start + len(quote), "grade": 3}]
        rows.append({"qid": qid, "question": f"about {quote[:12]}", "answer": quote, "slice": "real", "kind": "fact",
                     "split": "test", "gold": gold})  # fmt: skip
    questions = tmp_path / "questions.jsonl"
    questions.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return docs, questions


def listing(folder):
    return {str(p): p.stat().st_mtime_ns for p in sorted(folder.rglob("*"))}


def test_a_report_on_a_small_folder_writes_only_into_out(tmp_path, capsys, monkeypatch):
    docs, questions = make_folder(tmp_path)
    monkeypatch.chdir(tmp_path)
    before, out = listing(docs), tmp_path / "report"
    assert main(["report", str(docs), "--queries", str(questions), "--out", str(out)]) == 0
    assert listing(docs) == before and sorted(os.listdir(tmp_path)) == ["docs", "questions.jsonl", "report"]
    assert sorted(os.listdir(out)) == ["qrels.txt", "report.html", "run-bm25.txt", "run-dense.txt", "run-hybrid.txt"]
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "3 documents (1 html, 1 markdown, 1 text)" in page and "d/logo.png: unsupported type: .png" in page
    assert "IDCG over every judged chunk" in page and "data:image/png;base64," in page
    assert set(trec.read_qrels(out / "qrels.txt")) == {"q1", "q2"}
    assert "report.html" in capsys.readouterr().out


def test_the_bundled_corpus_report_agrees_with_trec_eval(tmp_path):
    import pytrec_eval

    from labkit.commands.report import write_report
    from labkit.generation import llm
    from labkit.studies import pydocs

    labels_path = pydocs.root() / "answer_labels.jsonl"
    written = write_report(tmp_path, llm_mode="replay", answer_labels=str(labels_path))
    qrels = trec.read_qrels(written["qrels"])
    run = trec.read_run(written["run-hybrid"])
    scores = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(run)
    theirs = sum(s["ndcg_cut_10"] for s in scores.values()) / len(scores)
    ours = capstone.per_query(capstone.setting(), 10)["nDCG@k hybrid"].mean()
    assert theirs == pytest.approx(ours, abs=1e-9)
    page = written["report"].read_text(encoding="utf-8")
    assert f"{ours:.3f} [" in page
    rows = [json.loads(x) for x in written["answers"].read_text(encoding="utf-8").splitlines()]
    table = capstone.answers(capstone.setting(), llm.Replay(llm.DEFAULT_MODEL))
    assert [r["answer"] for r in rows] == table["answer"].tolist()  # the chapter's replayed answers
    grid = capstone.two_by_two(table, {q: r["label"] for q, r in pydocs.answer_labels().items()})
    cells = dict(re.findall(r"<th>(OK|GEN_FAIL|LUCKY|RET_FAIL)</th>\s*<td>(\d+)</td>", page))
    assert cells == {c: str(int(n)) for c, n in grid["answers"].items()}


def test_bad_arguments_are_clear_errors(tmp_path, capsys):
    docs, questions = make_folder(tmp_path)
    assert main(["report", str(docs), "--out", str(tmp_path / "r")]) == 2
    assert "questions is missing" in capsys.readouterr().err
    (tmp_path / "file").write_text("x")
    assert main(["report", "--out", str(tmp_path / "file")]) == 2
    assert "is a file: give a folder" in capsys.readouterr().err
    assert main(["report", str(tmp_path / "nowhere"), "--queries", str(questions), "--out", str(tmp_path / "r")]) == 2
    assert "not found" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


def test_with_a_live_reader_on_loopback_the_report_adds_answers_and_their_2x2(tmp_path, monkeypatch):
    from test_llm_http import ScriptedServer, completion, http_reply  # tests/ is on the path

    docs, questions = make_folder(tmp_path)
    server = ScriptedServer([http_reply(completion("SG-1.")), http_reply(completion("I don't know."))])
    try:
        monkeypatch.setenv("LABKIT_LLM_BASE_URL", server.url)
        monkeypatch.setenv("LABKIT_LLM_MODEL", "test-model")
        labels = tmp_path / "labels.jsonl"
        labels.write_text('{"qid": "q1", "label": "right"}\n{"qid": "q2", "label": "declined"}\n', encoding="utf-8")
        out = tmp_path / "report"
        assert main(["report", str(docs), "--queries", str(questions), "--out", str(out), "--llm", "live",
                     "--source", "the Acme staff guide", "--asker", "a new hire",
                     "--answer-labels", str(labels)]) == 0  # fmt: skip
    finally:
        server.close()
    sent = b"".join(server.requests).decode()
    assert len(server.requests) == 2 and "You are a help bot for the Acme staff guide. A new hire asked" in sent
    rows = [json.loads(x) for x in (out / "answers.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [(r["qid"], r["answer"], r["declined"]) for r in rows] == [("q1", "SG-1.", False),
                                                                      ("q2", "I don't know.", True)]  # fmt: skip
    assert {r["reader"] for r in rows} == {"test-model (live)"}  # the endpoint's model, as it was asked for
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "the reader declined" in page and "1 of 2" in page and "chapter 07's 2x2" in page
    cells = dict(re.findall(r"<th>(OK|GEN_FAIL|LUCKY|RET_FAIL)</th>\s*<td>(\d+)</td>", page))
    hit_q2 = rows[1]["retrieved"]
    assert cells == {"OK": "1", "GEN_FAIL": str(int(hit_q2)), "LUCKY": "0", "RET_FAIL": str(1 - int(hit_q2))}


def test_answer_options_need_an_llm_and_labels_must_be_known(tmp_path, capsys):
    docs, questions = make_folder(tmp_path)
    assert main(["report", str(docs), "--queries", str(questions), "--out", str(tmp_path / "r"),
                 "--answer-labels", "x.jsonl"]) == 2  # fmt: skip
    assert "--answer-labels needs answers to label: --llm MODE" in capsys.readouterr().err
    assert main(["report", str(docs), "--queries", str(questions), "--out", str(tmp_path / "r"), "--llm", "magic"]) == 2
    assert "--llm must be one of replay" in capsys.readouterr().err
    with pytest.raises(ValueError, match="labels.jsonl line 1: unknown qid 'q9'"):
        bad = tmp_path / "labels.jsonl"
        bad.write_text('{"qid": "q9", "label": "right"}\n', encoding="utf-8")
        correctness.read_answer_labels(bad, {"q1"})
    with pytest.raises(ValueError, match="label 'fine' must be one of"):
        bad.write_text('{"qid": "q1", "label": "fine"}\n', encoding="utf-8")
        correctness.read_answer_labels(bad, {"q1"})


# ---------------------------------------------------------------- --rerank: 04b's learned reranker on your folder

TOPICS = ("printer", "parking", "laptop", "badge", "canteen", "shuttle", "locker", "wifi", "payroll", "library", "gym",
          "mailroom", "helpdesk", "archive", "garden", "studio", "lab", "kiosk", "atrium", "bikes", "cloakroom",
          "terrace")  # fmt: skip
RERANK_SIZE = ["--size", "12", "--overlap", "3"]


def rerank_folder(tmp_path, n_dev):
    """One page per topic, each giving its access code among other sentences about it; one question per page
    whose gold is the code's sentence (a quote): the first ``n_dev`` questions marked dev, the rest test."""
    docs = tmp_path / "docs"
    docs.mkdir()
    rows = []
    for i, t in enumerate(TOPICS):
        code = f"{t[:3].upper()}-{100 + 7 * i}"
        (docs / f"{t}.md").write_text(
            f"# The {t}\n\nThe {t} is on floor {i % 5 + 1} and opens at {8 + i % 3} in the morning. Ask the front "
            f"desk about the {t} rules before your first visit. The {t} access code is {code} and it changes every "
            f"quarter. Staff who lose the {t} code should write to the office manager.\n",
            encoding="utf-8",
        )
        rows.append({"qid": f"q{i:02d}", "question": f"what is the {t} access code", "answer": code, "slice": "real",
                     "kind": "fact", "split": "dev" if i < n_dev else "test",
                     "gold": [{"doc": f"{t}.md", "quote": f"The {t} access code is {code}", "grade": 3}]})  # fmt: skip
    questions = tmp_path / "questions.jsonl"
    questions.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return docs, questions


def check_against_trec_eval(out, got, measured):
    """The reranked run's figures, as report.json gives them, recomputed by pytrec_eval from the written files;
    the run holds the questions it is measured on, no other; its top 20 is the hybrid's top 20 reordered."""
    import pytrec_eval

    from labkit.commands import reranker

    qrels = trec.read_qrels(out / "qrels.txt")
    run = trec.read_run(out / "run-hybrid+rerank.txt")
    hybrid = trec.read_run(out / "run-hybrid.txt")
    assert sorted(run) == sorted(measured)
    order = lambda r: sorted(r, key=lambda c: -r[c])  # noqa: E731  (scores are n - rank + 1: no ties)
    for q in run:
        mine, theirs, k1 = order(run[q]), order(hybrid[q]), reranker.K1
        assert sorted(mine[:k1]) == sorted(theirs[:k1]) and mine[k1:] == theirs[k1:]
    for k in (3, 10):
        scores = pytrec_eval.RelevanceEvaluator(qrels, {f"ndcg_cut.{k}", f"recall.{k}"}).evaluate(run)
        assert sorted(scores) == sorted(measured)
        for ours, theirs in (("nDCG@k", f"ndcg_cut_{k}"), ("R@k", f"recall_{k}")):
            mean = sum(s[theirs] for s in scores.values()) / len(scores)
            assert got["means"][str(k)][f"{ours} hybrid+rerank"] == pytest.approx(mean, abs=1e-9)
        assert got["means"][str(k)]["n hybrid+rerank"] == len(measured)
        member = [f for f in got["paired"] if f["k"] == k and f["finding"] == "hybrid+rerank − hybrid (nDCG@k)"]
        hybrid_scores = pytrec_eval.RelevanceEvaluator(qrels, {f"ndcg_cut.{k}"}).evaluate(
            {q: hybrid[q] for q in measured}
        )
        diff = sum(scores[q][f"ndcg_cut_{k}"] - hybrid_scores[q][f"ndcg_cut_{k}"] for q in measured) / len(measured)
        assert len(member) == 1 and member[0]["estimate"] == pytest.approx(diff, abs=1e-9)  # paired, its questions


def test_rerank_trains_on_the_dev_questions_and_is_measured_on_the_others(tmp_path, monkeypatch):
    from labkit.commands import entry, reranker

    docs, questions = rerank_folder(tmp_path, n_dev=12)
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "r"
    assert main(["report", str(docs), "--queries", str(questions), "--out", str(out), "--format", "json",
                 "--rerank", *RERANK_SIZE]) == 0  # fmt: skip
    got = json.loads((out / "report.json").read_text(encoding="utf-8"))
    test = [f"q{i:02d}" for i in range(12, len(TOPICS))]
    assert got["rerank"]["trained on"] == "dev" and got["rerank"]["k1"] == 20 and got["rerank"]["measured on"] == 10
    assert got["rerank"]["dev questions"] == [f"q{i:02d}" for i in range(12)]
    assert "measured only on the 10 other answerable question(s), never on those it was trained on" in got["notes"][0]
    check_against_trec_eval(out, got, test)  # no dev question in the run, nor in any figure of it
    a = entry.check_args(documents=str(docs), questions=str(questions), size=12, overlap=3, rerank=True)
    s, ranked, _ = entry.build(a)
    a.rerank.model = None  # fitted afresh: seeded, one thread, the same run
    again = reranker.run(a.rerank, s, ranked["hybrid"])
    assert again == ranked["hybrid+rerank"] == {q: ranked["hybrid+rerank"][q] for q in test}
    # per question kind, the reranked run's means are over its own questions, and the table says how many
    assert got["by_kind"]["3"]["fact"]["n"] == len(TOPICS) and got["by_kind"]["3"]["fact"]["n hybrid+rerank"] == 10


def test_rerank_measures_the_follow_ups_as_typed_and_as_rewritten_on_its_own_questions(tmp_path, monkeypatch):
    import pytrec_eval

    docs, questions = rerank_folder(tmp_path, n_dev=12)
    rows = [json.loads(line) for line in questions.read_text(encoding="utf-8").splitlines()]
    follow = {"q00", "q12", "q13", "q14"}  # one dev question (trained on, never measured) and three test ones
    for r in rows:
        if r["qid"] in follow:
            r["rewritten"], r["question"], r["history"] = r["question"], "and its access code?", ["which floor?"]
    questions.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "r"
    assert main(["report", str(docs), "--queries", str(questions), "--out", str(out), "--format", "json",
                 "--rerank", *RERANK_SIZE]) == 0  # fmt: skip
    got = json.loads((out / "report.json").read_text(encoding="utf-8"))
    rewritten, typed = (got["follow_ups"]["3"][w] for w in ("as rewritten (the report's rows)", "as typed"))
    for row in (rewritten, typed):
        assert row["n"] == 4 and row["n hybrid+rerank"] == 3 and row["nDCG@k hybrid+rerank"] is not None
    qrels, run = trec.read_qrels(out / "qrels.txt"), trec.read_run(out / "run-hybrid+rerank.txt")
    scores = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.3"}).evaluate({q: run[q] for q in follow - {"q00"}})
    mean = sum(x["ndcg_cut_3"] for x in scores.values()) / 3
    assert rewritten["nDCG@k hybrid+rerank"] == pytest.approx(mean, abs=1e-9)  # the report's own rows, its 3
    # as typed ("and its access code?" names no topic) the hybrid finds less, and the reranker reorders only that
    assert typed["nDCG@k hybrid"] < rewritten["nDCG@k hybrid"]
    page = tmp_path / "page"
    assert main(["report", str(docs), "--queries", str(questions), "--out", str(page), "--rerank", *RERANK_SIZE]) == 0
    html_text = (page / "report.html").read_text(encoding="utf-8")
    follow_part = html_text[html_text.index("Follow-ups: as typed and as rewritten") :]
    assert "n hybrid+rerank" in follow_part and "nDCG@k hybrid+rerank" in follow_part


def test_rerank_without_dev_questions_carries_the_handbooks_model_over(tmp_path, monkeypatch, capsys):
    docs, questions = rerank_folder(tmp_path, n_dev=0)
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "r"
    assert main(["report", str(docs), "--queries", str(questions), "--out", str(out), "--rerank", *RERANK_SIZE]) == 0
    said = "carried over from the handbook, not trained on your questions"
    assert said in capsys.readouterr().out
    page = (out / "report.html").read_text(encoding="utf-8")
    assert said in page and "hybrid+rerank − hybrid (nDCG@k)" in page
    assert main(["report", str(docs), "--queries", str(questions), "--out", str(out), "--rerank", "--format", "json",
                 *RERANK_SIZE]) == 0  # fmt: skip
    got = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert got["rerank"]["trained on"] == "handbook" and got["rerank"]["dev questions"] == []
    check_against_trec_eval(out, got, [f"q{i:02d}" for i in range(len(TOPICS))])


@pytest.mark.parametrize(
    ("n_dev", "words"),
    [
        (
            4,
            '--rerank: 4 question(s) marked "split": "dev" have gold; training the reranker on your questions needs '
            "at least 10",
        ),
        (len(TOPICS), "none is left to measure the reranker on"),
    ],
)
def test_rerank_with_too_few_dev_questions_is_refused_before_anything_is_embedded(tmp_path, monkeypatch, capsys,
                                                                                  n_dev, words):  # fmt: skip
    from labkit.commands import report

    docs, questions = rerank_folder(tmp_path, n_dev=n_dev)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(report, "build", lambda a: pytest.fail("embedded before --rerank was checked"))
    assert main(["report", str(docs), "--queries", str(questions), "--out", str(tmp_path / "r"), "--rerank"]) == 2
    err = capsys.readouterr().err
    assert words in err and not (tmp_path / "r").exists()
    assert 'mark none "dev"' in err if n_dev < 10 else 'mark some "split": "test"' in err


@pytest.mark.llm
@llm_installed  # the same condition as the other real-model tests (tests/test_llm_local.py)
def test_with_the_real_local_model_the_report_answers_every_question_and_records_nothing(tmp_path, monkeypatch):
    """``--llm local-small``: the local 0.5B reads each question's hybrid top 3 and answers; the answers are
    written beside the report with what the reader was given, and nothing is appended to the cassettes."""
    from labkit import data_dir
    from labkit.generation import llm

    cassettes = {p: p.read_bytes() for p in (data_dir() / "llm").glob("*.jsonl")}
    docs, questions = make_folder(tmp_path)
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "report"
    assert main(["report", str(docs), "--queries", str(questions), "--out", str(out), "--llm", "local-small"]) == 0
    rows = [json.loads(x) for x in (out / "answers.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [r["qid"] for r in rows] == ["q1", "q2"]
    assert all(isinstance(r["answer"], str) and r["answer"].strip() for r in rows)
    assert all(isinstance(r["declined"], bool) and isinstance(r["retrieved"], bool) for r in rows)
    assert {r["reader"] for r in rows} == {f"{llm.SMALL_MODEL} (local-small)"}  # which model wrote each answer
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "the reader declined" in page and f"top 3, {llm.SMALL_MODEL} (local-small)" in page
    assert {p: p.read_bytes() for p in (data_dir() / "llm").glob("*.jsonl")} == cassettes
