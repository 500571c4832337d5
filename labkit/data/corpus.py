"""Loaders for ``data/``: the handbook corpus, the labelled queries, published tables (TREC files:
``labkit.data.trec``).

Taught in ``00_welcome`` (the corpus).

Every loader validates what it reads and fails with the file and line
number, so a broken data file is found at load time, not as a strange metric.
Files are read as UTF-8; a byte-order mark (BOM, written by some Windows
editors) is skipped. Loaded files are cached by path *and* modification time
and size, so editing a file and loading it again gives the new contents.
Writers validate what they write, so a file they write can always be read back
with the same ranking (scores keep their full precision).

Command line::

    python -m labkit data --stats # documents, words, chunks, queries by slice x kind x split
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from labkit import data_dir
from labkit.core import args
from labkit.core.files import path_arg, read_text
from labkit.data import quotes
from labkit.text.chunking import DEFAULT_OVERLAP, DEFAULT_SIZE, chunk_corpus

__all__ = [
    "Document",
    "Span",
    "Query",
    "load_corpus",
    "load_queries",
    "parse_query",
    "load_reference",
    "SLICES",
    "HANDBOOK_SLICES",
    "KINDS",
    "SPLITS",
]

HANDBOOK_SLICES = ("easy", "hard", "real")
"""The slices of queries.jsonl (built by data/build_queries.py from data/sources/queries/)."""
SLICES = (*HANDBOOK_SLICES, "synthetic-easy", "synthetic-hard")
"""Every slice: the handbook's, then the generated sets of chapter 02 (data/synth/)."""
KINDS = ("fact", "synthesis", "comparison", "multihop", "conversational")
SPLITS = ("dev", "test")


# ---------------------------------------------------------------- corpus


@dataclass(frozen=True)
class Document:
    """One handbook document: its id (the file name without ``.md``), title and raw text."""

    id: str
    title: str
    text: str

    @property
    def department(self) -> str:
        return self.id.split("-", 1)[0]

    @property
    def n_words(self) -> int:
        return len(self.text.split())


def _stamp(path: Path) -> tuple[int, int]:
    """What the caches key on besides the path: modification time and size, so an edited file is re-read."""
    st = path.stat()
    return st.st_mtime_ns, st.st_size


def _folder_stamp(folder: Path) -> tuple:
    if not folder.is_dir():
        return ()
    return tuple((f.name, *_stamp(f)) for f in sorted(folder.glob("*.md")))


@lru_cache(maxsize=4)
def _load_corpus(folder: str, stamp: tuple = ()) -> tuple[Document, ...]:
    path = Path(folder)
    if path.is_file():
        raise NotADirectoryError(f"{path} is a file, not a folder: give the folder that holds the .md documents")
    if not path.is_dir():
        raise FileNotFoundError(f"{path} not found: give the folder that holds the handbook's .md documents")
    files = sorted(path.glob("*.md"))
    if not files:
        raise FileNotFoundError(f"no documents in {path}: the handbook should hold ~40 Markdown files")
    docs = []
    for f in files:
        text = read_text(f, "document")
        if not text.strip():
            raise ValueError(f"{f.name}: the document is empty")
        if "\r" in text:
            raise ValueError(f"{f.name}: has CR line endings; store documents with LF so offsets are portable")
        first = text.lstrip().splitlines()[0]
        title = first.lstrip("#").strip() if first.startswith("#") else f.stem
        docs.append(Document(id=f.stem, title=title, text=text))
    return tuple(docs)


def load_corpus(folder: str | Path | None = None) -> dict[str, Document]:
    """The handbook as ``{doc_id: Document}``, sorted by id (cached after the first call)."""
    folder = path_arg("folder", folder) if folder is not None else data_dir() / "handbook"
    return {d.id: d for d in _load_corpus(str(folder), _folder_stamp(folder))}


# ---------------------------------------------------------------- queries


