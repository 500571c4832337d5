"""A judge is a classifier: its verdicts against reference labels, with intervals (section 7.8, and Chapter 5's rule).

Taught in 06_faithfulness. "Pass" means *supported*; "fail" means *unsupported* or *contradicted*.

- :func:`verdict_table` runs judges over labelled claims: one row per claim, one column per judge (the verdict,
  or None where the judge's reply could not be read).
- :func:`labkit.measures.stats.judge_report` scores the verdict columns against the labels (``truth="label",
  passes="supported"``): TPR and TNR with Wilson 95 % intervals, J, accuracy, the counts behind each rate, and
  the judge's errors (a reply that could not be read fails the claim and is counted, never NaN).
- :func:`confusion` is the 3 × 3 table of label × verdict for one judge.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from labkit.core import args
from labkit.judges.construction import LABEL_OF
from labkit.judges.faithfulness import VERDICTS, Verdict
from labkit.measures.stats import fmt_ci, wilson

__all__ = ["verdict_table", "confusion", "by_operation"]


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


def confusion(table, judge: str):
    """Label (rows) × the judge's verdict (columns), counts; ``error`` for unreadable replies."""
    import pandas as pd

    args.table("table", table, example="verdict_table(...)")
    if judge not in table:
        raise ValueError(f"judge must be a column of the table, got {judge!r}")
    verdict = table[judge].fillna("error")
    cols = [*VERDICTS, "error"]
    return (
        pd.crosstab(pd.Categorical(table["label"], VERDICTS), pd.Categorical(verdict, cols), dropna=False)
        .rename_axis(index="reference label", columns=f"{judge} says")
        .astype(int)
    )


def by_operation(table, judges: Sequence[str]):
    """Per operation of :mod:`labkit.judges.construction` (rows) and judge (columns): the share the judge gets right,
    with its Wilson 95% interval. For the operations that keep a claim true it is the share called *supported*
    (the judge's TPR on them); for the others the share *not* called supported (its TNR on them). ``n`` is the
    claims of each operation; the last row, ``all altered``, pools the operations that make a claim false."""
    import pandas as pd

    judges = args.strings("judges", judges, allow_empty=False, example='["lexical", "1.5B"]')
    for name in ("operation", "label", *judges):
        if name not in getattr(table, "columns", ()):
            raise ValueError(f"table needs a column {name!r} (a verdict_table of constructed claims)")
    rows = {}
    groups = [(op, table[table["operation"] == op]) for op in LABEL_OF if (table["operation"] == op).any()]
    groups.append(("all altered", table[table["label"] != "supported"]))
    for op, part in groups:
        keep = LABEL_OF.get(op) == "supported"
        row = {"n": len(part), "reads as": "TPR" if keep else "TNR"}
        for judge in judges:
            right = int(((part[judge] == "supported") == keep).sum())
            row[judge] = fmt_ci(*wilson(right, len(part)), digits=2)
        rows[op] = row
    return pd.DataFrame(rows).T.rename_axis("operation")
