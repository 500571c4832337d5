"""Exercise self-checks: ``check.exercise("3.1", answer)`` prints one line.

Used at the end of every chapter. The expected value is computed by
``labkit`` from the exercise's own inputs when you check, never typed in, so
a check cannot drift from the code it teaches. The printout is
deterministic (nbval compares it):

- ``None`` (or ``...``)  ->  "not answered yet"
- the right value        ->  "correct"
- anything else          ->  "not yet" and a hint
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from numbers import Real
from typing import Any

from labkit import metrics

__all__ = ["exercise", "EXERCISES"]


@dataclass(frozen=True)
class Exercise:
    question: str
    expected: Callable[[], Any]
    hint: str
    tol: float = 1e-3


def _is_number(x: Any) -> bool:
    return isinstance(x, Real) and not isinstance(x, bool)


def _plain(x: Any) -> Any:
    """NumPy arrays and scalars (and pandas Series) as the equivalent Python list or number.

    ``np.array([3, 2, 1, 0, 0])`` answers "give the list of grades" as well as ``[3, 2, 1, 0, 0]`` does, and
    ``np.float64(0.6)`` or ``np.int64(2)`` is a number.
    """
    module = type(x).__module__.split(".")[0]
    if module in ("numpy", "pandas") and hasattr(x, "tolist"):
        return x.tolist()
    return x


def _same(answer: Any, expected: Any, tol: float) -> bool:
    answer, expected = _plain(answer), _plain(expected)
    if _is_number(expected):
        return _is_number(answer) and math.isclose(answer, expected, abs_tol=tol)
    if isinstance(expected, str):
        return isinstance(answer, str) and answer.strip().lower() == expected.lower()
    if isinstance(expected, list | tuple):
        return (
            isinstance(answer, list | tuple)
            and len(answer) == len(expected)
            and all(_same(a, e, tol) for a, e in zip(answer, expected, strict=True))
        )
    return answer == expected


def _best_order(grades: list[int]) -> list[int]:
    return sorted(grades, reverse=True)


RUNNING = [0, 2, 0, 3, 1]


def _n_documents() -> int:
    from labkit.data import load_corpus

    return len(load_corpus())


@lru_cache(maxsize=1)
def _handbook():
    """The setting the chapters share (chunks of 128 words, overlap 32), built once per process."""
    from types import SimpleNamespace

    from labkit.chunking import chunk_corpus, spans_to_qrels
    from labkit.data import load_corpus, load_queries
    from labkit.retrieval import BM25Retriever, DenseRetriever, HybridRetriever

    corpus, queries = load_corpus(), load_queries()
    chunks = chunk_corpus(corpus, 128, 32)
    bm25, dense = BM25Retriever(chunks), DenseRetriever(chunks)
    return SimpleNamespace(
        corpus=corpus,
        queries=queries,
        chunks=chunks,
        texts={c.id: c.text for c in chunks},
        qrels=spans_to_qrels(queries, chunks),
        bm25=bm25,
        dense=dense,
        hybrid=HybridRetriever([bm25, dense]),
    )


@lru_cache(maxsize=1)
def _handbook_hits() -> tuple:
    """Chapter 01's setting, recomputed: hit@10 of BM25 and dense per query, and the per-slice table."""
    from labkit import fusion

    h = _handbook()
    queries, qrels = h.queries, h.qrels
    runs = {name: _handbook_runs()[name] for name in ("bm25", "dense")}
    table = fusion.hybrid_table(runs, qrels, {q.qid: q.slice for q in queries}, c=60, k=10)
    hits = {
        name: metrics.evaluate({q: r[:10] for q, r in run.items()}, qrels, ("hit@10",)).per_query["hit@10"]
        for name, run in runs.items()
    }
    return table, hits


def _only_dense() -> int:
    _, hits = _handbook_hits()
    return int(((hits["bm25"] == 0) & (hits["dense"] == 1)).sum())


SEED_GOLD = [(1000, 240, 40), (1000, 500, 60), (800, 120, 30), (1200, 760, 90),
             (600, 250, 20), (900, 380, 70), (1500, 1010, 50), (700, 60, 25)]  # fmt: skip