@dataclass(frozen=True)
class Span:
    """Gold (or distractor) evidence: characters ``[start, end)`` of document ``doc``."""

    doc: str
    start: int
    end: int
    grade: int = 0

    def text(self, corpus: Mapping[str, Document]) -> str:
        if not isinstance(corpus, Mapping) or self.doc not in corpus:
            raise ValueError(f"corpus has no document {self.doc!r}: pass load_corpus() (the corpus the span is from)")
        return corpus[self.doc].text[self.start : self.end]


@dataclass(frozen=True)
class Query:
    """One labelled query. ``gold`` spans carry grades 1-3; ``distractors`` are look-alikes.

    ``search_text`` is what a retriever should be given: the ``rewritten``
    standalone query for conversational follow-ups, else the question.
    """

    qid: str
    question: str
    answer: str
    slice: str
    kind: str
    split: str
    gold: tuple[Span, ...]
    distractors: tuple[Span, ...] = ()
    history: tuple[str, ...] = ()
    rewritten: str | None = None
    extra: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def search_text(self) -> str:
        return self.rewritten or self.question

    @property
    def answerable(self) -> bool:
        """False for a question the documents cannot answer (``"answerable": false``, no gold): left out of the
        retrieval means, kept for the reader, who should decline it."""
        return bool(self.gold)

    @property
    def gold_docs(self) -> set[str]:
        return {s.doc for s in self.gold}


SPAN_KEYS = {"doc", "start", "end", "quote", "grade"}
"""What a span may hold: ``doc``, ``start``/``end`` or a ``quote`` (or both, which must agree), ``grade``."""


def _span(obj: Any, where: str, corpus: Mapping[str, Document], graded: bool) -> Span:
    if not isinstance(obj, Mapping) or "doc" not in obj:
        raise ValueError(f"{where}: a span needs at least 'doc', and start/end or a quote")
    unknown = sorted(set(obj) - SPAN_KEYS)
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {unknown} in a span; a span holds {sorted(SPAN_KEYS)}")
    doc = obj["doc"]
    if not isinstance(doc, str) or doc not in corpus:
        raise ValueError(f"{where}: unknown doc id {doc!r}; known ids look like {next(iter(corpus))!r}")
    text = corpus[doc].text
    n = len(text)
    has = [k for k in ("start", "end") if k in obj]
    if len(has) == 1:
        raise ValueError(f"{where}: a span with {has[0]} needs {'end' if has[0] == 'start' else 'start'} too")
    if not has and "quote" not in obj:
        raise ValueError(f"{where}: a span of {doc} needs start/end or a quote (never the whole document by default)")
    if "quote" in obj:
        if not isinstance(obj["quote"], str) or not obj["quote"].strip():
            raise ValueError(f"{where}: quote must be the passage's words, got {obj['quote']!r:.60}")
        start, end = quotes.locate_quote(text, obj["quote"], where, doc)
        if has and (obj["start"], obj["end"]) != (start, end):
            raise ValueError(f"{where}: start/end [{obj['start']}, {obj['end']}) disagree with the quote, found at "
                             f"[{start}, {end}) in {doc}'s extracted text: keep one of them")  # fmt: skip
    else:
        start, end = obj["start"], obj["end"]
    for key, v in (("start", start), ("end", end)):
        if isinstance(v, bool) or not isinstance(v, int):
            raise ValueError(f"{where}: {key} {v!r} must be a whole number of characters")
    if not 0 <= start < end <= n:
        raise ValueError(f"{where}: span [{start}, {end}) is outside {doc} (0..{n}) or empty; the text the tool "
                         f"reads holds {n:,} characters: {quotes.GOLD_RULE}")  # fmt: skip
    if not text[start:end].strip():
        raise ValueError(f"{where}: span [{start}, {end}) of {doc} is only whitespace")
    grade = obj.get("grade", 0)
    if graded and (isinstance(grade, bool) or not isinstance(grade, int) or grade not in (1, 2, 3)):
        raise ValueError(f"{where}: grade {grade!r} must be 1, 2 or 3")
    if not graded and grade is not None and (isinstance(grade, bool) or not isinstance(grade, int)):
        raise ValueError(f"{where}: grade {grade!r} must be a whole number")
    return Span(doc, start, end, grade or 0)


