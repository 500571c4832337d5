"""Retrievers over chunks, all with one interface: ``search(query, k)`` -> ``[(chunk_id, score), ...]``.

Taught in ``01_rrf_hybrid_retrieval``.

- :class:`BM25Retriever` — keyword search with ``bm25s``.
- :class:`DenseRetriever` — cosine similarity of all-MiniLM-L6-v2 embeddings
  (:mod:`labkit.retrieval.embeddings`, no torch).
- :class:`HybridRetriever` — several retrievers fused with :func:`labkit.measures.fusion.rrf`.

``search_many(queries, k)`` does the same for a list of queries (batched),
and :func:`make_run` turns labelled queries into a ranked run for
:func:`labkit.measures.metrics.evaluate`.

A document that shares no term with the query is not "retrieved" by BM25:
rankings can be shorter than ``k`` (metrics count the empty slots as misses).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from labkit.core import args
from labkit.measures.fusion import DEFAULT_C, check_c, check_weights, rrf
from labkit.retrieval import embeddings
from labkit.text.chunking import Chunk

__all__ = ["BM25Retriever", "DenseRetriever", "HybridRetriever", "make_run", "side_by_side"]

Hit = tuple[str, float]

BM25_METHODS = ("lucene", "robertson", "atire")


def _check_query(query: Any, name: str = "query") -> str:
    if not isinstance(query, str) or not query.strip():
        raise ValueError(f"{name} must be a non-empty string, got {query!r:.60}")
    return query


def _check_queries(queries: Any) -> list[str]:
    items = args.sequence("queries", queries, example='["vpn error", "parental leave"]')
    return [_check_query(q, f"queries[{i}]") for i, q in enumerate(items)]


def _check_k(k: Any, name: str = "k") -> int:
    return args.whole_number(name, k)


def check_chunks(chunks: Sequence[Chunk]) -> list[Chunk]:
    chunks = args.sequence("chunks", chunks, example="chunk_corpus(load_corpus())")
    if not chunks:
        raise ValueError("the retriever needs at least one chunk: chunk the corpus first (chunking.chunk_corpus)")
    for i, c in enumerate(chunks):
        if not isinstance(getattr(c, "id", None), str) or not isinstance(getattr(c, "text", None), str):
            raise ValueError(
                f"chunks[{i}] must be a Chunk (with .id and .text, from chunk_corpus), got {type(c).__name__} {c!r:.60}"
            )
    ids = [c.id for c in chunks]
    if len(set(ids)) != len(ids):
        dup = next(d for d in ids if ids.count(d) > 1)
        raise ValueError(f"chunk ids must be unique; two chunks share the id {dup!r}")
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

        self.chunks = check_chunks(chunks)
        self.ids = [c.id for c in self.chunks]
        k1 = args.finite_number("k1", k1, minimum=0, hint="BM25's term-frequency saturation, usually 1.2-2.0")
        b = args.finite_number("b", b, minimum=0, maximum=1, hint="BM25's length normalisation, usually 0.75")
        if method not in BM25_METHODS:
            raise ValueError(f"method must be one of {BM25_METHODS}, got {method!r}")
        self.k1, self.b, self.method = k1, b, method
        self._stemmer = Stemmer.Stemmer("english")
        self._bm25s = bm25s
        self.index = bm25s.BM25(k1=k1, b=b, method=method)
        self.index.index(self.tokenize([c.text for c in self.chunks]), show_progress=False)

    def tokenize(self, texts: Sequence[str]) -> list[list[str]]:
        """The exact token lists BM25 sees (also used by the rank_bm25 cross-check). Texts are put in NFC first,
        so a word typed with a combining accent (NFD) is the same token as its composed spelling."""
        return self._bm25s.tokenize(
            [unicodedata.normalize("NFC", args.text(f"texts[{i}]", t, allow_empty=True)) for i, t in enumerate(texts)],
            stopwords="en",
            stemmer=self._stemmer,
            return_ids=False,
            show_progress=False,
        )

    def search_many(self, queries: Sequence[str], k: int = 10) -> list[list[Hit]]:
        """The top ``k`` of each query (fewer when fewer chunks share a term with it)."""
        queries = _check_queries(queries)
        k = min(_check_k(k), len(self.ids))
        if not queries:
            return []
        import numpy as np

        out = []
        for tokens in self.tokenize(queries):
            if not tokens:  # only stop words: nothing to match
                out.append([])
                continue
            scores = self.index.get_scores(tokens)
            # score descending, ties in chunk order: a stable sort, so every CPU ranks exact ties alike (bm25s's
            # own top-k leaves their order to NumPy's partition, which differs between AVX2 and AVX-512 builds)
            top = np.argsort(-scores, kind="stable")[:k]
            out.append([(self.ids[int(d)], float(scores[d])) for d in top if scores[d] > 0])
        return out

    def search(self, query: str, k: int = 10) -> list[Hit]:
        return self.search_many([_check_query(query)], k)[0]


class DenseRetriever:
    """Cosine similarity between the query's and each chunk's MiniLM embedding.

    Chunk vectors come from :func:`labkit.retrieval.embeddings.cached_embeddings`, so a
    second run on the same chunking embeds nothing.
    """

    name = "dense"

    def __init__(self, chunks: Sequence[Chunk], model: Any = None):

        self.chunks = check_chunks(chunks)
        self.ids = [c.id for c in self.chunks]
        self.model = model or embeddings.default_model()
        self.vectors = embeddings.cached_embeddings(self.ids, [c.text for c in self.chunks], self.model)
        self._vectors64 = None  # float64 copy, made on the first search (see search_vectors)

    def search_many(self, queries: Sequence[str], k: int = 10) -> list[list[Hit]]:
        """The top ``k`` of each query (every chunk has a cosine, so ``min(k, number of chunks)`` hits)."""
        queries = _check_queries(queries)
        k = _check_k(k)
        if not queries:
            return []
        return self.search_vectors(embeddings.query_vectors(queries, self.model), k)

    def search_vectors(self, query_vectors: Any, k: int = 10) -> list[list[Hit]]:
        """Search with query vectors already embedded (e.g. reused across chunkings)."""
        import numpy as np

        k = min(_check_k(k), len(self.ids))
        vectors = np.asarray(query_vectors)
        dim = self.vectors.shape[1]
        if vectors.ndim != 2 or vectors.shape[1] != dim or not np.issubdtype(vectors.dtype, np.number):
            raise ValueError(
                f"query_vectors must be an array of shape (n_queries, {dim}), got shape {vectors.shape}: "
                "embed the queries with model.encode([...]) (a list, even for one query)"
            )
        if not np.isfinite(vectors).all():
            raise ValueError("query_vectors holds NaN or infinite values: re-embed the queries")
        # float32 products are exact in float64, and the float64 sums agree across BLAS kernels far below float32's
        # last digit: rounded back to float32, every CPU (AVX2 or AVX-512) gets the same scores and so the same ranks
        if self._vectors64 is None:
            self._vectors64 = np.asarray(self.vectors, dtype=np.float64).T.copy()
        sims = (np.asarray(vectors, dtype=np.float64) @ self._vectors64).astype(np.float32)
        out = []
        for row in sims:
            top = np.argsort(-row, kind="stable")[:k]  # score descending, then chunk order, on every CPU
            out.append([(self.ids[int(i)], float(row[i])) for i in top])
        return out

    def search(self, query: str, k: int = 10) -> list[Hit]:
        return self.search_many([_check_query(query)], k)[0]


class HybridRetriever:
    """Retrieve ``depth`` candidates from each retriever, fuse them with RRF, keep the top ``k``.

    ``weights``: one per retriever (default 1 each); ``c``: RRF's constant.
    The returned score is the fused RRF score.
    """

    name = "hybrid"

    def __init__(
        self, retrievers: Sequence[Any], c: float = DEFAULT_C, weights: Sequence[float] | None = None, depth: int = 100
    ):

        retrievers = args.sequence("retrievers", retrievers, example="[BM25Retriever(chunks), DenseRetriever(chunks)]")
        if not retrievers:
            raise ValueError("retrievers is empty: give e.g. [BM25Retriever(chunks), DenseRetriever(chunks)]")
        for i, r in enumerate(retrievers):
            if not callable(getattr(r, "search_many", None)):
                raise ValueError(
                    f"retrievers[{i}] must be a retriever with search_many(queries, k), got {type(r).__name__}"
                )
        self.retrievers = retrievers
        self.weights = check_weights(weights, len(self.retrievers))
        self.c = check_c(c)
        self.depth = _check_k(depth, "depth")

    def fuse(self, rankings: Sequence[Sequence[str]], k: int) -> list[Hit]:

        fused, score = rrf(rankings, c=self.c, top_n=k, weights=self.weights)
        return [(d, score[d]) for d in fused]

    def search_many(self, queries: Sequence[str], k: int = 10) -> list[list[Hit]]:
        """The fused top ``k`` of each query; ``k`` may not exceed ``depth`` (deeper ranks were never fetched)."""
        queries = _check_queries(queries)
        k = _check_k(k)
        if k > self.depth:
            raise ValueError(
                f"k ({k}) must be <= depth ({self.depth}): the fused list is built from each retriever's top "
                f"{self.depth}, so ranks below that would be missing; use HybridRetriever(..., depth={k})"
            )
        per = [r.search_many(queries, self.depth) for r in self.retrievers]
        return [self.fuse([[d for d, _ in p[i]] for p in per], k) for i in range(len(queries))]

    def search(self, query: str, k: int = 10) -> list[Hit]:
        return self.search_many([_check_query(query)], k)[0]


def make_run(retriever: Any, queries: Iterable[Any], k: int = 10) -> dict[str, list[str]]:
    """``{qid: [chunk ids in rank order]}`` for labelled queries (their ``search_text``).

    A ranked list (not scores) keeps the retriever's own tie order when
    :func:`labkit.measures.metrics.evaluate` reads it.
    """
    queries = args.sequence("queries", queries, example="load_queries()")
    k = _check_k(k)
    if not callable(getattr(retriever, "search_many", None)):
        raise ValueError(
            f"retriever must have search_many(queries, k), e.g. BM25Retriever(chunks); got {retriever!r:.60}"
        )
    texts, qids, first = [], [], {}
    for i, q in enumerate(queries):
        if hasattr(q, "qid") and hasattr(q, "search_text"):
            qid, text = q.qid, q.search_text
        elif isinstance(q, Mapping) and "qid" in q and "question" in q:
            qid, text = q["qid"], q["question"]
        else:
            raise ValueError(
                f"queries[{i}] must be a Query (from load_queries) or a dict with 'qid' and 'question', "
                f"got {type(q).__name__} {q!r:.60}"
            )
        _check_query(text, f"queries[{i}] text")
        if not isinstance(qid, str) or not qid:
            raise ValueError(f"queries[{i}] has qid {qid!r}: qids must be non-empty strings")
        if qid in first:
            raise ValueError(
                f"queries[{i}] repeats qid {qid!r} (first at queries[{first[qid]}]): a run holds one ranking per "
                "query, so the second would overwrite the first"
            )
        first[qid] = i
        texts.append(text)
        qids.append(qid)
    results = retriever.search_many(texts, k)
    return {qid: [d for d, _ in hits] for qid, hits in zip(qids, results, strict=True)}


def side_by_side(question: str, retrievers: Mapping[str, Any], k: int = 5, judged: Mapping[str, int] | None = None):
    """One question, each retriever's top ``k`` chunk ids in a column (rank = row).

    ``judged``: the question's chunk grades (from :func:`labkit.text.chunking.spans_to_qrels`); gold chunks
    are then marked ``<id>  [gold 3]``.
    """
    import pandas as pd

    _check_query(question, "question")
    k = _check_k(k)
    args.mapping("retrievers", retrievers, example='{"bm25": bm25, "dense": dense}')
    if not retrievers:
        raise ValueError('retrievers is empty: give e.g. {"bm25": bm25, "dense": dense}')
    judged = args.mapping("judged", judged, example='qrels["q1"]') if judged is not None else {}

    def label(d: str) -> str:
        return f"{d}  [gold {judged[d]}]" if judged.get(d, 0) > 0 else d

    cols = {name: [label(d) for d, _ in r.search(question, k)] for name, r in retrievers.items()}
    n = max((len(v) for v in cols.values()), default=0)
    frame = pd.DataFrame({name: v + [""] * (n - len(v)) for name, v in cols.items()})
    frame.index = pd.RangeIndex(1, n + 1, name="rank")
    return frame
