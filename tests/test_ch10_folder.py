"""Chapter 10 on a folder of one's own, Run All to the end without a model.

The test writes a small folder (HTML and text files, a file name with a space and a non-ASCII letter, a CRLF text
file) and a questions file with quote gold and an unanswerable question, points the chapter's input cell at them
with ``USE_MODEL = False``, executes the built notebook as nbval does (a kernel, every cell in order) and checks that
every cell ran, that each skipped model step said so in its own line, and that the figures printed are the folder's.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from test_llm_local import llm_installed  # tests/ is on the path

from labkit.studies import capstone

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = next((ROOT / "notebooks").glob("10_*.ipynb"))

WORDS = ("the team reviews every request within two working days and records the outcome in the tracker so that "
         "anyone can follow what happened and why the decision was taken").split()  # fmt: skip


def filler(n: int, seed: int) -> str:
    """``n`` words of plain prose (a rotation of one sentence), so every document is long enough to chunk."""
    return " ".join(WORDS[(i + seed) % len(WORDS)] for i in range(n)) + "."


FACTS = {
    "vpn": "Connect to the VPN before you open Jira; the gateway abroad is called SG-1.",
    "leave": "Full-time staff get 18 days of annual leave a year.",
    "parttime": "Part-time staff get leave in proportion to their contracted hours.",
    "expenses": "Expense claims are due within 30 days of the trip, with every receipt attached.",
    "laptop": "A broken laptop is swapped at the service desk on the second floor within one hour.",
    "badge": "A lost badge is blocked by calling security on extension 4400.",
}
PAGE = ("<html><head><title>Café notes</title></head><body><nav>Home | Search</nav><main><h1>Café notes</h1>"
        "<h2>Expenses</h2><p>{filler0}</p><p>{expenses}</p><h2>Hardware</h2><p>{filler1}</p><p>{laptop}</p>"
        "<table><tr><th>Item</th><th>Desk</th></tr><tr><td>laptop</td><td>second floor</td></tr></table>"
        "</main></body></html>")  # fmt: skip
DOCS = {
    "guide/café notes.html": PAGE.format(filler0=filler(150, 1), filler1=filler(140, 5), **FACTS),
    "leave.txt": "\r\n".join(["Leave policy", "", filler(160, 2), FACTS["leave"], FACTS["parttime"], filler(90, 3)]),
    "vpn.md": f"# VPN\n\n{filler(150, 4)}\n\n## Abroad\n\n{FACTS['vpn']}\n\n{filler(80, 6)}\n",
    "security.html": f"<html><body><main><h1>Security</h1><p>{filler(170, 7)}</p><p>{FACTS['badge']}</p></main>"
    "</body></html>",
}


def question(qid, text, quotes, split, kind="fact"):
    return {"qid": qid, "question": text, "answer": " ".join(q for _, q in quotes) or "no answer", "slice": "real",
            "kind": kind, "split": split, "gold": [{"doc": d, "quote": q, "grade": 3} for d, q in quotes],
            **({} if quotes else {"answerable": False})}  # fmt: skip


QUESTIONS = [
    question("vpn", "which gateway do I use abroad", [("vpn.md", FACTS["vpn"])], "dev"),
    question("leave", "how many days of annual leave do I get", [("leave.txt", FACTS["leave"])], "dev"),
    question("expenses", "when are expense claims due", [("guide/café notes.html", FACTS["expenses"])], "dev"),
    question("laptop", "where is a broken laptop swapped", [("guide/café notes.html", FACTS["laptop"])], "test"),
    question("badge", "what do I do with a lost badge", [("security.html", FACTS["badge"])], "test"),
    question(
        "all-leave",
        "how much leave do full-time and part-time staff get",
        [("leave.txt", FACTS["leave"]), ("leave.txt", FACTS["parttime"])],
        "test",
        kind="synthesis",
    ),  # fmt: skip
    question("parking", "what is the parking fee", [], "test"),
]


def write_folder(tmp_path: Path) -> tuple[str, str]:
    docs = tmp_path / "my docs"
    for name, text in DOCS.items():
        (docs / name).parent.mkdir(parents=True, exist_ok=True)
        (docs / name).write_bytes(text.encode("utf-8"))  # bytes: the CRLF file keeps its CRLF
    questions = tmp_path / "questions.jsonl"
    questions.write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in QUESTIONS), encoding="utf-8")
    return str(docs), str(questions)


def outputs(cell) -> str:
    """A cell's printed and displayed text (streams, plain-text results), joined."""
    parts = []
    for out in cell.get("outputs", []):
        if out["output_type"] == "stream":
            parts.append(out["text"])
        elif "data" in out:
            parts.append(out["data"].get("text/plain", ""))
    return "".join(parts)


