"""A real cascade: the small model answers first; the large one only when the small answer fails a check.

Taught in ``09_router_eval``, where :mod:`labkit.measures.router` evaluates routers as rankings over models. Here the
models are real (the local 0.5B and 1.5B readers of chapter 06, replayed from their recordings), so each
request has measured outcomes:

- :func:`model_answers`: one model's answer to each request (chapter 07's reader prompt over the same
  passages, so the 1.5B's answers are chapter 07's), with the tokens and seconds the call took;
- :func:`grounded`: the escalation check, computable at serving time (no reference answer): the small answer
  does not decline and every claim passes :func:`labkit.judges.faithfulness.lexical_judge` against the passages;
- :func:`cascade_table`: per request, what the small-only, large-only and cascade strategies answer, whether
  that is correct (a ``check(answer, query)`` of :mod:`labkit.judges.correctness`), and what it cost (the calls made:
  the cascade pays for both models when it escalates);
- :func:`strategy_summary`: pass rate (Wilson 95 %), mean tokens and seconds, escalation rate, and a hosted
  price column; :func:`passing_sets`: each request's passing models, for :func:`labkit.measures.router.evaluate_router`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from labkit.core import args
from labkit.generation import reader as rd
from labkit.generation.llm.cassette import Completion
from labkit.generation.llm.usage import HOSTED_PRICES, LEDGER
from labkit.generation.reader import says_dont_know
from labkit.judges import faithfulness
from labkit.measures import stats

__all__ = ["ask", "model_answers", "grounded", "cascade_table", "strategy_summary", "passing_sets", "request_view",
           "outcome_label", "STRATEGIES"]  # fmt: skip

STRATEGIES = ("small only", "large only", "cascade")
_COST = ("prompt tokens", "completion tokens", "seconds")


def ask(client: Any, prompt: str, max_tokens: int | None = None) -> Any:
    """``client``'s Completion for ``prompt`` (text, tokens, seconds), counted in ``llm.usage_table``.

    A client without ``complete`` (a plain function, as in tests) gives a Completion with unknown cost.
    """

    if not callable(client) and not hasattr(client, "complete"):
        raise ValueError(f"client must be a labkit.generation.llm client such as llm.from_env(), got {client!r:.60}")
    if not hasattr(client, "complete"):
        text = client(prompt, max_tokens=max_tokens)
        if not isinstance(text, str):
            raise ValueError(f"client returned {type(text).__name__}, not text")
        return Completion(text)
    done = client.complete(prompt, max_tokens=max_tokens)
    LEDGER.add(client.model, "replayed" if getattr(client, "mode", "") == "replay" else "live", done)
    return done


def model_answers(queries: Sequence[Any], contexts: Mapping[str, Sequence[str]], client: Any, model: str = ""):
    """One row per query: the reader's answer over ``contexts[qid]`` (passages) and what the call cost."""
    import pandas as pd

    queries = args.queries("queries", queries, allow_empty=False, example="handbook().queries")
    args.mapping("contexts", contexts, example="{qid: [passage, ...]}")
    model = model or getattr(client, "model", "") or "model"
    rows = []
    for q in queries:
        if q.qid not in contexts:
            raise ValueError(f"contexts has no passages for query {q.qid!r}")
        done = ask(client, rd.reader_prompt(q.search_text, list(contexts[q.qid]), "lenient"), rd.MAX_TOKENS)
        rows.append({"qid": q.qid, "model": model, "answer": done.text.strip(), "prompt tokens": done.prompt_tokens,
                     "completion tokens": done.completion_tokens, "seconds": done.seconds})  # fmt: skip
    return pd.DataFrame(rows)


def grounded(answer: str, passages: Sequence[str]) -> bool:
    """The cascade's check: True (keep the small answer) when it does not decline and every claim passes the
    lexical judge against the passages; False sends the request to the large model."""

    answer = args.text("answer", answer, allow_empty=True)
    passages = args.strings("passages", passages, allow_empty=False, example='["first passage"]')
    if not answer.strip() or says_dont_know(answer):
        return False
    context = "\n\n".join(passages)
    return all(faithfulness.lexical_judge(context, c).supported for c in faithfulness.split_claims(answer))


