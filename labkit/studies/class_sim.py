"""A simulated class for the instructor's notebook: **simulated raters, never people** (11_class_labels).

Taught in 11_class_labels. The instructor's notebook stores its outputs from a class nobody took: a class folder
(:mod:`labkit.data.class_folder`, ``simulated=True``) filled by :func:`simulate_class` through the same writer the
learners' labelling widget uses, then read back by :func:`labkit.data.class_read.read_class` like any class.

The model (:func:`labkit.measures.stats.simulate_raters`, seeded): each simulated rater copies the reference label
of an item (the AI rater's, the chapters' reference) and, with its own probability ``flip``, replaces it by one of
the other labels, drawn uniformly. :data:`FLIPS` makes most raters careful and a few careless. Like a class at a
labelling widget, which shows the items in one fixed order, rater ``r`` labels the first :data:`LABELLED` ``[r]``
items of a set (give or take five, drawn per set), so the first items carry every rater and the later ones fewer
(missing ratings, as in class).

What the model implies, to check the figures against: :func:`implied_agreement` is the chance-corrected agreement
(Fleiss' kappa and nominal Krippendorff's alpha alike) the flip probabilities give on the items each rater
labelled (the ratio of the expected agreements: two raters agree with probability
``(1 - p_r)(1 - p_s) + p_r p_s / (k - 1)``); :func:`recovered` says whether a figure's interval covers it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from itertools import count
from pathlib import Path
from typing import Any

from labkit import SEED
from labkit.data.class_folder import ClassFolder, LabelDrop, ProgressDrop, init_class
from labkit.data.labels import LabelSet
from labkit.measures import stats
from labkit.studies import labelling

__all__ = ["FLIPS", "LABELLED", "SETS", "chapter_sets", "simulate_class", "plant_bad_input", "implied_agreement",
           "recovered", "rater_noise"]  # fmt: skip

FLIPS = {f"sim-{i + 1:02d}": p for i, p in enumerate(
    (0.05, 0.05, 0.05, 0.05, 0.1, 0.1, 0.1, 0.1, 0.15, 0.15, 0.3, 0.5))}  # fmt: skip
"""The simulated raters and the probability that each replaces the reference label: eight careful (0.05-0.10),
two average (0.15), one careless (0.30) and one who is wrong half the time (0.50)."""
LABELLED = (30, 30, 30, 30, 20, 20, 40, 40, 30, 25, 30, 35)
"""How many items each simulated rater labels, in the widget's order (the chapters ask for 20 to 30)."""
SETS = ("06-claims", "07-answers", "02-realism", "10-relevance")
START = datetime(2025, 3, 4, 10, 0, tzinfo=UTC)


def chapter_sets() -> dict[str, tuple[LabelSet, dict, dict]]:
    """The chapters' label sets the class labels: set id -> (label set, item texts, reference labels)."""
    made = (labelling.claims_set, labelling.answers_set, labelling.realism_set, labelling.relevance_set)
    return {s: f() for s, f in zip(SETS, made, strict=True)}


def _clock() -> Any:
    ticks = count()
    return lambda: (START + timedelta(seconds=20 * next(ticks))).isoformat()


def simulate_class(
    path: str | os.PathLike,
    flips: dict[str, float] = FLIPS,
    labelled: Sequence[int] = LABELLED,
    exercises: Sequence[str] = (),
    seed: int = SEED,
    title: str = "simulated class",
) -> ClassFolder:
    """A simulated class folder at ``path`` (created): every set of :data:`SETS` labelled by the raters of
    ``flips``, rater ``r`` labelling the first ``labelled[r]`` items give or take five (see the module), each set
    with its own seed
    (``seed`` + its place); with ``exercises``, each rater's self-checks too (a careful rater gets more right).
    Written by the same :class:`~labkit.data.class_folder.LabelDrop` a learner's widget uses, at fixed times."""
    import numpy as np

    if len(labelled) != len(flips):
        raise ValueError(f"labelled must give one count per rater ({len(flips)}), got {len(labelled)}")
    folder = init_class(path, SETS, title=title, simulated=True)
    clock = _clock()
    for offset, (label_set, _, reference) in enumerate(chapter_sets().values()):
        ordered = {i: reference[i] for i in label_set.items}
        ratings = stats.simulate_raters(ordered, flips, label_set.labels, seed=seed + offset)
        jitter = np.random.default_rng(seed + offset).integers(-5, 6, len(flips))  # each chapter a little different
        for (rater, row), n, more in zip(ratings.items(), labelled, jitter, strict=True):
            first = {i: row[i] for i in label_set.items[: max(1, min(n + int(more), len(label_set.items)))]}
            LabelDrop(folder, label_set, learner=rater, clock=clock).opt_in(first)
    rng = np.random.default_rng(seed)
    for rater, p in flips.items():
        drop = ProgressDrop(folder, learner=rater, clock=clock)
        drop.opt_in()
        tries = []
        for number in exercises:
            if rng.random() < 0.15:  # not tried
                continue
            for _ in range(3):  # up to three tries; a careful rater gets it right sooner
                tries.append((number, "correct" if rng.random() < 0.85 - p else "not yet"))
                if tries[-1][1] == "correct":
                    break
        if tries:
            drop.record_many(tries)
    return folder


