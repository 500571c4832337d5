"""The bundled real corpus: the Python 3.11 documentation pages the FAQ links to, and the FAQ's own questions.

Taught in ``10_your_own_documents``, the capstone. Nobody working on the workbook wrote any of it: the pages and the
questions are the Python documentation's (PSF licence, ``data/pydocs/COPYING``), taken from Debian's
``python3.11-doc`` by ``tools/take_pydocs.py`` (``data/pydocs/MANIFEST.tsv`` lists every file with its hash).

- :func:`corpus`: ``data/pydocs/corpus/`` loaded by :func:`labkit.data.folder.load_folder` (HTML → text).
- :func:`faq_questions`: every question (an ``h3`` heading) of the FAQ pages, with its answer's text and the
  pages the answer links to. The FAQ pages are not in the corpus: a retriever must find the answer elsewhere.
- :func:`answer_labels`: is the reader's answer (chapter 10, plan ``10-answers``) right, by the FAQ's own answer
  and the gold? Labelled by two AI assistant sessions against the rubric of ``data/correctness/README.md``;
  :func:`answer_agreement` compares them.
- :func:`load_queries`: the questions that have gold evidence, in the schema of ``queries.jsonl``. The evidence
  is labelled in ``data/pydocs/gold.jsonl`` as exact quotes of the extracted text (never offsets typed by
  hand), located here; who labelled it, and against which rubric, is in ``data/pydocs/README.md``.
"""

from __future__ import annotations

import json
import random
import re
from functools import lru_cache
from pathlib import Path

from labkit import data_dir
from labkit.data import folder
from labkit.data.corpus import Query, parse_query
from labkit.judges import correctness
from labkit.measures import stats

__all__ = ["root", "corpus", "faq_questions", "gold_rows", "load_queries", "second_rater", "agreement",
           "answer_labels", "answer_agreement", "SPLIT_SEED", "GRADES"]  # fmt: skip

SPLIT_SEED = 20261202
GRADES = (1, 2, 3)
_SPACE = re.compile(r"\s+")


def root() -> Path:
    return data_dir() / "pydocs"


@lru_cache(maxsize=1)
def _loaded() -> folder.Loaded:
    return folder.load_folder(root() / "corpus")


def corpus() -> dict:
    """The corpus pages as ``{doc_id: Document}`` (ids like ``library/copy.html``)."""
    return _loaded().corpus


@lru_cache(maxsize=1)
def faq_questions() -> tuple[dict, ...]:
    """Every FAQ question: ``qid`` (``faq-<page>-<anchor>``), ``page``, ``question``, ``answer`` (the FAQ's answer
    as text), ``links`` (corpus pages the answer links to)."""
    import posixpath

    from selectolax.lexbor import LexborHTMLParser

    known = set(corpus())
    out = []
    for page in sorted((root() / "faq").glob("*.html")):
        tree = LexborHTMLParser(page.read_text(encoding="utf-8"))
        for section in tree.css("div.body section"):
            head = section.css_first("h3")
            if head is None or head.parent != section:
                continue
            question = _SPACE.sub(" ", head.text()).replace("\u00b6", "").strip()
            links = []
            for a in section.css("a[href]"):
                target = posixpath.normpath(posixpath.join("faq", (a.attributes.get("href") or "").split("#")[0]))
                if target in known and target not in links:
                    links.append(target)
            head.decompose()
            _, answer = folder.html_to_text(f"<main>{section.html}</main>")
            out.append({"qid": f"faq-{page.stem}-{section.attributes.get('id')}", "page": page.name,
                        "question": question, "answer": answer.strip(), "links": links})  # fmt: skip
    return tuple(out)


def gold_rows(path: Path | None = None) -> list[dict]:
    """The labelled evidence (``data/pydocs/gold.jsonl``): per FAQ question, quotes of the corpus text with grades,
    or ``"answerable": false`` when the corpus does not hold the answer. Checked: known qid, each quote found
    exactly once in its page, grades 1-3, at least one grade-3 quote when answerable."""
    path = path or root() / "gold.jsonl"
    docs = corpus()
    questions = {q["qid"]: q for q in faq_questions()}
    rows, seen = [], set()
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path.name} line {n}"
        try:
            row = json.loads(line)
        except json.JSONDecodeError as err:
            raise ValueError(f"{where}: malformed JSON ({err.msg} at column {err.colno})") from None
        qid = row.get("qid")
        if qid not in questions:
            raise ValueError(f"{where}: unknown qid {qid!r}: use a qid of labkit.studies.pydocs.faq_questions()")
        if qid in seen:
            raise ValueError(f"{where}: qid {qid!r} is labelled twice")
        seen.add(qid)
        gold = []
        for ev in row.get("evidence", []):
            doc, quote = ev.get("doc"), ev.get("quote") or ""
            if doc not in docs:
                raise ValueError(f"{where}: unknown page {doc!r}; pages look like 'library/copy.html'")
            text = docs[doc].text
            count = text.count(quote) if quote.strip() else 0
            if count != 1:
                what = "not found" if count == 0 else f"found {count} times (make it longer)"
                raise ValueError(f"{where}: quote {what} in {doc}: {quote[:70]!r}")
            if ev.get("grade") not in GRADES:
                raise ValueError(f"{where}: grade {ev.get('grade')!r} must be one of {GRADES}")
            start = text.index(quote)
            gold.append({"doc": doc, "start": start, "end": start + len(quote), "grade": ev["grade"]})
        answerable = row.get("answerable", True)
        if answerable and not any(g["grade"] == 3 for g in gold):
            raise ValueError(f"{where}: {qid} is answerable but has no grade-3 quote (the span that answers it)")
        if not answerable and gold:
            raise ValueError(f"{where}: {qid} is marked not answerable but lists evidence")
        rows.append({**row, "gold": gold, "answerable": answerable})
    return rows


