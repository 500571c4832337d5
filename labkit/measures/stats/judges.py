"""A judge measured against reference labels, and the pass rate corrected for its errors.

- :func:`judge_rates` — a binary judge against reference labels: TPR (true passes it calls pass), TNR (true fails
  it calls fail), accuracy, and the counts behind each.
- :func:`judge_report` — the same for every judge column of a table, each rate with its interval (Wilson by
  default): the one judge-vs-labels report of chapters 02, 06, 07 and 09.
- Is one judge better than another *on the same items*? That is a finding: the difference of their Youden's J
  as :func:`findings.derived_finding` with ``strata=`` the truth (the items resampled within each true class), in
  a declared :class:`findings.Family` when several are compared.
- :func:`rogan_gladen` — the pass rate corrected for the judge's errors (Rogan & Gladen 1978):
  ``θ = (p_obs + TNR − 1) / (TPR + TNR − 1)``, clipped to [0, 1]; undefined when ``TPR + TNR <= 1`` (a judge no
  better than a coin says nothing about the true rate). It assumes the judge's TPR and TNR on the labelled set
  are its rates on the items being judged: calibrate on items like them.
- :func:`corrected_rate_ci` — that corrected rate with a bootstrap interval that resamples both the labelled set
  (the judge's uncertainty) and the judged set (the sample's).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from labkit import SEED
from labkit.core import args
from labkit.measures.stats.intervals import bools, bootstrap_ci, wilson

__all__ = ["judge_rates", "judge_report", "rogan_gladen", "corrected_rate_ci", "label_budget"]


def judge_rates(predicted_pass: Sequence[bool], true_pass: Sequence[bool]) -> dict[str, Any]:
    """TPR, TNR and accuracy of a pass/fail judge against reference labels, with the counts behind them.

    TPR = P(judge says pass | truly pass); TNR = P(judge says fail | truly fail). A rate with no items behind
    it (no true fails in the labels, say) is None, never NaN.
    """
    pred, true = bools("predicted_pass", predicted_pass), bools("true_pass", true_pass)
    if len(pred) != len(true):
        raise ValueError(f"predicted_pass has {len(pred)} items but true_pass has {len(true)}: pair them one to one")
    tp = sum(p and t for p, t in zip(pred, true, strict=True))
    tn = sum((not p) and (not t) for p, t in zip(pred, true, strict=True))
    pos, neg = sum(true), len(true) - sum(true)
    return {
        "TPR": tp / pos if pos else None,
        "TNR": tn / neg if neg else None,
        "accuracy": (tp + tn) / len(true),
        "tp": tp,
        "tn": tn,
        "n_pass": pos,
        "n_fail": neg,
        "n": len(true),
    }


INTERVALS = ("wilson", "bootstrap")
MISSING = ("fail", "skip")


def _rate_ci(hits: int, n: int, interval: str, n_boot: int, seed: int) -> tuple[float, float, float]:
    if interval == "wilson":
        return wilson(hits, n)
    return bootstrap_ci([1.0] * hits + [0.0] * (n - hits), n=n_boot, seed=seed)


def judge_report(
    table: Any,
    judges: Sequence[str],
    truth: str,
    passes: Any = True,
    missing: str = "fail",
    interval: str = "wilson",
    n_boot: int = 2000,
    seed: int = SEED,
) -> Any:
    """Each judge column of ``table`` against its ``truth`` column: one row per judge.

    A *judge* is anything that says pass or fail: a model judge, a rule, a rater with a threshold. ``table`` has
    one row per item; an item *truly passes* when its ``truth`` value equals ``passes`` (``True``, or a label
    such as ``"supported"``), and a judge *says pass* when its value equals ``passes`` too. A judge value that is
    None / NaN is either an unreadable reply that counts as *failing* the item (``missing="fail"``: a judge
    error, counted in ``errors``), or an item the judge cannot judge, left out of its rates (``"skip"``: counted in
    ``left out``; a reference rule with no key number).

    Reports ``judged`` (items in the rates), ``says pass``, ``truly pass``, TPR = P(says pass | truly pass),
    TNR = P(says fail | truly fail), each with its 95 % interval (``interval="wilson"``, the default: the Wilson
    score interval, right for a proportion even at 0/n or n/n; ``"bootstrap"`` resamples the items), the counts
    behind them (``TPR n`` = ``35/49``), Youden's J = TPR + TNR − 1 (0 for a coin, 1 for a perfect judge: the
    denominator of the Rogan–Gladen correction) and the accuracy. The intervals' ends as numbers are in
    ``report.attrs["ends"]`` (``{judge: {"TPR": (low, high), "TNR": (low, high)}}``), which
    :func:`labkit.ui.plots.plot_judges` draws.
    """
    import pandas as pd

    if not isinstance(table, pd.DataFrame):
        raise ValueError(f"table must be a pandas DataFrame with one row per item, got {type(table).__name__}")
    if truth not in table.columns:
        raise ValueError(f"truth names {truth!r}, which is not a column of the table ({list(table.columns)})")
    judges = args.strings("judges", judges, allow_empty=False, unique=True, example='["lexical", "1.5B"]')
    if missing not in MISSING:
        raise ValueError(f"missing must be one of {MISSING} ('fail': a judge error fails the item), got {missing!r}")
    if interval not in INTERVALS:
        raise ValueError(f"interval must be one of {INTERVALS} (wilson for a proportion), got {interval!r}")
    if table[truth].isna().any():
        raise ValueError(f"the {truth!r} column has missing labels: label every item or drop the unlabelled ones")
    rows, ends = [], {}
    for name in judges:
        if name not in table.columns:
            raise ValueError(f"judges names {name!r}, which is not a column of the table ({list(table.columns)})")
        absent = table[name].isna()
        kept = table[~absent] if missing == "skip" else table
        true = (kept[truth] == passes).tolist()
        pred = [(not pd.isna(v)) and v == passes for v in kept[name]]
        if all(true) or not any(true):
            raise ValueError(
                f"{name!r}: the labels of its judged items need both passes and fails to measure TPR and TNR"
            )
        r = judge_rates(pred, true)
        tpr = _rate_ci(r["tp"], r["n_pass"], interval, n_boot, seed)
        tnr = _rate_ci(r["tn"], r["n_fail"], interval, n_boot, seed)
        ends[name] = {"TPR": (float(tpr[1]), float(tpr[2])), "TNR": (float(tnr[1]), float(tnr[2]))}
        rows.append(
            {
                "judge": name,
                "judged": r["n"],
                "left out" if missing == "skip" else "errors": int(absent.sum()),
                "says pass": sum(pred) / r["n"],
                "truly pass": r["n_pass"] / r["n"],
                "TPR": tpr[0],
                "TPR 95%": f"[{tpr[1]:.2f}, {tpr[2]:.2f}]",
                "TPR n": f"{r['tp']}/{r['n_pass']}",
                "TNR": tnr[0],
                "TNR 95%": f"[{tnr[1]:.2f}, {tnr[2]:.2f}]",
                "TNR n": f"{r['tn']}/{r['n_fail']}",
                "J": tpr[0] + tnr[0] - 1,
                "accuracy": r["accuracy"],
            }
        )
    report = pd.DataFrame(rows).set_index("judge")
    report.attrs["ends"] = ends
    return report


def rogan_gladen(p_observed: float, tpr: float, tnr: float) -> float | None:
    """The true pass rate implied by an observed one and the judge's TPR/TNR; None if TPR + TNR <= 1."""
    p = args.finite_number("p_observed", p_observed, minimum=0, maximum=1)
    tpr = args.finite_number("tpr", tpr, minimum=0, maximum=1)
    tnr = args.finite_number("tnr", tnr, minimum=0, maximum=1)
    j = tpr + tnr - 1
    if j <= 0:
        return None
    return min(1.0, max(0.0, (p + tnr - 1) / j))


