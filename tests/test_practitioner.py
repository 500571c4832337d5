"""A practitioner's folder: file names with a space and a non-ASCII letter, HTML and CRLF text, gold as quotes, two
unanswerable questions and an incomplete gold; the report runs on it and agrees with pytrec_eval."""

from __future__ import annotations

import json
import os

import pytest

from labkit.commands.cli import main, show_text
from labkit.data import folder, trec, trec_ids
from labkit.data.corpus import parse_query
from labkit.studies import capstone

PAGE = """<html><head><title>git reset</title></head><body><nav>Home</nav><main><h1>git reset</h1>
<p>Reset current HEAD to the specified state.</p><p>The <code>--hard</code> mode resets the index and the
working tree: any changes to tracked files since the commit are discarded.</p>
<p>The --soft mode does not touch the index file or the working tree at all.</p></main></body></html>"""
CRLF = ("Leave policy\r\n\r\nFull-time staff get 18 days of annual leave a year.\r\nPart-time staff get leave in "
        "proportion to their hours.\r\nUnused leave expires at the end of March.\r\n")  # fmt: skip
DOCS = {
    "git reset notes.html": PAGE,
    "café/leave.txt": CRLF,
    "vpn.md": "# VPN\n\nConnect to the VPN before you open Jira. The gateway abroad is SG-1.\n\nThe VPN client "
    "is called Tunnel and updates itself on Mondays.\n",
}


ASKED = {"q1": "what does git reset --hard do to my changes", "q2": "how many days of annual leave",
         "q3": "which gateway abroad for the VPN", "q4": "leave for part-time staff", "u1": "who founded the company",
         "u2": "what is the parking fee"}  # fmt: skip


def question(qid, gold, kind="fact", answerable=True, **extra):
    row = {"qid": qid, "question": ASKED.get(qid, f"question {qid}?"), "answer": "an answer", "slice": "real",
           "kind": kind, "split": "test", "gold": gold, **extra}  # fmt: skip
    return row if answerable else {**row, "answerable": False}


QUESTIONS = [
    question(
        "q1",
        [
            {
                "doc": "git reset notes.html",
                "quote": "any changes to tracked files since the commit are discarded",
                "grade": 3,
            }
        ],
    ),  # fmt: skip
    question("q2", [{"doc": "café/leave.txt", "quote": "18 days of annual leave", "grade": 3}]),
    question("q3", [{"doc": "vpn.md", "quote": "The gateway   abroad\nis SG-1.", "grade": 3}], kind="comparison"),
    # incomplete: the passage on part-time leave answers too, but only the CRLF file's last line is gold
    question("q4", [{"doc": "café/leave.txt", "quote": "Unused leave expires at the end of March.", "grade": 3}]),
    question("u1", [], answerable=False),
    question("u2", [], answerable=False, kind="synthesis"),
]


def write_folder(tmp_path, questions=QUESTIONS):
    docs = tmp_path / "my docs"
    for name, text in DOCS.items():
        (docs / name).parent.mkdir(parents=True, exist_ok=True)
        (docs / name).write_bytes(text.encode("utf-8"))
    path = tmp_path / "questions.jsonl"
    path.write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in questions), encoding="utf-8")
    return docs, path


def test_quotes_are_found_in_the_extracted_text_html_and_crlf_alike(tmp_path):
    docs, path = write_folder(tmp_path)
    loaded = folder.load_folder(docs)
    qs = capstone.load_question_file(path, loaded.corpus)
    for q, want in zip(qs[:4], ["any changes to tracked files since the commit are discarded",
                                "18 days of annual leave", "The gateway abroad is SG-1.",
                                "Unused leave expires at the end of March."], strict=True):  # fmt: skip
        assert " ".join(q.gold[0].text(loaded.corpus).split()) == want
    raw = DOCS["café/leave.txt"]
    assert qs[3].gold[0].start < raw.index("Unused")  # the raw CRLF offset is not the extracted one
    assert [q.answerable for q in qs] == [True] * 4 + [False] * 2


