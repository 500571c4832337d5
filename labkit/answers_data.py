"""The reader's recorded answers for chapters 07, 08 and 09, and their hand labels for correctness.

Chapter 07's reader is chapter 06's: the local 1.5B with the lenient prompt over the hybrid's top
:data:`labkit.handbook.READER_K` chunks, here on **every** handbook query (plan ``07-answers``); chapter 09's
small model is the 0.5B on the 120-question reader sample (plan ``09-answers``). :func:`recorded_answers`
replays them; nothing here calls a model.

:func:`correctness_labels` reads ``data/correctness/labels.jsonl``: each recorded answer marked ``right``,
``partly``, ``wrong`` or ``declined`` against the query's reference answer and gold spans (rubric in
``data/correctness/README.md``). They measure the correctness rules of :mod:`labkit.correctness` (their TPR and
TNR), so chapter 07 can state them next to every pass rate.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from labkit import data_dir
from labkit import handbook as hb

__all__ = ["recorded_answers", "correctness_labels", "label_sheet", "LABELS_FILE", "LABELS", "PASSING"]

LABELS_FILE = "correctness/labels.jsonl"
LABELS = ("right", "partly", "wrong", "declined")
PASSING = ("right",)  # a label that counts as a correct answer; partly, wrong and declined do not


def _model(model: str | None) -> str:
    from labkit import llm

    return model or llm.DEFAULT_MODEL


def recorded_answers(model: str | None = None, questions: Sequence[Any] | None = None, k: int = hb.READER_K):
    """One row per question: the reader's recorded answer over the hybrid top ``k`` and what the call cost.

    ``questions`` defaults to every handbook query for the 1.5B and to the reader sample for any other model
    (what the plans ``07-answers`` and ``09-answers`` recorded). A question without a recording raises
    :class:`labkit.llm.MissingRecording`, naming the plan to record.
    """
    import pandas as pd

    from labkit import llm
    from labkit import reader as rd

    model = _model(model)
    h = hb.handbook()
    if questions is None:
        questions = h.queries if model == llm.DEFAULT_MODEL else hb.reader_sample()
    questions = list(questions)
    ctx = hb.reader_contexts(questions, k)
    replay = llm.Replay(model)
    rows = []
    for q in questions:
        prompt = rd.reader_prompt(q.search_text, [h.texts[c] for c in ctx[q.qid]], "lenient")
        done = replay.complete(prompt, max_tokens=rd.MAX_TOKENS)
        rows.append(
            {"qid": q.qid, "split": q.split, "slice": q.slice, "kind": q.kind, "question": q.search_text,
             "chunks": ctx[q.qid], "answer": done.text.strip(), "model": model,
             "prompt tokens": done.prompt_tokens, "completion tokens": done.completion_tokens,
             "seconds": done.seconds}  # fmt: skip
        )
    return pd.DataFrame(rows)


def correctness_labels(path=None):
    """The hand labels: one row per (model, qid) with ``label`` (one of :data:`LABELS`) and ``why``.

    Validated on load: a row with an unknown label, or a (model, qid) labelled twice, fails with its line.
    """
    import pandas as pd

    path = path or data_dir() / LABELS_FILE
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: the correctness labels ship with the workbook (git checkout)")
    rows, seen = [], set()
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        row = json.loads(line)
        where = f"{path.name} line {n}"
        for field in ("model", "qid", "label", "why"):
            if field not in row:
                raise ValueError(f"{where}: no {field!r}")
        if row["label"] not in LABELS:
            raise ValueError(f"{where}: label must be one of {LABELS}, got {row['label']!r}")
        if (row["model"], row["qid"]) in seen:
            raise ValueError(f"{where}: {row['model']} / {row['qid']} is labelled twice")
        seen.add((row["model"], row["qid"]))
        rows.append(row)
    return pd.DataFrame(rows)


def label_sheet(model: str | None = None, questions: Sequence[Any] | None = None) -> list[dict]:
    """What a rater reads for each recorded answer: question, reference, gold spans (grade ≥ 2), answer.

    Used by ``tools/label_sheet.py`` to write the rows to label; the labels are joined back on (model, qid).
    """
    from labkit.correctness import gold_context

    h = hb.handbook()
    corpus_texts = {d: doc.text for d, doc in h.corpus.items()}
    table = recorded_answers(model, questions)
    out = []
    for r in table.to_dict("records"):
        q = h.by_qid[r["qid"]]
        out.append({"model": r["model"], "qid": r["qid"], "slice": r["slice"], "kind": r["kind"],
                    "question": r["question"], "gold": gold_context(q, corpus_texts), "answer": r["answer"]})  # fmt: skip
    return out