def _answers(name: str, table: Any) -> dict[str, dict]:
    for col in ("qid", "model", "answer", *_COST):
        if col not in getattr(table, "columns", ()):
            raise ValueError(f"{name} must be a table from model_answers(...) (it needs {col!r})")
    if table["model"].nunique() != 1:
        raise ValueError(f"{name} must hold one model's answers, got models {sorted(table['model'].unique())}")
    return {r["qid"]: r for r in table.to_dict("records")}


def cascade_table(
    small: Any,
    large: Any,
    queries: Sequence[Any],
    contexts: Mapping[str, Sequence[str]],
    check: Callable[[str, Any], Any],
    accept: Callable[[str, Sequence[str]], bool] = grounded,
):
    """Per request: each model's answer and correctness, the cascade's choice, and each strategy's cost.

    ``check(answer, query)`` decides correctness (True/False; None when it cannot judge: such requests stay
    in the table with None and are left out of :func:`strategy_summary`'s rates). ``accept(answer, passages)``
    is the serving-time check that keeps the small answer. Costs are the sums over the calls a strategy makes.
    """
    import pandas as pd

    if not callable(check) or not callable(accept):
        raise ValueError("check(answer, query) and accept(answer, passages) must be functions")
    s, g = _answers("small", small), _answers("large", large)
    queries = args.sequence("queries", queries, allow_empty=False)
    args.mapping("contexts", contexts, example="{qid: [passage, ...]}")
    rows = []
    for q in queries:
        if q.qid not in s or q.qid not in g:
            raise ValueError(f"query {q.qid!r} has no answer in {'small' if q.qid not in s else 'large'}")
        a, b = s[q.qid], g[q.qid]
        kept = bool(accept(a["answer"], list(contexts[q.qid])))
        ok_small, ok_large = check(a["answer"], q), check(b["answer"], q)
        row = {"qid": q.qid, "small": a["model"], "large": b["model"], "small answer": a["answer"],
               "large answer": b["answer"], "small correct": ok_small, "large correct": ok_large,
               "escalated": not kept, "cascade correct": ok_small if kept else ok_large}  # fmt: skip
        for col in _COST:
            x, y = a[col], b[col]
            row[f"small only {col}"], row[f"large only {col}"] = x, y
            row[f"cascade {col}"] = x if kept or x is None or y is None else x + y
            if not kept and (x is None or y is None):
                row[f"cascade {col}"] = None
        rows.append(row)
    return pd.DataFrame(rows).set_index("qid")


def strategy_summary(table, prices: Mapping[str, tuple[float, float]] | None = None):
    """Per strategy: requests judged, pass rate with its Wilson 95 % interval, mean tokens and seconds per
    request, the share escalated, and USD per 1,000 requests at ``prices`` (model -> USD per 1M prompt and
    completion tokens; default: every call priced as :data:`labkit.generation.llm.HOSTED_PRICES` ``gpt-4o-mini``)."""
    import pandas as pd

    args.table("table", table, example="run_cascade(...)")

    price_in, price_out, _ = HOSTED_PRICES["gpt-4o-mini"]
    if prices is not None:
        args.mapping("prices", prices, example='{"qwen2.5-coder-0.5b-instruct-q4_k_m": (0.15, 0.60)}')
    rows = []
    for name in STRATEGIES:
        col = {"small only": "small correct", "large only": "large correct", "cascade": "cascade correct"}[name]
        judged = table[col][table[col].notna()].astype(bool)
        p, low, high = stats.wilson(int(judged.sum()), len(judged)) if len(judged) else (float("nan"),) * 3
        row = {"strategy": name, "requests": len(judged), "pass rate": p, "low": low, "high": high}
        for c in _COST:
            row[f"mean {c}"] = pd.to_numeric(table[f"{name} {c}"], errors="coerce").mean()
        row["escalated"] = float(table["escalated"].mean()) if name == "cascade" else float(name == "large only")
        if prices is None:
            usd = row["mean prompt tokens"] * price_in + row["mean completion tokens"] * price_out
        else:
            usd = _usd(table, name, prices)
        row["USD per 1k requests"] = usd * 1000 / 1e6
        rows.append(row)
    return pd.DataFrame(rows).set_index("strategy")


