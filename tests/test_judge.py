"""Pooled judging, an outside system's run and answers, the report's options, and its arguments checked once,
on the practitioner's folder of tests/test_practitioner.py: a space and a non-ASCII
letter in file names, HTML and CRLF text, quote gold, two unanswerable questions and an incomplete gold (q4)."""

from __future__ import annotations

import io
import json
import re
from collections import Counter

import pytest
from test_practitioner import QUESTIONS, question, write_folder

from labkit.commands import entry, judge, report
from labkit.commands.cli import main
from labkit.data import folder, trec, trec_ids
from labkit.data.judgements import read_judgements
from labkit.data.quotes import normalise_space

SIZE = ["--size", "12", "--overlap", "3"]
"""Small chunks, so the 100-word folder has a dozen of them and q4's incomplete gold shows."""
ANSWERS_BY_CONSTRUCTION = {
    "q1": "any changes to tracked files since the commit are discarded",
    "q2": "18 days of annual leave",
    "q3": "The gateway abroad is SG-1",
    "q4": "Part-time staff get leave in proportion to their hours",
}
"""What answers each question, known because the test wrote the documents: a passage holding it whole is graded 3,
one holding part of it 1, any other 0. q4's gold names only the last line; this sentence answers it too."""


def grade_of(qid: str, text: str) -> str:
    want, text = normalise_space(ANSWERS_BY_CONSTRUCTION[qid]), normalise_space(text)
    if want in text:
        return "3"
    words = want.split()
    return "1" if any(" ".join(words[i : i + 3]) in text for i in range(len(words) - 2)) else "0"


def own_passages(docs) -> dict[str, list[tuple[str, str]]]:
    """An outside system of its own chunking: every sentence of the extracted text, ranked by the words it shares
    with the question (a fixed rule, no model), top 5."""
    loaded = folder.load_folder(docs)
    sentences = [(d, s.strip()) for d, doc in loaded.corpus.items() for s in re.split(r"(?<=[.:])\s+", doc.text)
                 if s.strip()]  # fmt: skip
    asked = {q["qid"]: set(q["question"].lower().split()) for q in QUESTIONS}
    return {q: sorted(sentences, key=lambda p, w=w: (-len(w & set(p[1].lower().split())), p))[:5]
            for q, w in asked.items()}  # fmt: skip


def write_outside(tmp_path, docs):
    ranked = own_passages(docs)
    run = tmp_path / "mine.jsonl"
    lines = [{"qid": q, "rank": r, "doc": d, "text": t} for q, ps in ranked.items() for r, (d, t) in enumerate(ps, 1)]
    run.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8")
    answers = tmp_path / "mine-answers.jsonl"
    rows = [{"qid": q, "answer": ps[0][1] if q.startswith("q") else "I don't know.",
             "passages": [t for _, t in ps[:2]]} for q, ps in ranked.items()]  # fmt: skip
    answers.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return run, answers


def scripted(s_docs, path, out, runs=()):
    """The keys that judge the pool by construction, in the order the command shows it."""
    a = entry.check_args(documents=str(s_docs), questions=str(path), size=12, overlap=3, run_specs=runs)
    s, ranked, outsiders = entry.build(a)
    judged = read_judgements(out, a.queries) if out.exists() else {}
    todo = judge.pool(s, ranked, 5, [o for o in outsiders if o.own], judged)
    return todo, "".join(grade_of(p.qid, p.text) + " " for p in todo)


