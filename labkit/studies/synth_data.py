"""Chapter 02's data: which chunks the question writer sees, its recorded rows, the rater-rated realism set.

Derived from the handbook (:mod:`labkit.studies.handbook`), a seeded sample and the recordings in ``data/llm/``, so the
notebook, ``tools/record.py`` and the tests build the same prompts.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from labkit import SEED, data_dir
from labkit.core import args
from labkit.core.files import read_jsonl
from labkit.data.corpus import load_queries
from labkit.generation import llm, synth
from labkit.measures import metrics, stats
from labkit.studies import handbook as hb
from labkit.studies.synth_targets import N_EASY, N_EXTRA, N_TARGETS, distractors_for, kinds_of, method_of, targets
from labkit.text.chunking import spans_to_qrels
from labkit.text.words import containment, jaccard

__all__ = [
    "targets",
    "distractors_for",
    "realism_labels",
    "audit_labels",
    "audit_second_rater",
    "realism_second_rater",
    "realism_generated_ratings",
    "generated",
    "generated_with_drops",
    "as_queries",
    "write_sets",
    "load_sets",
    "N_TARGETS",
    "N_EXTRA",
    "N_EASY",
    "method_of",
    "kinds_of",
    "PROMPT_VERSION",
]

PROMPT_VERSION = "synth-v1"


def realism_labels(split: str | None = None) -> list[dict]:
    """The rated realism set (``data/synth/realism_labels.jsonl``), optionally one split."""
    rows = [row for _, row in read_jsonl(data_dir() / "synth" / "realism_labels.jsonl", "realism labels")]
    return [r for r in rows if split is None or r["split"] == split]


AUDIT_VALUES = {"evidence": ("yes", "partly", "no"), "answer": ("right", "wrong", "unclear")}


def audit_labels() -> list[dict]:
    """The rater audit of the generated sets (``data/synth/audit_labels.jsonl``): for every generated question,
    whether its evidence span answers it and whether the model's answer is right. Validated against the sets."""
    path = data_dir() / "synth" / "audit_labels.jsonl"
    rows = [row for _, row in read_jsonl(path, "audit labels")]
    qids = [q.qid for q in load_sets()]
    if [r.get("qid") for r in rows] != qids:
        raise ValueError(f"{path} must list every generated qid once, in file order: re-audit after regenerating")
    for r in rows:
        for key, allowed in AUDIT_VALUES.items():
            if r.get(key) not in allowed:
                raise ValueError(f"{path}: {r['qid']} has {key}={r.get(key)!r}; allowed: {allowed}")
    return rows


def _rows(name: str, key: str, known: set, check: dict) -> list[dict]:
    path = data_dir() / "synth" / name
    rows, seen = [], set()
    for n, row in read_jsonl(path, f"synth/{name}"):
        if row.get(key) not in known or (row[key], row.get("rater")) in seen:
            raise ValueError(f"{path.name} line {n}: {key} {row.get(key)!r} is unknown or repeated for its rater")
        for field, allowed in check.items():
            if row.get(field) not in allowed:
                raise ValueError(f"{path.name} line {n}: {field}={row.get(field)!r}; allowed: {allowed}")
        seen.add((row[key], row.get("rater")))
        rows.append(row)
    return rows


def audit_second_rater() -> list[dict]:
    """A second, independent audit of a seeded random 70 generated questions (``audit_second_rater.jsonl``)."""
    return _rows("audit_second_rater.jsonl", "qid", {q.qid for q in load_sets()}, AUDIT_VALUES)


RATINGS = (1, 2, 3, 4, 5)


def realism_second_rater() -> list[dict]:
    """A second, independent rating of the 60 rated realism questions (``realism_second_rater.jsonl``)."""
    return _rows("realism_second_rater.jsonl", "id", {r["id"] for r in realism_labels()}, {"rating": RATINGS})


def realism_generated_ratings() -> list[dict]:
    """Two independent raters' realism ratings of a seeded random 60 generated questions
    (``realism_generated_ratings.jsonl``; ``rater`` is ``genrealism-a`` or ``genrealism-b``)."""
    return _rows("realism_generated_ratings.jsonl", "id", {q.qid for q in load_sets()}, {"rating": RATINGS})


def generated(model: str | None = None) -> list[dict]:
    """The recorded easy and hard rows that were kept (quote found in the target chunk), in target order."""
    rows, _ = generated_with_drops(model)
    return rows


