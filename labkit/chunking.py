"""Fixed-size chunking with overlap, the split-rate diagnostic, and gold remapped to chunks.

Taught in ``05_chunk_grid`` (and used by every chapter that retrieves chunks).

Sizes count whitespace-delimited words (:func:`labkit.text.word_spans`).
A chunk keeps ``(doc, start_char, end_char)``, so gold evidence stored as
character spans maps onto *any* chunking without relabelling
(:func:`spans_to_qrels`).

Chunk boundaries tile the document: chunk ``i`` starts at its first word (the
first chunk at character 0) and ends where the word after its last word
starts (the last chunk at the end of the text). Punctuation and whitespace
therefore always belong to some chunk, and with ``overlap=0`` the chunks'
texts concatenate back to the document.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from numbers import Integral
from typing import Any

from labkit.text import word_spans

__all__ = [
    "chunk_spans",
    "contains_span",
    "Chunk",
    "chunk_document",
    "chunk_corpus",
    "split_stats",
    "spans_to_qrels",
    "DEFAULT_SIZE",
    "DEFAULT_OVERLAP",
]

DEFAULT_SIZE = 128
DEFAULT_OVERLAP = 32


def _check_size_overlap(size: Any, overlap: Any) -> tuple[int, int]:
    for name, v in (("size", size), ("overlap", overlap)):
        if isinstance(v, bool) or not isinstance(v, Integral):
            raise ValueError(f"{name} must be a whole number of words, got {v!r}")
    if size < 1:
        raise ValueError(f"size must be >= 1 word, got {size}")
    if overlap < 0:
        raise ValueError(f"overlap must be >= 0, got {overlap}")
    if overlap >= size:
        raise ValueError(
            f"overlap ({overlap}) must be smaller than size ({size}): the window would never move "
            f"(use e.g. overlap={size // 4} for 25 %)"
        )
    return int(size), int(overlap)


def chunk_spans(n_tokens: int, size: int, overlap: int) -> list[tuple[int, int]]:
    """Windows ``(start, end)`` over ``n_tokens`` tokens, ``end`` excluded, stride ``size - overlap``.

    The last window is cut at ``n_tokens`` and always reaches the end.

    >>> chunk_spans(10, 4, 1)
    [(0, 4), (3, 7), (6, 10)]
    """
    size, overlap = _check_size_overlap(size, overlap)
    if isinstance(n_tokens, bool) or not isinstance(n_tokens, Integral) or n_tokens < 1:
        raise ValueError(
            f"n_tokens must be a whole number >= 1 (an empty document has nothing to chunk), got {n_tokens!r}"
        )
    stride = size - overlap
    spans, start = [], 0
    while True:
        spans.append((start, min(start + size, n_tokens)))
        if start + size >= n_tokens:
            return spans
        start += stride


def contains_span(spans: Sequence[tuple[int, int]], a: int, b: int) -> int | None:
    """Index of the first window that holds all of ``[a, b)``, or ``None`` when every window cuts it."""
    if b <= a:
        raise ValueError(f"the span [{a}, {b}) is empty: end must be greater than start")
    return next((i for i, (s, e) in enumerate(spans) if s <= a and b <= e), None)


@dataclass(frozen=True)
class Chunk:
    """A piece of one document: characters ``[start_char, end_char)`` of ``doc``."""

    id: str
    doc: str
    index: int
    start_char: int
    end_char: int
    text: str
    n_words: int


def chunk_document(doc: str, text: str, size: int = DEFAULT_SIZE, overlap: int = DEFAULT_OVERLAP) -> list[Chunk]:
    """Cut one document into word windows; chunk ids are ``"<doc>#<index>"`` from 0."""
    size, overlap = _check_size_overlap(size, overlap)
    words = word_spans(text)
    if not words:
        raise ValueError(f"document {doc!r} is empty: there is nothing to chunk")
    chunks = []
    for i, (s, e) in enumerate(chunk_spans(len(words), size, overlap)):
        start = 0 if s == 0 else words[s][0]
        end = len(text) if e == len(words) else words[e][0]
        chunks.append(Chunk(f"{doc}#{i}", doc, i, start, end, text[start:end], e - s))
    return chunks


def chunk_corpus(corpus: Mapping[str, Any], size: int = DEFAULT_SIZE, overlap: int = DEFAULT_OVERLAP) -> list[Chunk]:
    """Chunk every document of ``{doc_id: Document or text}``, in doc-id order."""
    if not corpus:
        raise ValueError("corpus is empty: load it with labkit.data.load_corpus()")
    out: list[Chunk] = []
    for doc_id in sorted(corpus):
        doc = corpus[doc_id]
        out += chunk_document(doc_id, doc if isinstance(doc, str) else doc.text, size, overlap)
    return out


@dataclass(frozen=True)
class SplitStats:
    """What one (size, overlap) costs and how often it cuts an answer in two."""

    size: int
    overlap: int
    chunks: int
    indexed_tokens: int
    cost: float
    split: int
    split_rate: float


def split_stats(gold: Iterable[tuple[int, int, int]], size: int, overlap: int) -> SplitStats:
    """The cheap diagnostic of the source chapter, before any retriever runs.

    ``gold``: ``(doc length, answer start, answer length)`` in tokens, one per
    answer. ``cost`` = tokens indexed / tokens in the documents (overlap makes
    you embed and store some tokens twice); ``split_rate`` = share of answers
    that no single chunk holds whole.
    """
    gold = list(gold)
    if not gold:
        raise ValueError("gold is empty: give (doc length, answer start, answer length) tuples")
    total = n_chunks = indexed = split = 0
    for n, a, length in gold:
        if not (0 <= a and length >= 1 and a + length <= n):
            raise ValueError(f"answer ({a}, length {length}) does not fit in a document of {n} tokens")
        spans = chunk_spans(n, size, overlap)
        total += n
        n_chunks += len(spans)
        indexed += sum(e - s for s, e in spans)
        split += contains_span(spans, a, a + length) is None
    return SplitStats(size, overlap, n_chunks, indexed, indexed / total, split, split / len(gold))


def spans_to_qrels(queries: Iterable[Any], chunks: Sequence[Chunk]) -> dict[str, dict[str, int]]:
    """Graded chunk-level judgements derived from character-span gold, for any chunking.

    Rule: a chunk that holds a gold span **whole** gets the span's grade; a
    chunk that holds only **part** of it gets grade 1 ("related": it cannot
    answer alone). A chunk touched by several spans keeps its highest grade.
    Chunks touching no gold span are unjudged (grade 0).

    The alternative rule, not used here, grades partial chunks by the share of
    the span they hold (e.g. grade 3 if >= 80 % of it). It is kinder to small
    chunks but hides exactly the failure the split rate measures: an answer
    cut in two.

    ``queries``: objects with ``qid`` and ``gold`` (spans with ``doc``,
    ``start``, ``end``, ``grade``), e.g. from :func:`labkit.data.load_queries`.
    """
    by_doc: dict[str, list[Chunk]] = {}
    for c in chunks:
        by_doc.setdefault(c.doc, []).append(c)
    if not by_doc:
        raise ValueError("chunks is empty: chunk the corpus first (chunk_corpus)")
    qrels: dict[str, dict[str, int]] = {}
    for q in queries:
        judged = qrels.setdefault(q.qid, {})
        for span in q.gold:
            if span.doc not in by_doc:
                raise ValueError(f"query {q.qid}: gold span in doc {span.doc!r}, which has no chunks")
            for c in by_doc[span.doc]:
                if c.start_char <= span.start and span.end <= c.end_char:
                    grade = span.grade
                elif c.start_char < span.end and span.start < c.end_char:
                    grade = 1
                else:
                    continue
                judged[c.id] = max(grade, judged.get(c.id, 0))
    return qrels