def _toy_split_rate(size: int, overlap: int) -> float:
    from labkit.chunking import split_stats

    return split_stats(SEED_GOLD, size, overlap).split_rate


def _n_chunks(doc_id: str, size: int, overlap: int) -> int:
    from labkit.chunking import chunk_document
    from labkit.data import load_corpus

    doc = load_corpus()[doc_id]
    return len(chunk_document(doc.id, doc.text, size, overlap))


def _best_bm25_config() -> tuple:
    from labkit.data import load_corpus, load_queries
    from labkit.grid import ChunkGrid

    grid = ChunkGrid(load_corpus(), load_queries(split="dev"), retrievers=("bm25",))
    table = grid.table((64, 128, 256), (0.0, 0.25, 0.5), k={64: 20, 128: 10, 256: 5})
    return tuple(int(x) for x in table["ER@k bm25"].idxmax())


TOY_SET = {"q1": [0, 0, 3, 0, 1], "q2": [2, 0, 0, 0, 0], "q3": [0, 0, 0, 0, 0], "q4": [0, 1, 0, 0, 0]}


def _toy_mrr(k: int) -> float:
    return sum(metrics.reciprocal_rank(r, k) for r in TOY_SET.values()) / len(TOY_SET)


def _toy_hit_rate(k: int) -> float:
    return sum(metrics.hit_at_k(r, k) for r in TOY_SET.values()) / len(TOY_SET)


def _liu_drop() -> float:
    from labkit.data import load_reference

    liu = load_reference("lost_in_the_middle_liu2024")
    gpt = liu[(liu.n_docs == 20) & (liu.model == "GPT-3.5-Turbo (0613)")].set_index("position")
    return round(float(gpt.loc[1, "accuracy"] - gpt.loc[10, "accuracy"]), 1)


ROUTER_COST = {"nano": 0.1, "mini": 0.4, "mid": 1.5, "large": 5.0, "xl": 15.0}
ROUTER_PASS = {
    "r1 summarise email": {"nano", "mini", "mid", "large", "xl"},
    "r2 SQL 3-table join": {"mid", "large", "xl"},
    "r3 RAG 80k-token context": {"large", "xl"},
    "r4 intent classification": {"mini", "mid", "large", "xl"},
}
ROUTER_RANKING = {
    "r1 summarise email": ["mini", "nano", "mid", "large", "xl"],
    "r2 SQL 3-table join": ["mini", "mid", "large", "xl", "nano"],
    "r3 RAG 80k-token context": ["xl", "large", "mid", "mini", "nano"],
    "r4 intent classification": ["mini", "mid", "nano", "large", "xl"],
}
ROUTER_WINDOW = {"nano": 1024, "mini": 2048, "mid": 4096, "large": 16384, "xl": 131072}


def _router_table(ranking=None):
    from labkit.router import evaluate_router

    return evaluate_router(ranking or ROUTER_RANKING, ROUTER_PASS, ROUTER_COST, k=3)


def _share_to_mini_at_10() -> float:
    from labkit.embeddings import count_tokens
    from labkit.retrieval import make_run
    from labkit.router import chars_over_4, rag_prompts, routing_at_k

    h = _handbook()
    prompts = rag_prompts(h.queries, make_run(h.hybrid, h.queries, 10), h.texts, 10)
    stats = routing_at_k(count_tokens(prompts), [chars_over_4(p) for p in prompts], ROUTER_WINDOW, ROUTER_COST)
    return round(stats["share to mini"], 3)


TRIAGE_TOY = [
    {"gold": ["hr-07#2"], "retrieved": ["hr-07#2", "hr-07#5"], "answer_pass": False},
    {"gold": ["adm-04#1"], "retrieved": ["it-09#3", "hr-02#1"], "answer_pass": False},
    {"gold": ["it-03#1"], "retrieved": ["hr-12#3", "hr-12#4"], "answer_pass": True},
    {"gold": ["fin-02#3"], "retrieved": ["fin-02#3", "fin-02#1"], "answer_pass": True},
]


def _toy_priority() -> str:
    from labkit import triage

    return triage.priority(triage.triage(TRIAGE_TOY))