def generated_with_drops(model: str | None = None, allow_missing: bool = False) -> tuple[list[dict], list]:
    """Every recorded generation: kept rows (with ``set`` easy/hard, ``method`` and ``i``) and dropped ones.

    ``dropped`` holds ``(set, Dropped)`` pairs. A prompt with no recorded response raises
    :class:`labkit.generation.llm.MissingRecording`, unless ``allow_missing`` (a preview while recording is under way),
    in
    which case it is skipped; the notebook never passes it.
    """

    h = hb.handbook()
    replay = llm.Replay(model or llm.DEFAULT_MODEL)
    texts = {d: doc.text for d, doc in h.corpus.items()}
    kept, dropped = [], []
    for i, c in enumerate(targets()):
        for kind in kinds_of(i):
            method = method_of(i) if kind == "hard" else None
            try:
                if kind == "easy":
                    row = synth.generate_qa(c, texts[c.doc], replay)
                else:
                    row = synth.hard_qa(c, texts[c.doc], distractors_for(c, method), texts, replay)
            except llm.MissingRecording:
                if allow_missing:
                    continue
                raise
            if isinstance(row, synth.Dropped):
                dropped.append((kind, row))
                continue
            row.update(set=kind, method=method, i=i)
            kept.append(row)
    return kept, dropped


def as_queries(rows: list[dict], model: str | None = None) -> list[dict]:
    """Generated rows in the schema of ``queries.jsonl`` (slices ``synthetic-easy`` / ``synthetic-hard``).

    The evidence quote's span is the gold (grade 3); hard rows keep their distractor chunks as spans; every row
    carries its provenance (model, prompt version, seed, target chunk, distractor method). Targets alternate
    between the dev and the test split in the seeded target order.
    """
    rows = args.sequence("rows", rows, example="generated(...)")
    out = []
    for r in rows:
        row = {
            "qid": f"syn-{r['set']}-{r['i'] + 1:03d}",
            "question": r["question"],
            "answer": r["answer"],
            "slice": f"synthetic-{r['set']}",
            "kind": "fact",
            "split": "dev" if r["i"] % 2 == 0 else "test",
            "gold": [{"doc": r["doc"], "start": r["start"], "end": r["end"], "grade": 3}],
        }
        if r.get("distractors"):
            row["distractors"] = [{"doc": d["doc"], "start": d["start"], "end": d["end"]} for d in r["distractors"]]
        row["provenance"] = {
            "model": model or llm.DEFAULT_MODEL,
            "prompt_version": PROMPT_VERSION,
            "seed": SEED,
            "target": r["target"],
            "method": r["method"],
            "quote": r["quote"],
        }
        out.append(row)
    return out


def set_path(kind: str) -> Path:
    if kind not in ("easy", "hard"):
        raise ValueError(f'kind must be "easy" or "hard", got {kind!r}')
    return data_dir() / "synth" / f"synthetic-{kind}.jsonl"


def render_sets(model: str | None = None) -> dict[str, str]:
    """The text of ``synthetic-easy.jsonl`` and ``synthetic-hard.jsonl``, rebuilt from the recordings."""
    rows = as_queries(generated(model), model)
    return {
        kind: "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows if r["slice"] == f"synthetic-{kind}")
        for kind in ("easy", "hard")
    }


def write_sets(model: str | None = None) -> dict[str, int]:
    """Write ``data/synth/synthetic-easy.jsonl`` and ``synthetic-hard.jsonl`` from the recordings; row counts."""
    counts = {}
    for kind, text in render_sets(model).items():
        set_path(kind).write_text(text, encoding="utf-8")
        counts[kind] = text.count("\n")
    return counts


def load_sets() -> list:
    """Both generated sets as :class:`labkit.data.corpus.Query` objects, validated against the corpus on load."""

    return [q for kind in ("easy", "hard") for q in load_queries(path=set_path(kind))]


RETRIEVERS = ("bm25", "dense", "hybrid")


def per_query(queries, k: int = 10) -> Any:
    """One row per (query, retriever): ``set`` (the query's slice), ``R@k``, ``RR@k``, ``hit@k (thr 3)``,
    ``overlap``, ``borrowed``.

    ``hit@k (thr 3)`` is 1 when a chunk holding a grade-3 span whole is in the top ``k``: it counts each query's
    evidence once, where R@k divides by every chunk touching a gold span (a generated question has one target
    chunk, an authored one often several, so R@k alone would compare unlike things).

    ``overlap`` is the word Jaccard between the question and its best gold chunk (the highest-graded chunk at the
    handbook's chunking); ``borrowed`` is the share of the question's terms that occur in that chunk
    (:func:`labkit.text.words.containment`): how much of the chunk's wording the question reuses. Qrels come from the
    spans (:func:`labkit.text.chunking.spans_to_qrels`), so the labels follow any chunking. Conversational
    follow-ups are searched with their rewrites, as everywhere in the workbook.
    """
    import pandas as pd

    k = args.whole_number("k", k)
    queries = args.sequence("queries", queries, allow_empty=False)
    h = hb.handbook()
    qrels = spans_to_qrels(queries, h.chunks)
    texts = [q.search_text for q in queries]
    rows = []
    overlap, borrowed = {}, {}
    for q in queries:
        best = max(qrels[q.qid].values())
        gold = [h.texts[c] for c, g in qrels[q.qid].items() if g == best]
        overlap[q.qid] = max(jaccard(q.question, t) for t in gold)
        borrowed[q.qid] = max(containment(q.question, t) for t in gold)
    for name in RETRIEVERS:
        hits = getattr(h, name).search_many(texts, k=k)
        run = {q.qid: [cid for cid, _ in hit] for q, hit in zip(queries, hits, strict=True)}
        ev = metrics.evaluate(run, qrels, (f"R@{k}", f"RR@{k}")).per_query
        ev[f"hit@{k} (thr 3)"] = metrics.evaluate(run, qrels, f"hit@{k}", thr=3).per_query[f"hit@{k}"]
        for q in queries:
            rows.append(
                {
                    "qid": q.qid,
                    "set": q.slice,
                    "retriever": name,
                    f"R@{k}": float(ev.loc[q.qid, f"R@{k}"]),
                    f"RR@{k}": float(ev.loc[q.qid, f"RR@{k}"]),
                    f"hit@{k} (thr 3)": float(ev.loc[q.qid, f"hit@{k} (thr 3)"]),
                    "overlap": overlap[q.qid],
                    "borrowed": borrowed[q.qid],
                }
            )
    return pd.DataFrame(rows)