def plant_bad_input(folder: ClassFolder, label_set: LabelSet) -> list[str]:
    """Plant, in the drop folder of ``label_set``, what the reader must refuse (what a broken or hostile class
    folder holds): a torn last line, a label outside the set, a line under a learner id that is a path, a file
    that is not a learner's, one that any account may write, and a symlink to a file outside the class folder.
    Returns what was planted, one line each."""
    drop = folder.drop("labels", label_set.id)
    files = sorted(drop.glob("sim-*.jsonl"))
    item = label_set.items[0]
    line = '{{"set": "{s}", "item": "{i}", "label": "{lab}", "learner": "{who}", "time": "{t}"}}\n'
    when = START.isoformat()
    with open(files[2], "a", encoding="utf-8") as fh:
        fh.write(line.format(s=label_set.id, i=item, lab="maybe", who=files[2].stem, t=when))
    with open(files[4], "a", encoding="utf-8") as fh:
        fh.write(line.format(s=label_set.id, i=item, lab=label_set.labels[0], who="../x", t=when))
    with open(files[6], "a", encoding="utf-8") as fh:
        fh.write(line.format(s=label_set.id, i=item, lab=label_set.labels[0], who=files[6].stem, t=when)[:40])
    (drop / "notes.txt").write_text("not a label file\n", encoding="utf-8")
    loose = drop / "sim-98.jsonl"
    loose.write_text(line.format(s=label_set.id, i=item, lab=label_set.labels[0], who="sim-98", t=when))
    os.chmod(loose, 0o666)
    outside = Path(folder.path).parent / f"{Path(folder.path).name}-outside.jsonl"
    outside.write_text(line.format(s=label_set.id, i=item, lab=label_set.labels[0], who="sim-99", t=when))
    (drop / "sim-99.jsonl").symlink_to(outside)
    return [
        f"{files[2].name}: a label outside the set ('maybe')",
        f"{files[4].name}: a line under learner id '../x'",
        f"{files[6].name}: a torn last line",
        "notes.txt: not a learner's file",
        "sim-98.jsonl: writable by any account",
        "sim-99.jsonl: a symlink to a file outside the class folder",
    ]


def implied_agreement(ratings: dict, reference: dict, labels: Sequence[str], flips: dict[str, float],
                      items: Sequence[str] | None = None) -> float:  # fmt: skip
    """The chance-corrected agreement the flip model implies for the raters and items of ``ratings`` (each item
    with two ratings or more; only ``items`` when given, e.g. the items Fleiss' kappa keeps): expected pairwise
    agreement against expected chance agreement from the expected label shares (module doc)."""
    k = len(labels)
    keep = None if items is None else set(items)
    agree = weight = 0.0
    shares = dict.fromkeys(labels, 0.0)
    for item in reference:
        raters = [r for r in ratings if item in ratings[r]]
        if len(raters) < 2 or (keep is not None and item not in keep):
            continue
        for r in raters:
            for c in labels:
                shares[c] += (1 - flips[r]) if c == reference[item] else flips[r] / (k - 1)
            for s in raters:
                if s != r:
                    p, q = flips[r], flips[s]
                    agree += ((1 - p) * (1 - q) + p * q / (k - 1)) / (len(raters) - 1)
        weight += len(raters)
    observed = agree / weight
    total = sum(shares.values())
    chance = sum((v / total) ** 2 for v in shares.values())
    return (observed - chance) / (1 - chance)


def recovered(report: dict, implied: float) -> str:
    """One line: the figure of ``report`` (``stats.fleiss_report`` / ``stats.alpha_report``) with its interval,
    and whether that interval covers what the simulation implies (or why there is no figure)."""
    name = report["coefficient"]
    if report["value"] is None or report["ci"] is None:
        return f"{name}: no figure ({report['why']})"
    low, high = report["ci"]
    covers = low <= implied <= high
    verdict = "covers it: the noise is recovered" if covers else "misses it: the noise is not recovered"
    return (f"{name} {stats.fmt_ci(report['value'], low, high)} on {report['items']} items; the simulation "
            f"implies {implied:.3f}; the interval {verdict}")  # fmt: skip


def rater_noise(ratings: dict, reference: dict, flips: dict[str, float]) -> Any:
    """One row per simulated rater: its flip probability, its agreement with the reference (expected ``1 - flip``;
    measured with its Wilson interval, and whether that covers the expected), and with the others' majority
    (``stats.rater_table``'s leave-one-out), the raters ranked by it (the careless ones should come last)."""
    import pandas as pd

    rows = []
    for r in stats.rater_table(ratings, reference):
        ref, loo = r["ref"], r["loo"]
        expected = 1 - flips[r["rater"]]
        rows.append({"rater": r["rater"], "items": r["items"], "flip": flips[r["rater"]], "expected": expected,
                     "vs reference": stats.fmt_ci(ref["share"], *ref["ci"]),
                     "covers": "yes" if ref["ci"][0] <= expected <= ref["ci"][1] else "no",
                     "vs others' majority": stats.fmt_ci(loo["share"], *loo["ci"]), "_loo": loo["share"]})  # fmt: skip
    table = pd.DataFrame(rows).set_index("rater")
    table["rank by others"] = table["_loo"].rank(ascending=False, method="min").astype(int)
    return table.drop(columns="_loo")