def _gen_fail_at(k: int) -> int:
    from labkit import triage
    from labkit.positions import LexicalReader
    from labkit.retrieval import make_run

    h = _handbook()
    run = make_run(h.hybrid, h.queries, 20)
    corpus_texts = {d: doc.text for d, doc in h.corpus.items()}
    traces = triage.extractive_traces(h.queries, run, h.texts, h.qrels, LexicalReader(), corpus_texts, k)
    return triage.triage(traces, k)["GEN_FAIL"]


@lru_cache(maxsize=1)
def _handbook_runs() -> dict:
    """BM25 and dense top 100 for every query, and their RRF fusion (c=60) top 100 (chapters 01 and 08)."""
    from labkit import fusion
    from labkit.retrieval import make_run

    h = _handbook()
    runs = {"bm25": make_run(h.bm25, h.queries, 100), "dense": make_run(h.dense, h.queries, 100)}
    runs["hybrid"] = fusion.fuse_runs([runs["bm25"], runs["dense"]], c=60, top_n=100)
    return runs


def _hybrid_recall_at_3(slice_: str) -> float:
    h = _handbook()
    run = {q.qid: _handbook_runs()["hybrid"][q.qid][:3] for q in h.queries if q.slice == slice_}
    return round(float(metrics.evaluate(run, {q: h.qrels[q] for q in run}, ("R@3",)).mean["R@3"]), 3)


def _follow_up_hit_at_10() -> float:
    import dataclasses

    from labkit.retrieval import make_run

    h = _handbook()
    typed = [dataclasses.replace(q, rewritten=None) for q in h.queries if q.rewritten]
    run = make_run(h.hybrid, typed, 10)
    return round(float(metrics.evaluate(run, {q.qid: h.qrels[q.qid] for q in typed}, ("hit@10",)).mean["hit@10"]), 3)


def _multihop_all_evidence() -> float:
    from labkit.grid import evidence_recall

    h = _handbook()
    multihop = [q for q in h.queries if q.kind == "multihop"]
    er = evidence_recall(_handbook_runs()["hybrid"], multihop, h.chunks, 10)
    return round(sum(v >= 1 for v in er.values()) / len(er), 3)


TOY_BM25 = ["D7", "D2", "D9", "D4", "D1"]
TOY_DENSE = ["D4", "D3", "D7", "D8", "D2"]


def _toy_rrf(**kwargs):
    from labkit import fusion

    return fusion.rrf([TOY_BM25, TOY_DENSE], **kwargs)


