"""Chapter 02's data: which chunks the question writer sees, its recorded rows, the hand-rated realism set.

Derived from the handbook (:mod:`labkit.handbook`), a seeded sample and the recordings in ``data/llm/``, so the
notebook, ``tools/record.py`` and the tests build the same prompts.
"""

from __future__ import annotations

import json
from functools import lru_cache

from labkit import SEED, data_dir
from labkit import handbook as hb

__all__ = ["targets", "distractors_for", "realism_labels", "N_TARGETS", "PROMPT_VERSION"]

N_TARGETS = 150
PROMPT_VERSION = "synth-v1"
DEPARTMENTS = ("adm", "fin", "hr", "it", "prod", "sec", "sup")


@lru_cache(maxsize=1)
def targets(n: int = N_TARGETS, seed: int = SEED) -> tuple:
    """``n`` target chunks drawn across every department (as evenly as the departments allow), seeded.

    Chunks shorter than 40 words (a document's tail) are skipped: too little to ask about. The first half
    gets Jaccard distractors, the second half embedding distractors (see :func:`distractors_for`).
    """
    import numpy as np

    h = hb.handbook()
    rng = np.random.default_rng(seed)
    by_dept = {d: sorted((c for c in h.chunks if c.doc.startswith(d + "-") and len(c.text.split()) >= 40),
                         key=lambda c: c.id) for d in DEPARTMENTS}  # fmt: skip
    per = {d: n // len(DEPARTMENTS) + (i < n % len(DEPARTMENTS)) for i, d in enumerate(DEPARTMENTS)}
    picked = []
    for d in DEPARTMENTS:
        idx = rng.choice(len(by_dept[d]), size=min(per[d], len(by_dept[d])), replace=False)
        picked.extend(by_dept[d][i] for i in sorted(idx))
    order = rng.permutation(len(picked))
    return tuple(picked[i] for i in order)


def method_of(i: int, n: int = N_TARGETS) -> str:
    return "jaccard" if i < n // 2 else "embedding"


@lru_cache(maxsize=1)
def _vectors():
    h = hb.handbook()
    return {c.id: v for c, v in zip(h.chunks, h.dense.vectors, strict=True)}


def distractors_for(target, method: str, n: int = 2) -> list:
    """The ``n`` chunks most similar to ``target`` from *other documents* (same-document neighbours overlap it)."""
    from labkit import synth

    h = hb.handbook()
    pool = {c.id: c.text for c in h.chunks if c.doc != target.doc or c.id == target.id}
    ids = synth.similar_chunks(target.id, pool, n, by=method, vectors=_vectors() if method == "embedding" else None)
    by_id = {c.id: c for c in h.chunks}
    return [by_id[i] for i in ids]


def realism_labels(split: str | None = None) -> list[dict]:
    """The hand-rated realism set (``data/synth/realism_labels.jsonl``), optionally one split."""
    path = data_dir() / "synth" / "realism_labels.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [r for r in rows if split is None or r["split"] == split]


def generated(model: str | None = None) -> list[dict]:
    """The recorded easy and hard rows that were kept (quote found in the target chunk), in target order."""
    rows, _ = generated_with_drops(model)
    return rows


def generated_with_drops(model: str | None = None) -> tuple[list[dict], list]:
    """Every recorded generation: kept rows (with ``set`` easy/hard and ``method``) and :class:`Dropped` ones."""
    from labkit import llm, synth

    h = hb.handbook()
    replay = llm.Replay(model or llm.DEFAULT_MODEL)
    kept, dropped = [], []
    for i, c in enumerate(targets()):
        doc = h.corpus[c.doc].text
        text = doc[c.start_char : c.end_char]
        for kind in ("easy", "hard"):
            if kind == "easy":
                prompt = synth.generate_prompt(text)
                ds: list = []
            else:
                ds = distractors_for(c, method_of(i))
                prompt = synth.hard_prompt(text, [h.corpus[d.doc].text[d.start_char : d.end_char] for d in ds])
            try:
                reply = replay(prompt, schema=synth.QA_SCHEMA, max_tokens=synth.QA_MAX_TOKENS)
            except llm.MissingRecording:
                continue
            row = synth._qa_row(reply, c, doc)
            if isinstance(row, synth.Dropped):
                dropped.append((kind, row))
                continue
            row.update(set=kind, method=method_of(i) if kind == "hard" else None)
            if ds:
                row["distractors"] = [
                    {"doc": d.doc, "start": d.start_char, "end": d.end_char, "chunk": d.id} for d in ds
                ]
            kept.append(row)
    return kept, dropped
