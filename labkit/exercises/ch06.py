"""Exercises of chapter 06 faithfulness: expected values from the toys or the chapter's own objects."""

from __future__ import annotations

from labkit.exercises._base import Exercise


def _always_supported_tnr(table) -> float:
    fails = table[table["label"] != "supported"]
    return float((fails["always supported"] != "supported").mean())


EXERCISES: dict[str, Exercise] = {
    "6.1": Exercise(
        "faithfulness score of the source's toy answer (2 of 3 claims supported)",
        lambda: round(2 / 3, 2),
        "supported claims / all claims, rounded to 2 decimals",
    ),
    "6.2": Exercise(
        "TNR of the always-supported judge on the test split",
        _always_supported_tnr,
        "TNR = the share of not-supported claims that the judge rejects; this judge rejects none",
        objects={"table": "the test split's verdict table (columns 'label' and 'always supported')"},
    ),
    "6.3": Exercise(
        "Rogan-Gladen corrected rate for p_obs 0.8, TPR 0.9, TNR 0.6",
        lambda: round((0.8 + 0.6 - 1) / (0.9 + 0.6 - 1), 3),
        "(p_obs + TNR - 1) / (TPR + TNR - 1)",
        tol=0.0005,
    ),
    "6.4": Exercise(
        "dev verdicts of the 1.5B judge overruled by the quote guard",
        lambda table: int(table["1.5B + quote guard guarded"].sum()),
        "sum the column '1.5B + quote guard guarded' of the dev table",
        tol=0,
        objects={"table": "the dev split's verdict table (column '1.5B + quote guard guarded')"},
    ),
}