def run_chapter(tmp_path, monkeypatch, use_model: bool, llm_mode: str) -> tuple[str, str, list[str]]:
    """Chapter 10 executed as nbval does (a kernel, every cell in order) on the folder :func:`write_folder` writes,
    with ``USE_MODEL = use_model`` and ``LABKIT_LLM=llm_mode``: ``(docs, questions, each code cell's printed text)``
    after checking that every cell ran without an error."""
    import nbformat
    from nbclient import NotebookClient

    docs, questions = write_folder(tmp_path)
    assert b"\r\n" in (Path(docs) / "leave.txt").read_bytes()
    nb = nbformat.read(NOTEBOOK, as_version=4)
    inputs = [c for c in nb.cells if c.cell_type == "code" and c.source.startswith("DOCUMENTS = ")]
    assert len(inputs) == 1, "chapter 10 must keep its inputs in one cell starting with DOCUMENTS ="
    source = inputs[0].source
    for name, value in (("DOCUMENTS", docs), ("QUESTIONS", questions), ("USE_MODEL", use_model)):
        source, n = re.subn(rf"^{name} = .*$", f"{name} = {value!r}", source, flags=re.M)
        assert n == 1, f"the input cell must assign {name} once"
    inputs[0].source = source
    monkeypatch.setenv("LABKIT_LABELS", str(tmp_path / "labels"))  # an empty label folder: not the learner's
    monkeypatch.setenv("LABKIT_LLM", llm_mode)
    NotebookClient(nb, timeout=900, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()

    code = [c for c in nb.cells if c.cell_type == "code"]
    errors = [out for c in code for out in c.get("outputs", []) if out["output_type"] == "error"]
    assert not errors, errors
    assert all(c.execution_count is not None for c in code), "every code cell must have run"
    return docs, questions, [outputs(c) for c in code]


@pytest.mark.slow
def test_chapter_10_runs_to_the_end_on_a_folder_without_a_model(tmp_path, monkeypatch):
    # even with a model configured, USE_MODEL = False must ask none
    docs, questions, printed = run_chapter(tmp_path, monkeypatch, use_model=False, llm_mode="replay")
    text = "\n".join(printed)

    # each skipped model step says so, once, in its own line
    for step in ("Step 2's generated questions skipped: no model", "Step 5's answers skipped: no model",
                 "Step 5's labelling skipped", "Step 5's 2×2 skipped", "generated minus yours skipped"):  # fmt: skip
        assert sum(line.startswith(step) for line in text.splitlines()) == 1, step
    assert "`make llm`" in text and "USE_MODEL = True" in text
    for name in ("generated questions score higher (hit@10, thr 3)", "GEN_FAIL minus RET_FAIL, per answer (k = 3)"):
        assert f"{name}: not measured on this corpus (no model" in text
    assert "Exercise 10.3 is written for the bundled corpus's answers and their reference labels" in text

    # the figures are the folder's, not the bundled corpus's
    s = capstone.setting(docs, questions)
    assert len(s.corpus) == len(DOCS) and s.loaded.skipped == []
    assert f"{len(s.chunks):,} chunks of 128 words (overlap 32); {len(QUESTIONS)} labelled questions" in text
    answerable = sum(bool(q["gold"]) for q in QUESTIONS)
    assert f"{len(QUESTIONS)} questions: {answerable} answerable from the corpus, 1 not" in text
    assert "second rater: none for your questions" in text
    assert "Python 3.11" not in text and "faq-" not in text  # nothing of the bundled corpus is shown
    assert "Exercise 10.1: correct." in text and "Exercise 10.2: correct." in text  # checked against the folder
    relevance = next(p for p in printed if "Does this passage answer the question?" in p)
    tests_with_passage = sum(q["split"] == "test" for q in QUESTIONS)
    assert f"({tests_with_passage} passages;" in relevance
    assert "nDCG@3 on the 4 test questions" in text


@pytest.mark.llm
@llm_installed  # the same condition as the other real-model tests (tests/test_llm_local.py)
def test_chapter_10_runs_to_the_end_on_a_folder_with_the_real_local_model(tmp_path, monkeypatch):
    """The with-model path on one's own folder: the local 0.5B (LABKIT_LLM=local-small, live, nothing recorded)
    writes Step 2's questions and Step 5's answers for the folder, and the chapter runs to the end with them."""
    from labkit import data_dir

    cassettes = {p: p.read_bytes() for p in (data_dir() / "llm").glob("*.jsonl")}
    docs, questions, printed = run_chapter(tmp_path, monkeypatch, use_model=True, llm_mode="local-small")
    text = "\n".join(printed)
    assert "skipped: no model" not in text and "Step 2 wrote no questions (no model)" not in text
    n_chunks = len(capstone.setting(docs, questions).chunks)
    assert re.search(rf"^kept: \d+ of {n_chunks} targets", text, re.M), "Step 2 asked the model once per chunk"
    assert f"({len(QUESTIONS)} answers; keys:" in text, "Step 5 answered every question, the unanswerable one too"
    assert "generated minus yours, hybrid hit@10 (thr 3), two different question sets" in text
    assert "Python 3.11" not in text and "faq-" not in text  # nothing of the bundled corpus is shown
    assert {p: p.read_bytes() for p in (data_dir() / "llm").glob("*.jsonl")} == cassettes  # live: nothing recorded