def test_judge_pools_every_retriever_resumes_and_the_report_reads_the_judgements(tmp_path, monkeypatch, capsys):
    import pytrec_eval

    docs, path = write_folder(tmp_path)
    run, answers = write_outside(tmp_path, docs)
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "judged.jsonl"
    todo, keys = scripted(docs, path, out, [f"mine={run}"])
    assert todo and {p.qid for p in todo} <= {"q1", "q2", "q3", "q4"}  # the unanswerable are not pooled
    assert any("mine" in p.sources for p in todo) and any("bm25" in p.sources for p in todo)
    argv = ["judge", str(docs), "--queries", str(path), "--depth", "5", "--out", str(out), "--rater", "test",
            "--run", f"mine={run}", *SIZE]  # fmt: skip
    monkeypatch.setattr("sys.stdin", io.StringIO(keys[:2] + "x s q"))  # one judged, a wrong key, a skip, quit
    assert main(argv) == 0
    assert "1 judged, 1 skipped" in capsys.readouterr().out and len(out.read_text().splitlines()) == 1
    rest, keys = scripted(docs, path, out, [f"mine={run}"])
    assert len(rest) == len(todo) - 1  # resumable: the judged one is not shown again (the skipped one is)
    monkeypatch.setattr("sys.stdin", io.StringIO(keys))
    assert main(argv) == 0
    assert f"{len(rest)} judged, 0 skipped, 0 left" in capsys.readouterr().out
    lines = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert len(lines) == len(todo) and {x["rater"] for x in lines} == {"test"}
    assert scripted(docs, path, out, [f"mine={run}"])[0] == []  # the pool is complete
    # q4's incomplete gold is completed: the part-time sentence was pooled and judged 3
    assert any(x["qid"] == "q4" and x["grade"] == 3 and "Part-time" in x["text"] for x in lines)

    rep = tmp_path / "rep"
    assert main(["report", str(docs), "--queries", str(path), "--out", str(rep), "--format", "json", *SIZE,
                 "--judgements", str(out), "--run", f"mine={run}", "--answers", str(answers)]) == 0  # fmt: skip
    printed = capsys.readouterr().out
    used = sum(1 for x in lines)
    assert f"gold from your spans + {used} pooled judgements" in printed
    assert "run mine: mine.jsonl, its own passages (JSONL)" in printed
    assert "answerable by kind: 1 comparison, 3 fact" in printed and "chunks: " in printed
    got = json.loads((rep / "report.json").read_text(encoding="utf-8"))
    qrels = {q: {trec_ids.original_id(c): g for c, g in j.items()} for q, j in
             trec.read_qrels(rep / "qrels.txt").items()}  # fmt: skip
    for x in lines:  # every judgement of a chunk is in the written qrels
        for c, t in got_texts(docs, path).items():
            if normalise_space(t) == normalise_space(x["text"]):
                assert qrels[x["qid"]][c] >= x["grade"]
    kinds = {q["qid"]: q["kind"] for q in QUESTIONS}
    for name in ("bm25", "dense", "hybrid"):
        run_file = trec.read_run(rep / f"run-{name}.txt")
        ranked = {q: [trec_ids.original_id(c) for c in sorted(r, key=lambda c, r=r: (-r[c], [-ord(x) for x in c]))]
                  for q, r in run_file.items()}  # fmt: skip
        for k in (3, 10):
            cut = {q: {c: float(k - i) for i, c in enumerate(ranked[q][:k])} for q in qrels}
            theirs = pytrec_eval.RelevanceEvaluator(qrels, {f"ndcg_cut.{k}", f"recall.{k}"}).evaluate(cut)
            for kind in ("fact", "comparison"):  # every metric per kind, checked at both k
                qs = [q for q in theirs if kinds[q] == kind]
                mean = sum(theirs[q][f"ndcg_cut_{k}"] for q in qs) / len(qs)
                assert got["by_kind"][str(k)][kind][f"nDCG@k {name}"] == pytest.approx(mean, abs=1e-9)
                mean = sum(theirs[q][f"recall_{k}"] for q in qs) / len(qs)
                assert got["by_kind"][str(k)][kind][f"R@k {name}"] == pytest.approx(mean, abs=1e-9)
            judged = sum(sum(c in qrels[q] for c in ranked[q][:k]) / k for q in qrels) / len(qrels)
            assert got["judged"][f"judged@{k}"][name] == pytest.approx(judged, abs=5e-4)
        for row in got["top3"]:  # the per-question table: the run's order, the qrels' judgement
            if row["retriever"] == name:
                assert ranked[row["qid"]][row["rank"] - 1] == row["chunk"]
                want = qrels.get(row["qid"], {}).get(row["chunk"])
                assert row["judgement"] == ("unjudged" if want is None else str(want))
    # the outside run of its own passages: its qrels are the gold spans it holds whole, plus the judgements
    own_q = trec.read_qrels(rep / "qrels-mine.txt")
    own_r = trec.read_run(rep / "run-mine.txt")
    theirs = pytrec_eval.RelevanceEvaluator(own_q, {"P.3,10"}).evaluate(own_r)
    for k in (3, 10):
        hits = [float(theirs[q][f"P_{k}"] > 0) if q in theirs else 0.0 for q in ("q1", "q2", "q3", "q4")]
        assert got["means"][str(k)]["hit@k mine"] == pytest.approx(sum(hits) / 4)
    assert got["judgements"]["relevant"] >= 1 and got["runs"] == {"mine": "its own passages (JSONL)"}
    assert [f["finding"] for f in got["paired"]][:3] == ["hybrid − bm25 (nDCG@k)", "hybrid − dense (nDCG@k)",
                                                         "mine − hybrid (ER@k)"]  # fmt: skip
    assert {f["verdict"] for f in got["paired"]} == {"too few"}  # 4 questions: no interval, said so
    assert got["answers"]["unanswerable: declined, as it should"] == {"count": 2, "of": 2}
    answered = [json.loads(x) for x in (rep / "answers.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [r["qid"] for r in answered] == [q["qid"] for q in QUESTIONS]


def got_texts(docs, path):
    a = entry.check_args(documents=str(docs), questions=str(path), size=12, overlap=3)
    return entry.build(a)[0].texts


def test_the_report_without_judgements_leaves_q4s_answer_unjudged(tmp_path, monkeypatch):
    docs, path = write_folder(tmp_path)
    monkeypatch.chdir(tmp_path)
    a = entry.check_args(documents=str(docs), questions=str(path), size=12, overlap=3)
    s, ranked, _ = entry.build(a)
    answering = [c for c, t in s.texts.items() if grade_of("q4", t) == "3"]
    assert answering and all(c not in s.qrels["q4"] for c in answering)  # the incomplete gold, as written


def test_follow_ups_are_measured_as_typed_and_as_rewritten(tmp_path, monkeypatch):
    rows = [*QUESTIONS, question("q5", [{"doc": "vpn.md", "quote": "called Tunnel", "grade": 3}], history=["VPN?"],
                                 rewritten="what is the VPN client called")]  # fmt: skip
    rows[-1]["question"] = "and what is it called"
    docs, path = write_folder(tmp_path, rows)
    monkeypatch.chdir(tmp_path)
    assert main(["report", str(docs), "--queries", str(path), "--out", str(tmp_path / "r"), "--format", "json",
                 "--k", "2", "5"]) == 0  # fmt: skip
    got = json.loads((tmp_path / "r" / "report.json").read_text(encoding="utf-8"))
    assert set(got["follow_ups"]) == {"2", "5"} and got["k"] == [2, 5]
    assert set(got["follow_ups"]["5"]) == {"as rewritten (the report's rows)", "as typed"}
    assert "follow-ups are searched by their rewritten text" in " ".join(got["notes"])


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        (["--k", "10", "3"], "the smaller first"),
        (["--k", "0", "3"], "--k first must be >= 1"),
        (["--size", "10", "--overlap", "10"], "overlap (10) must be smaller than size (10)"),
        (["--run", "nameonly"], "give NAME=FILE"),
        (["--run", "hybrid=x.jsonl"], "the name 'hybrid' is taken"),
        (["--run", "a b=x.jsonl"], "NAME must be letters"),
        (["--answers", "missing.jsonl"], "missing.jsonl"),
        (["--judgements", "missing.jsonl"], "missing.jsonl"),
        (["--llm", "replay", "--answers", "x.jsonl"], "not both"),
        (["--llm", "nope"], "--llm must be one of"),
        (["--answer-labels", "x.jsonl"], "--answer-labels needs answers"),
    ],
)
def test_bad_options_stop_before_anything_is_embedded(tmp_path, monkeypatch, capsys, extra, words):
    docs, path = write_folder(tmp_path)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "x.jsonl").write_text("", encoding="utf-8")
    monkeypatch.setattr(report, "build", lambda a: pytest.fail("embedded before the options were checked"))
    assert main(["report", str(docs), "--queries", str(path), "--out", str(tmp_path / "r"), *extra]) == 2
    assert words in capsys.readouterr().err and not (tmp_path / "r").exists()


