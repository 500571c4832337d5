"""Exercises of chapter 09 router evaluation: expected values from the toys or the chapter's own objects."""

from __future__ import annotations

from collections.abc import Mapping

from labkit.data import toys
from labkit.exercises._base import Exercise
from labkit.measures.router import evaluate_router

R3 = "r3 RAG 80k-token context"
R4 = "r4 intent classification"


def _router_table(ranking: Mapping[str, list[str]] | None = None):

    return evaluate_router(ranking or toys.ROUTER_RANKING, toys.ROUTER_PASS, toys.ROUTER_COST, k=3)


def _regret_with_r3_large_first() -> float:
    first, second, *rest = toys.ROUTER_RANKING[R3]  # xl, large, ...: swap the first two
    ranking = dict(toys.ROUTER_RANKING, **{R3: [second, first, *rest]})
    return round(float(_router_table(ranking).attrs["mean"]["regret"]), 3)


def _ndcg_with_nano_last_for_r4() -> float:
    ranking = dict(toys.ROUTER_RANKING, **{R4: [m for m in toys.ROUTER_RANKING[R4] if m != "nano"] + ["nano"]})
    return round(float(_router_table(ranking).loc[R4, "nDCG@3"]), 3)


def _recall_from_10_to_11(by_k, at_11) -> str:
    before, after = float(by_k.loc[10, "filter recall"]), float(at_11["filter recall"])
    return "higher" if after > before else "lower" if after < before else "same"


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
        "routing_stats(10)['share to mini']: requests whose prompt is over nano's 1,024 tokens but within mini's 2,048",
        objects={"by_k": "the routing table per k (one row per k, column 'share to mini')"},
    ),
    "9.4": Exercise(
        "predict r4's nDCG@3 once nano, which fails, moves from third place to last",
        _ndcg_with_nano_last_for_r4,
        "the top 3 become mini, mid, large with grades 3, 2, 2: compare them with the ideal top 3",
    ),
    "9.5": Exercise(
        "predict whether the filter's recall at k=11 is higher, lower or the same as at k=10",
        _recall_from_10_to_11,
        'answer "higher", "lower" or "same": at k=11 the median prompt reaches mini\'s window, and '
        "chars/4 misroutes the prompts near a window boundary",
        objects={
            "by_k": "the routing table per k (one row per k, column 'filter recall')",
            "at_11": "routing_stats(11), the routing figures at k = 11",
        },
    ),
}
