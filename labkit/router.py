"""A model router evaluated as a retriever, and the context-window filter in front of it.

Taught in ``09_router_eval``.

The router ranks models for a request; "relevant" models are the ones whose answer passes. Grades:
3 = the cheapest passing model, 2 = passes but costs more, 0 = fails. Then MRR, Hit@1 and nDCG@k
are the usual retrieval metrics (:mod:`labkit.metrics`), with the ideal taken over *all* models
(trec_eval's convention), and the **cascade regret** is what a try-in-order cascade pays beyond the
cheapest passing model.

For RAG requests the prompt length depends on ``k`` and the chunk size, so a hard filter drops
models whose context window is too small. Filtering on an estimate (characters / 4) instead of a
real token count can drop a model that fits or keep one that overflows: :func:`window_filter_errors`
counts both.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from labkit import metrics

__all__ = [
    "grade",
    "evaluate_router",
    "cheapest_fitting",
    "window_filter_errors",
    "chars_over_4",
    "rag_prompts",
    "routing_at_k",
]


def grade(model: str, passing: set[str], cost: Mapping[str, float]) -> int:
    """3 = the cheapest passing model, 2 = passes but is not the cheapest, 0 = fails."""
    if model not in cost:
        raise ValueError(f"model {model!r} has no cost; known models: {sorted(cost)}")
    if model not in passing:
        return 0
    return 3 if cost[model] == min(cost[m] for m in passing) else 2


def evaluate_router(
    rankings: Mapping[str, Sequence[str]], passing: Mapping[str, set[str]], cost: Mapping[str, float], k: int = 3
):
    """One row per request: grades in router order, RR, hit@1, nDCG@k and cascade regret; ``.attrs["mean"]``.

    A request no model passes is an error: regret and the ideal ordering are undefined for it.
    """
    import pandas as pd

    rows = []
    for req, ranking in rankings.items():
        ok = set(passing.get(req, set()))
        if not ok:
            raise ValueError(f"request {req!r}: no model passes, so the router cannot be graded on it")
        if len(set(ranking)) != len(ranking):
            raise ValueError(f"request {req!r}: the router ranks a model twice")
        g = [grade(m, ok, cost) for m in ranking]
        ideal = [grade(m, ok, cost) for m in cost]
        first_ok = next((i for i, m in enumerate(ranking, start=1) if m in ok), None)
        if first_ok is None:
            raise ValueError(f"request {req!r}: the ranking never reaches a passing model; rank every model")
        spent = sum(cost[m] for m in ranking[:first_ok])
        rows.append(
            {
                "request": req,
                "grades": g,
                "RR": metrics.reciprocal_rank(g, len(g), thr=2),
                "hit@1": metrics.hit_at_k(g, 1, thr=2),
                f"nDCG@{k}": metrics.ndcg_at_k(g, k, all_grades=ideal),
                "regret": spent - min(cost[m] for m in ok),
            }
        )
    table = pd.DataFrame(rows).set_index("request")
    table.attrs["mean"] = table.drop(columns="grades").mean()
    return table


def chars_over_4(text: str) -> int:
    """The rough token estimate many routers use: one token per four characters."""
    return len(text) // 4


def cheapest_fitting(n_tokens: int, windows: Mapping[str, int], cost: Mapping[str, float]) -> str | None:
    """The cheapest model whose context window holds ``n_tokens``; ``None`` if none does."""
    fits = [m for m in windows if windows[m] >= n_tokens]
    return min(fits, key=lambda m: (cost[m], m)) if fits else None


def window_filter_errors(
    true_tokens: Sequence[int], estimated: Sequence[int], windows: Mapping[str, int], cost: Mapping[str, float]
) -> dict[str, Any]:
    """How often filtering on an estimate picks a different cheapest model than the true token count.

    ``overflow``: the estimate picks a model whose window is smaller than the real prompt (the
    prompt would be cut). ``overpay``: the estimate drops a model that fits and picks a pricier one.
    """
    if len(true_tokens) != len(estimated):
        raise ValueError("true_tokens and estimated must have one value per request")
    if not true_tokens:
        raise ValueError("no requests given")
    overflow = overpay = 0
    for t, e in zip(true_tokens, estimated, strict=True):
        right, chosen = cheapest_fitting(t, windows, cost), cheapest_fitting(e, windows, cost)
        if chosen is not None and windows[chosen] < t:
            overflow += 1
        elif chosen != right and right is not None and (chosen is None or cost[chosen] > cost[right]):
            overpay += 1
    n = len(true_tokens)
    return {"requests": n, "overflow": overflow / n, "overpay": overpay / n}


def rag_prompts(
    queries: Sequence[Any], run: Mapping[str, Sequence[str]], texts: Mapping[str, str], k: int
) -> list[str]:
    """The RAG prompt of each query: an instruction, the question, and its top ``k`` chunks, numbered."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a whole number >= 1, got {k!r}")
    out = []
    for q in queries:
        passages = "\n\n".join(f"[{i}] {texts[c]}" for i, c in enumerate(run[q.qid][:k], start=1))
        out.append(
            "Answer the question using only the numbered passages; say so if they do not contain the answer.\n\n"
            f"Question: {q.search_text}\n\nPassages:\n{passages}"
        )
    return out


def routing_at_k(
    true_tokens: Sequence[int], estimated: Sequence[int], windows: Mapping[str, int], cost: Mapping[str, float]
):
    """What one ``k`` costs: prompt sizes, the cheapest model that fits, the price, and the filter's errors."""
    import numpy as np

    true = np.asarray(true_tokens)
    chosen = [cheapest_fitting(int(t), windows, cost) for t in true]
    price = [t * cost[m] / 1e6 if m else float("nan") for t, m in zip(true, chosen, strict=True)]
    row = {
        "tokens p50": float(np.median(true)),
        "tokens p95": float(np.percentile(true, 95)),
        "estimate / true (median)": float(np.median(np.asarray(estimated) / true)),
        "$ per 1k requests": 1000 * float(np.nanmean(price)),
    }
    row.update({f"share to {m}": sum(c == m for c in chosen) / len(chosen) for m in windows})
    errors = window_filter_errors(true_tokens, estimated, windows, cost)
    row.update({"filter overflow": errors["overflow"], "filter overpay": errors["overpay"]})
    return row
