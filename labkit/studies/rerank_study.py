"""04b: the second stage measured — the hybrid's top k1 reordered by a reranker, then cut at k2.

Stage 1 is chapter 01's hybrid (BM25 + MiniLM, RRF) on the handbook's 128/32 chunks. Two rerankers reorder its
top ``k1``:

- **learned** (``"lambdarank"``): LightGBM's lambdarank over cheap features (:mod:`labkit.retrieval.rerank`), trained
  once
  on the dev queries' top :data:`TRAIN_K1` and reported on the test queries, at any k1;
- **model** (``"1.5B yes/no"``): the local 1.5B as a pointwise reranker (:mod:`labkit.judges.pointwise`), recorded
  (plan ``04b-rerank``) on the top :data:`MODEL_K1` of the reader sample's 60 test questions.

The reader then answers from the reranked top :data:`READER_K` (plan ``04b-answers``; its prompts are
:func:`reader_prompts`, its answers and their labels :mod:`labkit.studies.rerank_answers`). Nothing here calls a
model: recorded responses replay.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from labkit.core import args
from labkit.generation import llm
from labkit.generation import reader as rd
from labkit.judges import pointwise
from labkit.measures import metrics, stats
from labkit.retrieval import rerank
from labkit.studies import handbook as hb

__all__ = ["MODEL_K1", "TRAIN_K1", "K1S", "K2S", "READER_K", "LTR", "MODEL", "RERANKERS", "model_questions",
           "test_questions", "candidates", "model_prompts", "feature_rows", "learned", "model_scored", "ranking",
           "runs", "reader_prompts", "reader_contexts", "per_query", "ceilings", "gains", "demoted",
           "gains_by_kind", "ceiling_intervals", "paired_scores", "scan_members",
           "model_cost", "explorer_data", "separation", "MODEL_PER_SLICE", "LTR_READER_K1"]  # fmt: skip

MODEL_K1 = 10  # the model reranker's candidates per question: 10 requests a question
TRAIN_K1 = 100  # the learned reranker trains on the dev queries' top 100
K1S = (10, 20, 50, 100)  # stage 1's depths
K2S = (3, 5, 10)  # what stage 2 keeps
READER_K = hb.READER_K  # the reader's k, as in 06-09
LTR, MODEL = "lambdarank", "1.5B yes/no"
RERANKERS = (LTR, MODEL)
LTR_READER_K1 = 20  # the learned reranker's k1 for the reader comparison


MODEL_PER_SLICE = 10  # questions per slice for the model reranker: 30 x 10 requests (~20 s each, 1 thread)


def model_questions() -> list:
    """The questions the model reranker is recorded on: the first MODEL_PER_SLICE of each slice (by qid) of the
    reader sample's test split: chosen by qid order, never by a result."""
    test = [q for q in hb.reader_sample() if q.split == "test"]
    return [q for s in ("easy", "hard", "real") for q in sorted((q for q in test if q.slice == s),
                                                                key=lambda q: q.qid)[:MODEL_PER_SLICE]]  # fmt: skip


def test_questions() -> list:
    """Every test query of the handbook (the learned reranker is reported on all of them)."""
    return [q for q in hb.handbook().queries if q.split == "test"]


@lru_cache(maxsize=1)
def _candidates() -> dict[str, tuple[str, ...]]:
    h = hb.handbook()
    hits = h.hybrid.search_many([q.search_text for q in h.queries], k=max(K1S))
    return {q.qid: tuple(cid for cid, _ in hit) for q, hit in zip(h.queries, hits, strict=True)}


def candidates(k1: int = max(K1S)) -> dict[str, tuple[str, ...]]:
    """Stage 1: every handbook query's hybrid top ``k1`` chunk ids, best first (``k1`` at most 100)."""
    k1 = args.whole_number("k1", k1, maximum=max(K1S), hint="the hybrid fetches each retriever's top 100")
    return {qid: c[:k1] for qid, c in _candidates().items()}


def model_prompts() -> list[str]:
    """Every request of plan ``04b-rerank``: each test question of the sample with each of its top MODEL_K1."""
    h = hb.handbook()
    cands = candidates(MODEL_K1)
    return [pointwise.prompt(q.search_text, h.texts[c]) for q in model_questions() for c in cands[q.qid]]