def corrected_rate_ci(
    judged_pass: Sequence[bool],
    label_pred: Sequence[bool],
    label_true: Sequence[bool],
    n: int = 2000,
    level: float = 0.95,
    seed: int = SEED,
) -> dict[str, Any]:
    """Observed and Rogan–Gladen-corrected pass rate, each with a bootstrap interval.

    ``judged_pass``: the judge's verdicts on the items we want the rate of. ``label_pred`` / ``label_true``: the
    judge's verdicts and the rater labels on the labelled set. Resamples that leave TPR + TNR <= 1 are counted
    in ``n_undefined`` and left out of the corrected interval.
    """
    import numpy as np

    judged = np.array(bools("judged_pass", judged_pass))
    pred, true = np.array(bools("label_pred", label_pred)), np.array(bools("label_true", label_true))
    if len(pred) != len(true):
        raise ValueError(f"label_pred has {len(pred)} items but label_true has {len(true)}")
    n = args.whole_number("n", n, minimum=100, maximum=100_000)
    rates = judge_rates(pred.tolist(), true.tolist())
    if rates["TPR"] is None or rates["TNR"] is None:
        raise ValueError("the labelled set needs both true passes and true fails to measure TPR and TNR")
    p_obs = float(judged.mean())
    point = rogan_gladen(p_obs, rates["TPR"], rates["TNR"])
    rng = np.random.default_rng(seed)
    obs, corr, undefined = [], [], 0
    for _ in range(n):
        j = judged[rng.integers(0, len(judged), len(judged))]
        i = rng.integers(0, len(true), len(true))
        t, p = true[i], pred[i]
        if t.all() or (~t).all():
            undefined += 1
            continue
        tpr, tnr = (p & t).sum() / t.sum(), (~p & ~t).sum() / (~t).sum()
        obs.append(j.mean())
        c = rogan_gladen(float(j.mean()), float(tpr), float(tnr))
        if c is None:
            undefined += 1
        else:
            corr.append(c)
    q = [(1 - level) / 2, 1 - (1 - level) / 2]
    return {
        "observed": p_obs,
        "observed_ci": tuple(float(v) for v in np.quantile(obs, q)),
        "corrected": point,
        "corrected_ci": tuple(float(v) for v in np.quantile(corr, q)) if corr else (None, None),
        "TPR": rates["TPR"],
        "TNR": rates["TNR"],
        "n_judged": len(judged),
        "n_labels": len(true),
        "n_undefined": undefined,
    }


