"""A judge is a classifier: its verdicts against hand labels, with intervals (section 7.8, and Chapter 5's rule).

Taught in 06_faithfulness. "Pass" means *supported*; "fail" means *unsupported* or *contradicted*.

- :func:`verdict_table` runs judges over labelled claims: one row per claim, one column per judge (the verdict,
  or None where the judge's reply could not be read).
- :func:`judge_report` scores each judge against the labels: TPR and TNR with bootstrap 95% intervals, accuracy,
  the number of labels behind each rate, and the judge's errors (counted, never NaN).
- :func:`confusion` is the 3 × 3 table of label × verdict for one judge.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from labkit import SEED, args, stats
from labkit.faithfulness import VERDICTS, Verdict

__all__ = ["verdict_table", "judge_report", "confusion", "always_supported"]


def always_supported(context: str, claim: str) -> Verdict:
    """The judge that says "supported" to everything: what accuracy alone would reward."""
    return Verdict(claim, "supported")


def verdict_table(labels: Sequence[Mapping[str, Any]], judges: Mapping[str, Callable[[str, str], Verdict]]):
    """``labels`` rows (claim, context, label, ...) with one extra column per judge holding its verdict."""
    import pandas as pd

    labels = args.sequence("labels", labels, allow_empty=False)
    if not judges:
        raise ValueError("judges must name at least one judge, e.g. {'1.5B': faithfulness.model_judge(llm)}")
    rows = []
    for i, row in enumerate(labels):
        if not isinstance(row, Mapping) or not {"claim", "context", "label"} <= set(row):
            raise ValueError(f"labels[{i}] needs claim, context and label")
        if row["label"] not in VERDICTS:
            raise ValueError(f"labels[{i}]['label'] must be one of {VERDICTS}, got {row['label']!r}")
        out = dict(row)
        for name, judge in judges.items():
            v = judge(row["context"], row["claim"])
            out[name] = v.verdict
            out[f"{name} quote"] = v.quote
            out[f"{name} guarded"] = v.guarded
        rows.append(out)
    return pd.DataFrame(rows)


def judge_report(table, judges: Sequence[str], n_boot: int = 2000, seed: int = SEED):
    """TPR / TNR / accuracy of each judge column of :func:`verdict_table` against ``label``, with intervals.

    A claim whose verdict is None (a judge error) counts as the judge *failing* the claim for the rates (it
    would not be reported as supported) and is counted in ``errors``.
    """
    import numpy as np
    import pandas as pd

    true = (table["label"] == "supported").to_numpy()
    if true.all() or not true.any():
        raise ValueError("the labels need both supported and not-supported claims to measure TPR and TNR")
    out = []
    for name in judges:
        if name not in table:
            raise ValueError(f"judges names {name!r}, which is not a column of the table")
        pred = (table[name] == "supported").to_numpy()
        errors = int(table[name].isna().sum())
        tpr = stats.bootstrap_ci(pred[true].astype(float), n=n_boot, seed=seed)
        tnr = stats.bootstrap_ci((~pred[~true]).astype(float), n=n_boot, seed=seed)
        acc = stats.bootstrap_ci((pred == true).astype(float), n=n_boot, seed=seed)
        out.append(
            {
                "judge": name,
                "TPR": tpr[0],
                "TPR 95% CI": f"[{tpr[1]:.2f}, {tpr[2]:.2f}]",
                "TNR": tnr[0],
                "TNR 95% CI": f"[{tnr[1]:.2f}, {tnr[2]:.2f}]",
                "accuracy": acc[0],
                "says supported": float(np.mean(pred)),
                "errors": errors,
                "labels": len(true),
                "true pass / fail": f"{int(true.sum())} / {int((~true).sum())}",
            }
        )
    return pd.DataFrame(out).set_index("judge")


def confusion(table, judge: str):
    """Label (rows) × the judge's verdict (columns), counts; ``error`` for unreadable replies."""
    import pandas as pd

    if judge not in table:
        raise ValueError(f"judge must be a column of the table, got {judge!r}")
    verdict = table[judge].fillna("error")
    cols = [*VERDICTS, "error"]
    return (
        pd.crosstab(pd.Categorical(table["label"], VERDICTS), pd.Categorical(verdict, cols), dropna=False)
        .rename_axis(index="hand label", columns=f"{judge} says")
        .astype(int)
    )
