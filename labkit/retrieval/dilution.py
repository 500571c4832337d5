"""Dilution: how close a gold span's embedding stays to the embedding of the chunk that holds it, as chunks grow.

Taught in ``05_chunk_grid``. A chunk's vector is the mean of its word pieces' vectors (MiniLM pools them), so a
gold sentence inside a 256-word chunk is one voice among many: the chunk's vector moves away from the sentence's.
:func:`span_chunk_similarity` measures it per gold span and chunking: the cosine of the span's vector with the
vector of the chunk that holds it whole, and the cosine of the query's vector with that chunk's (what dense
retrieval ranks by). Every vector comes from a cache: the chunkings' from ``data/embeddings/``
(:func:`labkit.retrieval.embeddings.cached_embeddings`), the gold spans' too (:func:`span_texts` names them; written
by ``tools/embed_spans.py``), the queries' from the committed query table.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from labkit.core import args
from labkit.retrieval import embeddings
from labkit.text.chunking import Chunk, chunks_by_doc

__all__ = ["span_texts", "span_vectors", "span_chunk_similarity"]


def span_texts(queries: Iterable[Any], corpus: Mapping[str, Any], min_grade: int = 2) -> dict[str, tuple[Any, Any]]:
    """Every gold span of grade >= ``min_grade``, ``{"<qid>:<i>": (query, span)}`` (``i`` counts the query's gold
    spans from 0, all grades), in query order. A span in a document the corpus lacks is an error."""
    min_grade = args.whole_number("min_grade", min_grade, minimum=1, maximum=3)
    queries = args.queries("queries", queries, example="labkit.data.corpus.load_queries()", gold=True)
    args.mapping("corpus", corpus, example="load_corpus()")
    out = {}
    for q in queries:
        for i, s in enumerate(q.gold):
            if s.grade < min_grade:
                continue
            if s.doc not in corpus:
                raise ValueError(f"query {q.qid!r} has a gold span in doc {s.doc!r}, which corpus lacks: same corpus?")
            out[f"{q.qid}:{i}"] = (q, s)
    if not out:
        raise ValueError(f"no gold span has grade >= {min_grade}: give queries with gold spans")
    return out


def span_vectors(spans: Mapping[str, tuple[Any, Any]], corpus: Mapping[str, Any]) -> Any:
    """The MiniLM vectors of :func:`span_texts`' spans (the text between their offsets), cached like a chunking's."""
    spans = args.mapping("spans", spans, example="span_texts(queries, corpus)")
    args.mapping("corpus", corpus, example="load_corpus()")
    ids = list(spans)
    texts = [corpus[s.doc].text[s.start : s.end] for _, s in spans.values()]
    return embeddings.cached_embeddings(ids, texts)


def span_chunk_similarity(
    queries: Sequence[Any], corpus: Mapping[str, Any], chunkings: Mapping[Any, Sequence[Chunk]], min_grade: int = 2
) -> Any:
    """One row per gold span (grade >= ``min_grade``) and chunking: whether one chunk holds the span whole, and if
    so the cosine of the span's vector with that chunk's (``span · chunk``) and of the query's vector with it
    (``query · chunk``); both NaN when no chunk holds the span whole (it is cut; nothing is dropped). With overlap a
    span can sit whole in two chunks: the first is used. ``chunkings``: ``{label: chunks}``, e.g. ``{64: chunks64,
    ...}``; each chunking's vectors come from the cache (``data/embeddings/`` holds 05's nine).

    Columns: ``span``, ``qid``, ``slice``, ``chunking``, ``span words``, ``held whole``, ``span · chunk``,
    ``query · chunk``, and ``query · span`` (the same in every chunking: the ceiling a chunk holding only the span
    would give the query).
    """
    import numpy as np
    import pandas as pd

    args.mapping("chunkings", chunkings, example="{64: grid.chunks(64, 0), 256: grid.chunks(256, 0)}")
    if not chunkings:
        raise ValueError("chunkings is empty: give {label: chunks}, e.g. {64: grid.chunks(64, 0)}")
    chunkings = {label: list(chunks) for label, chunks in chunkings.items()}
    for label, chunks in chunkings.items():
        if not chunks:
            raise ValueError(f"chunkings[{label!r}] is empty: chunk the corpus first")
    spans = span_texts(queries, corpus, min_grade)
    svec = span_vectors(spans, corpus)
    qids = list(dict.fromkeys(q.qid for q, _ in spans.values()))
    search = {q.qid: q.search_text for q, _ in spans.values()}
    qvec = dict(zip(qids, embeddings.query_vectors([search[qid] for qid in qids]), strict=True))
    rows = []
    for label, chunks in chunkings.items():
        cvec = embeddings.cached_embeddings([c.id for c in chunks], [c.text for c in chunks])
        row_of = {c.id: i for i, c in enumerate(chunks)}
        by_doc = chunks_by_doc(chunks)
        for j, (sid, (q, s)) in enumerate(spans.items()):
            holder = next((c for c in by_doc.get(s.doc, ()) if c.start_char <= s.start and s.end <= c.end_char), None)
            v = None if holder is None else cvec[row_of[holder.id]]
            rows.append({"span": sid, "qid": q.qid, "slice": q.slice, "chunking": label,
                         "span words": len(corpus[s.doc].text[s.start : s.end].split()),
                         "held whole": holder is not None,
                         "span · chunk": np.nan if v is None else float(svec[j] @ v),
                         "query · chunk": np.nan if v is None else float(qvec[q.qid] @ v),
                         "query · span": float(qvec[q.qid] @ svec[j])})  # fmt: skip
    return pd.DataFrame(rows)
