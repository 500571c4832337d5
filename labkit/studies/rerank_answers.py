"""04b: the reader's answers over a reranked top 3, and whether they are right.

Plan ``04b-answers`` recorded the 1.5B reader (chapter 07's lenient prompt, k = 3) over each reranker's top 3 of
the 30 questions of :func:`labkit.studies.rerank_study.model_questions`. An answer identical, word for word, to
the same question's answer over the hybrid top 3 keeps chapter 07's rater label; the others were labelled by
another rater, blind (``data/correctness/reranked.jsonl``). A third rater labelled every distinct answer of the 30
questions, over all three rankings, so that the rankings can also be compared within one rater
(``data/correctness/reranked_check.jsonl``, :func:`check_labels`).
"""

from __future__ import annotations

from typing import Any

from labkit import data_dir
from labkit.core.files import path_arg, read_jsonl
from labkit.generation import llm
from labkit.generation import reader as rd
from labkit.studies import answers_data
from labkit.studies import rerank_study as rs

__all__ = ["RERANKED_LABELS", "CHECK_LABELS", "CUT", "reranked_answers", "reranked_labels", "check_labels",
           "reader_table"]  # fmt: skip

RERANKED_LABELS = "correctness/reranked.jsonl"
CHECK_LABELS = "correctness/reranked_check.jsonl"
CUT = "cut at k"


def reranked_answers(reranker: str) -> dict[str, str]:
    """``{qid: the 1.5B's recorded answer}`` over ``reranker``'s top 3 (plan ``04b-answers``)."""
    replay = llm.Replay(llm.DEFAULT_MODEL)  # called, not .complete(): the chapter's usage table counts them
    return {qid: replay(p, max_tokens=rd.MAX_TOKENS).strip() for qid, p in rs.reader_prompts(reranker).items()}


def reranked_labels(path=None, rankers=rs.RERANKERS) -> dict[tuple[str, str], dict[str, Any]]:
    """``{(qid, reranker): row}`` from ``data/correctness/reranked.jsonl``: rater labels of the answers that differ
    from the hybrid top 3's answer (the same rubric and fields as chapter 07's, plus ``reranker``)."""
    path = path_arg("path", path or data_dir() / RERANKED_LABELS)
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for n, row in read_jsonl(path, "reranked answers' labels (.jsonl)"):
        where = f"{path.name} line {n}"
        missing = [f for f in ("qid", "reranker", "label", "why", "rater") if f not in row]
        if missing:
            raise ValueError(f"{where}: no {missing[0]!r}")
        if row["label"] not in answers_data.LABELS or row["reranker"] not in rankers:
            raise ValueError(f"{where}: label must be one of {answers_data.LABELS} and reranker one of "
                             f"{tuple(rankers)}; got {row['label']!r}, {row['reranker']!r}")  # fmt: skip
        key = (str(row["qid"]), row["reranker"])
        if key in out:
            raise ValueError(f"{where}: {key[0]} with {key[1]} is labelled twice")
        out[key] = row
    return out


def check_labels(path=None) -> Any:
    """The third rater's labels of every answer of the 30 questions over all three rankings, one row per question
    (index) and ranking (columns); refuses a file that misses one."""
    import pandas as pd

    rows = reranked_labels(path or data_dir() / CHECK_LABELS, (CUT, *rs.RERANKERS))
    table = pd.DataFrame({name: {q.qid: rows[(q.qid, name)]["label"] for q in rs.model_questions()
                                 if (q.qid, name) in rows} for name in (CUT, *rs.RERANKERS)})  # fmt: skip
    if table.isna().any().any() or len(table) != len(rs.model_questions()):
        raise ValueError(f"{CHECK_LABELS} must label every answer of the {len(rs.model_questions())} questions over "
                         "all three rankings: run tools/label_sheet.py 04b-all and 04b-all-join")  # fmt: skip
    return table


def reader_table(labels=None) -> Any:
    """One row per question of the model's 30 and ranker (``cut at k`` or a reranker): nDCG@3 of the top 3 it
    read, the answer, its label (chapter 07's when the answer is the hybrid top 3's, word for word, else
    ``reranked.jsonl``'s), and ``right``."""
    import pandas as pd

    qs = rs.model_questions()
    cut_answers = answers_data.recorded_answers(llm.DEFAULT_MODEL, qs).set_index("qid")["answer"]
    ref = answers_data.correctness_labels()
    ref = ref[(ref["model"] == llm.DEFAULT_MODEL) & (ref["k"] == rs.READER_K)].set_index("qid")["label"]
    labels = reranked_labels() if labels is None else labels
    rows = []
    for name in (CUT, *rs.RERANKERS):
        k1 = rs.MODEL_K1 if name == rs.MODEL else rs.LTR_READER_K1
        ranked = rs.runs(k1, qs, () if name == CUT else (name,))[name]
        ndcg = rs.per_query({qid: r[: rs.READER_K] for qid, r in ranked.items()}, (rs.READER_K,))[f"nDCG@{rs.READER_K}"]
        answers = cut_answers.to_dict() if name == CUT else reranked_answers(name)
        for q in qs:
            same = answers[q.qid] == cut_answers[q.qid]
            if same:
                label, source = ref[q.qid], "07"
            elif (q.qid, name) in labels:
                label, source = labels[(q.qid, name)]["label"], "reranked.jsonl"
            else:
                raise ValueError(f"the answer to {q.qid} with {name} differs from the hybrid's and has no rater "
                                 f"label in {RERANKED_LABELS}: label it (tools/label_sheet.py 04b)")  # fmt: skip
            rows.append({"qid": q.qid, "slice": q.slice, "ranker": name, "nDCG@3": float(ndcg[q.qid]),
                         "same answer as the cut": same, "label": label, "label from": source,
                         "right": label == "right", "answer": answers[q.qid]})  # fmt: skip
    return pd.DataFrame(rows)
