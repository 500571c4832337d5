"""Chapter 02's target chunks: which chunks the question writer is shown, and each one's distractors.

Two draws, both from chunks of at least 40 words (a document's tail is too little to ask about), spread across the
seven departments as evenly as the departments allow:

- the **first draw** (150 chunks) is made here, seeded (:func:`first_draw`);
- the **second draw** (250 more chunks, none from the first) was added when the generated sets had to grow to 150
  kept questions each. Its chunk ids are the record ``data/synth/targets-second-draw.txt``: the seeded script that
  drew them did not survive, so the list itself is the ground truth (the recorded prompts in ``data/llm/`` hold the
  same chunks), and :func:`second_draw` checks it: known chunks, long enough, disjoint from the first draw, no repeats,
  every department as even as it allows (all of administration's and security's remaining chunks, 38–39 of each
  other department's);
- the **third draw** (40 more, made here, seeded, from the chunks neither draw took) was added when the second
  still left the hard set short of 150 kept (:func:`third_draw`).

Easy questions are asked about the first :data:`N_EASY` targets, hard questions about all of them.
"""

from __future__ import annotations

from functools import lru_cache

from labkit import SEED, data_dir
from labkit.generation import synth
from labkit.studies import handbook as hb

__all__ = ["targets", "first_draw", "second_draw", "method_of", "kinds_of", "distractors_for", "DEPARTMENTS",
           "N_TARGETS", "N_EXTRA", "N_THIRD", "N_EASY", "third_draw", "MIN_WORDS"]  # fmt: skip

N_TARGETS = 150  # the first draw
N_EXTRA = 250  # the second draw
N_THIRD = 40  # the third draw
N_EASY = 210  # targets that also get an easy question (the first draw and the second draw's first 60)
MIN_WORDS = 40
DEPARTMENTS = ("adm", "fin", "hr", "it", "prod", "sec", "sup")


def _eligible(dept: str) -> list:
    h = hb.handbook()
    chunks = (c for c in h.chunks if c.doc.startswith(dept + "-") and len(c.text.split()) >= MIN_WORDS)
    return sorted(chunks, key=lambda c: c.id)


@lru_cache(maxsize=1)
def first_draw(n: int = N_TARGETS, seed: int = SEED) -> tuple:
    """``n`` target chunks across every department, seeded; the first half get Jaccard distractors, the second half
    embedding distractors (see :func:`distractors_for`)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    by_dept = {d: _eligible(d) for d in DEPARTMENTS}
    per = {d: min(n // len(DEPARTMENTS) + (i < n % len(DEPARTMENTS)), len(by_dept[d]))
           for i, d in enumerate(DEPARTMENTS)}  # fmt: skip
    return _pick(rng, by_dept, per)


def _pick(rng, pools: dict, per: dict) -> tuple:
    """``per[d]`` chunks of each department's pool, kept in pool order, then all of them shuffled."""
    picked = []
    for d in DEPARTMENTS:
        idx = rng.choice(len(pools[d]), size=per[d], replace=False)
        picked.extend(pools[d][i] for i in sorted(idx))
    return tuple(picked[i] for i in rng.permutation(len(picked)))


@lru_cache(maxsize=1)
def second_draw() -> tuple:
    """The second draw's chunks, in recorded order, from ``data/synth/targets-second-draw.txt`` (checked)."""
    path = data_dir() / "synth" / "targets-second-draw.txt"
    by_id = {c.id: c for c in hb.handbook().chunks}
    first = {c.id for c in first_draw()}
    out, seen = [], set()
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        cid = line.strip()
        where = f"{path.name} line {n}: chunk {cid!r}"
        if cid not in by_id:
            raise ValueError(f"{where} is not a handbook chunk (ids look like 'it-vpn-error-codes#10')")
        if cid in first or cid in seen:
            raise ValueError(f"{where} is already a target (first draw or an earlier line); each chunk is drawn once")
        if len(by_id[cid].text.split()) < MIN_WORDS:
            raise ValueError(f"{where} has under {MIN_WORDS} words; targets are drawn from longer chunks")
        seen.add(cid)
        out.append(by_id[cid])
    if len(out) != N_EXTRA:
        raise ValueError(f"{path.name} must list {N_EXTRA} chunk ids, one per line; it lists {len(out)}")
    return tuple(out)


@lru_cache(maxsize=1)
def third_draw(n: int = N_THIRD, seed: int = SEED + 2) -> tuple:
    """``n`` more chunks, seeded, from those neither earlier draw took, spread over the departments as evenly as
    their remaining chunks allow (a department that runs out gives its share to the others)."""
    import numpy as np

    taken = {c.id for c in first_draw() + second_draw()}
    left = {d: [c for c in _eligible(d) if c.id not in taken] for d in DEPARTMENTS}
    if n > sum(map(len, left.values())):
        raise ValueError(f"n={n} is more than the {sum(map(len, left.values()))} chunks no draw has taken")
    per = dict.fromkeys(DEPARTMENTS, 0)
    while sum(per.values()) < n:
        for d in DEPARTMENTS:
            if per[d] < len(left[d]) and sum(per.values()) < n:
                per[d] += 1
    return _pick(np.random.default_rng(seed), left, per)


def targets() -> tuple:
    """Every target: the first draw, the second, the third (earlier questions keep their ids ``...-001`` on)."""
    return first_draw() + second_draw() + third_draw()


def method_of(i: int) -> str:
    """How target ``i``'s distractors are found: the first draw's first half by Jaccard, its second half by embedding
    cosine; the later draws alternate in pairs (Jaccard, Jaccard, embedding, embedding, …), so any prefix of it is
    balanced."""
    if not 0 <= i < N_TARGETS + N_EXTRA + N_THIRD:
        raise ValueError(f"i must be a target index in 0..{N_TARGETS + N_EXTRA + N_THIRD - 1}, got {i!r}")
    if i < N_TARGETS:
        return "jaccard" if i < N_TARGETS // 2 else "embedding"
    return "jaccard" if (i - N_TARGETS) // 2 % 2 == 0 else "embedding"


def kinds_of(i: int) -> tuple[str, ...]:
    """Which questions target ``i`` gets: easy and hard for the first :data:`N_EASY`, hard only after."""
    return ("easy", "hard") if i < N_EASY else ("hard",)


@lru_cache(maxsize=1)
def _vectors():
    h = hb.handbook()
    return {c.id: v for c, v in zip(h.chunks, h.dense.vectors, strict=True)}


def distractors_for(target, method: str, n: int = 2) -> list:
    """The ``n`` chunks most similar to ``target`` from *other documents* (same-document neighbours overlap it)."""
    if not hasattr(target, "doc") or not hasattr(target, "id"):
        raise ValueError(
            f"target must be a Chunk (from the handbook's chunks), got {type(target).__name__} {target!r:.60}"
        )

    h = hb.handbook()
    pool = {c.id: c.text for c in h.chunks if c.doc != target.doc or c.id == target.id}
    ids = synth.similar_chunks(target.id, pool, n, by=method, vectors=_vectors() if method == "embedding" else None)
    by_id = {c.id: c for c in h.chunks}
    return [by_id[i] for i in ids]
