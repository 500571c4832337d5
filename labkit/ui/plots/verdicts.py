"""Judges against labels, rerankers against relevance, and what a strategy costs for what it passes (06, 04b, 09)."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from labkit.core import args
from labkit.ui.plots.figures import BLUE, GREY, ORANGE

__all__ = ["plot_judges", "judge_style", "plot_cost_quality", "plot_label_budget", "plot_score_split"]


def plot_judges(report, title: str | None = None) -> Figure:
    """Each judge of a :func:`labkit.measures.stats.judge_report` as a point at (TNR, TPR) with its two intervals
    as a cross, read as numbers from ``report.attrs["ends"]``: any number of judges, each its own colour and
    marker. The dashed diagonal is TPR + TNR = 1 (J = 0, a coin of any bias: the always-supported judge sits at its
    end); a better judge sits further up and to the right of it, at the top right corner a perfect one."""
    need = ["TPR", "TNR", "J"]
    missing = [c for c in need if c not in getattr(report, "columns", ())]
    ends = getattr(report, "attrs", {}).get("ends")
    if missing or not isinstance(ends, dict):
        what = f"it lacks the columns {missing}" if missing else 'it has no attrs["ends"] (the intervals\' ends)'
        raise ValueError(f"report must be a stats.judge_report(...) table; {what}")
    if len(report) == 0:
        raise ValueError("report has no judge to draw: pass a stats.judge_report(...) with at least one row")
    fig, ax = plt.subplots(figsize=(5.2, 4.2))
    ax.plot([0, 1], [1, 0], ls="--", color=GREY, lw=1)
    ax.annotate("J = 0: no better than a coin", (0.52, 0.5), fontsize=7, color=GREY, rotation=-40)
    for i, (name, row) in enumerate(report.iterrows()):
        if name not in ends:
            raise ValueError(f"report.attrs['ends'] has no intervals for judge {name!r}: draw judge_report's own table")
        tpr, tnr = float(row["TPR"]), float(row["TNR"])
        (tpr_lo, tpr_hi), (tnr_lo, tnr_hi) = ends[name]["TPR"], ends[name]["TNR"]
        colour, marker = judge_style(i)
        ax.errorbar(tnr, tpr, xerr=[[tnr - tnr_lo], [tnr_hi - tnr]], yerr=[[tpr - tpr_lo], [tpr_hi - tpr]],
                    fmt=marker, color=colour, capsize=3, lw=1, label=f"{name} (J = {float(row['J']):.2f})")  # fmt: skip
    ax.set_xlim(-0.03, 1.03)
    ax.set_ylim(-0.03, 1.03)
    ax.set_xlabel("TNR: false claims it rejects")
    ax.set_ylabel("TPR: true claims it accepts")
    ax.set_title(title or "judges against the labels, Wilson 95% intervals", fontsize=10)
    ax.legend(fontsize=7, frameon=False, loc="lower left")
    fig.tight_layout()
    plt.close(fig)
    return fig


JUDGE_COLOURS = (BLUE, ORANGE, "#4c9a5b", "#8e5ea2", GREY, "#c44e52", "#937860", "#da8bc3")
JUDGE_MARKERS = ("o", "s", "^", "D", "v", "P", "X")


def judge_style(i: int) -> tuple[str, str]:
    """The ``i``-th judge's (colour, marker): distinct for the first 56 judges (8 colours x 7 markers), then
    repeating; the first five keep the workbook's colours with round markers."""
    i = args.whole_number("i", i, minimum=0)
    return JUDGE_COLOURS[i % len(JUDGE_COLOURS)], JUDGE_MARKERS[(i // len(JUDGE_COLOURS)) % len(JUDGE_MARKERS)]


def plot_cost_quality(
    table, cost: str, rate: str = "pass rate", interval: str | Sequence[str] = ("low", "high"), title: str | None = None
) -> Figure:
    """One point per row of ``table`` (a strategy): its ``cost`` against its pass ``rate`` with the rate's
    interval (``interval``: the two columns of its ends). Up is better, left is cheaper: a strategy below and to
    the right of another is beaten on both."""
    cols = [cost, rate, *interval]
    missing = [c for c in cols if c not in getattr(table, "columns", ())]
    if missing:
        raise ValueError(f"table has no column(s) {missing}; it has {list(getattr(table, 'columns', []))}")
    if len(table) == 0:
        raise ValueError("table has no row to draw: one row per strategy")
    fig, ax = plt.subplots(figsize=(5.2, 3.4))
    for i, (name, row) in enumerate(table.iterrows()):
        x, y, lo, hi = (float(row[c]) for c in cols)
        ax.errorbar(x, y, yerr=[[y - lo], [hi - y]], fmt="o", color=(BLUE, ORANGE, "#4c9a5b", GREY)[i % 4], capsize=3)
        ax.annotate(str(name), (x, y), xytext=(6, 4), textcoords="offset points", fontsize=8)
    ax.set_xlabel(cost)
    ax.set_ylabel(rate)
    ax.set_ylim(0, 1.05)
    ax.set_xlim(left=0, right=max(float(v) for v in table[cost]) * 1.25)
    ax.set_title(title or f"{rate} against {cost}, 95% intervals", fontsize=10)
    fig.tight_layout()
    plt.close(fig)
    return fig


def plot_label_budget(table, title: str | None = None) -> Figure:
    """A :func:`labkit.measures.stats.label_budget` table: how wide TPR's and TNR's intervals and the corrected rate's
    range are against the number of labels (log scale), so a labelling effort can be planned before it starts."""
    need = ["TPR width", "TNR width", "corrected-rate range"]
    missing = [c for c in need if c not in getattr(table, "columns", ())]
    if missing:
        raise ValueError(f"table must be a stats.label_budget(...) table; it lacks {missing}")
    if len(table) == 0:
        raise ValueError("table has no row to draw: pass a stats.label_budget(...) with at least one size")
    fig, ax = plt.subplots(figsize=(5.6, 3.2))
    for column, colour in zip(need, (BLUE, ORANGE, "#4c9a5b"), strict=True):
        ax.plot(list(table.index), list(table[column]), marker="o", color=colour, label=column)
    ax.set_xscale("log")
    ax.set_xticks(list(table.index), [str(n) for n in table.index])
    ax.set_xlabel("labelled claims")
    ax.set_ylabel("width (rate units)")
    ax.set_ylim(0, 1.05)
    ax.set_title(title or "what a labelling budget buys: interval widths", fontsize=10)
    ax.legend(fontsize=7, frameon=False)
    fig.tight_layout()
    plt.close(fig)
    return fig


def plot_score_split(scores: dict[str, tuple[Sequence[float], Sequence[float]]], title: str | None = None) -> Figure:
    """One panel per reranker: the histogram of its scores for relevant candidates against the others. A reranker
    that can order them puts the two apart; two piles on top of each other cannot be sorted by any threshold.
    ``scores``: ``{name: (scores of relevant candidates, scores of the others)}``."""
    if not isinstance(scores, dict) or not scores:
        raise ValueError("scores must be a non-empty dict {reranker: (relevant scores, other scores)}")
    fig, axes = plt.subplots(1, len(scores), figsize=(4.2 * len(scores), 2.8), squeeze=False)
    for ax, (name, pair) in zip(axes[0], scores.items(), strict=True):
        if not isinstance(pair, tuple | list) or len(pair) != 2 or not len(pair[0]) or not len(pair[1]):
            raise ValueError(f"scores[{name!r}] must be (relevant scores, other scores), both non-empty")
        rel, other = [float(x) for x in pair[0]], [float(x) for x in pair[1]]
        lo, hi = min(rel + other), max(rel + other)
        bins = [lo + (hi - lo) * i / 20 for i in range(21)] if hi > lo else 10
        ax.hist(other, bins=bins, color=GREY, alpha=0.7, label=f"not relevant ({len(other)})", density=True)
        ax.hist(rel, bins=bins, color=ORANGE, alpha=0.6, label=f"relevant ({len(rel)})", density=True)
        ax.set_title(name, fontsize=9)
        ax.set_xlabel("score", fontsize=8)
        ax.set_yticks([])
        ax.legend(fontsize=7, frameon=False)
    fig.suptitle(title or "scores of relevant and other candidates", fontsize=10)
    fig.tight_layout()
    plt.close(fig)  # shown once, as the cell's value
    return fig
