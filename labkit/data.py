"""Loaders for ``data/``: the handbook corpus, the labelled queries, TREC files.

Taught in ``00_welcome`` (the corpus) and ``03_metrics_by_hand`` (TREC files).

Every loader validates what it reads and fails with the file and line
number, so a broken data file is found at load time, not as a strange metric.

Command line::

    python -m labkit.data --stats    # documents, words, chunks, queries by slice x kind x split
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from labkit import data_dir

__all__ = [
    "Document",
    "Span",
    "Query",
    "load_corpus",
    "load_queries",
    "read_qrels",
    "write_qrels",
    "read_run",
    "write_run",
    "load_reference",
]

SLICES = ("easy", "hard", "real")
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


def _read_raw(path: Path) -> str:
    # newline="" keeps the characters exactly as stored, so character offsets match the file.
    with open(path, encoding="utf-8", newline="") as f:
        return f.read()


@lru_cache(maxsize=4)
def _load_corpus(folder: str) -> tuple[Document, ...]:
    path = Path(folder)
    files = sorted(path.glob("*.md"))
    if not files:
        raise FileNotFoundError(f"no documents in {path}: the handbook should hold ~40 Markdown files")
    docs = []
    for f in files:
        text = _read_raw(f)
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
    folder = Path(folder) if folder is not None else data_dir() / "handbook"
    return {d.id: d for d in _load_corpus(str(folder))}


# ---------------------------------------------------------------- queries


@dataclass(frozen=True)
class Span:
    """Gold (or distractor) evidence: characters ``[start, end)`` of document ``doc``."""

    doc: str
    start: int
    end: int
    grade: int = 0

    def text(self, corpus: Mapping[str, Document]) -> str:
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
    def gold_docs(self) -> set[str]:
        return {s.doc for s in self.gold}


def _span(obj: Any, where: str, corpus: Mapping[str, Document], graded: bool) -> Span:
    if not isinstance(obj, Mapping) or "doc" not in obj:
        raise ValueError(f"{where}: a span needs at least 'doc'")
    doc = obj["doc"]
    if doc not in corpus:
        raise ValueError(f"{where}: unknown doc id {doc!r}; known ids look like {next(iter(corpus))!r}")
    n = len(corpus[doc].text)
    start, end = obj.get("start", 0), obj.get("end", n)
    if not (isinstance(start, int) and isinstance(end, int)) or not 0 <= start < end <= n:
        raise ValueError(f"{where}: span [{start}, {end}) is outside {doc} (0..{n}) or empty")
    if not corpus[doc].text[start:end].strip():
        raise ValueError(f"{where}: span [{start}, {end}) of {doc} is only whitespace")
    grade = obj.get("grade", 0)
    if graded and grade not in (1, 2, 3):
        raise ValueError(f"{where}: grade {grade!r} must be 1, 2 or 3")
    return Span(doc, start, end, grade)


def _parse_query(line: str, where: str, corpus: Mapping[str, Document]) -> Query:
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as err:
        raise ValueError(f"{where}: malformed JSON ({err.msg}, column {err.colno})") from None
    if not isinstance(obj, dict):
        raise ValueError(f"{where}: each line must be a JSON object")
    for key in ("qid", "question", "answer", "slice", "kind", "split", "gold"):
        if key not in obj:
            raise ValueError(f"{where}: missing field {key!r}")
    for key, allowed in (("slice", SLICES), ("kind", KINDS), ("split", SPLITS)):
        if obj[key] not in allowed:
            raise ValueError(f"{where}: {key} {obj[key]!r} must be one of {allowed}")
    if not obj["gold"]:
        raise ValueError(f"{where}: gold must hold at least one span")
    gold = tuple(_span(s, f"{where} gold[{i}]", corpus, True) for i, s in enumerate(obj["gold"]))
    dis = tuple(_span(s, f"{where} distractors[{i}]", corpus, False) for i, s in enumerate(obj.get("distractors", [])))
    if obj.get("history") and not obj.get("rewritten"):
        raise ValueError(f"{where}: a follow-up with history needs 'rewritten'")
    known = {"qid", "question", "answer", "slice", "kind", "split", "gold", "distractors", "history", "rewritten"}
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
def _load_queries(path: str, corpus_folder: str) -> tuple[Query, ...]:
    corpus = load_corpus(corpus_folder)
    out, seen = [], {}
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"{p} not found: build it with `python data/build_queries.py`")
    for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{p.name}:{n}"
        q = _parse_query(line, where, corpus)
        if q.qid in seen:
            raise ValueError(f"{where}: duplicate qid {q.qid!r} (first on line {seen[q.qid]})")
        seen[q.qid] = n
        out.append(q)
    return tuple(out)


def load_queries(slice: str | None = None, split: str | None = None, path: str | Path | None = None) -> list[Query]:
    """The labelled queries, validated on load, optionally one slice and/or split.

    ``slice``: ``"easy"``, ``"hard"`` or ``"real"``; ``split``: ``"dev"`` or ``"test"``.
    """
    if slice is not None and slice not in SLICES:
        raise ValueError(f"slice must be one of {SLICES} or None, got {slice!r}")
    if split is not None and split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS} or None, got {split!r}")
    path = Path(path) if path is not None else data_dir() / "queries.jsonl"
    rows = _load_queries(str(path), str(data_dir() / "handbook"))
    return [q for q in rows if (slice is None or q.slice == slice) and (split is None or q.split == split)]


# ---------------------------------------------------------------- TREC files


def _trec_lines(path: Path, n_fields: int, what: str):
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != n_fields:
            raise ValueError(f"{path}:{n}: a {what} line has {n_fields} fields, found {len(parts)}: {line!r}")
        yield n, parts


def read_qrels(path: str | Path) -> dict[str, dict[str, int]]:
    """Read a TREC qrels file (``qid 0 doc grade`` per line) into ``{qid: {doc: grade}}``."""
    qrels: dict[str, dict[str, int]] = {}
    for n, (qid, _, doc, grade) in _trec_lines(Path(path), 4, "qrels"):
        try:
            g = int(grade)
        except ValueError:
            raise ValueError(f"{path}:{n}: grade {grade!r} is not a whole number") from None
        if doc in qrels.setdefault(qid, {}):
            raise ValueError(f"{path}:{n}: qid {qid} judges doc {doc} twice")
        qrels[qid][doc] = g
    return qrels


def write_qrels(qrels: Mapping[str, Mapping[str, int]], path: str | Path) -> None:
    """Write ``{qid: {doc: grade}}`` as a TREC qrels file, sorted by qid then doc."""
    lines = []
    for qid in sorted(qrels):
        for doc in sorted(qrels[qid]):
            grade = qrels[qid][doc]
            if isinstance(grade, bool) or not isinstance(grade, int):
                raise ValueError(f"qrels[{qid!r}][{doc!r}] = {grade!r}: TREC grades are whole numbers")
            lines.append(f"{qid} 0 {doc} {grade}")
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")


def read_run(path: str | Path) -> dict[str, dict[str, float]]:
    """Read a TREC run file (``qid Q0 doc rank score tag``) into ``{qid: {doc: score}}``."""
    run: dict[str, dict[str, float]] = {}
    for n, (qid, _, doc, _rank, score, _tag) in _trec_lines(Path(path), 6, "run"):
        try:
            s = float(score)
        except ValueError:
            raise ValueError(f"{path}:{n}: score {score!r} is not a number") from None
        if math.isnan(s):
            raise ValueError(f"{path}:{n}: score is NaN")
        if doc in run.setdefault(qid, {}):
            raise ValueError(f"{path}:{n}: qid {qid} retrieves doc {doc} twice")
        run[qid][doc] = s
    return run


def write_run(run: Mapping[str, Any], path: str | Path, tag: str = "labkit") -> None:
    """Write a run as a TREC run file, ranks in trec_eval's order.

    ``run`` is ``{qid: {doc: score}}`` (sorted by score descending, then doc
    id descending) or ``{qid: [doc, ...]}`` (already ranked; scores written
    as ``n - rank + 1`` so re-reading keeps the order).
    """
    if not tag or any(c.isspace() for c in tag):
        raise ValueError(f"tag must be one word with no spaces, got {tag!r}")
    lines = []
    for qid in sorted(run):
        ranking = run[qid]
        if isinstance(ranking, Mapping):
            items = sorted(ranking.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
        elif isinstance(ranking, Sequence) and not isinstance(ranking, str):
            if len(set(ranking)) != len(ranking):
                raise ValueError(f"run[{qid!r}] lists a doc twice: de-duplicate it first")
            items = [(doc, float(len(ranking) - i)) for i, doc in enumerate(ranking)]
        else:
            raise ValueError(f"run[{qid!r}] must be a {{doc: score}} dict or a ranked list")
        for rank, (doc, score) in enumerate(items, start=1):
            if any(c.isspace() for c in str(doc)):
                raise ValueError(f"doc id {doc!r} contains whitespace, which TREC files cannot hold")
            lines.append(f"{qid} Q0 {doc} {rank} {score:.6g} {tag}")
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")


# ---------------------------------------------------------------- command line


def stats_text() -> str:
    """The ``--stats`` report: documents, words, chunks, and queries by slice x kind x split."""
    from collections import Counter

    from labkit.chunking import DEFAULT_OVERLAP, DEFAULT_SIZE, chunk_corpus

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


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m labkit.data", description="Check and describe data/.")
    parser.add_argument("--stats", action="store_true", help="print corpus and query counts")
    args = parser.parse_args(argv)
    if args.stats:
        print(stats_text())
    else:
        load_queries()  # loading validates everything
        print(f"data/ is valid: {len(load_corpus())} documents, {len(load_queries())} queries")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


def load_reference(name: str):
    """A published table from ``data/reference/<name>.csv`` as a DataFrame (see data/README.md for citations)."""
    import pandas as pd

    path = data_dir() / "reference" / f"{name}.csv"
    if not path.is_file():
        known = sorted(p.stem for p in (data_dir() / "reference").glob("*.csv"))
        raise FileNotFoundError(f"no reference table {name!r}; available: {known}")
    return pd.read_csv(path)