EXERCISES: dict[str, Exercise] = {
    "0.1": Exercise(
        "how many documents does the handbook hold?",
        _n_documents,
        "len(corpus) counts the documents loaded by load_corpus()",
    ),
    "1.1": Exercise(
        "the fused score of D2 in the toy example (c=60)",
        lambda: round(_toy_rrf(c=60)[1]["D2"], 5),
        "D2 is rank 2 for BM25 and rank 5 for dense: 1/(60+2) + 1/(60+5)",
        tol=1e-5,
    ),
    "1.2": Exercise(
        "the first document of the toy fusion with weights [0.2, 1.0]",
        lambda: _toy_rrf(c=60, weights=[0.2, 1.0])[0][0],
        "multiply each list's contribution by its weight: BM25's ranks now count five times less",
    ),
    "1.3": Exercise(
        "the retriever with the highest Recall@10 on the real slice",
        lambda: _handbook_hits()[0]["R@10"].loc["real"].idxmax(),
        "read the R@10 columns of the per-slice table, row 'real'",
    ),
    "1.4": Exercise(
        "queries with the gold chunk in the dense top 10 but not in the BM25 top 10",
        _only_dense,
        "count queries where hit@10 is 1 for dense and 0 for bm25 (the 'only dense' column, summed)",
        tol=0,
    ),
    "4.1": Exercise(
        "MRR@5 of the chapter 04 toy query set",
        lambda: _toy_mrr(5),
        "reciprocal ranks 1/3, 1, 0 and 1/2, averaged over the four queries",
    ),
    "4.2": Exercise(
        "hit rate@1 of the chapter 04 toy query set",
        lambda: _toy_hit_rate(1),
        "only q2 has a relevant document at rank 1",
    ),
    "4.3": Exercise(
        "accuracy points GPT-3.5-Turbo (0613) loses from position 1 to 10 (20 documents, Liu et al.)",
        _liu_drop,
        "read the accuracy column at positions 1 and 10 of the published table and subtract",
        tol=0.05,
    ),
    "5.1": Exercise(
        "split rate of the toy gold set at size 256, overlap 64",
        lambda: _toy_split_rate(256, 64),
        "count the answers that no window of 256 tokens (stride 192) holds whole, out of 8",
    ),
    "5.2": Exercise(
        "chunks of hr-remote-work-2025 at size 64, overlap 0",
        lambda: _n_chunks("hr-remote-work-2025", 64, 0),
        "chunk_document(doc.id, doc.text, 64, 0) and count; every 64 words start a new chunk",
        tol=0,
    ),
    "5.3": Exercise(
        "the (size, overlap) with the best dev evidence recall for BM25 at the equal reading budget",
        _best_bm25_config,
        "table['ER@k bm25'].idxmax() gives the (size, overlap) pair of the highest value",
        tol=0,
    ),
    "6.1": Exercise(
        "faithfulness score of the source's toy answer (2 of 3 claims supported)",
        lambda: round(2 / 3, 2),
        "supported claims / all claims, rounded to 2 decimals",
        tol=0.005,
    ),
    "6.2": Exercise(
        "TNR of the always-supported judge on the test split",
        lambda table: _always_supported_tnr(table),
        "TNR = the share of not-supported claims that the judge rejects; this judge rejects none",
    ),
    "6.3": Exercise(
        "Rogan-Gladen corrected rate for p_obs 0.8, TPR 0.9, TNR 0.6",
        lambda: round((0.8 + 0.6 - 1) / (0.9 + 0.6 - 1), 3),
        "(p_obs + TNR - 1) / (TPR + TNR - 1)",
        tol=0.0005,
    ),
    "6.4": Exercise(
        "dev verdicts of the 1.5B judge overruled by the quote guard",
        lambda table: int(table["1.5B + quote guard guarded"].sum()),
        "sum the column '1.5B + quote guard guarded' of the dev table",
        tol=0,
    ),
    "7.1": Exercise(
        "triage.priority for the four toy traces",
        lambda: _toy_priority(),
        "count RET_FAIL and GEN_FAIL: one each",
    ),
    "7.2": Exercise(
        "GEN_FAIL traces of the handbook pipeline at k=10",
        lambda: _gen_fail_at(10),
        "triage.triage(traces_at(10), 10)['GEN_FAIL']",
        tol=0,
    ),
    "8.1": Exercise(
        "the hybrid's Recall@3 on the real slice",
        lambda: _hybrid_recall_at_3("real"),
        "scorecard.loc['real', ('R@3', 'hybrid')]: the reader's k, not 10",
    ),
    "8.2": Exercise(
        "hit rate@10 of the hybrid on the conversational follow-ups as typed",
        _follow_up_hit_at_10,
        "rewrite_table.loc[('follow-up as typed', 'hybrid'), 'hit@10']",
    ),
    "8.3": Exercise(
        "share of multi-hop queries with all their evidence in the hybrid's top 10",
        _multihop_all_evidence,
        "the 'all evidence@10' column of the per-kind table, row multihop",
    ),
    "9.1": Exercise(
        "nDCG@3 of request r2 in the router example",
        lambda: round(float(_router_table().loc["r2 SQL 3-table join", "nDCG@3"]), 2),
        "grades [0, 3, 2] against the ideal [3, 2, 2]: DCG = 3/log2(3) + 2/2, IDCG = 3 + 2/log2(3) + 2/2",
        tol=0.005,
    ),
    "9.2": Exercise(
        "mean cascade regret when r3 is routed to large first",
        lambda: round(
            float(
                _router_table(
                    dict(ROUTER_RANKING, **{"r3 RAG 80k-token context": ["large", "xl", "mid", "mini", "nano"]})
                ).attrs["mean"]["regret"]
            ),
            3,
        ),
        "r3's regret becomes 0; the others stay 0.3, 0.4 and 0.0; average the four",
        tol=0.001,
    ),
    "9.3": Exercise(
        "share of requests the real-token filter sends to mini at k=10",
        _share_to_mini_at_10,
        "stats(10)['share to mini']: requests whose prompt is over nano's 1,024 tokens but within mini's 2,048",
        tol=0.001,
    ),
    "3.1": Exercise(
        "P@3 of the running example [0, 2, 0, 3, 1] with thr=1",
        lambda: metrics.precision_at_k(RUNNING, 3),
        "count the grades >= 1 among the first three, then divide by k = 3 (not by how many are relevant)",
    ),
    "3.2": Exercise(
        "R@5 of the running example when only grade 3 counts (thr=3); the query has one grade-3 document",
        lambda: metrics.recall_at_k(RUNNING, 5, n_relevant_total=1, thr=3),
        "with thr=3 only the grade-3 document is relevant; is it in the top 5?",
    ),
    "3.3": Exercise(
        "nDCG@3 (book convention) of the ranking [1, 0, 3]",
        lambda: metrics.ndcg_at_k([1, 0, 3], 3),
        "DCG = 1/log2(2) + 0 + 3/log2(4); the ideal re-sorts the same three grades to [3, 1, 0]",
    ),
    "3.4": Exercise(
        "reorder [0, 2, 0, 3, 1] so that nDCG@5 is 1 (give the list of grades)",
        lambda: _best_order(RUNNING),
        "nDCG is 1 when every grade sits at or above every smaller grade",
    ),
    "3.5": Exercise(
        "a bot answers single-fact questions from the top 3 chunks: which metric first? "
        "('recall@k', 'ndcg@k', 'mrr' or 'hit@k')",
        lambda: "mrr",
        "one fact needs one good chunk, and the earlier it appears the better (lost in the middle)",
    ),
    "3.6": Exercise(
        "nDCG@5 of Y = [0, 0, 0, 3, 0] with trec_eval's IDCG, judged grades [3, 1, 1, 1]",
        lambda: metrics.ndcg_at_k([0, 0, 0, 3, 0], 5, all_grades=[3, 1, 1, 1]),
        "the ideal now sorts all judged grades: [3, 1, 1, 1] -> IDCG = 3 + 1/log2(3) + 1/2 + 1/log2(5)",
    ),
}