@lru_cache(maxsize=1)
def feature_rows() -> tuple[dict[str, list[list[float]]], tuple[str, ...]]:
    """``({qid: one feature row per candidate of its top 100}, feature names)`` for every query."""
    h = hb.handbook()
    cands = candidates()
    rows, names = rerank.features([q.search_text for q in h.queries], [cands[q.qid] for q in h.queries], h)
    return {q.qid: r for q, r in zip(h.queries, rows, strict=True)}, names


@lru_cache(maxsize=1)
def learned() -> rerank.LambdaRanker:
    """The learned reranker, fitted on the dev queries' top TRAIN_K1 candidates and their graded qrels."""
    h = hb.handbook()
    rows, names = feature_rows()
    dev = [q.qid for q in h.queries if q.split == "dev"]
    cands = candidates(TRAIN_K1)
    grades = [[h.qrels.get(qid, {}).get(c, 0) for c in cands[qid]] for qid in dev]
    return rerank.LambdaRanker().fit([rows[qid][:TRAIN_K1] for qid in dev], grades, names)


@lru_cache(maxsize=4)
def model_scored(model: str = llm.DEFAULT_MODEL) -> dict[str, list[pointwise.Scored]]:
    """``{qid: the model reranker's Scored for each of the top MODEL_K1}`` (replayed; or live with LABKIT_LLM)."""
    h = hb.handbook()
    reranker = pointwise.ModelReranker(llm.from_env(model))
    cands = candidates(MODEL_K1)
    return {q.qid: reranker.scored(q.search_text, [h.texts[c] for c in cands[q.qid]]) for q in model_questions()}


def ranking(qid: str, reranker: str | None, k1: int) -> list[str]:
    """Query ``qid``'s top ``k1`` in stage 1's order (``reranker=None``) or reordered by ``reranker``."""
    cands = list(candidates(k1)[qid])
    if reranker is None:
        return cands
    if reranker == LTR:
        rows, names = feature_rows()
        return rerank.rerank(cands, learned().scores(rows[qid][: len(cands)], names))
    if reranker == MODEL:
        if k1 > MODEL_K1:
            raise ValueError(f"k1 must be <= {MODEL_K1} for the model reranker: its top {MODEL_K1} were recorded")
        scored = model_scored().get(qid)
        if scored is None:
            raise ValueError(f"qid {qid!r} is not among the model reranker's questions (model_questions())")
        return rerank.rerank(cands, [s.score for s in scored[: len(cands)]])
    raise ValueError(f"reranker must be None (stage 1's order) or one of {RERANKERS}, got {reranker!r}")


def runs(k1: int, questions=None, rerankers=RERANKERS) -> dict[str, dict[str, list[str]]]:
    """``{"cut at k": run, reranker: run, ...}`` over ``questions`` (default: the model's 60), each run
    ``{qid: ranked chunk ids}`` of the top ``k1``."""
    qids = [q.qid for q in (model_questions() if questions is None else questions)]
    out = {"cut at k": {qid: ranking(qid, None, k1) for qid in qids}}
    for name in rerankers:
        out[name] = {qid: ranking(qid, name, k1) for qid in qids}
    return out


def reader_contexts(reranker: str) -> dict[str, list[str]]:
    """The chunk ids the reader sees with ``reranker``: the reranked top READER_K of the model's questions."""
    k1 = MODEL_K1 if reranker == MODEL else LTR_READER_K1
    return {q.qid: ranking(q.qid, reranker, k1)[:READER_K] for q in model_questions()}


def reader_prompts(reranker: str) -> dict[str, str]:
    """``{qid: the 1.5B reader's prompt}`` over the reranked top 3: chapter 07's lenient reader, same wording."""
    h = hb.handbook()
    ctx = reader_contexts(reranker)
    return {
        q.qid: rd.reader_prompt(q.search_text, [h.texts[c] for c in ctx[q.qid]], "lenient") for q in model_questions()
    }


# ----------------------------------------------------------------------------- what stage 2 buys, measured


def per_query(run: dict[str, list[str]], k2s=K2S, k1: int | None = None) -> Any:
    """One row per query of ``run``: nDCG@k2, RR@k2 and hit@k2 for each ``k2`` (and R@k1 with ``k1``), its slice."""
    h = hb.handbook()
    names = [f"{m}@{k2}" for k2 in k2s for m in ("nDCG", "RR", "hit")] + ([f"R@{k1}"] if k1 else [])
    res = metrics.evaluate(run, {qid: h.qrels.get(qid, {}) for qid in run}, names)
    table = res.per_query.loc[list(run)]
    table.insert(0, "slice", [h.by_qid[qid].slice for qid in table.index])
    return table


