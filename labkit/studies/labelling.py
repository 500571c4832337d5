"""What the learner labels in 02, 06, 07 and 10, and which labels a chapter then computes with.

Five label sets, each drawn in a seeded order from items that already carry reference labels (written by an
AI assistant against the rubric in ``data/<folder>/README.md``, checked by a second such rater), so a learner's
labels can be compared with them item by item:

- ``06-claims``: the reader's own claims on the dev split, the claims chapter 06 calibrates its judge on
  (supported / unsupported / contradicted);
- ``07-answers``: the 1.5B reader's answers at k = 3 on the reader sample (right / partly / wrong / declined);
- ``02-realism``: the held-out realism questions (1-5; the few-shot examples are in the rater's prompt);
- ``10-answers``: the 1.5B reader's answers to the Python FAQ's questions over the hybrid's top 3 (right /
  partly / wrong / declined, by the FAQ's own answer and the gold quotes);
- ``10-relevance``: the hybrid's first passage for each test question of the bundled Python documentation
  (answers / partly / no), the reference derived from the gold spans.

:func:`labels_for` returns the learner's labels when there are at least :data:`MIN_LABELS`, else the reference
labels of the same set, with a sentence that says which, so every number downstream names its labels.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from labkit import SEED
from labkit.data.labels import LabelSet, default_path, read_labels
from labkit.generation import llm
from labkit.judges import correctness
from labkit.judges.correctness import gold_context
from labkit.measures import stats
from labkit.studies import answers_data, capstone, pydocs
from labkit.studies import faithfulness_data as fdata
from labkit.studies import handbook as hb
from labkit.studies import synth_data as sd

__all__ = ["claims_set", "answers_set", "realism_set", "relevance_set", "pydocs_answers_set", "labels_for",
           "agreement_line", "Chosen", "store_path", "MIN_LABELS", "TARGET"]  # fmt: skip

RELEVANCE = ("answers", "partly", "no")
MIN_LABELS = 10
"""Fewer learner labels than this and a chapter computes with the reference labels (and says so)."""
TARGET = 30
"""How many labels a chapter asks for (the widget's "12 of 30")."""


def store_path(set_id: str) -> Path:
    """The learner's label file of ``set_id``: ``LABKIT_LABELS/<set id>.jsonl`` when that variable names a
    folder (``make nbval`` points it at an empty one, so stored outputs never depend on a learner's labels),
    else ``<user cache>/labels/<set id>.jsonl``."""
    folder = os.environ.get("LABKIT_LABELS")
    if folder is not None:
        if not folder.strip():
            raise ValueError("LABKIT_LABELS is set but empty: unset it, or set it to a folder for your labels")
        return Path(folder).expanduser() / f"{set_id}.jsonl"
    return default_path(set_id)


def _order(ids: list[str], seed: int) -> tuple[str, ...]:
    import numpy as np

    return tuple(ids[i] for i in np.random.default_rng(seed).permutation(len(ids)))


@lru_cache(maxsize=1)
def _claims() -> tuple[LabelSet, dict, dict]:
    rows = [r for r in fdata.labelled_claims() if r["origin"] == "model" and r["split"] == "dev"]
    questions = hb.handbook().by_qid
    items = {r["id"]: {"question": questions[r["qid"]].search_text, "claim": r["claim"], "context": r["context"]}
             for r in rows}  # fmt: skip
    reference = {r["id"]: r["label"] for r in rows}
    ls = LabelSet("06-claims", ("supported", "unsupported", "contradicted"), _order(sorted(items), SEED),
                  title="Is the claim supported by the context the reader saw?")  # fmt: skip
    return ls, items, reference


def claims_set() -> tuple[LabelSet, dict, dict]:
    """(the label set, item id -> {question, claim, context}, item id -> reference label)."""
    return _claims()


@lru_cache(maxsize=1)
def _answers() -> tuple[LabelSet, dict, dict]:
    sample = {q.qid for q in hb.reader_sample()}
    h = hb.handbook()
    texts = {d: doc.text for d, doc in h.corpus.items()}
    table = answers_data.recorded_answers(llm.DEFAULT_MODEL)
    table = table[table["qid"].isin(sample)]
    labels = answers_data.correctness_labels()
    labels = labels[(labels["model"] == llm.DEFAULT_MODEL) & (labels["k"] == hb.READER_K)]
    reference = dict(zip(labels["qid"], labels["label"], strict=True))
    items = {r["qid"]: {"question": r["question"], "answer": r["answer"],
                        "reference": gold_context(h.by_qid[r["qid"]], texts)}
             for r in table.to_dict("records")}  # fmt: skip
    ls = LabelSet("07-answers", answers_data.LABELS, _order(sorted(items), SEED),
                  keys={"r": "right", "p": "partly", "w": "wrong", "d": "declined"},
                  title="Is the model's answer right, by the reference?")  # fmt: skip
    return ls, items, {q: reference[q] for q in items}


def answers_set() -> tuple[LabelSet, dict, dict]:
    """(the label set, qid -> {question, answer, reference}, qid -> reference label)."""
    return _answers()


@lru_cache(maxsize=1)
def _realism() -> tuple[LabelSet, dict, dict]:
    rows = sd.realism_labels("heldout")
    items = {r["id"]: {"question": r["question"]} for r in rows}
    reference = {r["id"]: str(r["rating"]) for r in rows}
    ls = LabelSet("02-realism", ("1", "2", "3", "4", "5"), _order(sorted(items), SEED),
                  keys={str(i): str(i) for i in range(1, 6)},
                  title="How likely is it that an employee would type this, as it stands?")  # fmt: skip
    return ls, items, reference


def realism_set() -> tuple[LabelSet, dict, dict]:
    """(the label set, id -> {question}, id -> reference rating as text "1"-"5")."""
    return _realism()


@lru_cache(maxsize=1)
def _relevance() -> tuple[LabelSet, dict, dict]:
    s = capstone.setting()
    top = capstone.runs(s, 1)["hybrid"]
    grade = {3: "answers", 2: "partly", 1: "partly", 0: "no"}
    items, reference = {}, {}
    for q in s.queries:
        if q.split == "test":
            chunk = top[q.qid][0]
            items[q.qid] = {"question": q.question, "passage": s.texts[chunk]}
            reference[q.qid] = grade[s.qrels.get(q.qid, {}).get(chunk, 0)]
    ls = LabelSet("10-relevance", RELEVANCE, _order(sorted(items), SEED),
                  keys={"a": "answers", "p": "partly", "x": "no"},
                  title="Does this passage answer the question?")  # fmt: skip
    return ls, items, reference


def relevance_set() -> tuple[LabelSet, dict, dict]:
    """(the label set, qid -> {question, passage}, qid -> reference label): the hybrid's first passage for each
    test question of the bundled Python documentation (chapter 10). The reference label follows from the gold
    spans (an AI rater's quotes): ``answers`` when the chunk holds a grade-3 span whole, ``partly`` for a piece of
    the evidence, ``no`` otherwise."""
    return _relevance()


@lru_cache(maxsize=1)
def _pydocs_answers() -> tuple[LabelSet, dict, dict]:
    s = capstone.setting()
    table = capstone.answers(s, llm.Replay(llm.DEFAULT_MODEL))
    reference = {q: row["label"] for q, row in pydocs.answer_labels().items()}
    items = {}
    for r in table.to_dict("records"):
        q = s.by_qid[r["qid"]]
        quotes = "\n\n".join(dict.fromkeys(s.corpus[g.doc].text[g.start : g.end].strip() for g in q.gold
                                             if g.grade >= 2))  # fmt: skip
        items[r["qid"]] = {"question": r["question"], "answer": r["answer"],
                           "reference": f"The FAQ's answer: {r['reference'].strip()}\n\nFrom the documentation:\n"
                                        f"{quotes}"}  # fmt: skip
    ls = LabelSet("10-answers", correctness.ANSWER_LABELS, _order(sorted(items), SEED),
                  keys={"r": "right", "p": "partly", "w": "wrong", "d": "declined"},
                  title="Is the model's answer right, by the FAQ's answer and the documentation?")  # fmt: skip
    return ls, items, {q: reference[q] for q in items}


def pydocs_answers_set() -> tuple[LabelSet, dict, dict]:
    """(the label set, qid -> {question, answer, reference}, qid -> reference label): chapter 10's answers on the
    bundled Python documentation (plan ``10-answers``), rated in ``data/pydocs/answer_labels.jsonl``."""
    return _pydocs_answers()


@dataclass(frozen=True)
class Chosen:
    """The labels a chapter computes with: ``labels`` (item -> label), ``mine`` (True when they are the
    learner's), ``n_mine`` (how many the learner has) and ``source``, a sentence for the output."""

    labels: dict
    mine: bool
    n_mine: int
    source: str


def labels_for(label_set: LabelSet, reference: dict, path: str | os.PathLike | None = None) -> Chosen:
    """The learner's labels of ``label_set`` if there are at least :data:`MIN_LABELS`, else ``reference``."""
    path = store_path(label_set.id) if path is None else path
    mine = read_labels(path, label_set)
    if len(mine) >= MIN_LABELS:
        return Chosen(mine, True, len(mine), f"your {len(mine)} labels ({label_set.id})")
    why = "you have no labels yet" if not mine else f"you have {len(mine)} labels, fewer than {MIN_LABELS}"
    source = (f"the reference labels of {len(reference)} items (written by an AI assistant against the rubric; "
              f"{why})")  # fmt: skip
    return Chosen(dict(reference), False, len(mine), source)


def agreement_line(chosen: Chosen, reference: dict, labels=None, weights: str | None = None) -> str:
    """One sentence for a chapter's output: the learner's labels against the reference on the items they
    labelled (Cohen's kappa with its interval; ``weights="quadratic"`` for ratings), or why there is no kappa."""
    if not chosen.mine:
        return "(no kappa: against the rater's own labels it would be 1 by definition; label at least 10 items)"
    items = list(chosen.labels)
    rep = stats.kappa_report([reference[i] for i in items], [chosen.labels[i] for i in items], labels=labels,
                             weights=weights)  # fmt: skip
    kind = "weighted kappa" if weights else "kappa"
    return (f"you and the rater agree on {rep['agree']} of {rep['n']}; "
            f"{kind} {stats.fmt_ci(rep['kappa'], *rep['kappa_ci'])}")  # fmt: skip