def with_ratings(per_query_frame: Any, synthetic: list, rated_rows: Any) -> Any:
    """The per-query frame of the generated sets, with each question's ``method`` and model ``realism`` rating.

    ``synthetic``: the loaded sets (:func:`load_sets`); ``rated_rows``: the generated rows with a ``realism``
    column, in the order of :func:`generated` (the order :func:`as_queries` numbers them in).
    """
    import pandas as pd

    rated = pd.DataFrame(rated_rows)
    for col in ("set", "i", "realism", "question"):
        if col not in rated.columns:
            raise ValueError(f"rated_rows needs a {col!r} column (the generated rows, rated)")
    rating = {f"syn-{s}-{i + 1:03d}": r for s, i, r in zip(rated["set"], rated["i"], rated["realism"], strict=True)}
    method = {q.qid: q.extra["provenance"]["method"] for q in synthetic}
    question = {q.qid: q.question for q in synthetic}
    odd = sorted(set(per_query_frame["set"]) - {"synthetic-easy", "synthetic-hard"})
    if odd:
        raise ValueError(
            f"per_query_frame['set'] has {odd[0]!r}; pass per_query(load_sets()) unchanged (copy it before relabelling)"
        )
    unknown = sorted(set(per_query_frame["qid"]) - set(rating))
    if unknown:
        raise ValueError(f"per_query_frame has qids with no rated row, e.g. {unknown[0]!r}: rate every row first")
    out = per_query_frame.copy()
    out["method"] = out["qid"].map(method)
    out["realism"] = out["qid"].map(rating)
    out["question"] = out["qid"].map(question)
    return out


METHODS = ("both", "jaccard", "embedding")


def filter_view(frame: Any, threshold: float = 4, method: str = "both", retriever: str = "hybrid") -> Any:
    """What a realism threshold does to the generated sets: the pure function behind the chapter's widget.

    ``frame``: :func:`with_ratings`. Returns ``counts`` (kept / dropped per set), ``table`` (Recall@10 and
    MRR@10 per set for ``retriever``, with bootstrap 95% intervals: easy, hard before and after the filter) and
    ``examples`` (a few kept and dropped questions). ``method`` restricts the hard set to one distractor method.
    """
    from types import SimpleNamespace

    import pandas as pd

    threshold = args.finite_number("threshold", threshold, minimum=1, maximum=5, hint="ratings run from 1 to 5")
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if retriever not in RETRIEVERS:
        raise ValueError(f"retriever must be one of {RETRIEVERS}, got {retriever!r}")
    f = frame[frame["retriever"] == retriever]
    if method != "both":
        f = f[(f["set"] != "synthetic-hard") | (f["method"] == method)]
    keep = f["realism"].notna() & (f["realism"] >= threshold)
    parts = {
        "synthetic-easy, all": f[f["set"] == "synthetic-easy"],
        "synthetic-easy, kept": f[(f["set"] == "synthetic-easy") & keep],
        "synthetic-hard, all": f[f["set"] == "synthetic-hard"],
        "synthetic-hard, kept": f[(f["set"] == "synthetic-hard") & keep],
    }
    counts = pd.DataFrame(
        {
            "kept": [int(keep[f["set"] == s].sum()) for s in ("synthetic-easy", "synthetic-hard")],
            "dropped": [int((~keep)[f["set"] == s].sum()) for s in ("synthetic-easy", "synthetic-hard")],
        },
        index=pd.Index(["synthetic-easy", "synthetic-hard"], name="set"),
    )
    long = pd.concat([p.assign(group=name) for name, p in parts.items() if len(p)], ignore_index=True)
    table = stats.group_means_ci(long, "group", ["R@10", "RR@10"]).reindex([n for n, p in parts.items() if len(p)])
    examples = pd.concat(
        [
            f[keep].sort_values("qid").head(3).assign(verdict="kept"),
            f[~keep].sort_values("qid").head(3).assign(verdict="dropped"),
        ]
    )[["verdict", "set", "realism", "question"]]
    return SimpleNamespace(counts=counts, table=table, examples=examples.reset_index(drop=True))