@pytest.mark.parametrize(
    ("span", "words"),
    [
        (
            {"doc": "vpn.md", "quote": "connect to the vpn", "grade": 3},
            ["q9", "vpn.md", "'connect to the vpn'", "found when case is ignored at [7, 25)"],
        ),
        ({"doc": "vpn.md", "quote": "VPN", "grade": 3}, ["occurs 3 times", "[2, 5), [22, 25), [81, 84)"]),
        ({"doc": "vpn.md", "quote": "Connect to the VPN after lunch", "grade": 3}, ["first 4 of 6 words occur at"]),
        ({"doc": "vpn.md", "grade": 3}, ["needs start/end or a quote", "never the whole document"]),
        ({"doc": "vpn.md", "start": 3, "grade": 3}, ["needs end too"]),
        ({"doc": "vpn.md", "start": 0, "end": 9999, "grade": 3}, ["holds 140 characters", "python -m labkit text"]),
        ({"doc": "vpn.md", "start": 0, "end": 5, "quote": "Connect", "grade": 3}, ["disagree with the quote"]),
        ({"doc": "vpn.md", "qoute": "Connect", "grade": 3}, ["unknown key(s) ['qoute']"]),
    ],
)
def test_bad_gold_is_refused_naming_question_file_and_quote(tmp_path, span, words):
    corpus = folder.load_folder(write_folder(tmp_path)[0]).corpus
    with pytest.raises(ValueError) as info:
        parse_query(question("q9", [span]), "Q.jsonl line 9", corpus)
    assert "Q.jsonl line 9 (q9) gold[0]" in str(info.value)
    for w in words:
        assert w in str(info.value)


def test_unanswerable_needs_its_mark_and_no_gold(tmp_path):
    corpus = folder.load_folder(write_folder(tmp_path)[0]).corpus
    with pytest.raises(ValueError, match='"answerable": false with "gold": \\[\\]'):
        parse_query(question("q9", []), "Q.jsonl line 9", corpus)
    with pytest.raises(ValueError, match="has no gold"):
        parse_query(question("q9", [{"doc": "vpn.md", "quote": "SG-1", "grade": 3}], answerable=False), "x", corpus)
    with pytest.raises(ValueError, match="answerable must be true or false"):
        parse_query(question("q9", [], answerable=True, answerable_="x") | {"answerable": "no"}, "x", corpus)


def test_the_text_command_prints_the_extracted_text_a_ruler_and_a_quotes_offsets(tmp_path, capsys):
    docs, _ = write_folder(tmp_path)
    assert main(["text", str(docs / "café" / "leave.txt")]) == 0
    assert capsys.readouterr().out == CRLF.replace("\r\n", "\n")
    assert main(["text", str(docs), "git reset notes.html", "--offsets"]) == 0
    printed = capsys.readouterr().out
    assert "git reset notes.html: " in printed and "       0  # git reset" in printed
    assert main(["text", str(docs), "café/leave.txt", "--find", "18 days"]) == 0
    text = folder.read_document(docs / "café" / "leave.txt").text
    a = text.index("18 days")
    assert f'{{"doc": "café/leave.txt", "start": {a}, "end": {a + 7}}}' in capsys.readouterr().out
    assert main(["text", str(docs), "vpn.md", "--find", "VPN"]) == 2
    assert "occurs 3 times" in capsys.readouterr().err
    with pytest.raises(ValueError, match="is not a folder"):
        show_text(str(docs / "vpn.md"), "vpn.md")


def test_ids_trec_cannot_hold_are_made_safe_and_reversible():
    for i in ("git reset notes.html#9", "a%b c\té.md#0", "plain.md#1"):
        assert trec_ids.original_id(trec_ids.safe_id(i)) == i and not any(c.isspace() for c in trec_ids.safe_id(i))
    assert trec_ids.id_map(["a b#0", "c#1"]) == {"a b#0": "a%20b#0"}
    assert trec_ids.id_map_text({"a b#0": "a%20b#0"}) == "trec_id\tid\na%20b#0\ta b#0\n"


