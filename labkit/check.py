"""Exercise self-checks: ``check.exercise("3.1", answer)`` prints one line.

Used at the end of every chapter. The expected value is computed by ``labkit`` when you check, never typed in,
so a check cannot drift from the code it teaches. It is computed from one of two places, and never by
rebuilding a chapter (a check takes milliseconds, not the seconds a retrieval run takes):

- the source's toy inputs, from :mod:`labkit.toys`, which the chapters use too;
- the chapter's own objects, passed by name: ``check.exercise("5.3", answer, table=table)``. The check reads
  the cell of that table the exercise asks about, so it agrees with the numbers on your screen.

The printout is deterministic (nbval compares it):

- ``None`` (or ``...``)  ->  "not answered yet"
- the right value        ->  "correct"
- anything else          ->  "not yet" and a hint
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from numbers import Real
from typing import Any

from labkit import metrics, toys

__all__ = ["exercise", "EXERCISES", "Exercise", "not_answered"]


@dataclass(frozen=True)
class Exercise:
    """One exercise: what it asks, how its expected value is computed, the hint for a wrong answer.

    ``expected`` takes no argument, or the chapter objects it reads, by name; ``objects`` says in words what
    each of them is (the error for a missing or wrong object quotes it).
    """

    question: str
    expected: Callable[..., Any]
    hint: str
    tol: float = 1e-3
    objects: Mapping[str, str] = field(default_factory=dict)

    @property
    def needs(self) -> list[str]:
        """The names of the chapter objects this exercise is checked against (in the order of ``expected``)."""
        return list(inspect.signature(self.expected).parameters)


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


# ---------------------------------------------------------------- expected values from the toys and small data


def _n_documents() -> int:
    from labkit.data import load_corpus

    return len(load_corpus())


def _toy_rrf(**kwargs):
    from labkit import fusion

    return fusion.rrf([toys.RRF_BM25, toys.RRF_DENSE], **kwargs)


def _toy_mrr(k: int) -> float:
    return sum(metrics.reciprocal_rank(r, k) for r in toys.MRR_TOY.values()) / len(toys.MRR_TOY)


def _toy_hit_rate(k: int) -> float:
    return sum(metrics.hit_at_k(r, k) for r in toys.MRR_TOY.values()) / len(toys.MRR_TOY)


def _liu_drop() -> float:
    from labkit.data import load_reference

    liu = load_reference("lost_in_the_middle_liu2024")
    gpt = liu[(liu.n_docs == 20) & (liu.model == "GPT-3.5-Turbo (0613)")].set_index("position")
    return round(float(gpt.loc[1, "accuracy"] - gpt.loc[10, "accuracy"]), 1)


def _toy_split_rate(size: int, overlap: int) -> float:
    from labkit.chunking import split_stats

    return split_stats(toys.SPLIT_GOLD, size, overlap).split_rate


def _n_chunks(doc_id: str, size: int, overlap: int) -> int:
    from labkit.chunking import chunk_document
    from labkit.data import load_corpus

    doc = load_corpus()[doc_id]
    return len(chunk_document(doc.id, doc.text, size, overlap))


def _toy_priority() -> str:
    from labkit import triage

    return triage.priority(triage.triage(toys.TRIAGE_TRACES))


R3 = "r3 RAG 80k-token context"


def _router_table(ranking: Mapping[str, list[str]] | None = None):
    from labkit.router import evaluate_router

    return evaluate_router(ranking or toys.ROUTER_RANKING, toys.ROUTER_PASS, toys.ROUTER_COST, k=3)


def _regret_with_r3_large_first() -> float:
    first, second, *rest = toys.ROUTER_RANKING[R3]  # xl, large, ...: swap the first two
    ranking = dict(toys.ROUTER_RANKING, **{R3: [second, first, *rest]})
    return round(float(_router_table(ranking).attrs["mean"]["regret"]), 3)


# ---------------------------------------------------------------- expected values read from the chapter's objects


def _only_dense(runs, qrels) -> int:
    hit = {
        name: metrics.evaluate({q: r[:10] for q, r in runs[name].items()}, qrels, ("hit@10",)).per_query["hit@10"]
        for name in ("bm25", "dense")
    }
    return int(((hit["bm25"] == 0) & (hit["dense"] == 1)).sum())


def _always_supported_tnr(table) -> float:
    fails = table[table["label"] != "supported"]
    return float((fails["always supported"] != "supported").mean())


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
        lambda table: table["R@10"].loc["real"].idxmax(),
        "read the R@10 columns of the per-slice table, row 'real'",
        objects={"table": "the per-slice table of fusion.hybrid_table (c=60, k=10)"},
    ),
    "1.4": Exercise(
        "queries with the gold chunk in the dense top 10 but not in the BM25 top 10",
        _only_dense,
        "count queries where hit@10 is 1 for dense and 0 for bm25 (the 'only dense' column, summed)",
        tol=0,
        objects={"runs": "the BM25 and dense runs ({'bm25': ..., 'dense': ...})", "qrels": "the chunk qrels"},
    ),
    "3.1": Exercise(
        "P@3 of the running example [0, 2, 0, 3, 1] with thr=1",
        lambda: metrics.precision_at_k(toys.RUNNING_GRADES, 3),
        "count the grades >= 1 among the first three, then divide by k = 3 (not by how many are relevant)",
    ),
    "3.2": Exercise(
        "R@5 of the running example when only grade 3 counts (thr=3); the query has one grade-3 document",
        lambda: metrics.recall_at_k(toys.RUNNING_GRADES, 5, n_relevant_total=1, thr=3),
        "with thr=3 only the grade-3 document is relevant; is it in the top 5?",
    ),
    "3.3": Exercise(
        "nDCG@3 (book convention) of the ranking [1, 0, 3]",
        lambda: metrics.ndcg_at_k([1, 0, 3], 3),
        "DCG = 1/log2(2) + 0 + 3/log2(4); the ideal re-sorts the same three grades to [3, 1, 0]",
    ),
    "3.4": Exercise(
        "reorder [0, 2, 0, 3, 1] so that nDCG@5 is 1 (give the list of grades)",
        lambda: sorted(toys.RUNNING_GRADES, reverse=True),
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
        lambda: metrics.ndcg_at_k(toys.TRAP_Y, 5, all_grades=toys.TRAP_JUDGED),
        "the ideal now sorts all judged grades: [3, 1, 1, 1] -> IDCG = 3 + 1/log2(3) + 1/2 + 1/log2(5)",
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
        lambda table: tuple(int(x) for x in table["ER@k bm25"].idxmax()),
        "table['ER@k bm25'].idxmax() gives the (size, overlap) pair of the highest value",
        tol=0,
        objects={"table": "the dev grid at the equal reading budget (ChunkGrid.table with k=budget_k)"},
    ),
    "6.1": Exercise(
        "faithfulness score of the source's toy answer (2 of 3 claims supported)",
        lambda: round(2 / 3, 2),
        "supported claims / all claims, rounded to 2 decimals",
        tol=0.005,
    ),
    "6.2": Exercise(
        "TNR of the always-supported judge on the test split",
        _always_supported_tnr,
        "TNR = the share of not-supported claims that the judge rejects; this judge rejects none",
        objects={"table": "the test split's verdict table (columns 'label' and 'always supported')"},
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
        objects={"table": "the dev split's verdict table (column '1.5B + quote guard guarded')"},
    ),
    "7.1": Exercise(
        "triage.priority for the four toy traces",
        _toy_priority,
        "count RET_FAIL and GEN_FAIL: one each",
    ),
    "7.2": Exercise(
        "GEN_FAIL traces of the handbook pipeline at k=10",
        lambda sweep: int(sweep.loc[10, "GEN_FAIL"]),
        "triage.triage(traces_at(10), 10)['GEN_FAIL']",
        tol=0,
        objects={"sweep": "the 2x2 counts per k (one row per k, one column per cell)"},
    ),
    "8.1": Exercise(
        "the hybrid's Recall@3 on the real slice",
        lambda scorecard: round(float(scorecard.loc["real", ("R@3", "hybrid")]), 3),
        "scorecard.loc['real', ('R@3', 'hybrid')]: the reader's k, not 10",
        objects={"scorecard": "the per-slice retrieval scorecard (metric, retriever) of step 2"},
    ),
    "8.2": Exercise(
        "hit rate@10 of the hybrid on the conversational follow-ups as typed",
        lambda rewrite_table: round(float(rewrite_table.loc[("follow-up as typed", "hybrid"), "hit@10"]), 3),
        "rewrite_table.loc[('follow-up as typed', 'hybrid'), 'hit@10']",
        objects={"rewrite_table": "the query-rewriting table, one row per (variant, retriever)"},
    ),
    "8.3": Exercise(
        "share of multi-hop queries with all their evidence in the hybrid's top 10",
        lambda by_kind: round(float(by_kind.loc[by_kind["kind"] == "multihop", "all evidence@10"].mean()), 3),
        "the 'all evidence@10' column of the per-kind table, row multihop",
        objects={"by_kind": "the per-query table with the columns 'kind' and 'all evidence@10'"},
    ),
    "9.1": Exercise(
        "nDCG@3 of request r2 in the router example",
        lambda: round(float(_router_table().loc["r2 SQL 3-table join", "nDCG@3"]), 2),
        "grades [0, 3, 2] against the ideal [3, 2, 2]: DCG = 3/log2(3) + 2/2, IDCG = 3 + 2/log2(3) + 2/2",
        tol=0.005,
    ),
    "9.2": Exercise(
        "mean cascade regret when r3 is routed to large first",
        _regret_with_r3_large_first,
        "r3's regret becomes 0; the others stay 0.3, 0.4 and 0.0; average the four",
        tol=0.001,
    ),
    "9.3": Exercise(
        "share of requests the real-token filter sends to mini at k=10",
        lambda by_k: round(float(by_k.loc[10, "share to mini"]), 3),
        "stats(10)['share to mini']: requests whose prompt is over nano's 1,024 tokens but within mini's 2,048",
        tol=0.001,
        objects={"by_k": "the routing table per k (one row per k, column 'share to mini')"},
    ),
}


def _describe(ex: Exercise, name: str) -> str:
    what = ex.objects.get(name)
    return f"{name} ({what})" if what else name


def _expected(ex: Exercise, number: str, objects: dict) -> Any:
    missing = [name for name in ex.needs if name not in objects]
    if missing:
        name = missing[0]
        raise ValueError(
            f"exercise {number} is checked against the chapter's {_describe(ex, name)}: "
            f"pass it by name, check.exercise({number!r}, answer, {name}={name})"
        )
    try:
        return ex.expected(**{name: objects[name] for name in ex.needs})
    except (KeyError, IndexError, AttributeError, TypeError) as err:
        given = ", ".join(_describe(ex, name) for name in ex.needs)
        raise ValueError(
            f"exercise {number} could not read its value from {given}: {type(err).__name__} {err}; "
            "pass the chapter's own object, unchanged"
        ) from None


def not_answered(number: str) -> str:
    """The line a check prints for an answer that is still ``None`` (the student copy's check cells)."""
    return f"Exercise {number}: not answered yet - replace None with your answer."


def exercise(number: str, answer: Any, **objects: Any) -> None:
    """Print whether ``answer`` solves exercise ``number`` (e.g. ``"3.1"``).

    NumPy arrays and scalars are compared as the equivalent list or number. Some exercises check an answer
    against the chapter's own objects (``check.exercise("5.3", answer, table=table)``), so the check computes
    nothing the chapter has already computed; the error for a missing object names it.
    """
    if not isinstance(number, str):
        raise ValueError(
            f'number must be the exercise\'s number as a string, e.g. "3.1", got {type(number).__name__} '
            f"{number!r} (as a float, 3.10 and 3.1 would be the same)"
        )
    if number not in EXERCISES:
        raise ValueError(f"unknown exercise {number!r}; this chapter's are {sorted(EXERCISES)}")
    ex = EXERCISES[number]
    unknown = sorted(set(objects) - set(ex.needs))
    if unknown:
        takes = f"only {', '.join(ex.needs)}" if ex.needs else "no chapter object"
        raise ValueError(f"exercise {number} takes {takes}; got {', '.join(unknown)}")
    if answer is None or answer is Ellipsis:
        print(not_answered(number))
    elif _same(answer, _expected(ex, number, objects), ex.tol):
        print(f"Exercise {number}: correct.")
    else:
        print(f"Exercise {number}: not yet. Hint: {ex.hint}.")
