"""TREC qrels and run files, read and written the way trec_eval reads them.

Taught in ``03_metrics_by_hand``. Readers validate what they read and fail with the file and line number;
writers validate what they write, so a file they write always reads back with the same ranking (scores keep
their full precision).

Files from elsewhere: fields are separated by any run of spaces or tabs (trec_eval's reading), a UTF-8
byte-order mark is dropped, Windows line ends (CRLF) and blank lines are accepted. A header row (``qid iter
docno rel``, ``query-id corpus-id score``) is refused with a message saying it is one: TREC files have none.
A folder, a missing file, a file that is not UTF-8 or one over :data:`labkit.core.files.MAX_BYTES` is refused by
name. Writers write only inside the folders :func:`labkit.core.files.output_path` allows, atomically.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from numbers import Real
from pathlib import Path
from typing import Any

from labkit.core import args
from labkit.core.files import output_path, path_arg, read_text, write_text

__all__ = ["read_qrels", "write_qrels", "read_run", "write_run"]


def _trec_lines(path: Path, n_fields: int, what: str):
    text = read_text(path, f"TREC {what}")
    if not text.strip():
        raise ValueError(f"{path}: the file is empty (a {what} file has one line per {_UNIT[what]})")
    lines = text.splitlines()
    first = next(n for n, line in enumerate(lines, start=1) if line.strip())
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        parts = line.split()
        if n == first and _looks_like_header(parts, what):
            raise ValueError(
                f"{path}:{n}: {line.strip()!r} looks like a header row; TREC {what} files have none: delete that line"
            )
        if len(parts) != n_fields:
            raise ValueError(f"{path}:{n}: a {what} line has {n_fields} fields, found {len(parts)}: {line!r}")
        yield n, parts


_HEADER_WORDS = {"qid", "query", "query-id", "query_id", "topic", "iter", "iteration", "q0", "docno", "doc", "docid",
                 "doc_id", "doc-id", "corpus-id", "corpus_id", "rel", "relevance", "grade", "label", "rank", "score",
                 "sim", "tag", "run", "run_id"}  # fmt: skip


def _looks_like_header(parts: list[str], what: str) -> bool:
    """A first line made of column names (``qid iter docno rel``, ``query-id corpus-id score``) rather than data:
    its number field is not a number and it names a column."""
    fields = parts[2:3] if len(parts) == 3 else parts[3:4] if what == "qrels" else parts[3:5]
    numeric = True
    for value in fields:
        try:
            float(value)
        except ValueError:
            numeric = False
    return not numeric and any(p.lower() in _HEADER_WORDS for p in parts)


_UNIT = {"qrels": "judged (query, document) pair", "run": "retrieved (query, document) pair"}


def read_qrels(path: str | Path) -> dict[str, dict[str, int]]:
    """Read a TREC qrels file (``qid 0 doc grade`` per line) into ``{qid: {doc: grade}}``."""
    path = path_arg("path", path)
    qrels: dict[str, dict[str, int]] = {}
    for n, (qid, _, doc, grade) in _trec_lines(path, 4, "qrels"):
        try:
            g = int(grade)
        except ValueError:
            raise ValueError(f"{path}:{n}: grade {grade!r} is not a whole number") from None
        if doc in qrels.setdefault(qid, {}):
            raise ValueError(f"{path}:{n}: qid {qid} judges doc {doc} twice")
        qrels[qid][doc] = g
    return qrels


def _trec_id(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value or any(c.isspace() for c in value):
        raise ValueError(
            f"{where}: id {value!r} must be a non-empty string without whitespace, which TREC files cannot hold"
        )
    return value


def _grade(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(value) or value != int(value):
        raise ValueError(f"{where} = {value!r}: TREC grades are whole numbers")
    return int(value)


def write_qrels(qrels: Mapping[str, Mapping[str, int]], path: str | Path) -> None:
    """Write ``{qid: {doc: grade}}`` as a TREC qrels file, sorted by qid then doc.

    Ids must be strings without whitespace and grades whole numbers, so the file reads back unchanged.
    """
    args.mapping("qrels", qrels, example='{"q1": {"doc-a": 2}}')
    path_arg("path", path)
    lines = []
    for qid in qrels:
        _trec_id(qid, "qrels")
        args.mapping(f"qrels[{qid!r}]", qrels[qid], example='{"doc-a": 2}')
    for qid in sorted(qrels):
        for doc in qrels[qid]:
            _trec_id(doc, f"qrels[{qid!r}]")
        for doc in sorted(qrels[qid]):
            grade = _grade(qrels[qid][doc], f"qrels[{qid!r}][{doc!r}]")
            lines.append(f"{qid} 0 {doc} {grade}")
    if not lines:
        raise ValueError("qrels holds no judgement: there is nothing to write")
    write_text(output_path("path", path, "qrels file"), "\n".join(lines) + "\n")


def read_run(path: str | Path) -> dict[str, dict[str, float]]:
    """Read a TREC run file (``qid Q0 doc rank score tag``) into ``{qid: {doc: score}}``."""
    path = path_arg("path", path)
    run: dict[str, dict[str, float]] = {}
    for n, (qid, _, doc, _rank, score, _tag) in _trec_lines(path, 6, "run"):
        try:
            s = float(score)
        except ValueError:
            raise ValueError(f"{path}:{n}: score {score!r} is not a number") from None
        if math.isnan(s):
            raise ValueError(f"{path}:{n}: score is NaN")
        if math.isinf(s):
            raise ValueError(f"{path}:{n}: score {score!r} is infinite: scores must be finite numbers")
        if doc in run.setdefault(qid, {}):
            raise ValueError(f"{path}:{n}: qid {qid} retrieves doc {doc} twice")
        run[qid][doc] = s
    return run


def _score_text(score: float) -> str:
    """The shortest text that reads back as exactly ``score`` (``repr``), ``5`` rather than ``5.0``."""
    text = repr(score)
    return text[:-2] if text.endswith(".0") else text


def write_run(run: Mapping[str, Any], path: str | Path, tag: str = "labkit") -> None:
    """Write a run as a TREC run file, ranks in trec_eval's order.

    ``run`` is ``{qid: {doc: score}}`` (sorted by score descending, then doc
    id descending) or ``{qid: [doc, ...]}`` (already ranked; scores written
    as ``n - rank + 1`` so re-reading keeps the order). Scores are written at
    full precision (the shortest decimal that reads back as the same float),
    so two near-tied scores keep their order when the file is read again; they
    must be finite. Ids must be strings without whitespace.
    """
    args.mapping("run", run, example='{"q1": {"doc-a": 0.9}} or {"q1": ["doc-a", "doc-b"]}')
    path_arg("path", path)
    if not isinstance(tag, str) or not tag or any(c.isspace() for c in tag):
        raise ValueError(f"tag must be one word with no spaces, got {tag!r}")
    if not run:
        raise ValueError("run is empty: there is nothing to write")
    for qid in run:
        _trec_id(qid, "run")
    lines = []
    for qid in sorted(run):
        ranking = run[qid]
        if isinstance(ranking, Mapping):
            for doc, score in ranking.items():
                _trec_id(doc, f"run[{qid!r}]")
                args.finite_number(f"run[{qid!r}][{doc!r}]", score)
            items = sorted(((d, float(s)) for d, s in ranking.items()), key=lambda kv: (kv[1], kv[0]), reverse=True)
        elif isinstance(ranking, Sequence) and not isinstance(ranking, str | bytes):
            ranking = args.ranking(f"run[{qid!r}]", ranking)
            if len(set(ranking)) != len(ranking):
                raise ValueError(f"run[{qid!r}] lists a doc twice: de-duplicate it first")
            for doc in ranking:
                _trec_id(doc, f"run[{qid!r}]")
            items = [(doc, float(len(ranking) - i)) for i, doc in enumerate(ranking)]
        else:
            raise ValueError(f"run[{qid!r}] must be a {{doc: score}} dict or a ranked list")
        for rank, (doc, score) in enumerate(items, start=1):
            lines.append(f"{qid} Q0 {doc} {rank} {_score_text(score)} {tag}")
    if not lines:
        raise ValueError("run retrieves no document for any query: there is nothing to write")
    write_text(output_path("path", path, "run file"), "\n".join(lines) + "\n")