@lru_cache(maxsize=1)
def load_queries() -> tuple[Query, ...]:
    """The answerable labelled FAQ questions as :class:`labkit.data.corpus.Query` (slice ``real``; half dev, half test,
    seeded), validated against the corpus like ``queries.jsonl``."""
    questions = {q["qid"]: q for q in faq_questions()}
    rows = [r for r in gold_rows() if r["answerable"]]
    qids = sorted(r["qid"] for r in rows)
    random.Random(SPLIT_SEED).shuffle(qids)
    dev = set(qids[: (len(qids) + 1) // 2])
    docs = corpus()
    out = []
    for r in sorted(rows, key=lambda r: r["qid"]):
        q = questions[r["qid"]]
        split = "dev" if r["qid"] in dev else "test"
        obj = {"qid": r["qid"], "question": q["question"], "answer": q["answer"], "slice": "real",
               "kind": r.get("kind", "fact"), "split": split, "gold": r["gold"]}  # fmt: skip
        out.append(parse_query(obj, f"pydocs gold {r['qid']}", docs))
    return tuple(out)


def second_rater() -> list[dict]:
    """A second, independent labelling of a seeded random 60 questions (``gold_second_rater.jsonl``)."""
    return gold_rows(root() / "gold_second_rater.jsonl")


def agreement() -> dict:
    """The two raters on the questions both labelled: Cohen's kappa on "answerable" (with raw agreement), and,
    where both say answerable, whether each rater's grade-3 evidence overlaps the other's evidence of grade >= 2
    (a passage in common). The disagreements are listed."""
    first = {r["qid"]: r for r in gold_rows()}
    second = {r["qid"]: r for r in second_rater()}
    qids = sorted(second)
    a = [first[q]["answerable"] for q in qids]
    b = [second[q]["answerable"] for q in qids]

    def meets(x: dict, y: dict) -> bool:
        threes = [g for g in x["gold"] if g["grade"] == 3]
        others = [g for g in y["gold"] if g["grade"] >= 2]
        return any(t["doc"] == o["doc"] and t["start"] < o["end"] and o["start"] < t["end"] for t in threes
                   for o in others)  # fmt: skip

    both = [q for q in qids if first[q]["answerable"] and second[q]["answerable"]]
    shared = [q for q in both if meets(first[q], second[q]) or meets(second[q], first[q])]
    return {
        "questions": len(qids),
        "answerable": stats.kappa_report(a, b, labels=[True, False]),
        "both answerable": len(both),
        "a passage in common": len(shared),
        "disagree on answerable": [q for q, x, y in zip(qids, a, b, strict=True) if x != y],
        "no passage in common": [q for q in both if q not in shared],
    }


def answer_labels(path: Path | None = None) -> dict[str, dict]:
    """``{qid: row}`` of ``data/pydocs/answer_labels.jsonl`` (or ``path``): the 1.5B reader's answer to each
    labelled question, rated ``right`` / ``partly`` / ``wrong`` / ``declined`` with a ``why`` and the ``rater``
    (checked by :func:`labkit.judges.correctness.read_answer_labels`)."""
    return correctness.read_answer_labels(path or root() / "answer_labels.jsonl", {q.qid for q in load_queries()})


def answer_agreement() -> dict:
    """The second rater (``answer_labels_second.jsonl``, a seeded sample labelled without the first labels) against
    the first: Cohen's kappa on the four labels and on right-or-not, and the disagreements."""
    first, second = answer_labels(), answer_labels(root() / "answer_labels_second.jsonl")
    qids = sorted(second)
    a, b = [first[q]["label"] for q in qids], [second[q]["label"] for q in qids]
    return {
        "answers": len(qids),
        "labels": stats.kappa_report(a, b, labels=list(correctness.ANSWER_LABELS)),
        "right or not": stats.kappa_report([x == "right" for x in a], [y == "right" for y in b], labels=[True, False]),
        "disagreements": [(q, x, y) for q, x, y in zip(qids, a, b, strict=True) if x != y],
    }