def ceilings(questions=None, k1s=K1S) -> Any:
    """Stage 1's Recall@k1 per slice with bootstrap intervals: no reranker of the top k1 can find more."""
    import pandas as pd

    qs = test_questions() if questions is None else questions
    rows = None
    for k1 in k1s:
        t = per_query({q.qid: list(candidates(k1)[q.qid]) for q in qs}, (), k1)
        rows = t if rows is None else rows.join(t.drop(columns="slice"))
    rows = rows.dropna()  # a query with nothing relevant has no recall
    by_slice = stats.group_means_ci(rows, "slice", [f"R@{k1}" for k1 in k1s])
    every = stats.group_means_ci(rows.assign(slice="all"), "slice", [f"R@{k1}" for k1 in k1s])
    return stats.fmt_ci_table(pd.concat([by_slice, every]))


def _paired_columns(k1: int, reranker: str, questions, k2s, metric_names):
    """``(slice, k2, metric, reranked, cut)`` for every slice (and all), k2 and metric: the per-query scores of the
    reranked top k2 and of stage 1 cut at k2, the same queries in the same order."""
    qs = model_questions() if questions is None else questions
    r = runs(k1, qs, (reranker,))
    cut, new = per_query(r["cut at k"], k2s), per_query(r[reranker], k2s)
    for group in ("easy", "hard", "real", "all"):
        keep = cut.index if group == "all" else cut.index[cut["slice"] == group]
        for k2 in k2s:
            for m in metric_names:
                col = f"{m}@{k2}"
                yield group, k2, m, new.loc[keep, col].tolist(), cut.loc[keep, col].tolist()


def gains(k1: int, reranker: str, questions=None, k2s=K2S, metric_names=("nDCG", "RR", "hit")) -> Any:
    """Per slice (and all), for each k2 and metric: cut at k2, reranked, and the paired difference with its
    interval, the same queries on both sides: a bootstrap of the per-query differences for nDCG and RR, Newcombe's
    paired score interval for hit (0/1 per query)."""
    import pandas as pd

    rows = []
    for group, k2, m, a, b in _paired_columns(k1, reranker, questions, k2s, metric_names):
        if m == "hit":  # 0/1 per query: the paired score interval, which never collapses
            d, low, high = stats.paired_newcombe(a, b)
        else:
            d = stats.diff_ci(a, b)
            d, low, high = d["difference"], d["low"], d["high"]
        rows.append({"slice": group, "k2": k2, "metric": m, "n": len(a), "cut at k2": sum(b) / len(b),
                     reranker: sum(a) / len(a), "difference": d, "low": low, "high": high})  # fmt: skip
    return pd.DataFrame(rows).set_index(["slice", "k2", "metric"])


def gains_by_kind(k1: int, reranker: str, questions=None, k2s=K2S, metric_names=("nDCG", "RR", "hit")) -> Any:
    """:func:`gains` with each difference's interval chosen by its kind (:func:`labkit.measures.stats.interval_for`):
    ``"paired graded"`` for nDCG and RR (the bootstrap-t; the rule bound when no query changed; the sparse bound when
    too few queries differ), ``"paired 0/1"`` for hit (paired Newcombe). Each row is a *lead*: an uncorrected 95 %
    interval from a scan; a comparison the chapter tests is declared in a ``stats.Family`` before the table is read.
    Also ``method``: the interval's method in a few words."""
    import pandas as pd

    rows = []
    for group, k2, m, a, b in _paired_columns(k1, reranker, questions, k2s, metric_names):
        iv = stats.interval_for("paired 0/1" if m == "hit" else "paired graded", (a, b))
        method = (
            "rule bound"
            if iv.method.startswith("rule bound")
            else "paired Newcombe"
            if "Newcombe" in iv.method
            else "sparse bound"
            if "sparse bound" in iv.method
            else "bootstrap-t"
        )
        changed = sum(x != y for x, y in zip(a, b, strict=True))
        if method == "sparse bound":  # so few queries changed that a bootstrap's ends would sit on 0: the
            method = f"sparse bound: {changed} of {len(a)} changed"  # share that changed bounds it
        rows.append({"slice": group, "k2": k2, "metric": m, "n": len(a), "cut at k2": sum(b) / len(b),
                     reranker: sum(a) / len(a), "difference": iv.estimate, "low": iv.low, "high": iv.high,
                     "method": method})  # fmt: skip
    return pd.DataFrame(rows).set_index(["slice", "k2", "metric"])