def _parse_query(line: str, where: str, corpus: Mapping[str, Document]) -> Query:
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as err:
        raise ValueError(f"{where}: malformed JSON ({err.msg}, column {err.colno})") from None
    return parse_query(obj, where, corpus)


def parse_query(obj: Any, where: str, corpus: Mapping[str, Document]) -> Query:
    """One labelled query from its JSON object, every field checked: the one definition of a valid query.

    ``where`` (``"queries.jsonl:7"``) starts every error message. ``data/build_queries.py`` checks each query it
    builds from the quote-based sources with this same function, so the sources and the file cannot disagree.
    """
    if not isinstance(obj, dict):
        raise ValueError(f"{where}: each line must be a JSON object")
    for key in ("qid", "question", "answer", "slice", "kind", "split", "gold"):
        if key not in obj:
            raise ValueError(f"{where}: missing field {key!r}")
    qid = obj["qid"]
    if not isinstance(qid, str) or not qid.strip() or any(c.isspace() for c in qid):
        raise ValueError(f"{where}: qid {qid!r} must be a non-empty string without spaces (TREC files split on them)")
    for key in ("question", "answer"):
        if not isinstance(obj[key], str) or not obj[key].strip():
            raise ValueError(f"{where}: {key} must be a non-empty string, got {obj[key]!r:.60}")
    for key, allowed in (("slice", SLICES), ("kind", KINDS), ("split", SPLITS)):
        if not isinstance(obj[key], str) or obj[key] not in allowed:
            raise ValueError(f"{where}: {key} {obj[key]!r} must be one of {allowed}")
    for key in ("gold", "distractors", "history"):
        if not isinstance(obj.get(key, []), list):
            raise ValueError(f"{where}: {key} must be a list, got {type(obj[key]).__name__}")
    answerable = obj.get("answerable", True)
    if not isinstance(answerable, bool):
        raise ValueError(f"{where}: answerable must be true or false, got {answerable!r:.60}")
    if answerable and not obj["gold"]:
        raise ValueError(f"{where}: gold must hold at least one span; a question the documents cannot answer is "
                         'marked "answerable": false with "gold": []')  # fmt: skip
    if not answerable and obj["gold"]:
        raise ValueError(f'{where}: a question marked "answerable": false has no gold; drop its spans or the mark')
    at = f"{where} ({qid})"
    gold = tuple(_span(s, f"{at} gold[{i}]", corpus, True) for i, s in enumerate(obj["gold"]))
    dis = tuple(_span(s, f"{at} distractors[{i}]", corpus, False) for i, s in enumerate(obj.get("distractors", [])))
    for i, h in enumerate(obj.get("history", [])):
        if not isinstance(h, str) or not h.strip():
            raise ValueError(f"{where}: history[{i}] must be a non-empty string, got {h!r:.60}")
    rewritten = obj.get("rewritten")
    if rewritten is not None and (not isinstance(rewritten, str) or not rewritten.strip()):
        raise ValueError(f"{where}: rewritten must be a non-empty string or null, got {rewritten!r:.60}")
    if obj.get("history") and not rewritten:
        raise ValueError(f"{where}: a follow-up with history needs 'rewritten'")
    known = {"qid", "question", "answer", "slice", "kind", "split", "gold", "distractors", "history", "rewritten",
             "answerable"}  # fmt: skip
    return Query(
        qid=obj["qid"],
        question=obj["question"],
        answer=obj["answer"],
        slice=obj["slice"],
        kind=obj["kind"],
        split=obj["split"],
        gold=gold,
        distractors=dis,
        history=tuple(obj.get("history", ())),
        rewritten=obj.get("rewritten"),
        extra={k: v for k, v in obj.items() if k not in known},
    )


