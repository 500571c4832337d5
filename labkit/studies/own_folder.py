"""Chapter 10 on your own folder: a model step skipped with one line, and the labelling widgets' sets for a folder.

Taught in ``10_your_own_documents``. :func:`model_step` runs one of the chapter's model steps (Step 2's generated
questions, Step 5's answers) or, with no model (the chapter's ``USE_MODEL = False``, nothing recorded for these
documents, or no local model installed), prints one line saying the step is skipped and returns ``None``, so the
later cells skip with their own line and Run All reaches the end. :func:`relevance_set` and :func:`answers_set` are
:func:`labkit.studies.labelling.relevance_set` and :func:`labkit.studies.labelling.pydocs_answers_set` for any
folder: the same labels and keys, an id of the folder's own (its labels are never mixed with the bundled corpus's or
another folder's), the reference following from the folder's gold where there is one.
"""

from __future__ import annotations

import hashlib
from types import SimpleNamespace
from typing import Any

from labkit import SEED
from labkit.core import args
from labkit.data.labels import LabelSet
from labkit.generation.llm import MissingRecording
from labkit.judges import correctness

__all__ = ["model_step", "relevance_set", "answers_set", "NO_MODEL", "RELEVANCE"]

NO_MODEL = "no model (set USE_MODEL = True after `make llm`, and start JupyterLab with LABKIT_LLM=local)"
"""Why a model step is skipped, as :func:`model_step` prints it."""
RELEVANCE = ("answers", "partly", "no")
"""The labels of a first passage (Step 8), as :data:`labkit.studies.labelling.RELEVANCE` names them."""


def model_step(step: str, model: Any, fn: Any, *fn_args: Any, **fn_kwargs: Any) -> Any:
    """``fn(*fn_args, **fn_kwargs)``, or ``None`` after one printed line ``"<step> skipped: ..."`` when ``model`` is
    ``None`` (the chapter's ``USE_MODEL = False``), when nothing is recorded for a request and no model answers it
    (:class:`labkit.generation.llm.MissingRecording`), or when the local model is not installed. Any other error is
    raised: only a missing model is skipped."""
    step = args.text("step", step)
    if not callable(fn):
        raise ValueError(f"fn must be the step's function, e.g. capstone.answers, got {type(fn).__name__}")
    if model is None:
        print(f"{step} skipped: {NO_MODEL}")
        return None
    try:
        return fn(*fn_args, **fn_kwargs)
    except MissingRecording:
        print(f"{step} skipped: {NO_MODEL}; nothing is recorded for these documents")
    except ImportError as err:  # the local model's weights or llama-cpp-python are not installed
        print(f"{step} skipped: {NO_MODEL}; {err}")
    return None


def _a_setting(s: Any) -> SimpleNamespace:
    if not all(hasattr(s, name) for name in ("corpus", "queries", "qrels", "texts", "by_qid")):
        raise ValueError(f"s must be a setting, capstone.setting(DOCUMENTS, QUESTIONS), got {type(s).__name__}")
    return s


def _label_set(prefix: str, s: SimpleNamespace, labels: tuple, items: dict, keys: dict, title: str) -> LabelSet:
    """A folder's label set: the id ``prefix`` and a digest of the documents and questions (its own label file), the
    items in a seeded order."""
    import numpy as np

    if not items:
        raise ValueError(f"nothing to label for {prefix}: Step 8 labels the test questions' passages, Step 5 answers")
    names = [*sorted(s.corpus), "", *(q.qid for q in s.queries)]
    digest = hashlib.sha256("\n".join(names).encode("utf-8")).hexdigest()
    ids = sorted(items)
    order = tuple(ids[i] for i in np.random.default_rng(SEED).permutation(len(ids)))
    return LabelSet(f"{prefix}-{digest[:10]}", labels, order, keys=keys, title=title)


def relevance_set(s: SimpleNamespace, ranked: dict) -> tuple:
    """(label set, qid -> {question, passage}, qid -> reference label) for the setting ``s`` of a folder: the hybrid's
    first passage (``ranked``: :func:`labkit.studies.capstone.runs`) for each test question. The reference follows
    from the folder's gold, as for the bundled corpus: ``answers`` when the chunk holds a grade-3 span whole,
    ``partly`` for a piece of the evidence, ``no`` otherwise."""
    s = _a_setting(s)
    args.mapping("ranked", ranked, example="capstone.runs(s)")
    if "hybrid" not in ranked:
        raise ValueError("ranked must hold the hybrid's run, as capstone.runs(s) returns it")
    grade = {3: "answers", 2: "partly", 1: "partly", 0: "no"}
    items, reference = {}, {}
    for q in s.queries:
        if q.split == "test" and ranked["hybrid"].get(q.qid):
            chunk = ranked["hybrid"][q.qid][0]
            items[q.qid] = {"question": q.question, "passage": s.texts[chunk]}
            reference[q.qid] = grade[s.qrels.get(q.qid, {}).get(chunk, 0)]
    keys, title = {"a": "answers", "p": "partly", "x": "no"}, "Does this passage answer the question?"
    return _label_set("10-relevance", s, RELEVANCE, items, keys, title), items, reference


def answers_set(s: SimpleNamespace, table: Any) -> tuple:
    """(label set, qid -> {question, answer, reference}) for the reader's answers ``table``
    (:func:`labkit.studies.capstone.answers`) on a folder, to label right / partly / wrong / declined. A folder has no
    reference labels: Step 5's 2x2 counts yours."""
    s = _a_setting(s)
    if not hasattr(table, "to_dict") or not {"qid", "question", "answer", "reference"} <= set(table):
        raise ValueError("table must be the answers table capstone.answers(s, model) returned")
    items = {}
    for r in table.to_dict("records"):
        quotes = "\n\n".join(dict.fromkeys(s.corpus[g.doc].text[g.start : g.end].strip()
                                           for g in s.by_qid[r["qid"]].gold if g.grade >= 2))  # fmt: skip
        evidence = f"\n\nFrom the documents:\n{quotes}" if quotes else "\n\n(marked unanswerable: no gold)"
        items[r["qid"]] = {"question": r["question"], "answer": r["answer"],
                           "reference": f"The reference answer: {r['reference'].strip()}{evidence}"}  # fmt: skip
    keys = {"r": "right", "p": "partly", "w": "wrong", "d": "declined"}
    title = "Is the model's answer right, by the reference answer and the documents?"
    return _label_set("10-answers", s, correctness.ANSWER_LABELS, items, keys, title), items