def scan_members(k2: int = 3) -> list[str]:
    """The per-slice scan's comparisons at one k2 (``"real, nDCG@3"``; every slice and all x nDCG, RR, hit), in the
    order :func:`paired_scores` returns them: what a ``stats.Family`` declares before the numbers are read."""
    return [f"{g}, {m}@{k2}" for g in ("easy", "hard", "real", "all") for m in ("nDCG", "RR", "hit")]


def paired_scores(k1: int, reranker: str, questions=None, k2: int = 3) -> dict[str, tuple[list, list]]:
    """Per slice (and all) and metric at one k2: the per-query ``(reranked, cut)`` scores on the same queries, keyed
    as :func:`scan_members` names them, for ``Family.findings`` (kind ``"paired 0/1"`` for hit, else graded)."""
    r = runs(k1, model_questions() if questions is None else questions, (reranker,))
    cut, new = per_query(r["cut at k"], (k2,)), per_query(r[reranker], (k2,))
    out = {}
    for name in scan_members(k2):
        g, col = name.split(", ")
        keep = cut.index if g == "all" else cut.index[cut["slice"] == g]
        out[name] = (new.loc[keep, col].tolist(), cut.loc[keep, col].tolist())
    return out


def ceiling_intervals(questions=None, k1s=K1S) -> Any:
    """:func:`ceilings` with each cell's interval chosen by its kind (``stats.interval_for("graded mean")``): the
    bootstrap-t, and the rule bound where every query has all its gold (never ``[1.000, 1.000]``)."""
    import pandas as pd

    qs = test_questions() if questions is None else questions
    rows = None
    for k1 in k1s:
        t = per_query({q.qid: list(candidates(k1)[q.qid]) for q in qs}, (), k1)
        rows = t if rows is None else rows.join(t.drop(columns="slice"))
    rows = rows.dropna()
    out = {}
    for group in ("easy", "hard", "real", "all"):
        part = rows if group == "all" else rows[rows["slice"] == group]
        cells = {"n": len(part)}
        for k1 in k1s:
            iv = stats.interval_for("graded mean", part[f"R@{k1}"].tolist(), null=0.5)
            cells[f"R@{k1}"] = stats.fmt_ci(iv.estimate, iv.low, iv.high)
        out[group] = cells
    return pd.DataFrame(out).T.rename_axis("slice")


def demoted(k1: int, k2: int, reranker: str, questions=None) -> list[dict[str, Any]]:
    """The queries the reranker hurts: stage 1's top ``k2`` held a relevant chunk and the reranked top ``k2`` does
    not. Each: the qid, the question, the first relevant chunk's rank before and after."""
    h = hb.handbook()
    qs = model_questions() if questions is None else questions
    r = runs(k1, qs, (reranker,))
    out = []
    for q in qs:
        rel = {c for c, g in h.qrels.get(q.qid, {}).items() if g >= 1}
        before = next((i for i, c in enumerate(r["cut at k"][q.qid], 1) if c in rel), None)
        after = next((i for i, c in enumerate(r[reranker][q.qid], 1) if c in rel), None)
        if before is not None and before <= k2 and (after is None or after > k2):
            out.append({"qid": q.qid, "slice": q.slice, "question": q.question, "first relevant before": before,
                        "after": after})  # fmt: skip
    return out


def model_cost(k1s=K1S) -> Any:
    """What the model reranker costs a query against k1: requests, prompt tokens and seconds. Measured (the
    recorded provenance) up to MODEL_K1; beyond it estimated as k1 times the measured mean per request."""
    import pandas as pd

    rows, cands = [], candidates(MODEL_K1)
    model_scored()  # replays every request once, so the cassette rows below are the ones used
    replay = llm.Replay(llm.DEFAULT_MODEL)
    h = hb.handbook()
    per = []
    for q in model_questions():
        for c in cands[q.qid]:
            key = llm.prompt_key(llm.DEFAULT_MODEL, pointwise.prompt(q.search_text, h.texts[c]), max_tokens=1,
                                 top_logprobs=pointwise.TOP_LOGPROBS)  # fmt: skip
            prov = replay.rows[key]["provenance"]
            per.append((prov["prompt_tokens"], prov["seconds"]))
    tokens = sum(t for t, _ in per) / len(per)
    seconds = sum(s for _, s in per) / len(per)
    for k1 in k1s:
        rows.append(
            {
                "k1": k1,
                "requests per query": k1,
                "prompt tokens per query": tokens * k1,
                "seconds per query": seconds * k1,
                "how": "measured" if k1 <= MODEL_K1 else "estimated",
            }
        )
    return pd.DataFrame(rows).set_index("k1")