def label_budget(
    label_pred: Sequence[bool],
    label_true: Sequence[bool],
    judged_pass: Sequence[bool],
    sizes: Sequence[int] = (20, 30, 50, 100, 200),
    reps: int = 400,
    level: float = 0.95,
    seed: int = SEED,
) -> Any:
    """How precise TPR, TNR and the corrected rate are with ``n`` labels, for each ``n`` in ``sizes``: measured
    by drawing ``n`` labelled items (with replacement) from the labelled pool ``reps`` times.

    Per size: the median width of the Wilson intervals of TPR and TNR, and the width of the central ``level``
    range of the Rogan–Gladen corrected rate of ``judged_pass`` across the draws (how far the corrected rate
    moves when the labels are drawn again), with the share of draws where it is undefined (TPR + TNR <= 1, or a
    class missing). A size larger than the pool treats the pool as the population such labels come from.
    """
    import numpy as np
    import pandas as pd

    pred, true = np.array(bools("label_pred", label_pred)), np.array(bools("label_true", label_true))
    if len(pred) != len(true) or len(pred) == 0:
        raise ValueError(f"label_pred and label_true must be the same non-empty length, got {len(pred)}, {len(true)}")
    p_obs = float(np.mean(bools("judged_pass", judged_pass)))
    sizes = [args.whole_number("sizes", n, minimum=2) for n in sizes]
    reps = args.whole_number("reps", reps, minimum=50)
    rng = np.random.default_rng(seed)
    rows = []
    for n in sizes:
        tpr_w, tnr_w, corr, undefined = [], [], [], 0
        for _ in range(reps):
            i = rng.integers(0, len(true), n)
            t, p = true[i], pred[i]
            if t.all() or (~t).all():
                undefined += 1
                continue
            _, lo, hi = wilson(int((p & t).sum()), int(t.sum()), level)
            tpr_w.append(hi - lo)
            _, lo, hi = wilson(int((~p & ~t).sum()), int((~t).sum()), level)
            tnr_w.append(hi - lo)
            c = rogan_gladen(p_obs, float((p & t).sum() / t.sum()), float((~p & ~t).sum() / (~t).sum()))
            if c is None:
                undefined += 1
            else:
                corr.append(c)
        q = np.quantile(corr, [(1 - level) / 2, 1 - (1 - level) / 2]) if corr else (np.nan, np.nan)
        rows.append({"labels": n, "TPR width": float(np.median(tpr_w)) if tpr_w else None,
                     "TNR width": float(np.median(tnr_w)) if tnr_w else None,
                     "corrected-rate range": float(q[1] - q[0]), "undefined": undefined / reps})  # fmt: skip
    return pd.DataFrame(rows).set_index("labels")