def _expected(ex: Exercise, number: str, objects: dict) -> Any:
    import inspect

    wanted = list(inspect.signature(ex.expected).parameters)
    missing = [name for name in wanted if name not in objects]
    if missing:
        raise ValueError(f"exercise {number} is checked against the chapter's {missing[0]}: pass {missing[0]}=...")
    return ex.expected(**{name: objects[name] for name in wanted})


def _always_supported_tnr(table) -> float:
    fails = table[table["label"] != "supported"]
    return float((fails["always supported"] != "supported").mean())


def exercise(number: str, answer: Any, **objects: Any) -> None:
    """Print whether ``answer`` solves exercise ``number`` (e.g. ``"3.1"``).

    NumPy arrays and scalars are compared as the equivalent list or number. Some exercises check an answer
    against the chapter's own objects (``check.exercise("6.2", answer, table=test)``), so the check computes
    nothing the chapter has already computed.
    """
    if not isinstance(number, str):
        raise ValueError(
            f'number must be the exercise\'s number as a string, e.g. "3.1", got {type(number).__name__} '
            f"{number!r} (as a float, 3.10 and 3.1 would be the same)"
        )
    if number not in EXERCISES:
        raise ValueError(f"unknown exercise {number!r}; this chapter's are {sorted(EXERCISES)}")
    ex = EXERCISES[number]
    if answer is None or answer is Ellipsis:
        print(f"Exercise {number}: not answered yet - replace None with your answer.")
    elif _same(answer, _expected(ex, number, objects), ex.tol):
        print(f"Exercise {number}: correct.")
    else:
        print(f"Exercise {number}: not yet. Hint: {ex.hint}.")
