"""One question of the position study, for reading: every trial's answer and verdict, and one trial's passages
in the order the model got them.

Taught in ``04_mrr_hit_rate_lost_in_the_middle``, where :class:`labkit.ui.widgets.PositionExplorer` wraps
:func:`trial_view`. The trials and the tables come from :mod:`labkit.studies.position_study`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from labkit.core import args
from labkit.studies.position_study import (
    CONDITIONS,
    POSITIONS,
    arrange,
    check_contexts,
    ends_order,
    retrieved_position,
    scored_rows,
)

__all__ = ["trial_label", "trial_choices", "question_pattern", "trial_view", "reorder_verdicts"]


def trial_label(condition: str, n_docs: int, position: int | None = None) -> str:
    """A trial as the chapter names it: ``"closed book"``, ``"gold at 3 of 5"``, ``"ends order · 5 passages"``.

    The ends order's gold position depends on where the retriever ranked it, so its label leaves it out;
    ``"as retrieved · 5 passages"`` (:func:`trial_view`) names the ``position`` trial at that rank.
    """
    if condition == "closed-book":
        return "closed book"
    if condition == "oracle":
        return "oracle (gold alone)"
    if condition == "no gold":
        return f"no gold · {n_docs} passages"
    if condition == "ends":
        return f"ends order · {n_docs} passages"
    if condition == "position":
        return f"gold at {position} of {n_docs}"
    if condition == "padded":
        return f"gold first · {n_docs - 1} padding"
    raise ValueError(f"condition must be one of {CONDITIONS}, got {condition!r}")


def trial_choices(table) -> list[str]:
    """The trials every question of ``table`` has, by :func:`trial_label`, in the study's order, plus
    ``"as retrieved · n passages"`` for each size with an ends order (what :func:`trial_view` accepts)."""
    rows = scored_rows(table, "answer")
    labels: dict[str, set] = {}
    for r in rows.itertuples():
        position = None if r.position != r.position else int(r.position)  # NaN: closed book, no gold
        labels.setdefault(trial_label(r.condition, int(r.n_docs), position), set()).add(r.qid)
    everyone = rows["qid"].nunique()
    out = [label for label, qids in labels.items() if len(qids) == everyone]
    ends = sorted({int(n) for n in rows.loc[rows["condition"] == "ends", "n_docs"]})
    return out + [f"as retrieved · {n} passages" for n in ends]


def _mark(correct: Any) -> str:
    if correct is None or correct != correct:  # None or NaN: the check could not judge it
        return "?"
    return "✓" if correct else "✗"


def question_pattern(table, qid: str, column: str = "correct") -> str:
    """One question's verdicts at the positions every question was tried at: ``"5: ✓✗✓ · 10: ✓✓✗"``
    (``?``: not judged). A ✓ at both ends and a ✗ between is that question's own U."""
    scored = scored_rows(table, column)
    rows = scored[(scored["qid"] == qid) & (scored["condition"] == "position")]
    if rows.empty:
        raise ValueError(f"qid {qid!r} has no position trial in the table; pick one of its qids")
    parts = []
    for n in sorted(rows["n_docs"].unique()):
        at = {int(r.position): getattr(r, column) for r in rows[rows["n_docs"] == n].itertuples()}
        parts.append(f"{n}: " + "".join(_mark(at[p]) for p in POSITIONS.get(n, sorted(at)) if p in at))
    return " · ".join(parts)


