"""Fixed-size chunking with overlap, the split-rate diagnostic, and gold remapped to chunks.

Taught in ``05_chunk_grid`` (and used by every chapter that retrieves chunks).

Sizes count whitespace-delimited words (:func:`labkit.text.words.word_spans`).
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

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from numbers import Real
from typing import Any

from labkit.core import args
from labkit.text.words import word_spans

__all__ = [
    "chunk_spans",
    "contains_span",
    "Chunk",
    "chunk_document",
    "chunk_corpus",
    "corpus_texts",
    "split_stats",
    "spans_to_qrels",
    "check_size_overlap",
    "DEFAULT_SIZE",
    "DEFAULT_OVERLAP",
]

DEFAULT_SIZE = 128
DEFAULT_OVERLAP = 32


MAX_WINDOWS = 1_000_000
"""More windows than this is a typing mistake (a document of a million chunks), not a chunking."""


def check_size_overlap(size: Any, overlap: Any) -> tuple[int, int]:
    """``(size, overlap)`` in words, checked: both whole numbers, ``0 <= overlap < size``."""
    size = args.whole_number("size", size, minimum=1)
    overlap = args.whole_number("overlap", overlap, minimum=0)
    if overlap >= size:
        raise ValueError(
            f"overlap ({overlap}) must be smaller than size ({size}): the window would never move "
            f"(use e.g. overlap={size // 4} for 25 %)"
        )
    return size, overlap


def chunk_spans(n_tokens: int, size: int, overlap: int) -> list[tuple[int, int]]:
    """Windows ``(start, end)`` over ``n_tokens`` tokens, ``end`` excluded, stride ``size - overlap``.

    The last window is cut at ``n_tokens`` and always reaches the end.

    >>> chunk_spans(10, 4, 1)
    [(0, 4), (3, 7), (6, 10)]
    """
    size, overlap = check_size_overlap(size, overlap)
    if isinstance(n_tokens, bool) or not isinstance(n_tokens, Real) or not math.isfinite(n_tokens) or n_tokens < 1:
        raise ValueError(
            f"n_tokens must be a whole number >= 1 (an empty document has nothing to chunk), got {n_tokens!r}"
        )
    n_tokens = args.whole_number("n_tokens", n_tokens)
    stride = size - overlap
    windows = 1 + max(0, -(-(n_tokens - size) // stride))
    if windows > MAX_WINDOWS:
        raise ValueError(
            f"n_tokens={n_tokens:,} with size {size} and overlap {overlap} makes {windows:,} windows "
            f"(more than {MAX_WINDOWS:,}): check n_tokens, or use a larger size or a smaller overlap"
        )
    spans, start = [], 0
    while True:
        spans.append((start, min(start + size, n_tokens)))
        if start + size >= n_tokens:
            return spans
        start += stride


def contains_span(spans: Sequence[tuple[int, int]], a: int, b: int) -> int | None:
    """Index of the first window that holds all of ``[a, b)``, or ``None`` when every window cuts it."""
    a = args.whole_number("a", a, minimum=0)
    b = args.whole_number("b", b, minimum=0)
    if b <= a:
        raise ValueError(f"the span [{a}, {b}) is empty: end must be greater than start")
    windows = args.sequence("spans", spans, example="chunk_spans(1000, 256, 64)")
    for i, w in enumerate(windows):
        if (
            isinstance(w, str | bytes)
            or not isinstance(w, Sequence)
            or len(w) != 2
            or any(isinstance(x, bool) or not isinstance(x, Real) for x in w)
        ):
            raise ValueError(f"spans[{i}] must be a (start, end) pair of numbers, got {w!r:.60}")
    return next((i for i, (s, e) in enumerate(windows) if s <= a and b <= e), None)


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
    args.text("doc", doc)
    args.text("text", text, allow_empty=True)
    size, overlap = check_size_overlap(size, overlap)
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
    size, overlap = check_size_overlap(size, overlap)
    out: list[Chunk] = []
    for doc_id, text, _ in corpus_texts(corpus):
        out += chunk_document(doc_id, text, size, overlap)
    return out


def corpus_texts(corpus: Mapping[str, Any]) -> list[tuple[str, str, Any]]:
    """``(doc_id, text, document)`` of every document of ``{doc_id: Document or text}``, in id order, checked."""
    args.mapping("corpus", corpus, example="labkit.data.corpus.load_corpus()")
    if not corpus:
        raise ValueError("corpus is empty: load it with labkit.data.corpus.load_corpus()")
    for doc_id in corpus:
        if not isinstance(doc_id, str) or not doc_id.strip():
            raise ValueError(f"corpus has a document id {doc_id!r}: ids must be non-empty strings")
    out = []
    for doc_id in sorted(corpus):
        doc = corpus[doc_id]
        text = doc if isinstance(doc, str) else getattr(doc, "text", None)
        if not isinstance(text, str):
            raise ValueError(
                f"corpus[{doc_id!r}] must be a text or a Document (with .text), got {type(doc).__name__} {doc!r:.40}"
            )
        out.append((doc_id, text, doc))
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
    gold = args.sequence("gold", gold, example="[(1000, 240, 40), (800, 120, 30)]")
    if not gold:
        raise ValueError("gold is empty: give (doc length, answer start, answer length) tuples")
    size, overlap = check_size_overlap(size, overlap)
    triples = []
    for i, item in enumerate(gold):
        if isinstance(item, str | bytes | Mapping) or not isinstance(item, Sequence) or len(item) != 3:
            raise ValueError(f"gold[{i}] must be a (doc length, answer start, answer length) triple, got {item!r:.60}")
        triples.append(
            tuple(
                args.whole_number(f"gold[{i}] {what}", x, minimum=m)
                for what, x, m in zip(("doc length", "answer start", "answer length"), item, (1, 0, 1), strict=True)
            )
        )
    total = n_chunks = indexed = split = 0
    for i, (n, a, length) in enumerate(triples):
        if not (0 <= a and length >= 1 and a + length <= n):
            raise ValueError(f"gold[{i}]: answer ({a}, length {length}) does not fit in a document of {n} tokens")
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
    ``start``, ``end``, ``grade``), e.g. from :func:`labkit.data.corpus.load_queries`.
    """
    by_doc = chunks_by_doc(chunks)
    qrels: dict[str, dict[str, int]] = {}
    for q in args.queries("queries", queries, example="labkit.data.corpus.load_queries()", gold=True):
        if q.qid in qrels:
            raise ValueError(f"queries holds qid {q.qid!r} twice: each query may appear once")
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


def chunks_by_doc(chunks: Sequence[Chunk], name: str = "chunks") -> dict[str, list[Chunk]]:
    """``{doc: [its chunks]}``, refusing an empty list or anything that is not a chunk (names ``name``)."""
    items = args.sequence(name, chunks, example="chunk_corpus(corpus)")
    if not items:
        raise ValueError(f"{name} is empty: chunk the corpus first (chunk_corpus)")
    by_doc: dict[str, list[Chunk]] = {}
    seen: set[str] = set()
    for i, c in enumerate(items):
        if not all(hasattr(c, a) for a in ("id", "doc", "start_char", "end_char", "text")):
            raise ValueError(f"{name}[{i}] must be a Chunk (from chunk_corpus), got {type(c).__name__} {c!r:.60}")
        if c.id in seen:
            raise ValueError(f"{name} holds chunk id {c.id!r} twice: chunk ids must be unique")
        seen.add(c.id)
        by_doc.setdefault(c.doc, []).append(c)
    return by_doc
