"""Retrievers over chunks, all with one interface: ``search(query, k)`` -> ``[(chunk_id, score), ...]``.

Taught in ``01_rrf_hybrid_retrieval``.

- :class:`BM25Retriever` — keyword search with ``bm25s``.
- :class:`DenseRetriever` — cosine similarity of all-MiniLM-L6-v2 embeddings
  (:mod:`labkit.embeddings`, no torch).
- :class:`HybridRetriever` — several retrievers fused with :func:`labkit.fusion.rrf`.

``search_many(queries, k)`` does the same for a list of queries (batched),
and :func:`make_run` turns labelled queries into a ranked run for
:func:`labkit.metrics.evaluate`.

A document that shares no term with the query is not "retrieved" by BM25:
rankings can be shorter than ``k`` (metrics count the empty slots as misses).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from numbers import Integral
from typing import Any

from labkit.chunking import Chunk

__all__ = ["BM25Retriever", "DenseRetriever", "HybridRetriever", "make_run", "side_by_side"]

Hit = tuple[str, float]


def _check_query(query: Any) -> str:
    if not isinstance(query, str) or not query.strip():
        raise ValueError(f"query must be a non-empty string, got {query!r}")
    return query


def _check_k(k: Any) -> int:
    if isinstance(k, bool) or not isinstance(k, Integral) or k < 1:
        raise ValueError(f"k must be a whole number >= 1, got {k!r}")
    return int(k)


def _check_chunks(chunks: Sequence[Chunk]) -> list[Chunk]:
    chunks = list(chunks)
    if not chunks:
        raise ValueError("the retriever needs at least one chunk: chunk the corpus first (chunking.chunk_corpus)")
    ids = [c.id for c in chunks]
    if len(set(ids)) != len(ids):
        raise ValueError("chunk ids must be unique; two chunks share an id")
    return chunks


class BM25Retriever:
    """BM25 over chunk texts with ``bm25s``.

    Tokens: ``bm25s.tokenize`` (lower-case words of 2+ characters, so
    ``ERR-4031`` becomes ``err`` + ``4031``), English stop words removed (bm25s's
    list of 179 words), Snowball English stemming (PyStemmer).

    ``method="lucene"`` (bm25s's default, and what Lucene/Elasticsearch use)
    is shipped: its IDF ``log(1 + (N - df + 0.5) / (df + 0.5))`` is never
    negative. ``"robertson"`` is the classic formula and ranks like
    ``rank_bm25.BM25Okapi`` except for terms in more than half of the chunks,
    whose IDF goes negative there (BM25Okapi floors it at ``epsilon`` times
    the mean IDF); the tests check that agreement. bm25s leaves the constant
    ``(k1 + 1)`` out of the numerator, so its scores are rank_bm25's divided by
    ``k1 + 1``; rankings are unchanged.
    """

    name = "bm25"

    def __init__(self, chunks: Sequence[Chunk], k1: float = 1.5, b: float = 0.75, method: str = "lucene"):
        import bm25s
        import Stemmer

        self.chunks = _check_chunks(chunks)
        self.ids = [c.id for c in self.chunks]
        self.k1, self.b, self.method = k1, b, method
        self._stemmer = Stemmer.Stemmer("english")
        self._bm25s = bm25s
        self.index = bm25s.BM25(k1=k1, b=b, method=method)
        self.index.index(self.tokenize([c.text for c in self.chunks]), show_progress=False)

    def tokenize(self, texts: Sequence[str]) -> list[list[str]]:
        """The exact token lists BM25 sees (also used by the rank_bm25 cross-check)."""
        return self._bm25s.tokenize(
            list(texts), stopwords="en", stemmer=self._stemmer, return_ids=False, show_progress=False
        )

    def search_many(self, queries: Sequence[str], k: int = 10) -> list[list[Hit]]:
        queries = [_check_query(q) for q in queries]
        k = min(_check_k(k), len(self.ids))
        if not queries:
            return []
        docs, scores = self.index.retrieve(self.tokenize(queries), k=k, show_progress=False)
        return [
            [(self.ids[int(d)], float(s)) for d, s in zip(row, srow, strict=True) if s > 0]
            for row, srow in zip(docs, scores, strict=True)
        ]

    def search(self, query: str, k: int = 10) -> list[Hit]:
        return self.search_many([query], k)[0]


class DenseRetriever:
    """Cosine similarity between the query's and each chunk's MiniLM embedding.

    Chunk vectors come from :func:`labkit.embeddings.cached_embeddings`, so a
    second run on the same chunking embeds nothing.
    """

    name = "dense"

    def __init__(self, chunks: Sequence[Chunk], model: Any = None):
        from labkit import embeddings

        self.chunks = _check_chunks(chunks)
        self.ids = [c.id for c in self.chunks]
        self.model = model or embeddings.default_model()
        self.vectors = embeddings.cached_embeddings(self.ids, [c.text for c in self.chunks], self.model)

    def search_many(self, queries: Sequence[str], k: int = 10) -> list[list[Hit]]:
        queries = [_check_query(q) for q in queries]
        if not queries:
            return []
        return self.search_vectors(self.model.encode(queries), k)

    def search_vectors(self, query_vectors: Any, k: int = 10) -> list[list[Hit]]:
        """Search with query vectors already embedded (e.g. reused across chunkings)."""
        import numpy as np

        k = min(_check_k(k), len(self.ids))
        sims = np.asarray(query_vectors) @ self.vectors.T
        out = []
        for row in sims:
            top = np.argpartition(-row, k - 1)[:k]
            top = top[np.lexsort((top, -row[top]))]  # score descending, then chunk order: deterministic
            out.append([(self.ids[int(i)], float(row[i])) for i in top])
        return out

    def search(self, query: str, k: int = 10) -> list[Hit]:
        return self.search_many([query], k)[0]


class HybridRetriever:
    """Retrieve ``depth`` candidates from each retriever, fuse them with RRF, keep the top ``k``.

    ``weights``: one per retriever (default 1 each); ``c``: RRF's constant.
    The returned score is the fused RRF score.
    """

    name = "hybrid"

    def __init__(
        self, retrievers: Sequence[Any], c: float = 60, weights: Sequence[float] | None = None, depth: int = 100
    ):
        from labkit.fusion import _check_weights

        if not retrievers:
            raise ValueError("retrievers is empty: give e.g. [BM25Retriever(chunks), DenseRetriever(chunks)]")
        self.retrievers = list(retrievers)
        self.weights = _check_weights(weights, len(self.retrievers))
        self.c = c
        self.depth = _check_k(depth)

    def fuse(self, rankings: Sequence[Sequence[str]], k: int) -> list[Hit]:
        from labkit.fusion import rrf

        fused, score = rrf(rankings, c=self.c, top_n=k, weights=self.weights)
        return [(d, score[d]) for d in fused]

    def search_many(self, queries: Sequence[str], k: int = 10) -> list[list[Hit]]:
        k = _check_k(k)
        per = [r.search_many(queries, self.depth) for r in self.retrievers]
        return [self.fuse([[d for d, _ in p[i]] for p in per], k) for i in range(len(queries))]

    def search(self, query: str, k: int = 10) -> list[Hit]:
        return self.search_many([query], k)[0]


def make_run(retriever: Any, queries: Iterable[Any], k: int = 10) -> dict[str, list[str]]:
    """``{qid: [chunk ids in rank order]}`` for labelled queries (their ``search_text``).

    A ranked list (not scores) keeps the retriever's own tie order when
    :func:`labkit.metrics.evaluate` reads it.
    """
    queries = list(queries)
    texts = [q.search_text if hasattr(q, "search_text") else q["question"] for q in queries]
    qids = [q.qid if hasattr(q, "qid") else q["qid"] for q in queries]
    results = retriever.search_many(texts, k)
    return {qid: [d for d, _ in hits] for qid, hits in zip(qids, results, strict=True)}


def side_by_side(question: str, retrievers: Mapping[str, Any], k: int = 5, judged: Mapping[str, int] | None = None):
    """One question, each retriever's top ``k`` chunk ids in a column (rank = row).

    ``judged``: the question's chunk grades (from :func:`labkit.chunking.spans_to_qrels`); gold chunks
    are then marked ``<id>  [gold 3]``.
    """
    import pandas as pd

    _check_query(question)
    judged = judged or {}

    def label(d: str) -> str:
        return f"{d}  [gold {judged[d]}]" if judged.get(d, 0) > 0 else d

    cols = {name: [label(d) for d, _ in r.search(question, k)] for name, r in retrievers.items()}
    n = max((len(v) for v in cols.values()), default=0)
    frame = pd.DataFrame({name: v + [""] * (n - len(v)) for name, v in cols.items()})
    frame.index = pd.RangeIndex(1, n + 1, name="rank")
    return frame