@pytest.mark.parametrize(
    ("lines", "words"),
    [
        ([{"qid": "q1", "doc": "vpn.md"}], "line 1: text must be a non-empty string"),
        ([{"qid": "zz", "doc": "vpn.md", "text": "x"}], "qid 'zz' is not in the questions file"),
        ([{"qid": "q1", "doc": "vpn.md", "text": "x", "rnak": 1}], "unknown key(s) ['rnak']"),
        ([{"qid": "q1", "doc": "d", "text": "x", "rank": 1}, {"qid": "q1", "doc": "d", "text": "y"}], "on none"),
        ([{"qid": "q1", "doc": "d", "text": "x"}, {"qid": "q1", "doc": "d", "text": "x"}], "twice"),
        ("q1 Q0 nosuch.md#0 1 1.0 x\n", "not chunks of this report"),
    ],
)
def test_a_bad_outside_run_is_refused_naming_its_line(tmp_path, lines, words):
    docs, path = write_folder(tmp_path)
    run = tmp_path / "run.jsonl"
    run.write_text(lines if isinstance(lines, str) else "".join(json.dumps(x) + "\n" for x in lines), "utf-8")
    with pytest.raises(ValueError) as info:
        a = entry.check_args(documents=str(docs), questions=str(path), run_specs=[f"mine={run}"])
        entry.build(a)
    assert words in str(info.value)


