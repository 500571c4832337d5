"""The setting the chapters share, built once per process: the handbook, its queries, chunks, qrels, retrievers.

``handbook()`` replaces the same five lines (load, chunk at 128 words with 32 overlap, index BM25 and dense,
fuse) that chapters would otherwise repeat. :func:`reader_sample` and :func:`reader_contexts` fix which
questions the language-model chapters send to the reader and what it reads, so that the notebooks, the
recording tool (``tools/record.py``) and the tests ask the model exactly the same prompts.
"""

from __future__ import annotations

from functools import lru_cache
from types import SimpleNamespace

from labkit import SEED
from labkit.core import args
from labkit.data.corpus import load_corpus, load_queries
from labkit.retrieval.retrievers import BM25Retriever, DenseRetriever, HybridRetriever
from labkit.text.chunking import DEFAULT_OVERLAP, DEFAULT_SIZE, chunk_corpus, spans_to_qrels

__all__ = ["handbook", "indexed", "reader_sample", "reader_contexts", "READER_K"]

READER_K = 3


@lru_cache(maxsize=4)
def handbook(size: int = DEFAULT_SIZE, overlap: int = DEFAULT_OVERLAP) -> SimpleNamespace:
    """corpus, queries, chunks, texts (chunk id → text), qrels, and the bm25 / dense / hybrid retrievers."""
    return indexed(load_corpus(), load_queries(), size, overlap)


def indexed(corpus: dict, queries: list, size: int = DEFAULT_SIZE, overlap: int = DEFAULT_OVERLAP) -> SimpleNamespace:
    """Any corpus and its labelled queries, chunked and indexed as :func:`handbook` is (chapter 10's folders)."""
    chunks = chunk_corpus(corpus, size, overlap)
    bm25, dense = BM25Retriever(chunks), DenseRetriever(chunks)
    return SimpleNamespace(
        corpus=corpus,
        queries=queries,
        by_qid={q.qid: q for q in queries},
        chunks=chunks,
        texts={c.id: c.text for c in chunks},
        qrels=spans_to_qrels(queries, chunks),
        bm25=bm25,
        dense=dense,
        hybrid=HybridRetriever([bm25, dense]),
        size=size,
        overlap=overlap,
    )


def reader_sample(per_cell: int = 20, seed: int = SEED) -> list:
    """The questions the reader answers: ``per_cell`` per (split, slice), drawn with a seeded generator.

    With the default 20: 120 questions, 60 dev + 60 test, 40 each of easy / hard / real.
    """
    import numpy as np

    per_cell = args.whole_number("per_cell", per_cell)
    rng = np.random.default_rng(seed)
    out = []
    h = handbook()
    for split in ("dev", "test"):
        for slice_ in ("easy", "hard", "real"):
            cell = sorted((q for q in h.queries if q.split == split and q.slice == slice_), key=lambda q: q.qid)
            if per_cell > len(cell):
                raise ValueError(f"per_cell must be <= {len(cell)} (the {split}/{slice_} questions), got {per_cell}")
            picked = rng.choice(len(cell), size=per_cell, replace=False)
            out.extend(cell[i] for i in sorted(picked))
    return out


def reader_contexts(questions, k: int = READER_K) -> dict[str, list[str]]:
    """The chunk ids the reader sees for each question: the hybrid top ``k`` of its search text."""
    k = args.whole_number("k", k)
    h = handbook()
    questions = list(questions)
    hits = h.hybrid.search_many([q.search_text for q in questions], k=k)
    return {q.qid: [cid for cid, _ in hit] for q, hit in zip(questions, hits, strict=True)}
