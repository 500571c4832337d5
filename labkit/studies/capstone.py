"""Capstone: the evaluation workflow of the source's 7.12 checklist, on any folder of documents.

Taught in ``10_your_own_documents``. :func:`setting` is :func:`labkit.studies.handbook.handbook` for any folder:
the documents (:func:`labkit.folder.load_folder`), their chunks, the labelled questions with gold spans, and the
BM25, dense and hybrid retrievers over the chunks. With no arguments it is the bundled real corpus, the Python
documentation and its FAQ questions (:mod:`labkit.studies.pydocs`). :func:`per_query` measures every retriever
per question, so a chapter can give each figure its interval and compare retrievers query by query.

A questions file for your own folder is JSONL in the schema of ``data/queries.jsonl`` (``doc`` is a file's path
relative to the folder, as :func:`labkit.folder.load_folder` names it); :func:`load_question_file` checks every
line against the loaded documents (an unknown document or a span outside its text is an error naming the line).
"""

from __future__ import annotations

from collections import Counter
from functools import lru_cache
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from labkit import folder, metrics, rerank
from labkit.chunking import DEFAULT_OVERLAP, DEFAULT_SIZE
from labkit.data import parse_query
from labkit.files import path_arg, read_jsonl
from labkit.grid import evidence_recall
from labkit.retrieval import make_run
from labkit.studies import handbook as hb
from labkit.studies import pydocs

__all__ = ["setting", "load_question_file", "runs", "per_query", "reranked", "RETRIEVERS", "DEPTH"]

RETRIEVERS = ("bm25", "dense", "hybrid")
DEPTH = 100


def load_question_file(path: str | Path, corpus: dict) -> list:
    """Labelled questions for a folder's documents, every line checked by :func:`labkit.data.parse_query`."""
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
def setting(
    documents: str | None = None, questions: str | None = None, size: int = DEFAULT_SIZE, overlap: int = DEFAULT_OVERLAP
) -> SimpleNamespace:
    """The folder ``documents`` (default: the bundled Python documentation) with its ``questions`` file (default:
    the FAQ questions with gold), chunked and indexed: ``loaded``, ``corpus``, ``queries``, ``chunks``,
    ``texts``, ``qrels``, ``bm25``, ``dense``, ``hybrid`` (cached per arguments)."""
    if documents is None:
        loaded = folder.Loaded(pydocs.root() / "corpus", pydocs.corpus(), [], Counter(html=len(pydocs.corpus())))
        queries = list(pydocs.load_queries()) if questions is None else None
    else:
        loaded, queries = folder.load_folder(documents), None
    if queries is None:
        if questions is None:
            raise ValueError("questions is missing: give the questions file of your folder (JSONL, see the docstring)")
        queries = load_question_file(questions, loaded.corpus)
    out = hb.indexed(loaded.corpus, queries, size, overlap)
    out.loaded = loaded
    return out


def runs(s: SimpleNamespace, depth: int = DEPTH) -> dict[str, dict[str, list[str]]]:
    """Each retriever's top ``depth`` for every question of the setting ``s``."""
    return {name: make_run(getattr(s, name), s.queries, depth) for name in RETRIEVERS}


def per_query(s: SimpleNamespace, k: int, ranked: dict | None = None) -> Any:
    """One row per question: split, kind, then ``R@k``, ``nDCG@k``, ``hit@k`` and ``ER@k`` (evidence recall, spans of
    grade >= 2 held whole) of every retriever, named ``"<metric> <retriever>"`` with ``@k`` as written."""
    import pandas as pd

    ranked = ranked or runs(s)
    qids = pd.Index([q.qid for q in s.queries], name="qid")
    frame = pd.DataFrame({"split": [q.split for q in s.queries], "kind": [q.kind for q in s.queries]}, index=qids)
    for name, run in ranked.items():
        cut = {q: r[:k] for q, r in run.items()}
        scores = metrics.evaluate(cut, s.qrels, (f"R@{k}", f"nDCG@{k}", f"hit@{k}")).per_query.reindex(qids)
        for m in ("R", "nDCG", "hit"):
            frame[f"{m}@k {name}"] = scores[f"{m}@{k}"]
        frame[f"ER@k {name}"] = pd.Series(evidence_recall(run, s.queries, s.chunks, k)).reindex(qids)
    return frame


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