def test_bad_answers_and_judgements_are_refused_naming_the_line(tmp_path):
    docs, path = write_folder(tmp_path)
    ans = tmp_path / "a.jsonl"
    ans.write_text(json.dumps({"qid": "q1", "answer": "x", "passages": []}) + "\n", "utf-8")
    with pytest.raises(ValueError, match="has no answer for 'q2' \\(5 question"):
        entry.check_args(documents=str(docs), questions=str(path), answers=str(ans))
    ans.write_text(json.dumps({"qid": "q1", "answer": "x", "passages": [3]}) + "\n", "utf-8")
    with pytest.raises(ValueError, match="line 1: passages\\[0\\] must be a text"):
        entry.check_args(documents=str(docs), questions=str(path), answers=str(ans))
    bad = tmp_path / "j.jsonl"
    bad.write_text(json.dumps({"qid": "u1", "text": "x", "grade": 2}) + "\n", "utf-8")
    with pytest.raises(ValueError, match="'u1' is marked \"answerable\": false"):
        entry.check_args(documents=str(docs), questions=str(path), judgements=str(bad))
    bad.write_text(json.dumps({"qid": "q1", "text": "x", "grade": 7}) + "\n", "utf-8")
    with pytest.raises(ValueError, match="line 1: grade must be one of \\[0, 1, 2, 3\\]"):
        entry.check_args(documents=str(docs), questions=str(path), judgements=str(bad))


def test_one_report_run_checks_each_argument_once(tmp_path, monkeypatch):
    """The report's path checks its arguments where they enter; the commands' own code and the
    helpers it calls for them (capstone's question loading, the TREC ids) check nothing twice."""
    import sys

    from labkit.core import args, files

    docs, path = write_folder(tmp_path)
    run, answers = write_outside(tmp_path, docs)
    monkeypatch.chdir(tmp_path)
    calls: Counter = Counter()
    watched = ("labkit/commands/", "labkit/studies/capstone.py", "labkit/data/trec_ids.py")

    def counting(fn):
        def wrapper(name, value, *rest, **kw):
            caller = sys._getframe(1).f_code.co_filename.replace("\\", "/")
            if any(w in caller for w in watched):
                calls[(fn.__name__, str(name))] += 1
            return fn(name, value, *rest, **kw)

        return wrapper

    from labkit.studies import capstone

    for fname in ("whole_number", "text", "sequence", "strings", "mapping", "by_id", "numbers"):
        monkeypatch.setattr(args, fname, counting(getattr(args, fname)))
    for module in (files, entry, capstone):
        monkeypatch.setattr(module, "path_arg", counting(files.path_arg))
    assert main(["report", str(docs), "--queries", str(path), "--out", str(tmp_path / "r"), "--format", "json",
                 "--run", f"mine={run}", "--answers", str(answers), "--rerank"]) == 0  # fmt: skip
    twice = {key: n for key, n in calls.items() if n > 1}
    assert calls and not twice, twice


