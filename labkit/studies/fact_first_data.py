"""Chapter 02's fact-first comparison: the recorded fact-first rows, and a blind audit of them beside chapter 02's
easy rows of the same targets.

Taught in 02_synthetic_hard_questions.

The targets are the first :data:`labkit.generation.fact_first.N_FACT_FIRST` of chapter 02's seeded order; each has
an easy question from chapter 02's prompt (plan ``02-easy``) and a fact-first one (plan ``02-fact-first``). The
kept rows of both prompts were audited together with chapter 02's evidence rubric (``data/synth/README.md``), shown
under opaque ids in a seeded shuffle so the rater could not tell which prompt wrote a row (:func:`audit_sheet`); the
labels are in ``data/synth/fact_first_audit.jsonl``, and a second rater's, blind to the first, of the same sheet in
``data/synth/fact_first_second_rater.jsonl`` (:data:`SECOND_FILE`).
"""

from __future__ import annotations

from functools import lru_cache

from labkit import SEED, data_dir
from labkit.core.files import read_jsonl
from labkit.generation import fact_first, llm, synth
from labkit.studies import handbook as hb
from labkit.studies.synth_data import AUDIT_VALUES, targets

__all__ = ["rows", "audit_sheet", "audit", "second_audit", "AUDIT_FILE", "SECOND_FILE", "PROMPTS"]

AUDIT_FILE = "synth/fact_first_audit.jsonl"
SECOND_FILE = "synth/fact_first_second_rater.jsonl"
"""A second rater's audit of every row of the same sheet, blind to the first (:func:`second_audit`)."""
PROMPTS = ("question first (02-easy)", "fact first (02-fact-first)")


@lru_cache(maxsize=1)
def rows() -> tuple[list[dict], list[tuple[str, synth.Dropped]]]:
    """``(kept, dropped)``: both prompts' rows for the first ``N_FACT_FIRST`` targets, replayed from the
    cassette; each kept row has ``prompt`` (one of :data:`PROMPTS`), ``i`` (target index) and the row's fields."""
    h = hb.handbook()
    replay = llm.Replay(llm.DEFAULT_MODEL)
    texts = {d: doc.text for d, doc in h.corpus.items()}
    kept, dropped = [], []
    for i, c in enumerate(targets()[: fact_first.N_FACT_FIRST]):
        for prompt, make in zip(PROMPTS, (synth.generate_qa, fact_first.generate_fact_first), strict=True):
            row = make(c, texts[c.doc], replay)
            if isinstance(row, synth.Dropped):
                dropped.append((prompt, row))
            else:
                kept.append({**row, "prompt": prompt, "i": i})
    return kept, dropped


def _opaque(kept: list[dict], seed: int) -> list[tuple[str, dict]]:
    import numpy as np

    order = np.random.default_rng(seed).permutation(len(kept))
    return [(f"ff-{n + 1:03d}", kept[j]) for n, j in enumerate(order)]


def audit_sheet(seed: int = SEED) -> list[dict]:
    """What the auditor saw: opaque id, question, the evidence span and the target chunk, in a seeded shuffle;
    never which prompt wrote the row."""
    h = hb.handbook()
    kept, _ = rows()
    out = []
    for rid, r in _opaque(kept, seed):
        doc = h.corpus[r["doc"]].text
        out.append({"id": rid, "question": r["question"], "span": doc[r["start"] : r["end"]],
                    "chunk": doc[next(c for c in h.chunks if c.id == r["target"]).start_char:
                                 next(c for c in h.chunks if c.id == r["target"]).end_char]})  # fmt: skip
    return out


def audit(path=None, seed: int = SEED) -> list[dict]:
    """The audit joined to its rows: each kept row with ``evidence`` (yes / partly / no), ``why`` and ``rater``.
    Every kept row must be audited once; an unknown id or value fails with its line."""
    path = path or data_dir() / AUDIT_FILE
    kept, _ = rows()
    by_id = dict(_opaque(kept, seed))
    labels = {}
    for n, row in read_jsonl(path, "fact-first audit"):
        if row.get("id") not in by_id or row["id"] in labels:
            raise ValueError(f"{path} line {n}: id {row.get('id')!r} is unknown or repeated")
        if row.get("evidence") not in AUDIT_VALUES["evidence"] or not row.get("rater"):
            raise ValueError(f"{path} line {n}: evidence must be one of {AUDIT_VALUES['evidence']}, with a rater")
        labels[row["id"]] = row
    missing = sorted(set(by_id) - set(labels))
    if missing:
        raise ValueError(f"{path} lacks {len(missing)} audited rows, first {missing[0]}: audit every row of the sheet")
    return [{**by_id[i], "id": i, "evidence": labels[i]["evidence"], "why": labels[i].get("why", ""),
             "rater": labels[i]["rater"]} for i in sorted(by_id)]  # fmt: skip


def second_audit(seed: int = SEED) -> list[dict]:
    """:func:`audit` of the second rater's labels (:data:`SECOND_FILE`): every row of the same sheet, rated blind
    to the first rater's labels."""
    return audit(data_dir() / SECOND_FILE, seed)