@lru_cache(maxsize=4)
def _load_queries(path: str, corpus_folder: str, stamp: tuple = ()) -> tuple[Query, ...]:
    corpus = load_corpus(corpus_folder)
    out, seen = [], {}
    p = Path(path)
    text = read_text(p, "queries (.jsonl)", "build it with `python data/build_queries.py`")
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{p.name}:{n}"
        q = _parse_query(line, where, corpus)
        if q.qid in seen:
            raise ValueError(f"{where}: duplicate qid {q.qid!r} (first on line {seen[q.qid]})")
        seen[q.qid] = n
        out.append(q)
    if not out:
        raise ValueError(f"{p}: the file holds no queries (it is empty)")
    return tuple(out)


def load_queries(slice: str | None = None, split: str | None = None, path: str | Path | None = None) -> list[Query]:
    """The labelled queries, validated on load, optionally one slice and/or split.

    ``slice``: ``"easy"``, ``"hard"`` or ``"real"``; ``split``: ``"dev"`` or ``"test"``.
    """
    if slice is not None and slice not in SLICES:
        raise ValueError(f"slice must be one of {SLICES} or None, got {slice!r}")
    if split is not None and split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS} or None, got {split!r}")
    path = path_arg("path", path) if path is not None else data_dir() / "queries.jsonl"
    folder = data_dir() / "handbook"
    stamp = (_stamp(path) if path.is_file() else (), _folder_stamp(folder))
    rows = _load_queries(str(path), str(folder), stamp)
    return [q for q in rows if (slice is None or q.slice == slice) and (split is None or q.split == split)]


def load_reference(name: str):
    """A published table from ``data/reference/<name>.csv`` as a DataFrame (see data/README.md for citations)."""
    import pandas as pd

    args.text("name", name)
    if "/" in name or "\\" in name or name.startswith("."):
        raise ValueError(f"name must be a table name such as 'lost_in_the_middle_liu2024', not a path: {name!r}")
    path = data_dir() / "reference" / f"{name}.csv"
    if not path.is_file():
        known = sorted(p.stem for p in (data_dir() / "reference").glob("*.csv"))
        raise FileNotFoundError(f"no reference table {name!r}; available: {known}")
    return pd.read_csv(path)


# ---------------------------------------------------------------- command line


def stats_text() -> str:
    """The ``--stats`` report: documents, words, chunks, and queries by slice x kind x split."""
    from collections import Counter

    corpus = load_corpus()
    queries = load_queries()
    chunks = chunk_corpus(corpus)
    depts = Counter(d.department for d in corpus.values())
    lines = [
        f"documents: {len(corpus)} ({', '.join(f'{k} {v}' for k, v in sorted(depts.items()))})",
        f"words:     {sum(d.n_words for d in corpus.values()):,} "
        f"(min {min(d.n_words for d in corpus.values())}, max {max(d.n_words for d in corpus.values())} per document)",
        f"chunks:    {len(chunks)} at size {DEFAULT_SIZE} words, overlap {DEFAULT_OVERLAP}",
        f"queries:   {len(queries)}",
        "",
    ]
    counts = Counter((q.slice, q.kind, q.split) for q in queries)
    header = f"{'slice':6s} {'kind':15s} {'dev':>5s} {'test':>5s} {'all':>5s}"
    lines.append(header)
    for sl in SLICES:
        for kind in KINDS:
            dev, test = counts[(sl, kind, "dev")], counts[(sl, kind, "test")]
            if dev or test:
                lines.append(f"{sl:6s} {kind:15s} {dev:5d} {test:5d} {dev + test:5d}")
        dev = sum(v for (s, _, sp), v in counts.items() if s == sl and sp == "dev")
        test = sum(v for (s, _, sp), v in counts.items() if s == sl and sp == "test")
        lines.append(f"{sl:6s} {'(all kinds)':15s} {dev:5d} {test:5d} {dev + test:5d}")
    return "\n".join(lines)


def check_all() -> str:
    """Load (and so validate) every file of ``data/`` the workbook reads; one line saying what was found."""
    load_queries()  # loading validates everything
    return f"data/ is valid: {len(load_corpus())} documents, {len(load_queries())} queries"