def test_the_readmes_worked_example_runs(tmp_path):
    """README.md, "For practitioners": the worked example's commands, run as written in an empty folder, with the
    judging keys piped (3 for every pooled passage)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    script = readme.split("A worked example", 1)[1].split("````bash\n", 1)[1].split("````", 1)[0]
    root = str(Path(__file__).resolve().parents[1])
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "PYTHONPATH": root}  # fmt: skip
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=tmp_path, env=env, input="3 " * 20,
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert '{"doc": "leave.txt", "start": 34, "end": 57}' in done.stdout
    assert "0 left" in done.stdout and "gold from your spans + " in done.stdout
    assert sorted(p.name for p in (tmp_path / "report").iterdir()) == [
        "answers.jsonl", "ids.tsv", "qrels-mine.txt", "qrels.txt", "report.html", "run-bm25.txt", "run-dense.txt",
        "run-hybrid.txt", "run-mine.txt"]  # fmt: skip
    judged = [json.loads(x) for x in (tmp_path / "Q.judgements.jsonl").read_text(encoding="utf-8").splitlines()]
    assert any(x["qid"] == "q2" and "Part-time" in x["text"] and x["grade"] == 3 for x in judged)


def test_an_outside_trec_run_over_the_reports_chunks_is_measured_as_ours_are(tmp_path, monkeypatch):
    docs, path = write_folder(tmp_path)
    monkeypatch.chdir(tmp_path)
    first = tmp_path / "first"
    assert main(["report", str(docs), "--queries", str(path), "--out", str(first), "--format", "json", *SIZE]) == 0
    again = tmp_path / "again"  # the hybrid's own TREC run (ids percent-encoded) given back as an outside system's
    assert main(["report", str(docs), "--queries", str(path), "--out", str(again), "--format", "json", *SIZE,
                 "--run", f"copy={first / 'run-hybrid.txt'}"]) == 0  # fmt: skip
    got = json.loads((again / "report.json").read_text(encoding="utf-8"))
    assert got["runs"] == {"copy": "a TREC run over the report's chunks"}
    for k in ("3", "10"):
        for m in ("R@k", "nDCG@k", "hit@k", "ER@k"):
            assert got["means"][k][f"{m} copy"] == got["means"][k][f"{m} hybrid"]
        assert got["judged"][f"judged@{k}"]["copy"] == got["judged"][f"judged@{k}"]["hybrid"]
    copy = [f for f in got["paired"] if f["finding"] == "copy − hybrid (nDCG@k)"]
    assert len(copy) == 2 and all(f["estimate"] == 0 for f in copy)
    assert trec.read_run(again / "run-copy.txt") == trec.read_run(first / "run-hybrid.txt")


def test_judge_with_rerank_pools_the_reranked_top_depth_too(tmp_path, monkeypatch, capsys):
    from labkit.commands import reranker

    docs, path = write_folder(tmp_path)
    monkeypatch.chdir(tmp_path)
    a = entry.check_args(documents=str(docs), questions=str(path), size=12, overlap=3, rerank=True)
    s, ranked, _ = entry.build(a)
    assert a.rerank.mode == "handbook" and set(ranked[reranker.NAME]) == {q["qid"] for q in QUESTIONS}
    todo = judge.pool(s, ranked, 5, [], {})
    pooled = {(p.qid, p.pid) for p in todo if reranker.NAME in p.sources}
    want = {(q, c) for q in ("q1", "q2", "q3", "q4") for c in ranked[reranker.NAME][q][:5] if c not in s.qrels[q]}
    assert want and pooled == want  # every unjudged passage of its top 5, said to come from it
    out = tmp_path / "j.jsonl"
    monkeypatch.setattr("sys.stdin", io.StringIO("q"))
    assert main(["judge", str(docs), "--queries", str(path), "--out", str(out), "--rater", "t", "--rerank",
                 *SIZE]) == 0  # fmt: skip
    assert f"pool: top 5 of bm25, dense, hybrid, {reranker.NAME};" in capsys.readouterr().out
