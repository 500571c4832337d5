"""The chapters' lessons re-run on a class's labels, beside the AI rater's (11_class_labels, for instructors).

Taught in 11_class_labels. Each chapter measured something against reference labels written by an AI assistant
against a rubric; a class's labels (:func:`labkit.data.class_read.read_class`: learner -> item -> label) give a
second answer on the same items. Each function returns both, side by side, on the items the class settled:

- :func:`majority` — the class's label of each item: its majority (an item the class ties on has none and is left
  out, counted); :func:`median_rating` the same for 02's 1-5 ratings (the median, an ordinal summary).
- :func:`split_items` — the items the class split on most, with their text: the ones to discuss in class.
- :func:`claims_lesson` — 06: every judge's TPR, TNR and J by the AI rater's labels and by the class's majority,
  and the reader's test rate corrected (Rogan–Gladen) with each calibration.
- :func:`answers_lesson` — 07: the 2x2 of the reader's answers by each, and the two cheap correctness checks'
  TPR and TNR against each.
- :func:`realism_lesson` — 02: the model realism rater against the AI rater's ratings and the class's.
- :func:`relevance_lesson` — 10: how often the hybrid's first passage answers the question, by each.
- :func:`inside` — the verdict line: does the class's figure lie inside the AI rater's interval?
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from labkit.generation import llm, synth
from labkit.judges import calibration, correctness, faithfulness
from labkit.measures import stats, triage
from labkit.studies import faithfulness_data as fdata
from labkit.studies import handbook as hb
from labkit.studies import labelling
from labkit.studies import synth_data as sd

__all__ = ["majority", "median_rating", "split_items", "claims_lesson", "answers_lesson", "realism_lesson",
           "relevance_lesson", "inside", "BY"]  # fmt: skip

BY = ("AI rater", "class")
"""The two sources of labels every table puts side by side: the reference (an AI assistant's, against the
rubric) and the class's majority."""


