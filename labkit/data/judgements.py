"""Relevance judgements of pooled passages: the file ``python -m labkit judge`` writes and the report reads.

Taught with ``python -m labkit judge`` (:mod:`labkit.commands.judge`; README, "For practitioners"). One JSON line per
judgement, appended whole and synced (:func:`labkit.data.labels.append_line`, as the learner's label store
writes), so a quit or a killed terminal loses nothing::

    {"qid": "q4", "passage": "café/leave.txt#1", "doc": "café/leave.txt", "text": "...", "grade": 3,
     "rater": "ana", "time": "2026-12-05T21:00:00+00:00"}

Grades are on the gold's scale (:data:`GRADE_WORDS`): 0 judged not relevant, 1-3 relevant. A judgement names its
passage by question and text (whitespace-normalised, :func:`labkit.data.quotes.normalise_space`), not by chunk id,
so it holds for a built-in chunk and for an outside run's passage of the same text; the newest line of a passage
counts.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from labkit.core import args
from labkit.core.files import path_arg, read_jsonl
from labkit.data.labels import append_line
from labkit.data.quotes import normalise_space

__all__ = ["read_judgements", "append_judgement", "KEYS", "GRADE_WORDS"]

KEYS = {"0": 0, "1": 1, "2": 2, "3": 3}
"""Key -> grade, on the gold's scale (grades 1-3; 0 is judged not relevant)."""
GRADE_WORDS = {0: "not relevant", 1: "on the topic, does not answer", 2: "answers in part", 3: "answers it"}


def read_judgements(path: Path, queries: list) -> dict[tuple[str, str], int]:
    """``{(qid, normalised passage text): grade}`` from a judgements file (the newest line of a passage counts).
    A line with an unknown or unanswerable question, a grade outside 0-3 or without a text is an error naming the
    line."""
    rows = read_jsonl(path, "judgements", "written by python -m labkit judge")
    queries = args.sequence("queries", queries, allow_empty=False, example="load_question_file(Q.jsonl, corpus)")
    answerable = {q.qid: q.answerable for q in queries}
    out: dict[tuple[str, str], int] = {}
    for n, row in rows:
        where = f"--judgements {Path(path).name} line {n}"
        if row.get("qid") not in answerable:
            raise ValueError(f"{where}: qid {row.get('qid')!r:.60} is not in the questions file (judged for another?)")
        if not answerable[row["qid"]]:
            raise ValueError(f'{where}: {row["qid"]!r} is marked "answerable": false; a passage that answers it '
                             "means the mark is wrong: give the question gold instead")  # fmt: skip
        grade = row.get("grade")
        if isinstance(grade, bool) or grade not in GRADE_WORDS:
            raise ValueError(f"{where}: grade must be one of {sorted(GRADE_WORDS)}, got {grade!r:.60}")
        if not isinstance(row.get("text"), str) or not row["text"].strip():
            raise ValueError(f"{where}: text must be the judged passage's text, got {row.get('text')!r:.60}")
        out[(row["qid"], normalise_space(row["text"]))] = grade
    return out


def append_judgement(path: Path, qid: str, passage: str, doc: str, text: str, grade: int, rater: str) -> None:
    """Append one judgement line to ``path``, whole and synced before returning."""
    path = path_arg("path", path)
    line = {"qid": qid, "passage": passage, "doc": doc, "text": text, "grade": grade, "rater": rater,
            "time": datetime.now(UTC).isoformat(timespec="seconds")}  # fmt: skip
    append_line(path, json.dumps(line, ensure_ascii=False))
