"""A class's labels and self-checks, for the instructor (11).

- :func:`plot_raters_per_item` — how many raters each item of each label set has, in the order the labelling
  widget shows them (the first items carry the whole class, the later ones fewer).
- :func:`plot_progress` — the self-checks learners shared: one row per learner, one column per exercise.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure

from labkit.core import args
from labkit.ui.plots.figures import BLUE, GREY, ORANGE

__all__ = ["plot_raters_per_item", "plot_progress"]

PROGRESS = {"": 0, "not yet": 1, "correct": 2}


def plot_raters_per_item(counts: Mapping[str, Sequence[int]], title: str) -> Figure:
    """``counts``: label set -> the rater count of each of its items, in the widget's order; one step line per
    set. ``title`` says whose ratings they are (simulated raters, or a class)."""
    counts = args.mapping("counts", counts, example='{"06-claims": [12, 12, 11, ...]}')
    if not counts:
        raise ValueError("counts is empty: give {label set: [raters of item 1, of item 2, ...]}")
    fig, ax = plt.subplots()
    for i, (name, values) in enumerate(counts.items()):
        values = args.numbers(f"counts[{name!r}]", values, allow_empty=False, minimum=0)
        ax.step(range(1, len(values) + 1), values, where="mid", lw=1.5, label=name,
                color=(BLUE, ORANGE, "#4c9a5b", "#8e5ea2", GREY)[i % 5])  # fmt: skip
    ax.set_xlabel("item, in the order the labelling widget shows it")
    ax.set_ylabel("raters")
    ax.set_title(args.text("title", title), fontsize=10)
    ax.legend(fontsize=8, frameon=False)
    fig.tight_layout()
    plt.close(fig)
    return fig


def plot_progress(table, title: str) -> Figure:
    """A :func:`labkit.data.class_read.progress_table` as a grid: a learner per row, an exercise per column,
    dark for correct, light for tried and not yet correct, blank for not tried."""
    cells = [c for c in getattr(table, "columns", ()) if c != "correct"]
    if not cells or len(table) == 0:
        raise ValueError("table must be a class_read.progress_table(...) with at least one learner and exercise")
    values = table[cells].apply(lambda col: col.map(lambda v: PROGRESS.get(v, 0))).to_numpy()
    fig, ax = plt.subplots(figsize=(max(5.0, 0.22 * len(cells) + 2), max(2.2, 0.28 * len(table) + 1)))
    ax.imshow(values, cmap=ListedColormap(["#f4f4f4", "#f2c18d", BLUE]), vmin=0, vmax=2, aspect="auto")
    ax.set_xticks(range(len(cells)), cells, rotation=90, fontsize=7)
    ax.set_yticks(range(len(table)), list(table.index), fontsize=7)
    ax.grid(False)
    ax.set_xlabel("exercise (dark: correct · light: tried, not yet · blank: not tried)")
    ax.set_title(args.text("title", title), fontsize=10)
    fig.tight_layout()
    plt.close(fig)
    return fig