def test_the_report_on_the_folder_agrees_with_pytrec_eval(tmp_path, capsys, monkeypatch):
    import pytrec_eval

    docs, path = write_folder(tmp_path)
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "report"
    assert main(["report", str(docs), "--queries", str(path), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "questions: 6 (4 answerable, 2 marked unanswerable)" in printed
    assert "2 question(s) marked unanswerable are left out" in printed and "listed in ids.tsv" in printed
    assert "warning: only 4 answerable question(s)" in printed
    assert sorted(os.listdir(out)) == ["ids.tsv", "qrels.txt", "report.html", "run-bm25.txt", "run-dense.txt",
                                       "run-hybrid.txt"]  # fmt: skip
    assert sorted(os.listdir(tmp_path)) == ["my docs", "questions.jsonl", "report"]  # no temporary folder left
    qrels = trec.read_qrels(out / "qrels.txt")
    assert set(qrels) == {"q1", "q2", "q3", "q4"}  # the unanswerable have no judgement
    ids = dict(line.split("\t", 1) for line in (out / "ids.tsv").read_text(encoding="utf-8").splitlines()[1:])
    assert all(v.startswith("git reset notes.html#") and k.startswith("git%20reset%20notes.html#") for k, v in
               ids.items())  # fmt: skip
    s = capstone.setting(str(docs), str(path))
    at10 = capstone.per_query(s, 10)
    page = (out / "report.html").read_text(encoding="utf-8")
    for name in capstone.RETRIEVERS:
        run = trec.read_run(out / f"run-{name}.txt")
        assert name == "bm25" or {"u1", "u2"} <= set(run)  # retrieved for the reader, left out of the means
        theirs = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "recall.10"}).evaluate(run)
        assert set(theirs) == {"q1", "q2", "q3", "q4"}
        for q, scores in theirs.items():
            assert scores["ndcg_cut_10"] == pytest.approx(at10.loc[q, f"nDCG@k {name}"], abs=1e-9)
            assert scores["recall_10"] == pytest.approx(at10.loc[q, f"R@k {name}"], abs=1e-9)
        top3 = {q: sorted(run.get(q, {}), key=lambda c, q=q: (-run[q][c], [-ord(x) for x in c]))[:3] for q in qrels}
        judged = sum(sum(c in qrels[q] for c in top3[q]) / 3 for q in qrels) / len(qrels)
        assert capstone.judged_at_k(s, capstone.runs(s), 3)[name] == pytest.approx(judged)
    assert "judged@3" in page and "unjudged" in page and "fewer than 10 questions" in page
    assert "Each question&#x27;s top 3" in page or "Each question's top 3" in page


def test_the_report_as_json_and_a_bad_quote_stops_before_anything_is_written(tmp_path, monkeypatch, capsys):
    docs, path = write_folder(tmp_path)
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "ci"
    assert main(["report", str(docs), "--queries", str(path), "--out", str(out), "--format", "json"]) == 0
    got = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert got["unanswerable"] == 2 and got["means"]["10"]["n"] == 4 and "bm25" in got["judged"]["judged@3"]
    assert {r["judgement"] for r in got["top3"]} <= {"unjudged", "1", "2", "3"}
    bad = [*QUESTIONS, question("q5", [{"doc": "vpn.md", "quote": "not in the file", "grade": 3}])]
    _, bad_path = write_folder(tmp_path / "bad", bad)
    capsys.readouterr()
    assert main(["report", str(docs), "--queries", str(bad_path), "--out", str(tmp_path / "r2")]) == 2
    err = capsys.readouterr().err
    assert "line 7 (q5) gold[0]: quote 'not in the file' is not in vpn.md" in err
    assert not (tmp_path / "r2").exists() and not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]