def _usd(table, name: str, prices: Mapping[str, tuple[float, float]]) -> float:
    """Mean USD x 1e6 per request when each model has its own price (the cascade pays both on escalation)."""
    import numpy as np

    def cost(model: str, prompt: Any, completion: Any) -> float:
        if model not in prices:
            raise ValueError(f"prices has no entry for model {model!r}")
        p_in, p_out = (args.finite_number(f"prices[{model!r}]", v, minimum=0) for v in prices[model])
        return float(prompt) * p_in + float(completion) * p_out

    out = []
    for r in table.to_dict("records"):
        small = cost(r["small"], r["small only prompt tokens"], r["small only completion tokens"])
        large = cost(r["large"], r["large only prompt tokens"], r["large only completion tokens"])
        out.append(
            {"small only": small, "large only": large, "cascade": small + large if r["escalated"] else small}[name]
        )
    return float(np.mean(out))


def passing_sets(table) -> tuple[dict[str, set[str]], list[str]]:
    """``({qid: passing models}, qids no model passes)`` for :func:`labkit.measures.router.evaluate_router`, which
    cannot grade a request no model passes (report how many were left out). Unjudged requests are left out."""
    import pandas as pd

    args.table("table", table, example="run_cascade(...)")

    passing: dict[str, set[str]] = {}
    none_pass: list[str] = []
    for qid, r in table.iterrows():
        if pd.isna(r["small correct"]) or pd.isna(r["large correct"]):
            continue
        ok = {m for m, c in ((r["small"], r["small correct"]), (r["large"], r["large correct"])) if c}
        if ok:
            passing[qid] = ok
        else:
            none_pass.append(qid)
    return passing, none_pass


def request_view(table, qid: str, question: str = "") -> dict[str, Any]:
    """One request of :func:`cascade_table` as a learner reads it: both answers, their correctness, the check's
    decision, and what each strategy paid (tokens and seconds)."""
    qid = args.text("qid", qid)
    if qid not in getattr(table, "index", ()):
        raise ValueError(f"qid {qid!r} is not a request of the table (its index: {list(table.index)[:3]} ...)")
    r = table.loc[qid]
    cost = {name: {c: r[f"{name} {c}"] for c in _COST} for name in STRATEGIES}

    def flag(x: Any) -> bool | None:  # numpy's bools print as np.True_; None / NaN: not judged
        return None if x is None or x != x else bool(x)

    return {
        "qid": qid,
        "question": question,
        "small": r["small"],
        "large": r["large"],
        "small answer": r["small answer"],
        "large answer": r["large answer"],
        "small correct": flag(r["small correct"]),
        "large correct": flag(r["large correct"]),
        "escalated": bool(r["escalated"]),
        "cascade correct": flag(r["cascade correct"]),
        "cost": cost,
    }


def outcome_label(row: Any) -> str:
    """A short tag of what the cascade did with one request: ``kept, right`` / ``kept, not right`` /
    ``escalated, small was right`` / ``escalated, small was not right``."""
    try:
        escalated, small_correct = row["escalated"], row["small correct"]
    except (KeyError, TypeError, IndexError):
        raise ValueError(
            f"row must be a row of the cascade's table, with 'escalated' and 'small correct'; got {row!r:.60}"
        ) from None
    if not escalated:
        return "kept, right" if small_correct else "kept, not right"
    return "escalated, small was right" if small_correct else "escalated, small was not right"