def trial_view(table, contexts: Sequence[dict], qid: str, trial: str = "", queries: Mapping[str, Any] | None = None,
               column: str = "correct") -> dict:  # fmt: skip
    """Everything the study did with one question: each trial's answer and verdict (``answers``, one row per
    :func:`trial_label`, with the gold's position), and for the chosen ``trial`` (a label, or ``"as retrieved ·
    n passages"``; the first trial when empty) the passages in prompt order with the gold marked. ``queries``
    (qid -> Query) adds the reference answer."""
    import pandas as pd

    contexts = {c["qid"]: c for c in check_contexts(contexts)}
    if qid not in contexts:
        raise ValueError(f"qid {qid!r} is not a question of the study: pick one of {sorted(contexts)[:3]}, ...")
    context = contexts[qid]
    scored = scored_rows(table, column)
    rows = scored[scored["qid"] == qid]
    if rows.empty:
        raise ValueError(f"the table has no trial of {qid!r}: run_study(...) on its trials, then add_check(...)")
    if "model" in rows and rows["model"].nunique() > 1:
        raise ValueError("table holds several models: pass one model's rows (table[table.model == name])")
    answers, trials = {}, {}
    for r in rows.itertuples():
        position = None if r.position != r.position else int(r.position)  # NaN: closed book, no gold
        label = trial_label(r.condition, int(r.n_docs), position)
        gold_at = "-" if position is None else f"{position} of {int(r.n_docs)}"
        answers[label] = {"gold at": gold_at, "answer": r.answer, "verdict": _mark(getattr(r, column))}
        trials[label] = (r.condition, int(r.n_docs), position)
    retrieved = {n: retrieved_position(context, n) for c, n, _ in trials.values() if c == "ends"}
    trial = trial or next(iter(trials))
    for n, at in retrieved.items():
        if trial == f"as retrieved · {n} passages":
            trial = trial_label("position", n, at)
    if trial not in trials:
        raise ValueError(f"trial must be one of {list(trials)}, got {trial!r}")
    condition, n_docs, position = trials[trial]
    if condition == "closed-book":
        passages = []
    elif condition == "oracle":
        passages = [context["gold"]]
    elif condition == "no gold":
        passages = arrange(context, 1, n_docs)[1:]
    elif condition == "ends":
        ranked = arrange(context, retrieved[n_docs], n_docs)
        passages = [ranked[i - 1] for i in ends_order(n_docs)]
    else:
        passages = arrange(context, position, n_docs)
    reference = getattr(queries.get(qid), "answer", "") if queries else ""
    return {
        "qid": qid,
        "question": context["question"],
        "reference": reference,
        "trial": trial,
        "answer": answers[trial]["answer"],
        "verdict": answers[trial]["verdict"],
        "retrieved": {n: f"{at} of {n}" for n, at in retrieved.items()},
        "passages": [{"position": i, "gold": p == context["gold"], "text": p} for i, p in enumerate(passages, 1)],
        "answers": pd.DataFrame.from_dict(answers, orient="index").rename_axis("trial"),
        "pattern": question_pattern(rows, qid, column),
    }


def reorder_verdicts(table, contexts: Sequence[dict], n_docs: int, column: str = "correct"):
    """Per question (index ``qid``), the two 0/1 verdicts :func:`reorder_effect` compares: ``ends`` (the "best at
    both ends" trial) and ``as retrieved`` (the ``position`` trial at :func:`retrieved_position`), and ``gold
    moved`` (False when the retriever ranked the gold first, so only the distractors move). These are paired 0/1
    outcomes: give them to ``stats.interval_for("paired 0/1", ...)`` or a ``stats.Family`` (paired Newcombe and
    the exact McNemar p), not to a bootstrap of their differences, which collapses when few questions change."""
    import pandas as pd

    contexts = check_contexts(contexts)
    n_docs = args.whole_number("n_docs", n_docs, minimum=2)
    scored = scored_rows(table, column)
    if "model" in scored and scored["model"].nunique() > 1:
        raise ValueError("table holds several models: pass one model's rows (table[table.model == name])")
    rows = scored[scored["n_docs"] == n_docs]
    at = {(r.qid, r.condition, r.position): bool(getattr(r, column)) for r in rows.itertuples()}
    out = {}
    for c in contexts:
        r = retrieved_position(c, n_docs)
        ends = [k for k in at if k[0] == c["qid"] and k[1] == "ends"]
        if (c["qid"], "position", r) not in at or not ends:
            continue
        out[c["qid"]] = {"ends": int(at[ends[0]]), "as retrieved": int(at[(c["qid"], "position", r)]),
                         "gold moved": ends[0][2] != r}  # fmt: skip
    if not out:
        raise ValueError(f"no question has both its retrieved-position and its ends trial at n_docs={n_docs}")
    return pd.DataFrame.from_dict(out, orient="index").rename_axis("qid")
