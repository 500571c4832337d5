"""Chapter 06's data: which questions the reader answers, what it reads, its recorded answers, the rater labels.

Everything here is derived from the handbook, the seeded sample of :mod:`labkit.studies.handbook` and the recorded
responses in ``data/llm/``, so the notebook, ``tools/record.py`` and the tests see the same prompts.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from typing import Any

from labkit import SEED, data_dir
from labkit.core import args
from labkit.core.files import path_arg, read_jsonl
from labkit.generation import llm
from labkit.generation import reader as rd
from labkit.judges import construction
from labkit.studies import handbook as hb
from labkit.text.words import numbers

__all__ = ["context_text", "answered", "swap_sample", "labelled_claims", "second_rater", "constructed_claims",
           "youden_j", "judge_differences",
           "LABELS_FILE", "SECOND_RATER_FILE"]  # fmt: skip

LABELS_FILE = "faithfulness/labels.jsonl"
SECOND_RATER_FILE = "faithfulness/second_rater.jsonl"
N_SWAP = 50
N_EXTRA = 30  # dev answers that also get atomic claims and the model relevance judge (recording budget)


def context_text(passages: list[str]) -> str:
    """The context a judge checks claims against: the passages the reader saw, blank-line separated."""
    return "\n\n".join(p.strip() for p in args.strings("passages", passages, example='["first passage"]'))


@lru_cache(maxsize=1)
def _setting():
    h = hb.handbook()
    sample = hb.reader_sample()
    return h, sample, hb.reader_contexts(sample)


def answered(prompt: str = "lenient", model: str | None = None) -> Iterator[dict]:
    """The reader's recorded answers for the sample (questions without a recording are skipped)."""

    h, sample, ctx = _setting()
    replay = llm.Replay(model or llm.DEFAULT_MODEL)
    for q in sample:
        passages = [h.texts[c] for c in ctx[q.qid]]
        try:
            answer = replay.complete(rd.reader_prompt(q.search_text, passages, prompt), max_tokens=rd.MAX_TOKENS).text
        except llm.MissingRecording:
            continue
        yield {
            "qid": q.qid,
            "split": q.split,
            "slice": q.slice,
            "question": q.search_text,
            "chunks": ctx[q.qid],
            "context": context_text(passages),
            "answer": answer.strip(),
        }


