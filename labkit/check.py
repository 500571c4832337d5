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


def _same(answer: Any, expected: Any, tol: float) -> bool:
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
def _handbook_hits() -> tuple:
    """Chapter 01's setting, recomputed: hit@10 of BM25 and dense per query, and the per-slice table."""
    from labkit import fusion
    from labkit.chunking import chunk_corpus, spans_to_qrels
    from labkit.data import load_corpus, load_queries
    from labkit.retrieval import BM25Retriever, DenseRetriever, make_run

    queries = load_queries()
    chunks = chunk_corpus(load_corpus(), 128, 32)
    qrels = spans_to_qrels(queries, chunks)
    runs = {
        "bm25": make_run(BM25Retriever(chunks), queries, 100),
        "dense": make_run(DenseRetriever(chunks), queries, 100),
    }
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


def exercise(number: str, answer: Any) -> None:
    """Print whether ``answer`` solves exercise ``number`` (e.g. ``"3.1"``)."""
    if number not in EXERCISES:
        raise ValueError(f"unknown exercise {number!r}; this chapter's are {sorted(EXERCISES)}")
    ex = EXERCISES[number]
    if answer is None or answer is Ellipsis:
        print(f"Exercise {number}: not answered yet - replace None with your answer.")
    elif _same(answer, ex.expected(), ex.tol):
        print(f"Exercise {number}: correct.")
    else:
        print(f"Exercise {number}: not yet. Hint: {ex.hint}.")
