"""The reader's recorded answers for chapters 07, 08 and 09, and their rater labels for correctness.

Chapter 07's reader is chapter 06's: the local 1.5B with the lenient prompt over the hybrid's top
:data:`labkit.studies.handbook.READER_K` chunks, here on **every** handbook query (plan ``07-answers``); chapter 09's
small model is the 0.5B on the 120-question reader sample (plan ``09-answers``). :func:`recorded_answers`
replays them; nothing here calls a model.

:func:`correctness_labels` reads ``data/correctness/labels.jsonl``: each recorded answer marked ``right``,
``partly``, ``wrong`` or ``declined`` against the query's reference answer and gold spans (rubric in
``data/correctness/README.md``). They measure the correctness rules of :mod:`labkit.judges.correctness` (their TPR and
TNR), so chapter 07 can state them next to every pass rate.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from labkit import data_dir
from labkit.core.files import path_arg, read_jsonl
from labkit.generation import llm
from labkit.generation import reader as rd
from labkit.judges.correctness import gold_context, key_numbers
from labkit.studies import handbook as hb

__all__ = ["recorded_answers", "correctness_labels", "label_check", "second_rater", "label_sheet", "sweep_questions",
           "LABELS_FILE", "SECOND_RATER_FILE", "LABELS", "PASSING", "SWEEP_K"]  # fmt: skip

LABELS_FILE = "correctness/labels.jsonl"
SECOND_RATER_FILE = "correctness/second_rater.jsonl"  # a random 60 answers of each model, labelled again
LABELS = ("right", "partly", "wrong", "declined")
PASSING = ("right",)  # a label that counts as a correct answer; partly, wrong and declined do not
SWEEP_K = 5  # chapter 07's second k for the 1.5B (plan 07-sweep), on sweep_questions()


def _model(model: str | None) -> str:

    return model or llm.DEFAULT_MODEL


def recorded_answers(model: str | None = None, questions: Sequence[Any] | None = None, k: int = hb.READER_K):
    """One row per question: the reader's recorded answer over the hybrid top ``k`` and what the call cost.

    ``questions`` defaults to every handbook query for the 1.5B and to the reader sample for any other model
    (what the plans ``07-answers`` and ``09-answers`` recorded). A question without a recording raises
    :class:`labkit.generation.llm.MissingRecording`, naming the plan to record.
    """
    import pandas as pd

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
            {
                "qid": q.qid,
                "split": q.split,
                "slice": q.slice,
                "kind": q.kind,
                "question": q.search_text,
                "chunks": ctx[q.qid],
                "answer": done.text.strip(),
                "model": model,
                "prompt tokens": done.prompt_tokens,
                "completion tokens": done.completion_tokens,
                "seconds": done.seconds,
            }  # fmt: skip
        )
    return pd.DataFrame(rows)


def sweep_questions() -> list:
    """The questions the 1.5B also answered at :data:`SWEEP_K` (plan ``07-sweep``): those of the 120-question
    reader sample whose reference answer has a key number (:func:`labkit.judges.correctness.key_numbers`)."""

    return [q for q in hb.reader_sample() if key_numbers(q.answer, q.search_text)]


def correctness_labels(path=None):
    """The rater labels: one row per (model, qid, k) with ``label`` (one of :data:`LABELS`), ``why`` and ``rater``.

    ``k``: the chunks the answer was read from (a row without one is an answer at
    :data:`labkit.studies.handbook.READER_K`). Validated on load: a row with an unknown label or a bad ``k``, or an
    answer labelled twice, fails with its line.
    """
    return _labels(path or data_dir() / LABELS_FILE)


def second_rater(path=None):
    """An independent second labelling of a random 60 answers of each model at k = 3 (rater agreement)."""
    return _labels(path or data_dir() / SECOND_RATER_FILE)


def _labels(path):
    import pandas as pd

    path = path_arg("path", path)
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: the correctness labels ship with the workbook (git checkout)")
    rows, seen = [], set()
    for n, row in read_jsonl(path, "correctness labels (.jsonl)"):
        where = f"{path.name} line {n}"
        for field in ("model", "qid", "label", "why", "rater"):
            if field not in row:
                raise ValueError(f"{where}: no {field!r}")
        if row["label"] not in LABELS:
            raise ValueError(f"{where}: label must be one of {LABELS}, got {row['label']!r}")
        row.setdefault("k", hb.READER_K)
        if isinstance(row["k"], bool) or not isinstance(row["k"], int) or row["k"] < 1:
            raise ValueError(f"{where}: k must be a whole number >= 1 (the chunks read), got {row['k']!r}")
        if (row["model"], row["qid"], row["k"]) in seen:
            raise ValueError(f"{where}: {row['model']} / {row['qid']} at k = {row['k']} is labelled twice")
        seen.add((row["model"], row["qid"], row["k"]))
        rows.append(row)
    return pd.DataFrame(rows)


def label_check(model: str | Sequence[str] | None = None, questions: Sequence[Any] | None = None, k: int = hb.READER_K):
    """``check(answer, query)``: True when the rater label of that recorded answer is ``right``.

    ``model``: one model, or several (a cascade judges both models' answers with one check). The labels belong
    to the recorded answers over the top ``k`` chunks (:func:`recorded_answers`): an answer text that none of
    the models gave for the query raises, so a label is never applied to an answer nobody read. If two models
    gave the same text with different labels, the labels contradict each other and building the check fails.
    """
    models = [_model(model)] if model is None or isinstance(model, str) else [_model(m) for m in model]
    labels = correctness_labels()
    if k not in set(labels["k"]):
        raise ValueError(f"no answer at k = {k} is labelled; the labels are for k in {sorted(set(labels['k']))}")
    labels = labels[labels["k"] == k]
    known: dict[tuple[str, str], tuple[str, str]] = {}  # (qid, answer) -> (label, model)
    for m in models:
        mine = labels[labels["model"] == m].set_index("qid")["label"]
        answers = recorded_answers(m, questions, k).set_index("qid")["answer"]
        missing = sorted(set(answers.index) - set(mine.index))
        if missing:
            raise ValueError(
                f"{len(missing)} recorded answers of {m} at k = {k} have no label (first {missing[0]!r}): label them"
            )
        for qid, answer in answers.items():
            old = known.get((qid, answer))
            if old and old[0] != mine[qid]:
                raise ValueError(f"{qid!r}: {old[1]} and {m} gave the same answer, labelled {old[0]} and {mine[qid]}")
            known[(qid, answer)] = (mine[qid], m)
    asked = {qid for qid, _ in known}

    def check(answer: str, query: Any) -> bool:
        qid = getattr(query, "qid", None)
        if qid not in asked:
            raise ValueError(f"no labelled answer of {', '.join(models)} for query {qid!r}")
        if (qid, answer.strip()) not in known:
            raise ValueError(
                f"the answer to {qid!r} is not a labelled one (these labels are for the recorded answers at k = "
                f"{k}): judge other answers with a rule of labkit.judges.correctness"
            )
        return known[(qid, answer.strip())][0] in PASSING

    check.__name__ = "rater label"
    return check


def label_sheet(model: str | None = None, questions: Sequence[Any] | None = None, k: int = hb.READER_K) -> list[dict]:
    """What a rater reads for each recorded answer over the top ``k``: question, reference, gold spans
    (grade ≥ 2), answer.

    Used by ``tools/label_sheet.py`` to write the rows to label; the labels are joined back on (model, qid, k).
    """

    h = hb.handbook()
    corpus_texts = {d: doc.text for d, doc in h.corpus.items()}
    table = recorded_answers(model, questions, k)
    out = []
    for r in table.to_dict("records"):
        q = h.by_qid[r["qid"]]
        gold = gold_context(q, corpus_texts)
        out.append({"model": r["model"], "qid": r["qid"], "k": k, "slice": r["slice"], "kind": r["kind"],
                    "question": r["question"], "gold": gold, "answer": r["answer"]})  # fmt: skip
    return out
