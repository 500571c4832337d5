"""Exercises of chapter 09 router evaluation: expected values from the toys or the chapter's own objects."""

from __future__ import annotations

from collections.abc import Mapping

from labkit import toys
from labkit.exercises._base import Exercise

R3 = "r3 RAG 80k-token context"


def _router_table(ranking: Mapping[str, list[str]] | None = None):
    from labkit.router import evaluate_router

    return evaluate_router(ranking or toys.ROUTER_RANKING, toys.ROUTER_PASS, toys.ROUTER_COST, k=3)


def _regret_with_r3_large_first() -> float:
    first, second, *rest = toys.ROUTER_RANKING[R3]  # xl, large, ...: swap the first two
    ranking = dict(toys.ROUTER_RANKING, **{R3: [second, first, *rest]})
    return round(float(_router_table(ranking).attrs["mean"]["regret"]), 3)


EXERCISES: dict[str, Exercise] = {
    "9.1": Exercise(
        "nDCG@3 of request r2 in the router example",
        lambda: round(float(_router_table().loc["r2 SQL 3-table join", "nDCG@3"]), 2),
        "grades [0, 3, 2] against the ideal [3, 2, 2]: DCG = 3/log2(3) + 2/2, IDCG = 3 + 2/log2(3) + 2/2",
    ),
    "9.2": Exercise(
        "mean cascade regret when r3 is routed to large first",
        _regret_with_r3_large_first,
        "r3's regret becomes 0; the others stay 0.3, 0.4 and 0.0; average the four",
    ),
    "9.3": Exercise(
        "share of requests the real-token filter sends to mini at k=10",
        lambda by_k: round(float(by_k.loc[10, "share to mini"]), 3),
        "stats(10)['share to mini']: requests whose prompt is over nano's 1,024 tokens but within mini's 2,048",
        objects={"by_k": "the routing table per k (one row per k, column 'share to mini')"},
    ),
}