def majority(ratings: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """item -> the class's majority label (``stats.item_table``); items the class ties on are left out."""
    return {r["item"]: r["majority"] for r in stats.item_table(ratings) if r["majority"] is not None}


def median_rating(ratings: Mapping[str, Mapping[str, Any]]) -> dict[str, int]:
    """item -> the class's median rating (the lower median of "1"-"5"), for items with two ratings or more."""
    out = {}
    for r in stats.item_table(ratings):
        if r["raters"] >= 2:
            values = sorted(int(v) for v, n in r["labels"].items() for _ in range(n))
            out[r["item"]] = values[(len(values) - 1) // 2]
    return out


def split_items(ratings: Mapping[str, Mapping[str, Any]], texts: Mapping[str, str], n: int = 5) -> Any:
    """The ``n`` items the class agreed on least (lowest top share; ties first), with their text (``texts``:
    item -> the words to discuss) and the class's counts."""
    import pandas as pd

    rows = [r for r in stats.item_table(ratings) if r["raters"] >= 2]
    rows.sort(key=lambda r: (not r["tie"], r["top_share"], r["item"]))
    return pd.DataFrame(
        [
            {
                "item": r["item"],
                "raters": r["raters"],
                "top share": round(r["top_share"], 3),
                "labels": ", ".join(f"{k} {v}" for k, v in sorted(r["labels"].items(), key=lambda kv: (-kv[1], kv[0]))),
                "majority": r["majority"] or "(tie)",
                "text": texts[r["item"]],
            }
            for r in rows[:n]
        ]  # fmt: skip
    ).set_index("item")


def _rates(reports: dict[str, Any], what: Sequence[str] = ("TPR", "TNR")) -> Any:
    """judge x (rate · source) cells ``0.71 [0.55, 0.83]``, from judge reports by source."""
    import pandas as pd

    cols = {}
    for rate in what:
        for by, rep in reports.items():
            cols[f"{rate} · {by}"] = {j: stats.fmt_ci(rep.loc[j, rate], *rep.attrs["ends"][j][rate])
                                      for j in rep.index}  # fmt: skip
    for by, rep in reports.items():
        cols[f"J · {by}"] = rep["J"].round(3)
    return pd.DataFrame(cols)


def claims_lesson(ratings: Mapping[str, Mapping[str, Any]], judges: Sequence[Any]) -> dict[str, Any]:
    """Chapter 06 on the class's majority: ``judges`` are chapter 06's (its manifest's ``judges``); the judge is
    chosen as 06 chooses it (the highest J among the candidates on the written dev claims). Returns ``chosen``,
    ``items`` (claims with a majority), ``differ`` (where it differs from the AI rater's label), ``rates`` (every
    judge's TPR, TNR and J by each), ``reports`` (the two ``stats.judge_report`` tables), ``corrected`` (the
    reader's test rate, observed and corrected with each calibration) and ``truth`` (that rate by the labels)."""
    import pandas as pd

    labels = pd.DataFrame(fdata.labelled_claims())
    verdicts = faithfulness.judges_from(judges, llm.from_env)
    table = calibration.verdict_table(labels.to_dict("records"), verdicts)
    dev, test = table[table["split"] == "dev"], table[table["split"] == "test"]
    candidates = [j.name for j in judges if j.candidate]
    written = dev[dev["origin"] != "model"]
    chosen = stats.judge_report(written, candidates, truth="label", passes="supported")["J"].idxmax()
    own = dev[dev["origin"] == "model"].set_index("id")
    maj = majority(ratings)
    ids = [i for i in own.index if i in maj]
    cal = {BY[0]: own.loc[ids], BY[1]: own.loc[ids].assign(label=[maj[i] for i in ids])}
    reports = {by: stats.judge_report(t, list(verdicts), truth="label", passes="supported") for by, t in cal.items()}
    test_own = test[test["origin"] == "model"]
    rows = []
    for by, t in cal.items():
        res = stats.corrected_rate_ci((test_own[chosen] == "supported").tolist(), (t[chosen] == "supported").tolist(),
                                      (t["label"] == "supported").tolist())  # fmt: skip
        rows.append({"calibrated on": by, "labels": res["n_labels"], "TPR": round(res["TPR"], 3),
                     "TNR": round(res["TNR"], 3), "observed": stats.fmt_ci(res["observed"], *res["observed_ci"]),
                     "corrected": stats.fmt_ci(res["corrected"], *res["corrected_ci"]), "_res": res})  # fmt: skip
    return {"chosen": chosen, "items": len(ids), "differ": int((cal[BY[0]]["label"] != cal[BY[1]]["label"]).sum()),
            "rates": _rates(reports), "reports": reports, "n_test": len(test_own),
            "corrected": pd.DataFrame(rows).set_index("calibrated on"),
            "truth": float((test_own["label"] == "supported").mean())}  # fmt: skip


def answers_lesson(ratings: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Chapter 07 on the class's majority, on the 1.5B reader's answers at k = 3 the class settled: ``cells``
    (the 2x2's counts by each), ``moves`` (AI rater's cell x class's cell), ``rates`` (the reference-number rule
    and the lexical judge, TPR/TNR/J against each), ``items`` and ``differ``. An answer passes when labelled
    ``right``, as in 07."""
    import pandas as pd

    label_set, texts, reference = labelling.answers_set()
    maj = majority(ratings)
    ids = [q for q in label_set.items if q in maj]
    h = hb.handbook()
    questions = [h.by_qid[q] for q in ids]
    read = hb.reader_contexts(questions)
    labels = {BY[0]: {q: reference[q] for q in ids}, BY[1]: {q: maj[q] for q in ids}}
    cells = {by: {q: triage.quadrant({"gold": [c for c, g in h.qrels.get(q, {}).items() if g >= 3],
                                      "retrieved": read[q], "answer_pass": lab[q] == "right"}, k=hb.READER_K)
                  for q in ids} for by, lab in labels.items()}  # fmt: skip
    counts = pd.DataFrame({by: pd.Series(c).value_counts().reindex(triage.QUADRANTS, fill_value=0)
                           for by, c in cells.items()})  # fmt: skip
    moves = pd.crosstab(
        pd.Series(cells[BY[0]], name=f"by the {BY[0]}"), pd.Series(cells[BY[1]], name=f"by the {BY[1]}")
    )
    corpus_texts = {d: doc.text for d, doc in h.corpus.items()}
    rules = {"reference number": correctness.reference_rule("first"),
             "lexical judge": correctness.judge_check(faithfulness.lexical_judge, corpus_texts)}  # fmt: skip
    verdicts = pd.DataFrame({name: {q.qid: rule(texts[q.qid]["answer"], q) for q in questions}
                             for name, rule in rules.items()})  # fmt: skip
    reports = {by: stats.judge_report(verdicts.assign(truth=[lab[q] == "right" for q in verdicts.index]), list(rules),
                                      truth="truth", missing="skip") for by, lab in labels.items()}  # fmt: skip
    return {"items": len(ids), "differ": sum(labels[BY[0]][q] != labels[BY[1]][q] for q in ids), "cells": counts,
            "moves": moves, "rates": _rates(reports), "reports": reports}  # fmt: skip


def realism_lesson(ratings: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Chapter 02's model realism rater (the recorded 1.5B, few-shot) against the AI rater's held-out ratings and
    against the class's median rating, on the questions both hold: weighted kappa (quadratic) with its interval,
    and the keep-at-4 cut as a judge of "realistic (4 or 5)". Returns ``items``, ``kappa`` and ``rates``."""
    import pandas as pd

    _, _, reference = labelling.realism_set()
    heldout = sd.realism_labels("heldout")
    model = synth.rate_realism([r["question"] for r in heldout], llm.from_env(llm.DEFAULT_MODEL),
                               sd.realism_labels("fewshot"))  # fmt: skip
    model_of = {r["id"]: m for r, m in zip(heldout, model, strict=True) if m is not None}
    med = median_rating(ratings)
    ids = [i for i in med if i in model_of]
    by = {BY[0]: [int(reference[i]) for i in ids], BY[1]: [med[i] for i in ids]}
    mine = [model_of[i] for i in ids]
    kappa = {}
    for name, truth in by.items():
        rep = stats.kappa_report(truth, mine, labels=sd.RATINGS, weights="quadratic")
        kappa[name] = {"n": rep["n"], "weighted kappa": stats.fmt_ci(rep["kappa"], *rep["kappa_ci"])}
    frame = pd.DataFrame({"model keeps (>= 4)": [m >= 4 for m in mine]}, index=ids)
    reports = {name: stats.judge_report(frame.assign(truth=[t >= 4 for t in truth]), ["model keeps (>= 4)"],
                                        truth="truth") for name, truth in by.items()}  # fmt: skip
    return {"items": len(ids), "kappa": pd.DataFrame(kappa).T, "rates": _rates(reports), "reports": reports}


def relevance_lesson(ratings: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Chapter 10's retrieval judgement on the class's majority: how often the hybrid's first passage answers the
    question, by the reference (derived from the AI raters' gold quotes) and by the class, with Wilson intervals,
    and the class's agreement with the reference (Cohen's kappa). Returns ``items``, ``share`` and ``kappa``."""
    import pandas as pd

    label_set, _, reference = labelling.relevance_set()
    maj = majority(ratings)
    ids = [q for q in label_set.items if q in maj]
    by = {BY[0]: [reference[q] for q in ids], BY[1]: [maj[q] for q in ids]}
    share = pd.DataFrame({name: {"answers": sum(x == "answers" for x in v), "of": len(v),
                                 "share (Wilson 95%)": stats.fmt_ci(*stats.wilson(sum(x == "answers" for x in v),
                                                                                  len(v)))}
                          for name, v in by.items()}).T  # fmt: skip
    rep = stats.kappa_report(by[BY[0]], by[BY[1]], labels=list(label_set.labels))
    return {"items": len(ids), "share": share, "kappa": stats.fmt_ci(rep["kappa"], *rep["kappa_ci"]),
            "agree": rep["agree"]}  # fmt: skip


def inside(what: str, report_ai: Any, report_class: Any, row: str, rate: str) -> str:
    """One verdict line: ``rate`` of ``row`` by the class and by the AI rater (two ``stats.judge_report`` tables),
    and whether the class's figure lies inside the AI rater's interval."""
    a, (alo, ahi) = report_ai.loc[row, rate], report_ai.attrs["ends"][row][rate]
    b, (blo, bhi) = report_class.loc[row, rate], report_class.attrs["ends"][row][rate]
    verdict = "inside" if alo <= b <= ahi else "outside"
    return (f"{what}: {rate} by the class {stats.fmt_ci(b, blo, bhi)}, by the AI rater {stats.fmt_ci(a, alo, ahi)}; "
            f"the class's figure lies {verdict} the AI rater's interval")  # fmt: skip
