"""Exercises of chapter 04 (MRR, hit rate, lost in the middle): expected values from toys or chapter objects."""

from __future__ import annotations

from labkit.data import toys
from labkit.data.corpus import load_reference
from labkit.exercises._base import Exercise
from labkit.measures import metrics


def _toy_mrr(k: int) -> float:
    return sum(metrics.reciprocal_rank(r, k) for r in toys.MRR_TOY.values()) / len(toys.MRR_TOY)


def _toy_hit_rate(k: int) -> float:
    return sum(metrics.hit_at_k(r, k) for r in toys.MRR_TOY.values()) / len(toys.MRR_TOY)


def _liu_drop() -> float:

    liu = load_reference("lost_in_the_middle_liu2024")
    gpt = liu[(liu.n_docs == 20) & (liu.model == "GPT-3.5-Turbo (0613)")].set_index("position")
    return round(float(gpt.loc[1, "accuracy"] - gpt.loc[10, "accuracy"]), 1)


def _grows_more(runs, qrels) -> str:
    m = metrics.evaluate(runs["hybrid"], qrels, ("RR@5", "hit@5", "RR@10", "hit@10")).mean
    hit, mrr = m["hit@10"] - m["hit@5"], m["RR@10"] - m["RR@5"]
    return "hit rate" if hit > mrr else "MRR" if mrr > hit else "neither"


def _compared(narrow, wide) -> str:
    a, b = float(narrow[1]), float(wide[1])
    return "higher" if b > a else "lower" if b < a else "same"


def _u_at_5(table) -> int:
    rows = table[(table["condition"] == "position") & (table["n_docs"] == 5)]
    wide = rows.pivot_table(index="qid", columns="position", values="correct", aggfunc="first")
    return int((wide[1].astype(bool) & ~wide[3].astype(bool) & wide[5].astype(bool)).sum())


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
    "4.4": Exercise(
        "predict which grows more from k=5 to k=10 for the fused retriever: MRR or hit rate",
        _grows_more,
        'answer "MRR" or "hit rate": a query whose first relevant chunk is at rank 6-10 adds 1 to hit rate@10 '
        "but at most 1/6 to its reciprocal rank",
        objects={
            "runs": "the chapter's runs {retriever name: run}, with a 'hybrid' run",
            "qrels": "the chapter's chunk-level qrels",
        },
    ),
    "4.5": Exercise(
        "predict the accuracy at position 1 of a 2,000-word window against the 1,000-word one: higher, lower, same",
        _compared,
        'answer "higher", "lower" or "same": both windows show the gold passage at position 1; the wider one also '
        "shows more distractors, each one more chance to out-score the gold on word overlap",
        objects={
            "narrow": "the 1,000-word reader's accuracy by position, ours[cut.name]",
            "wide": "the 2,000-word reader's accuracy by position, from the exercise's run cell",
        },
    ),
    "4.6": Exercise(
        "questions whose verdicts follow a U at 5 passages: right with the gold at 1 and 5, not right at 3",
        _u_at_5,
        "take the position trials at n_docs = 5 and count the questions right at positions 1 and 5 but not at 3 "
        '(position_view.question_pattern gives "5: ✓✗✓" for them)',
        objects={"table": "the position study's table, ps.add_check(ps.run_study(...), ...)"},
    ),
}
