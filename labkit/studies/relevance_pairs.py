"""Relevance labels known by construction: an answer written for another question (chapter 06).

Taught in 06_faithfulness.

Chapter 06's model relevance judge (:func:`labkit.judges.faithfulness.judge_relevance`) reads a question and an
answer. Its answers on the dev split were written by the reader *for that question*; nobody labelled whether each
one is relevant. An answer the reader wrote for a question of **another department** is, by construction, not an
answer to this one: those pairs are labelled irrelevant with no rater in the loop. :func:`mismatched` pairs each of
the judged dev answers' questions with the answer of the next question in the same list that belongs to another
department, starting half the list away (the list read cyclically, so that the answers used differ), a fixed
rule that looks at no answer.
"""

from __future__ import annotations

from labkit.studies import faithfulness_data as fdata

__all__ = ["judged_rows", "mismatched"]


def judged_rows() -> list[dict]:
    """The dev answers chapter 06's relevance judge reads (plan 06-relevance): the first ``N_EXTRA`` recorded."""
    return [r for r in fdata.answered() if r["split"] == "dev"][: fdata.N_EXTRA]


def _dept(qid: str) -> str:
    return qid.split("-")[0]


def mismatched(rows: list[dict] | None = None) -> list[dict]:
    """For each row, its question with the answer written for the first row of another department, counting from
    half the list away (cyclically):
    ``{"qid", "question", "answer", "answer_of"}``; every such pair is irrelevant by construction."""
    rows = judged_rows() if rows is None else rows
    out = []
    for i, row in enumerate(rows):
        for step in range(len(rows) // 2, len(rows) // 2 + len(rows)):
            other = rows[(i + step) % len(rows)]
            if _dept(other["qid"]) != _dept(row["qid"]):
                out.append({"qid": row["qid"], "question": row["question"], "answer": other["answer"],
                            "answer_of": other["qid"]})  # fmt: skip
                break
        else:
            raise ValueError(f"no question of another department than {row['qid']!r} among the rows: need two")
    return out
