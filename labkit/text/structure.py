"""Structure-aware chunking: Markdown sections, table headers carried along, a "title › section" prefix.

Taught in ``05_chunk_grid`` (the source's 7.11 and 7.12: "a table loses its header", "chunk by structure").

:func:`labkit.text.chunking.chunk_document` cuts a document into word windows that ignore its structure. The
chunkers here keep the same contract (a :class:`labkit.text.chunking.Chunk` keeps the character span
``[start_char, end_char)`` of the document it covers, so the gold spans map onto it as onto any chunking), and
add three switches, each one of the source's remedies:

- ``headings``: a chunk never crosses a Markdown heading. Each section (a heading line and everything up to the
  next heading of any level) is cut into windows of at most ``size`` words with ``overlap``; a short section is
  one chunk.
- ``table_header``: a chunk that holds rows of a Markdown table but not the table's header row gets the header
  row and its ``|---|`` line put in front of its text: the columns keep their names.
- ``prefix``: the chunk's text starts with the document title and the headings above the chunk, e.g.
  ``"Business travel policy 2025 › 4. Per diems and lodging caps"``.

What is *added* to a chunk (header, prefix) is indexed and read by the retrievers but is not part of the
chunk's span: ``text`` is what the retrievers see, ``start_char``/``end_char`` what the gold is matched
against, and ``n_words`` counts the words of the span only (the body), so the cost columns of the grid stay
comparable; :func:`added_words` counts the rest.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, NamedTuple

from labkit.core import args
from labkit.text.chunking import Chunk, check_size_overlap, chunk_spans, corpus_texts
from labkit.text.words import word_spans

__all__ = [
    "Section",
    "sections",
    "tables",
    "chunk_document",
    "chunk_corpus",
    "added_words",
    "budget_k",
    "in_table",
    "VARIANTS",
]

VARIANTS = {
    "windows": {"headings": False, "table_header": False, "prefix": False},
    "sections": {"headings": True, "table_header": False, "prefix": False},
    "sections + table header": {"headings": True, "table_header": True, "prefix": False},
    "sections + header + prefix": {"headings": True, "table_header": True, "prefix": True},
}
"""The structure-aware variants 05 compares, from plain word windows to every remedy at once."""

_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
_SEPARATOR = re.compile(r"^\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")


class Section(NamedTuple):
    """Characters ``[start, end)`` of one section and the headings above it, outermost first (the document's
    ``#`` title included)."""

    start: int
    end: int
    path: tuple


def sections(text: str) -> list[Section]:
    """The Markdown sections of ``text``: a new section starts at every heading line (``#`` to ``######``).

    Text before the first heading is a section with an empty path. The sections tile the text.
    """
    text = args.text("text", text, allow_empty=True)
    heads = list(_HEADING.finditer(text))
    out, path = [], []
    starts = [0] + [m.start() for m in heads]
    for i, start in enumerate(starts):
        end = starts[i + 1] if i + 1 < len(starts) else len(text)
        if i > 0:
            m = heads[i - 1]
            level = len(m.group(1))
            path = [p for p in path if p[0] < level] + [(level, m.group(2).strip())]
        if end > start and (text[start:end].strip() or i > 0):
            out.append(Section(start, end, tuple(p[1] for p in path)))
    return out


def tables(text: str) -> list[tuple[int, int, str]]:
    """Every Markdown table: ``(start, end, header)`` where ``header`` is its first row and ``|---|`` line.

    A table is a run of lines starting with ``|`` whose second line is a separator row.
    """
    text = args.text("text", text, allow_empty=True)
    out, pos, run = [], 0, []
    for line in text.splitlines(keepends=True):
        if line.lstrip().startswith("|"):
            run.append((pos, line))
        else:
            out += _table(run)
            run = []
        pos += len(line)
    return out + _table(run)


def _table(run: list) -> list[tuple[int, int, str]]:
    if len(run) < 2 or not _SEPARATOR.match(run[1][1].strip()):
        return []
    start, end = run[0][0], run[-1][0] + len(run[-1][1])
    return [(start, end, (run[0][1] + run[1][1]).rstrip("\n") + "\n")]


def chunk_document(
    doc: str,
    text: str,
    title: str | None = None,
    size: int = 128,
    overlap: int = 32,
    headings: bool = True,
    table_header: bool = False,
    prefix: bool = False,
) -> list[Chunk]:
    """Cut one document by its structure (see the module docstring); chunk ids are ``"<doc>#<index>"``.

    With every switch off this is :func:`labkit.text.chunking.chunk_document` (the same windows).
    """
    args.text("doc", doc)
    args.text("text", text, allow_empty=True)
    size, overlap = check_size_overlap(size, overlap)
    for name, value in (("headings", headings), ("table_header", table_header), ("prefix", prefix)):
        if not isinstance(value, bool):
            raise ValueError(f"{name} must be True or False, got {value!r}")
    if not word_spans(text):
        raise ValueError(f"document {doc!r} is empty: there is nothing to chunk")
    parts = sections(text) if headings else [Section(0, len(text), ())]
    heads = sections(text)
    found = tables(text)
    chunks = []
    for part in parts:
        body = text[part.start : part.end]
        words = word_spans(body)
        if not words:
            continue
        for s, e in chunk_spans(len(words), size, overlap):
            start = part.start + (0 if s == 0 else words[s][0])
            end = part.end if e == len(words) else part.start + words[e][0]
            added = ""
            if prefix:
                here = next((h for h in reversed(heads) if h.start <= start), Section(0, 0, ()))
                path = here.path[:-1] if here.start == start and here.path else here.path  # the heading leads
                trail = [title] if title and (not path or path[0] != title) else []
                added += " › ".join(trail + list(path)) + "\n"
            if table_header:
                for t_start, t_end, header in found:
                    header_end = t_start + len(header)
                    if start < t_end and end > header_end and start > t_start:
                        added += header
                        break
            chunks.append(Chunk(f"{doc}#{len(chunks)}", doc, len(chunks), start, end, added + text[start:end], e - s))
    return chunks


def chunk_corpus(corpus: Mapping[str, Any], size: int = 128, overlap: int = 32, **switches: bool) -> list[Chunk]:
    """:func:`chunk_document` over ``{doc_id: Document}`` (a Document's ``title`` feeds the prefix), in id order;
    ``switches`` are its ``headings``, ``table_header`` and ``prefix``."""
    unknown = set(switches) - {"headings", "table_header", "prefix"}
    if unknown:
        raise ValueError(f"unknown switch(es) {sorted(unknown)}: use headings, table_header or prefix")
    out: list[Chunk] = []
    for doc_id, text, doc in corpus_texts(corpus):
        out += chunk_document(doc_id, text, getattr(doc, "title", None), size, overlap, **switches)
    return out


def added_words(chunks) -> int:
    """Words the retrievers read that no span holds: the headers and prefixes put in front of the chunks."""
    chunks = args.sequence("chunks", chunks, example="labkit.text.structure.chunk_corpus(corpus)")
    for i, c in enumerate(chunks):
        args.attributes(f"chunks[{i}]", c, ("text", "n_words"), "labkit.text.structure.chunk_corpus(corpus)")
    return sum(len(c.text.split()) - c.n_words for c in chunks)


def budget_k(chunks, words: int = 1280) -> int:
    """The ``k`` whose chunks hold about ``words`` words *as the reader reads them* (added header and prefix
    included): ``words`` / the mean words per chunk text, rounded, at least 1. 05 compares chunkings at an
    equal reading budget (size 128 at k = 10 is ~1,250 words)."""
    chunks = args.sequence("chunks", chunks, example="labkit.text.structure.chunk_corpus(corpus)")
    if not chunks:
        raise ValueError("chunks is empty: chunk a corpus first")
    words = args.whole_number("words", words, minimum=1)
    mean = sum(len(c.text.split()) for c in chunks) / len(chunks)
    return max(1, round(words / mean))


def in_table(query, corpus: Mapping[str, Any], min_grade: int = 2) -> bool:
    """Whether one of ``query``'s gold spans of grade >= ``min_grade`` starts inside a Markdown table."""
    args.attributes("query", query, ("gold",), "labkit.data.corpus.load_queries()[0]")
    corpus = args.mapping("corpus", corpus, example="labkit.data.corpus.load_corpus()")
    for span in query.gold:
        if span.doc not in corpus:
            raise ValueError(f"corpus has no document {span.doc!r}, which the query's gold names: pass its corpus")
    found = {}
    for span in query.gold:
        if span.grade >= min_grade:
            if span.doc not in found:
                found[span.doc] = tables(corpus[span.doc].text)
            if any(start <= span.start < end for start, end, _ in found[span.doc]):
                return True
    return False
