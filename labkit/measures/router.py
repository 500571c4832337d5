"""A model router evaluated as a retriever, and the context-window filter in front of it.

Taught in ``09_router_eval``.

The router ranks models for a request; "relevant" models are the ones whose answer passes. Grades:
3 = the cheapest passing model, 2 = passes but costs more, 0 = fails. Then MRR, Hit@1 and nDCG@k
are the usual retrieval metrics (:mod:`labkit.measures.metrics`), with the ideal taken over *all* models
(trec_eval's convention), and the **cascade regret** is what a try-in-order cascade pays beyond the
cheapest passing model.

For RAG requests the prompt length depends on ``k`` and the chunk size, so a hard filter drops
models whose context window is too small. Filtering on an estimate (characters / 4) instead of a
real token count can drop a model that fits or keep one that overflows: :func:`window_filter_errors`
counts both, and the filter's **recall**: the share of requests for which the right model (the cheapest
one whose window really holds the prompt) survives the filter. The source defines that recall with the
cheapest *passing* model; without pass labels, a model that holds the prompt stands in for one that passes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from labkit.core import args
from labkit.measures import metrics

__all__ = [
    "grade",
    "evaluate_router",
    "cheapest_fitting",
    "window_filter_errors",
    "chars_over_4",
    "rag_prompts",
    "rag_prompt_parts",
    "RAG_INSTRUCTION",
    "routing_at_k",
]


def _check_cost(cost: Any) -> Mapping[str, float]:
    args.mapping("cost", cost, example='{"nano": 0.1, "mini": 0.4}')
    if not cost:
        raise ValueError('cost is empty: give each model\'s price, e.g. {"nano": 0.1, "mini": 0.4}')
    for m, c in cost.items():
        args.finite_number(f"cost[{m!r}]", c, minimum=0, hint="a price per 1M tokens")
    return cost


def _check_models(name: str, models: Any, cost: Mapping[str, float]) -> set[str]:
    out = set(args.strings(name, models, example='{"mini", "mid"}'))
    unknown = sorted(out - set(cost))
    if unknown:
        raise ValueError(f"{name} names model {unknown[0]!r}, which has no cost; known models: {sorted(cost)}")
    return out


def _check_windows(windows: Any, cost: Mapping[str, float]) -> Mapping[str, int]:
    args.mapping("windows", windows, example='{"nano": 1024, "mini": 2048}')
    if not windows:
        raise ValueError('windows is empty: give each model\'s context window, e.g. {"nano": 1024}')
    for m, n in windows.items():
        args.whole_number(f"windows[{m!r}]", n, hint="a context window in tokens")
        if m not in cost:
            raise ValueError(f"windows names model {m!r}, which has no cost; known models: {sorted(cost)}")
    return windows


def _grade(model: str, passing: set[str], cost: Mapping[str, float]) -> int:
    if model not in cost:
        raise ValueError(f"model {model!r} has no cost; known models: {sorted(cost)}")
    if model not in passing:
        return 0
    return 3 if cost[model] == min(cost[m] for m in passing) else 2


def grade(model: str, passing: set[str], cost: Mapping[str, float]) -> int:
    """3 = the cheapest passing model, 2 = passes but is not the cheapest, 0 = fails.

    Costs must be finite numbers >= 0 (a NaN cost would make "cheapest" depend on the order of the models).
    """
    cost = _check_cost(cost)
    passing = _check_models("passing", passing, cost)
    return _grade(model, passing, cost)


def evaluate_router(
    rankings: Mapping[str, Sequence[str]], passing: Mapping[str, set[str]], cost: Mapping[str, float], k: int = 3
):
    """One row per request: grades in router order, RR, hit@1, nDCG@k and cascade regret; ``.attrs["mean"]``.

    A request no model passes is an error: regret and the ideal ordering are undefined for it.
    """
    import pandas as pd

    k = args.whole_number("k", k)
    cost = _check_cost(cost)
    args.mapping("rankings", rankings, example='{"r1": ["mini", "nano", "mid"]}')
    args.ids_as_text("rankings' keys", rankings)
    passing = args.by_id("passing", passing, example='{"r1": {"nano", "mini"}}')
    if not rankings:
        raise ValueError("rankings is empty: give the router's ranking of the models for each request")
    rows = []
    for req, ranking in rankings.items():
        ranking = args.ranking(f"rankings[{req!r}]", ranking, example='["mini", "nano", "mid"]')
        ok = _check_models(f"passing[{req!r}]", passing.get(str(req), set()), cost)
        if not ok:
            raise ValueError(f"request {req!r}: no model passes, so the router cannot be graded on it")
        if len(set(ranking)) != len(ranking):
            raise ValueError(f"request {req!r}: the router ranks a model twice")
        g = [_grade(m, ok, cost) for m in ranking]
        ideal = [_grade(m, ok, cost) for m in cost]
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
    return len(args.text("text", text, allow_empty=True)) // 4


def _cheapest(n_tokens: int, windows: Mapping[str, int], cost: Mapping[str, float]) -> str | None:
    fits = [m for m in windows if windows[m] >= n_tokens]
    return min(fits, key=lambda m: (cost[m], m)) if fits else None


def cheapest_fitting(n_tokens: int, windows: Mapping[str, int], cost: Mapping[str, float]) -> str | None:
    """The cheapest model whose context window holds ``n_tokens``; ``None`` if none does."""
    n_tokens = args.whole_number("n_tokens", n_tokens, minimum=0)
    cost = _check_cost(cost)
    windows = _check_windows(windows, cost)
    return _cheapest(n_tokens, windows, cost)


def _token_counts(name: str, values: Any, minimum: int = 0) -> list[int]:
    items = args.sequence(name, values, example="[812, 1290, 2044]")
    return [args.whole_number(f"{name}[{i}]", v, minimum=minimum) for i, v in enumerate(items)]


def window_filter_errors(
    true_tokens: Sequence[int], estimated: Sequence[int], windows: Mapping[str, int], cost: Mapping[str, float]
) -> dict[str, Any]:
    """How often filtering on an estimate picks a different cheapest model than the true token count.

    The filter keeps every model whose window holds the *estimated* prompt, then the cheapest one kept is
    chosen. ``overflow``: the chosen model's window is smaller than the real prompt (the prompt would be cut).
    ``overpay``: the estimate drops a model that fits and the choice is a pricier one. ``recall``: among the
    requests some model can hold, the share for which the right model (the cheapest whose window holds the
    real prompt) survives the filter; ``None`` when no request fits any model. When no two models cost the
    same, a request that loses its right model is overpaid, so ``recall == 1 - overpay`` whenever every request
    fits some model: the filter's recall failures are its overpays, and its overflows are failures of the other
    kind (it kept a model it should have dropped).
    """
    true_tokens = _token_counts("true_tokens", true_tokens)
    estimated = _token_counts("estimated", estimated)
    if len(true_tokens) != len(estimated):
        raise ValueError("true_tokens and estimated must have one value per request")
    if not true_tokens:
        raise ValueError("no requests given")
    cost = _check_cost(cost)
    windows = _check_windows(windows, cost)
    overflow = overpay = kept = fitting = 0
    for t, e in zip(true_tokens, estimated, strict=True):
        right, chosen = _cheapest(t, windows, cost), _cheapest(e, windows, cost)
        if right is not None:
            fitting += 1
            kept += windows[right] >= e
        if chosen is not None and windows[chosen] < t:
            overflow += 1
        elif chosen != right and right is not None and (chosen is None or cost[chosen] > cost[right]):
            overpay += 1
    n = len(true_tokens)
    return {
        "requests": n,
        "overflow": overflow / n,
        "overpay": overpay / n,
        "recall": kept / fitting if fitting else None,
    }


RAG_INSTRUCTION = "Answer the question using only the numbered passages; say so if they do not contain the answer."


def rag_prompt_parts(
    queries: Sequence[Any], run: Mapping[str, Sequence[str]], texts: Mapping[str, str], k: int
) -> list[list[str]]:
    """Each query's :func:`rag_prompts` prompt as its parts: the instruction with the question, then each of its
    top ``k`` chunks, numbered. The prompt is the parts joined by whitespace, so a tokenizer that splits at
    whitespace counts it as the sum of its parts (``embeddings.count_tokens_of_parts``): a part shared by many
    prompts and many *k* is counted once."""
    k = args.whole_number("k", k)
    queries = args.queries("queries", queries)
    run = args.by_id("run", run, example='{"q1": ["hr-leave#0", ...]}')
    args.mapping("texts", texts, example="{chunk.id: chunk.text for chunk in chunks}")
    out = []
    for q in queries:
        top = args.top_k(run, q.qid, k, texts)
        head = f"{RAG_INSTRUCTION}\n\nQuestion: {q.search_text}\n\nPassages:"
        out.append([head, *(f"[{i}] {texts[c]}" for i, c in enumerate(top, start=1))])
    return out


def rag_prompts(
    queries: Sequence[Any], run: Mapping[str, Sequence[str]], texts: Mapping[str, str], k: int
) -> list[str]:
    """The RAG prompt of each query: an instruction, the question, and its top ``k`` chunks, numbered."""
    return [parts[0] + "\n" + "\n\n".join(parts[1:]) for parts in rag_prompt_parts(queries, run, texts, k)]


def routing_at_k(
    true_tokens: Sequence[int], estimated: Sequence[int], windows: Mapping[str, int], cost: Mapping[str, float]
):
    """What one ``k`` costs: prompt sizes, the cheapest model that fits, the price, and the filter's errors.

    ``$ per 1k requests`` averages over the requests some model can take (NaN when none can); the
    ``share to`` columns count the others as going nowhere. ``filter recall``, ``filter overflow`` and
    ``filter overpay`` are those of :func:`window_filter_errors` (recall NaN when no request fits any model).
    """
    import numpy as np

    true_list = _token_counts("true_tokens", true_tokens, minimum=1)
    est_list = _token_counts("estimated", estimated)
    if len(true_list) != len(est_list):
        raise ValueError(
            f"true_tokens ({len(true_list)}) and estimated ({len(est_list)}) must have one value per request"
        )
    if not true_list:
        raise ValueError("true_tokens is empty: give one prompt size per request")
    cost = _check_cost(cost)
    windows = _check_windows(windows, cost)
    true = np.asarray(true_list, dtype=float)
    chosen = [_cheapest(t, windows, cost) for t in true_list]
    price = [t * cost[m] / 1e6 for t, m in zip(true_list, chosen, strict=True) if m]
    row = {
        "tokens p50": float(np.median(true)),
        "tokens p95": float(np.percentile(true, 95)),
        "estimate / true (median)": float(np.median(np.asarray(est_list, dtype=float) / true)),
        "$ per 1k requests": 1000 * float(np.mean(price)) if price else float("nan"),
    }
    row.update({f"share to {m}": sum(c == m for c in chosen) / len(chosen) for m in windows})
    errors = window_filter_errors(true_list, est_list, windows, cost)
    recall = errors["recall"]
    row.update(
        {
            "filter recall": float("nan") if recall is None else recall,
            "filter overflow": errors["overflow"],
            "filter overpay": errors["overpay"],
        }
    )
    return row
