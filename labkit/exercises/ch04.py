"""Exercises of chapter 04 (MRR, hit rate, lost in the middle): expected values from toys or chapter objects."""

from __future__ import annotations

from labkit import metrics, toys
from labkit.exercises._base import Exercise


def _toy_mrr(k: int) -> float:
    return sum(metrics.reciprocal_rank(r, k) for r in toys.MRR_TOY.values()) / len(toys.MRR_TOY)


def _toy_hit_rate(k: int) -> float:
    return sum(metrics.hit_at_k(r, k) for r in toys.MRR_TOY.values()) / len(toys.MRR_TOY)


def _liu_drop() -> float:
    from labkit.data import load_reference

    liu = load_reference("lost_in_the_middle_liu2024")
    gpt = liu[(liu.n_docs == 20) & (liu.model == "GPT-3.5-Turbo (0613)")].set_index("position")
    return round(float(gpt.loc[1, "accuracy"] - gpt.loc[10, "accuracy"]), 1)


EXERCISES: dict[str, Exercise] = {
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
}