def explorer_data() -> dict[str, Any]:
    """What 04b's explorer shows, computed once for the model's 60 questions: per (ranker, k1) the per-query
    metrics at every k2 and the rankings, stage 1's Recall@k1, the questions, the chunks' first words, the qrels
    and the model reranker's cost. ``ranker`` is "cut at k" or a reranker; the model has only k1 = MODEL_K1."""
    h = hb.handbook()
    qs = model_questions()
    data: dict[str, Any] = {"metrics": {}, "rankings": {}, "ceiling": {}, "k1s": {}, "k2s": K2S}
    for k1 in K1S:
        names = ["cut at k", LTR] + ([MODEL] if k1 <= MODEL_K1 else [])
        r = runs(k1, qs, [n for n in names if n != "cut at k"])
        for name in names:
            data["metrics"][(name, k1)] = per_query(r[name])
            data["rankings"][(name, k1)] = r[name]
        data["ceiling"][k1] = per_query(r["cut at k"], (), k1)[f"R@{k1}"]
    data["k1s"] = {"cut at k": K1S, LTR: K1S, MODEL: tuple(k for k in K1S if k <= MODEL_K1)}
    data["questions"] = {q.qid: q.question for q in qs}
    data["slices"] = {q.qid: q.slice for q in qs}
    data["qrels"] = {q.qid: h.qrels.get(q.qid, {}) for q in qs}
    data["snippets"] = {c: " ".join(h.texts[c].split()[:14]) for r in data["rankings"].values() for v in r.values()
                        for c in v[:10]}  # fmt: skip
    data["cost"] = model_cost()
    return data


def separation(k1: int = MODEL_K1, questions=None) -> tuple[Any, dict[str, tuple[list[float], list[float]]]]:
    """How well each scorer puts a question's relevant candidates above its others: the share of (relevant,
    other) pairs of one question ordered right (ties count half; the within-question AUC), averaged over the
    questions that have both, with a bootstrap interval; and every score split by relevance, for a picture.
    Scorers: stage 1's fused RRF score, the learned reranker and the model reranker (its log-odds).
    ``table.attrs["per question"]``: ``{scorer: [AUC per question]}``, the same questions in the same order for
    every scorer (those with a relevant and another candidate), for a paired comparison of two scorers."""
    import pandas as pd

    h = hb.handbook()
    qs = model_questions() if questions is None else questions
    rows, names = feature_rows()
    rrf_at = names.index("rrf")
    scorers = {
        "stage 1 (RRF score)": lambda qid: [r[rrf_at] for r in rows[qid][:k1]],
        LTR: lambda qid: learned().scores(rows[qid][:k1], names),
        MODEL: lambda qid: [s.score for s in model_scored()[qid][:k1]],
    }
    table, split, per_question = {}, {}, {}
    for name, score in scorers.items():
        aucs, rel_all, other_all = [], [], []
        for q in qs:
            s = score(q.qid)
            grades = [h.qrels.get(q.qid, {}).get(c, 0) for c in candidates(k1)[q.qid]]
            rel = [x for x, g in zip(s, grades, strict=True) if g >= 1]
            other = [x for x, g in zip(s, grades, strict=True) if g < 1]
            rel_all += rel
            other_all += other
            if rel and other:
                aucs.append(sum(1.0 if a > b else 0.5 if a == b else 0.0 for a in rel for b in other)
                            / (len(rel) * len(other)))  # fmt: skip
        mean, low, high = stats.bootstrap_ci(aucs)
        table[name] = {"questions": len(aucs), "pairs ordered right": stats.fmt_ci(mean, low, high)}
        split[name] = (rel_all, other_all)
        per_question[name] = aucs
    out = pd.DataFrame(table).T
    out.attrs["per question"] = per_question
    return out, split
