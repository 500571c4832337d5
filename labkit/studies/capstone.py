"""Capstone: the evaluation workflow of the source's 7.12 checklist, on any folder of documents.

Taught in ``10_your_own_documents``. :func:`setting` is :func:`labkit.studies.handbook.handbook` for any folder:
the documents (:func:`labkit.data.folder.load_folder`), their chunks, the labelled questions with gold spans, and the
BM25, dense and hybrid retrievers over the chunks. With no arguments it is the bundled real corpus, the Python
documentation and its FAQ questions (:mod:`labkit.studies.pydocs`). :func:`per_query` measures every retriever
per question, so a chapter can give each figure its interval and compare retrievers query by query.

With a language model (:mod:`labkit.generation.llm`; replayed from ``data/llm/`` for the bundled corpus, local or live
for
yours) the workflow goes on: :func:`generated` writes one question per seeded target chunk, as chapter 02 does
(:data:`ABOUT` says whose documents and who asks, in every prompt), and :func:`answers` has the reader answer every
labelled question over the hybrid's top :data:`READER_K`, as chapter 07's reader does.

A questions file for your own folder is JSONL in the schema of ``data/queries.jsonl`` (``doc`` is a file's path
relative to the folder, as :func:`labkit.data.folder.load_folder` names it); :func:`load_question_file` checks every
line against the loaded documents (an unknown document or a span outside its text is an error naming the line).
Gold is given as offsets into the extracted text or as a ``quote`` found there (:mod:`labkit.data.quotes`); a
question the documents cannot answer is marked ``"answerable": false`` with ``"gold": []``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from labkit import SEED
from labkit.core import args
from labkit.core.files import path_arg, read_jsonl
from labkit.data import folder
from labkit.data.corpus import Query, Span, parse_query
from labkit.generation import reader as rd
from labkit.generation import synth
from labkit.measures import metrics, stats
from labkit.measures.triage import QUADRANTS
from labkit.retrieval import rerank
from labkit.retrieval.grid import evidence_recall
from labkit.retrieval.retrievers import make_run
from labkit.studies import handbook as hb
from labkit.studies import pydocs
from labkit.text.chunking import DEFAULT_OVERLAP, DEFAULT_SIZE, spans_to_qrels
from labkit.text.words import containment

__all__ = ["setting", "documents_and_questions", "load_question_file",
           "runs", "per_query", "reranked", "About", "ABOUT", "FOLDER", "targets",
           "generated", "generated_queries", "question_sets", "answers", "two_by_two", "traces",
           "top_passages", "judged_at_k", "RETRIEVERS", "METRICS", "DEPTH", "READER_K", "N_GENERATED"]  # fmt: skip

RETRIEVERS = ("bm25", "dense", "hybrid")
METRICS = (metrics.metric("R@k"), metrics.metric("nDCG@k"), metrics.metric("hit@k"))
"""The registered metrics :func:`per_query` reports for every retriever (the report's conventions define them)."""
DEPTH = 100
READER_K = 3
"""The reader reads the hybrid's top 3, as on the handbook (chapter 07)."""
N_GENERATED = 60
"""How many target chunks :func:`generated` writes a question from (one per document while documents last)."""
MIN_WORDS = 40


@dataclass(frozen=True)
class About:
    """Whose documents they are and who asks: every generation and reader prompt names them."""

    source: str
    asker: str

    def __post_init__(self) -> None:
        synth.generate_prompt("x", (self.source, self.asker))  # the same checks, with the same message

    @property
    def head(self) -> str:
        """The reader prompt's first sentences (the handbook's are :data:`labkit.generation.reader.HEAD`)."""
        return f"You are a help bot for {self.source}. {self.asker[0].upper()}{self.asker[1:]} asked a question."


ABOUT = About("the Python 3.11 documentation", "a Python programmer")
"""The bundled corpus."""
FOLDER = About("the documents in this folder", "a reader")
"""Any other folder, until you say whose documents they are and who asks."""


def load_question_file(path: str | Path, corpus: dict) -> list:
    """Labelled questions for a folder's documents, every line checked by :func:`labkit.data.corpus.parse_query`."""
    path = path_arg("path", path)
    out, seen = [], set()
    for n, row in read_jsonl(path, "questions file"):
        query = parse_query(row, f"{Path(path).name} line {n}", corpus)
        if query.qid in seen:
            raise ValueError(f"{Path(path).name} line {n}: qid {query.qid!r} appears twice; give each question one id")
        seen.add(query.qid)
        out.append(query)
    if not out:
        raise ValueError(f"{path} holds no question: one JSON object per line, in the schema of data/queries.jsonl")
    return out


@lru_cache(maxsize=4)
def documents_and_questions(documents: str | None = None, questions: str | None = None) -> tuple:
    """``(loaded, queries)``: the folder ``documents`` read and its ``questions`` file checked against it, the
    fast part of :func:`setting` (nothing is embedded), so a bad gold span stops a run before the slow part."""
    if documents is None:
        loaded = folder.Loaded(pydocs.root() / "corpus", pydocs.corpus(), [], Counter(html=len(pydocs.corpus())))
        queries = list(pydocs.load_queries()) if questions is None else None
    else:
        loaded, queries = folder.load_folder(documents), None
    if queries is None:
        if questions is None:
            raise ValueError("questions is missing: give the questions file of your folder (JSONL, see the docstring)")
        queries = load_question_file(questions, loaded.corpus)
    return loaded, queries


@lru_cache(maxsize=4)
def setting(
    documents: str | None = None, questions: str | None = None, size: int = DEFAULT_SIZE, overlap: int = DEFAULT_OVERLAP
) -> SimpleNamespace:
    """The folder ``documents`` (default: the bundled Python documentation) with its ``questions`` file (default:
    the FAQ questions with gold), chunked and indexed: ``loaded``, ``corpus``, ``queries``, ``chunks``,
    ``texts``, ``qrels``, ``bm25``, ``dense``, ``hybrid`` (cached per arguments)."""
    loaded, queries = documents_and_questions(documents, questions)
    out = hb.indexed(loaded.corpus, list(queries), size, overlap)
    out.loaded = loaded
    return out


def runs(s: SimpleNamespace, depth: int = DEPTH) -> dict[str, dict[str, list[str]]]:
    """Each retriever's top ``depth`` for every question of the setting ``s``."""
    return {name: make_run(getattr(s, name), s.queries, depth) for name in RETRIEVERS}


def per_query(s: SimpleNamespace, k: int, ranked: dict | None = None) -> Any:
    """One row per question: split, kind, then :data:`METRICS` (``R@k``, ``nDCG@k``, ``hit@k``) and ``ER@k`` (evidence
    recall, spans of grade >= 2 held whole) of every retriever, named ``"<metric> <retriever>"`` with ``@k`` as
    written. Questions marked unanswerable (no gold) are left out: a retrieval metric is undefined without
    relevant chunks."""
    import pandas as pd

    ranked = ranked or runs(s)
    asked = [q for q in s.queries if q.answerable]
    if not asked:
        raise ValueError("every question is marked unanswerable: retrieval needs questions with gold to measure")
    qids = pd.Index([q.qid for q in asked], name="qid")
    qrels = {q: s.qrels[q] for q in qids}
    frame = pd.DataFrame({"split": [q.split for q in asked], "kind": [q.kind for q in asked]}, index=qids)
    for name, run in ranked.items():
        cut = {q: run[q][:k] for q in qids}
        if any(cut.values()):
            scores = metrics.evaluate(cut, qrels, tuple(m.column(k) for m in METRICS)).per_query.reindex(qids)
        else:  # nothing retrieved for any question (e.g. BM25 and no shared word): 0, as trec_eval scores it
            scores = pd.DataFrame(0.0, index=qids, columns=[m.column(k) for m in METRICS])
        for m in METRICS:
            frame[f"{m.name} {name}"] = scores[m.column(k)]
        frame[f"ER@k {name}"] = pd.Series(evidence_recall(run, asked, s.chunks, k)).reindex(qids)
    return frame


def top_passages(s: SimpleNamespace, ranked: dict, n: int = READER_K) -> Any:
    """One row per (question, retriever, rank <= ``n``): the chunk, its judgement (the grade its gold gives it, or
    ``"unjudged"``: it touches no gold span, so nobody said whether it answers) and its first words. The view that
    shows why a question scored 0, and where the gold is incomplete (an unjudged passage that answers)."""
    import pandas as pd

    n = args.whole_number("n", n)
    args.mapping("ranked", ranked, example="runs(s)")
    rows = []
    for q in s.queries:
        for name, run in ranked.items():
            for rank, c in enumerate(run.get(q.qid, [])[:n], start=1):
                grade = s.qrels.get(q.qid, {}).get(c)
                rows.append({"qid": q.qid, "answerable": q.answerable, "retriever": name, "rank": rank, "chunk": c,
                             "judgement": "unjudged" if grade is None else str(grade),
                             "text": " ".join(s.texts[c].split()[:16]) + " ..."})  # fmt: skip
    return pd.DataFrame(rows)


def judged_at_k(s: SimpleNamespace, ranked: dict, k: int) -> dict[str, float]:
    """Per retriever, the mean over answerable questions of the share of the top ``k`` that is judged (ir_measures'
    ``Judged@k``). Gold given as spans judges only the chunks touching a span, so a low figure says the metrics
    count many passages nobody looked at as irrelevant: judge the unjudged ones before trusting a small difference."""
    k = args.whole_number("k", k)
    args.mapping("ranked", ranked, example="runs(s)")
    asked = [q.qid for q in s.queries if q.answerable]
    if not asked:
        raise ValueError("every question is marked unanswerable: judged@k is over questions with gold")
    out = {}
    for name, run in ranked.items():
        shares = [sum(c in s.qrels.get(q, {}) for c in run[q][:k]) / k for q in asked]
        out[name] = sum(shares) / len(shares)
    return out


def reranked(s: SimpleNamespace, hybrid_run: dict, k1: int = 20, train_split: str = "dev") -> dict[str, list[str]]:
    """Every question's hybrid top ``k1`` reordered by a learned reranker (04b's LambdaMART over ten cheap
    features) fitted on the ``train_split`` questions' top 100 and their graded qrels: report it on the others."""
    qids = [q.qid for q in s.queries]
    cands = {q: list(hybrid_run[q][:DEPTH]) for q in qids}
    rows, names = rerank.features([q.search_text for q in s.queries], [cands[q] for q in qids], s)
    rows = dict(zip(qids, rows, strict=True))
    train = [q.qid for q in s.queries if q.split == train_split]
    if not train:
        raise ValueError(f"no question is in split {train_split!r}: the reranker needs questions to learn from")
    grades = [[s.qrels.get(q, {}).get(c, 0) for c in cands[q]] for q in train]
    model = rerank.LambdaRanker().fit([rows[q] for q in train], grades, names)
    return {q: rerank.rerank(cands[q][:k1], model.scores(rows[q][:k1], names)) for q in qids}


def targets(s: SimpleNamespace, n: int = N_GENERATED, seed: int = SEED) -> list:
    """``n`` target chunks of at least 40 words, seeded: one chunk of each of ``n`` documents drawn at random
    (then more from documents already drawn, when there are fewer documents than ``n``)."""
    import numpy as np

    n = args.whole_number("n", n)
    eligible = [c for c in s.chunks if len(c.text.split()) >= MIN_WORDS]
    if not eligible:
        raise ValueError(f"no chunk has {MIN_WORDS} words or more: the documents are too short to ask about")
    order = [eligible[i] for i in np.random.default_rng(seed).permutation(len(eligible))]
    first, seen = [], set()
    for c in order:
        if c.doc not in seen:
            first.append(c)
            seen.add(c.doc)
    taken = {c.id for c in first}
    rest = [c for c in order if c.id not in taken]
    return (first + rest)[:n]


def generated(s: SimpleNamespace, llm: Any, about: About = ABOUT, n: int = N_GENERATED) -> tuple[list, list]:
    """(kept rows, :class:`labkit.generation.synth.Dropped` rows): one question per target of :func:`targets`, written
    by
    ``llm`` with chapter 02's prompt (:func:`labkit.generation.synth.generate_qa`), its evidence quote located as a
    span."""
    kept, dropped = [], []
    for i, c in enumerate(targets(s, n)):
        row = synth.generate_qa(c, s.corpus[c.doc].text, llm, (about.source, about.asker))
        if isinstance(row, synth.Dropped):
            dropped.append(row)
        else:
            kept.append({**row, "i": i})
    return kept, dropped


def generated_queries(rows: list[dict]) -> list[Query]:
    """Kept rows of :func:`generated` as questions (slice ``synthetic``, the quote's span the grade-3 gold,
    dev and test alternating in target order), measurable like any labelled question."""
    rows = args.sequence("rows", rows, example="generated(s, llm)[0]")
    return [Query(qid=f"gen-{r['i'] + 1:03d}", question=r["question"], answer=r["answer"], slice="synthetic",
                  kind="fact", split="dev" if r["i"] % 2 == 0 else "test",
                  gold=(Span(r["doc"], r["start"], r["end"], 3),))
            for r in rows]  # fmt: skip


def question_sets(s: SimpleNamespace, sets: dict[str, list], ks: tuple = (3, 10)) -> Any:
    """One row per question of each named set (e.g. the labelled questions and :func:`generated_queries`), measured
    as chapter 02 measures its sets: for each ``k``, ``hit@k (thr 3)`` (a chunk holding a grade-3 span whole is in
    the hybrid's top ``k``) and the hybrid's ``R@k``; and ``borrowed``, the share of the question's terms its best
    gold chunk holds (:func:`labkit.text.words.containment`): how much of the document's wording the question reuses."""
    import pandas as pd

    ks = [args.whole_number("k", k) for k in args.sequence("ks", ks, allow_empty=False, example="(3, 10)")]
    rows = []
    for name, queries in sets.items():
        queries = args.sequence(f"sets[{name!r}]", queries, allow_empty=False)
        qrels = spans_to_qrels(queries, s.chunks)
        run = make_run(s.hybrid, queries, max(ks))
        frame = pd.DataFrame({"set": name, "split": [q.split for q in queries]}, index=[q.qid for q in queries])
        for k in ks:
            cut = {q: r[:k] for q, r in run.items()}
            frame[f"hit@{k} (thr 3)"] = metrics.evaluate(cut, qrels, f"hit@{k}", thr=3).per_query[f"hit@{k}"]
            frame[f"R@{k}"] = metrics.evaluate(cut, qrels, (f"R@{k}",)).per_query[f"R@{k}"]
        borrowed = {}
        for q in queries:
            if not qrels[q.qid]:  # an unanswerable question: nothing to borrow from
                continue
            best = max(qrels[q.qid].values())
            borrowed[q.qid] = max(containment(q.search_text, s.texts[c]) for c, g in qrels[q.qid].items() if g == best)
        frame["borrowed"] = pd.Series(borrowed)
        rows.append(frame)
    return pd.concat(rows).rename_axis("qid").reset_index()


def answers(s: SimpleNamespace, llm: Any, about: About = ABOUT, k: int = READER_K, ranked: dict | None = None):
    """One row per labelled question: the reader's answer over the hybrid's top ``k`` (chapter 07's lenient
    prompt, its first sentences naming ``about``), the passages it read, and whether a chunk holding a grade-3
    span whole was among them (``retrieved``, chapter 07's hit@k at threshold 3), and ``answerable`` (False for a
    question marked unanswerable: the reader should decline it)."""
    import pandas as pd

    k = args.whole_number("k", k)
    ranked = ranked or runs(s, max(k, 10))
    read = rd.llm_reader(llm, "lenient", about.head)
    rows = []
    for q in s.queries:
        top = ranked["hybrid"][q.qid][:k]
        rows.append({"qid": q.qid, "split": q.split, "kind": q.kind, "question": q.search_text,
                     "reference": q.answer, "chunks": top, "answer": read(q.search_text, [s.texts[c] for c in top]),
                     "retrieved": any(s.qrels.get(q.qid, {}).get(c, 0) >= 3 for c in top),
                     "answerable": q.answerable})  # fmt: skip
    return pd.DataFrame(rows)


def two_by_two(table: Any, labels: dict[str, str]) -> Any:
    """Chapter 07's 2x2 for the answers ``table`` of :func:`answers`: retrieval (``retrieved``) against the answer
    (``labels[qid] == "right"``; partly, wrong and declined fail). Per cell the count and its share of all answers
    with a Wilson interval. Every answer needs a label (a missing one is an error naming it)."""
    import pandas as pd

    args.mapping("labels", labels, example='{"faq-...": "right"}')
    if "answerable" in table and not table["answerable"].all():
        raise ValueError("table holds unanswerable questions: the 2x2 is for answerable ones, pass "
                         "table[table['answerable']] (the report gives the unanswerable their own row)")  # fmt: skip
    missing = [q for q in table["qid"] if q not in labels]
    if missing:
        raise ValueError(f"labels has no label for {missing[0]!r} ({len(missing)} answers unlabelled): label them")
    cells = [("OK" if hit else "LUCKY") if labels[q] == "right" else ("GEN_FAIL" if hit else "RET_FAIL")
             for q, hit in zip(table["qid"], table["retrieved"], strict=True)]  # fmt: skip
    n = len(cells)
    rows = {c: {"answers": cells.count(c), **dict(zip(("share", "low", "high"), stats.wilson(cells.count(c), n),
                                                         strict=True))} for c in QUADRANTS}  # fmt: skip
    frame = pd.DataFrame(rows).T.rename_axis("cell")
    return frame.astype({"answers": int})


def traces(s: SimpleNamespace, table: Any, labels: dict[str, str]) -> list[dict]:
    """Chapter 07's traces from the answers ``table`` and their ``labels``, for
    :func:`labkit.measures.triage.stage_gap`:
    ``gold`` (the chunks holding a grade-3 span whole), ``retrieved`` (what the reader read), ``answer_pass``
    (``right``), and the question's ``kind`` and ``split`` to group by."""
    args.mapping("labels", labels, example='{"faq-...": "right"}')
    out = []
    for r in table.to_dict("records"):
        if r["qid"] not in labels:
            raise ValueError(f"labels has no label for {r['qid']!r}: label every answer of the table")
        gold = [c for c, g in s.qrels.get(r["qid"], {}).items() if g >= 3]
        out.append({"qid": r["qid"], "kind": r["kind"], "split": r["split"], "gold": gold,
                    "retrieved": list(r["chunks"]), "answer_pass": labels[r["qid"]] == "right"})  # fmt: skip
    return out