def swap_sample(n: int = N_SWAP, seed: int = SEED) -> list[tuple]:
    """``n`` fact questions of the reader sample (half dev, half test), each with a partner question whose
    passages come from another department and hold none of its gold evidence."""
    import numpy as np

    h, sample, ctx = _setting()
    rng = np.random.default_rng(seed)
    out = []
    for split in ("dev", "test"):
        facts = [q for q in sample if q.split == split and q.kind == "fact"]
        picked = sorted(rng.choice(len(facts), size=min(n // 2, len(facts)), replace=False))
        for i in picked:
            q = facts[i]
            dept = q.qid.split("-")[0]
            pool = [p for p in sample if p.qid.split("-")[0] != dept]
            order = rng.permutation(len(pool))
            for j in order:
                partner = pool[j]
                if not any(h.qrels.get(q.qid, {}).get(c, 0) > 0 for c in ctx[partner.qid]):
                    out.append((q, partner.qid))
                    break
    return out


def second_rater(path=None) -> list[dict]:
    """A second, independent labelling of a seeded random 80 of the rater-labelled claims
    (``data/faithfulness/second_rater.jsonl``: ``id``, ``label``, ``trivial``, ``why``, ``rater``), checked against
    the first file: every id must be a labelled claim, once, with a label of the rubric."""
    path = path or data_dir() / SECOND_RATER_FILE
    ids = {r["id"] for r in labelled_claims()}
    rows, seen = [], set()
    for n, row in read_jsonl(path, "second rater's claim labels (.jsonl)"):
        if row.get("id") not in ids or row["id"] in seen:
            raise ValueError(f"{path.name} line {n}: id {row.get('id')!r} is unknown or repeated")
        if row.get("label") not in ("supported", "unsupported", "contradicted"):
            raise ValueError(f"{path.name} line {n}: label {row.get('label')!r} is not a rubric label")
        seen.add(row["id"])
        rows.append(row)
    return rows


CONSTRUCTED_QUOTAS = {"kept": 130, "table-kept": 70, "number": 45, "unit": 35, "swap": 45, "negation": 40,
                      "added": 35, "reference-number": 20}  # fmt: skip
"""How many claims each operation contributes: 200 supported, 220 not supported, on the reader sample's contexts."""


@lru_cache(maxsize=1)
def _constructed() -> tuple[dict, ...]:
    import numpy as np

    h, sample, ctx = _setting()
    rng = np.random.default_rng(SEED)
    pool = [(doc, s) for doc in sorted(h.corpus) for s in construction.sentences(h.corpus[doc].text)]
    pool = [pool[i] for i in rng.permutation(len(pool))]
    candidates, by_qid = {}, {}
    for q in sample:
        docs = {c.split("#")[0] for c in ctx[q.qid]}
        departments = {d.split("-")[0] for d in docs}
        # added clauses come from the context's departments first: plausible there, and still not in the context
        elsewhere = [s for doc, s in pool if doc not in docs and doc.split("-")[0] in departments]
        passages = [h.texts[c] for c in ctx[q.qid]]
        candidates[q.qid] = construction.claims_for_context(passages, rng, elsewhere, reference=q.answer)
        by_qid[q.qid] = (q, context_text(passages))
    picked = construction.balanced(candidates, CONSTRUCTED_QUOTAS, rng)
    rows = []
    for i, (qid, c) in enumerate(picked, start=1):
        q, context = by_qid[qid]
        rows.append({"id": f"cc-{i:04d}", "qid": qid, "split": q.split, **c.as_dict(), "context": context})
    return tuple(rows)


def constructed_claims() -> list[dict]:
    """Claims labelled by construction (:mod:`labkit.judges.construction`) on the contexts the reader saw: ``id``,
    ``qid``, ``split`` (the question's), ``claim``, ``operation``, ``label``, ``source``, ``detail``, ``context``.

    Made afresh, deterministically, from the handbook and the seed; nothing is stored, so nothing can drift.
    """
    return [dict(r) for r in _constructed()]


def labelled_claims(path=None) -> list[dict]:
    """The rater-labelled claims (``data/faithfulness/labels.jsonl``); empty until the file exists."""
    path = path_arg("path", path) if path is not None else data_dir() / LABELS_FILE
    if not path.exists():
        return []
    return [row for _, row in read_jsonl(path, "claim labels (.jsonl)")]


CONDITIONS = (
    ("lenient, true context", "lenient", False),
    ("lenient, swapped context", "lenient", True),
    ("strict, swapped context", "strict", True),
    ("strict, true context", "strict", False),
)


def reference_numbers(reference: str) -> list[str]:
    """The numbers of an authored reference answer (``"45 days."`` -> ``["45"]``)."""
    return numbers(reference)


def swap_results(model: str | None = None) -> Iterator[dict]:
    """The context-swapping experiment: every swap question under the (prompt, context) conditions; the
    control (strict prompt, true passages) for the dev half.

    ``declines``: the answer says it does not know. ``states_gold_number``: the answer contains every number
    of the reference answer (None when the reference answer has no number).
    """

    h, sample, ctx = _setting()
    replay = llm.Replay(model or llm.DEFAULT_MODEL)
    for q, partner in swap_sample():
        wanted = reference_numbers(q.answer)
        for name, prompt, swapped in CONDITIONS:
            if name == "strict, true context" and q.split != "dev":
                continue  # the control was recorded for the dev half only (recording budget)
            passages = [h.texts[c] for c in ctx[partner if swapped else q.qid]]
            answer = replay(rd.reader_prompt(q.search_text, passages, prompt), max_tokens=rd.MAX_TOKENS).strip()
            found = set(numbers(answer))
            yield {
                "qid": q.qid,
                "partner": partner,
                "condition": name,
                "question": q.search_text,
                "reference": q.answer,
                "answer": answer,
                "declines": rd.says_dont_know(answer),
                "states_gold_number": all(n in found for n in wanted) if wanted else None,
            }


def youden_j(says: Any, true: Any) -> float:
    """J = TPR + TNR - 1 of 0/1 verdicts ``says`` (1 = pass) against 0/1 labels ``true``."""
    import numpy as np

    says, true = np.asarray(says, bool), np.asarray(true, bool)
    return float(says[true].mean() + (~says[~true]).mean() - 1)


def judge_differences(table: Any, pairs: Any, truth: str, passes: Any, family: Any) -> Any:
    """Two judges' Youden J on the same labelled items, differenced, for each ``(a, b)`` of ``pairs``: decided by
    ``family`` (a :class:`labkit.measures.stats.Family` declared before the table is read, its members named
    ``"a − b"``), each a derived figure whose inputs (both judges' verdicts and the label of each item) are
    resampled together, within each true class so that TPR and TNR stay defined (``stats.derived_finding``).

    One row per pair: both J, the ``difference``, its interval at the family's share (``low``, ``high``), the
    adjusted ``p`` and the ``verdict``, which agree by construction; ``frame.attrs["findings"]`` holds the
    :class:`Finding` of each (``.sentence`` states it). A verdict that is missing (an unreadable reply) fails the
    item. The successor of ``stats.compare_judges`` (Bonferroni percentile ends beside a separate verdict).
    """
    import numpy as np
    import pandas as pd

    true = (table[truth] == passes).to_numpy()

    def says(name: str) -> Any:
        return np.array([(not pd.isna(v)) and v == passes for v in table[name]], dtype=int)

    def diff(v: dict) -> float:
        return youden_j(v["a"], v["truth"]) - youden_j(v["b"], v["truth"])

    data = {f"{a} − {b}": {"truth": true.astype(int), "a": says(a), "b": says(b)} for a, b in pairs}
    found = family.findings(data, kind="derived", null=0.0, fn=diff, strata="truth")
    rows = {name: {"J a": youden_j(d["a"], true), "J b": youden_j(d["b"], true), "difference": found[name].estimate,
                   "low": found[name].low, "high": found[name].high, "p": found[name].p,
                   "verdict": found[name].verdict} for name, d in data.items()}  # fmt: skip
    frame = pd.DataFrame.from_dict(rows, orient="index").rename_axis("J difference")
    frame.attrs["findings"] = found
    return frame
