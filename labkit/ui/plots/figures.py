"""The figures of retrieval and answers per slice, k and position (chapters 00 to 05, 07)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import matplotlib.pyplot as plt
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

from labkit.core import args
from labkit.measures import metrics

__all__ = [
    "BLUE",
    "ORANGE",
    "GREY",
    "GREEN",
    "MAX_K",
    "TRIAGE_COLOURS",
    "figure_png",
    "plot_gain_discount",
    "plot_pipeline",
    "plot_run_comparison",
    "plot_rrf_credit",
    "plot_bars_ci",
    "plot_triage_by_k",
    "plot_grid",
    "plot_positions",
]

BLUE, ORANGE, GREY, GREEN = "#3b6ea8", "#e08a2c", "#9a9a9a", "#4c9a5b"
MAX_K = 100


def plot_gain_discount(
    rels: Sequence[float], k: int, unretrieved: Sequence[float] = (), idcg: str = "retrieved"
) -> Figure:
    """Per-position bars of one ranking: the grade (gain) and what is left after the discount.

    The light bar is the gain, the dark bar the discounted gain
    ``grade / log2(rank + 1)``; the outline is the ideal ordering's
    discounted gain. The title gives DCG, IDCG and nDCG for the chosen
    IDCG convention. ``k`` is at most 100 (more bars are unreadable and slow to draw).
    """
    k = args.whole_number("k", k, maximum=MAX_K, hint=f"more than {MAX_K} bars are unreadable and slow to draw")
    m = metrics.ranking_metrics(rels, k, 1, unretrieved, idcg)
    top = [max(float(r), 0.0) for r in list(rels)[:k]]
    ideal = metrics.graded.ideal_gains(rels, k, unretrieved, idcg)  # the IDCG rule, as in ranking_metrics
    ranks = list(range(1, k + 1))
    disc = [1 / math.log2(r + 1) for r in ranks]
    gain = top + [0.0] * (k - len(top))
    ideal = ideal + [0.0] * (k - len(ideal))

    fig, ax = plt.subplots(figsize=(7.0, 3.0))
    ax.bar(ranks, gain, color=BLUE, alpha=0.25, label="gain (grade)")
    ax.bar(ranks, [g * d for g, d in zip(gain, disc, strict=True)], color=BLUE, label="discounted gain")
    ax.bar(
        ranks,
        [g * d for g, d in zip(ideal, disc, strict=True)],
        fill=False,
        edgecolor=ORANGE,
        linewidth=1.6,
        label="ideal, discounted",
    )
    for r, d in zip(ranks, disc, strict=True):
        ax.annotate(f"/{1 / d:.2f}", (r, 0), xytext=(0, -24), textcoords="offset points", ha="center", fontsize=7)
    ax.set_xticks(ranks)
    ax.set_xlabel("rank (the small number below is the divisor log2(rank+1))", labelpad=14)
    ax.set_ylabel("gain")
    ax.set_ylim(0, max(3.2, max(gain + ideal) + 0.2))
    conv = "book: re-sort retrieved" if idcg == "retrieved" else "trec_eval: all judged"
    ax.set_title(
        f"DCG@{k} = {m['DCG@k']:.4f}   IDCG@{k} = {m['IDCG@k']:.4f}   nDCG@{k} = {m['nDCG@k']:.4f}   ({conv})",
        fontsize=9,
    )
    ax.legend(loc="upper right", fontsize=8, frameon=False)
    fig.tight_layout()
    plt.close(fig)  # returned, not left open: Jupyter shows it once, as the cell's value
    return fig


def figure_png(fig: Figure, dpi: int = 100) -> bytes:
    """The figure as PNG bytes (for an ``ipywidgets.Image``), closing it.

    Widgets show charts this way rather than through an ``Output`` widget:
    Voila's server-side executor can stall on a cell that displays into an
    ``Output`` widget while it runs (voila-dashboards/voila#1428, #1522).
    Measured with chapter 03 as an app on a loaded 2-core machine: 3 stalls
    in 43 runs with an ``Output`` widget, none in 30 with this image.
    """
    import io

    if not callable(getattr(fig, "savefig", None)):
        raise ValueError(f"fig must be a matplotlib Figure (what the plot_* functions return), got {fig!r:.60}")
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()


def _box(ax, xy, w, h, text, color):
    ax.add_patch(FancyBboxPatch(xy, w, h, boxstyle="round,pad=0.02,rounding_size=0.08", fc=color, ec="none", alpha=0.9))
    ax.text(xy[0] + w / 2, xy[1] + h / 2, text, ha="center", va="center", fontsize=8.5, color="white", wrap=True)


def _arrow(ax, a, b, label=""):
    ax.add_patch(FancyArrowPatch(a, b, arrowstyle="-|>", mutation_scale=12, color="#444444", lw=1.2))
    if label:
        ax.text((a[0] + b[0]) / 2, (a[1] + b[1]) / 2 + 0.09, label, ha="center", fontsize=7.5, color="#444444")


def plot_pipeline() -> Figure:
    """The two-stage RAG pipeline and where each chapter's measurement sits."""
    fig, ax = plt.subplots(figsize=(9.0, 3.4))
    ax.set_xlim(0, 10)
    ax.set_ylim(0, 3.4)
    ax.axis("off")
    _box(ax, (0.1, 1.45), 1.3, 0.7, "question\n(rewritten if\na follow-up)", GREY)
    _box(ax, (2.0, 2.15), 1.6, 0.6, "BM25\n(keywords)", BLUE)
    _box(ax, (2.0, 0.85), 1.6, 0.6, "dense\n(embeddings)", BLUE)
    _box(ax, (4.2, 1.45), 1.5, 0.7, "stage 1: fuse (RRF)\ntop ~50, wide", BLUE)
    _box(ax, (6.2, 1.45), 1.5, 0.7, "stage 2: rerank\nkeep top k", BLUE)
    _box(ax, (8.2, 1.45), 1.6, 0.7, "LLM reads k chunks\n-> answer", GREEN)
    _arrow(ax, (1.4, 1.9), (2.0, 2.4))
    _arrow(ax, (1.4, 1.7), (2.0, 1.15))
    _arrow(ax, (3.6, 2.4), (4.2, 1.95))
    _arrow(ax, (3.6, 1.15), (4.2, 1.65))
    _arrow(ax, (5.7, 1.8), (6.2, 1.8))
    _arrow(ax, (7.7, 1.8), (8.2, 1.8))
    notes = [
        (4.95, 0.95, "Recall@k, hit rate\n(ch. 01, 03, 04, 05)"),
        (6.95, 0.95, "nDCG@k, MRR\n(ch. 03, 04)"),
        (9.0, 0.95, "faithfulness,\nrelevance (ch. 06)"),
    ]
    for x, y, t in notes:
        ax.text(x, y, t, ha="center", va="top", fontsize=7.5, color="#333333", style="italic")
    ax.text(
        5.0,
        3.25,
        "measure retrieval first (did the gold chunk reach the context?), then generation (was the answer grounded?)",
        ha="center",
        fontsize=8.5,
    )
    ax.text(6.0, 0.2, "triage (ch. 07): which stage failed for each trace?", ha="center", fontsize=8, color="#444444")
    fig.tight_layout()
    plt.close(fig)
    return fig


def plot_run_comparison(table, metric: str = "R@10", title: str | None = None) -> Figure:
    """Grouped bars of one metric from :func:`labkit.measures.metrics.compare_runs`: one group per slice."""
    args.table("table", table, example="metrics.compare_runs(...)")
    known = list(dict.fromkeys(c[0] if isinstance(c, tuple) else c for c in table.columns))
    if metric not in known:
        raise ValueError(f"metric must be one of the table's metrics {known}, got {metric!r}")
    sub = table[metric]
    groups, names = list(sub.index), list(sub.columns)
    width = 0.8 / len(names)
    colors = [BLUE, ORANGE, GREEN, GREY]
    fig, ax = plt.subplots(figsize=(7.0, 3.0))
    for j, name in enumerate(names):
        xs = [i + (j - (len(names) - 1) / 2) * width for i in range(len(groups))]
        bars = ax.bar(xs, sub[name].to_numpy(), width=width * 0.95, label=name, color=colors[j % len(colors)])
        for bar in bars:
            ax.annotate(
                f"{bar.get_height():.2f}",
                (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                xytext=(0, 2),
                textcoords="offset points",
                ha="center",
                fontsize=7,
            )
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(groups)
    ax.set_ylim(0, 1.08)
    ax.set_ylabel(metric)
    ax.set_title(title or f"{metric} per slice", fontsize=10)
    ax.legend(fontsize=8, frameon=False, ncols=len(names), loc="lower right")
    fig.tight_layout()
    plt.close(fig)
    return fig


def plot_rrf_credit(cs: Sequence[float] = (1, 10, 60, 200), max_rank: int = 30) -> Figure:
    """What one ranking gives a document under RRF, ``1 / (c + rank)``, against its rank: one line per ``c``.

    Left, the credit itself; right, the same as a share of what rank 1 gets, ``(c + 1) / (c + rank)``: how fast
    the credit falls with rank, which is what decides a fused order. ``cs``: numbers >= 0 (taught in 01).
    """
    cs = args.numbers("cs", cs, allow_empty=False, minimum=0)
    max_rank = args.whole_number("max_rank", max_rank, minimum=2, maximum=1000)
    ranks = list(range(1, max_rank + 1))
    fig, (left, right) = plt.subplots(1, 2, figsize=(9.0, 3.2))
    for c in cs:
        left.plot(ranks, [1 / (c + r) for r in ranks], marker=".", label=f"c = {c:g}")
        right.plot(ranks, [(c + 1) / (c + r) for r in ranks], marker=".", label=f"c = {c:g}")
    left.set_yscale("log")
    left.set_ylabel("1 / (c + rank)  (log scale)")
    left.set_title("what one list gives a document", fontsize=9)
    right.set_ylim(0, 1.05)
    right.set_ylabel("share of rank 1's credit")
    right.set_title("the same, relative to rank 1", fontsize=9)
    for ax in (left, right):
        ax.set_xlabel("rank in that list")
        ax.legend(fontsize=8, frameon=False)
    fig.tight_layout()
    plt.close(fig)
    return fig


def plot_bars_ci(table, column: str, title: str | None = None, ylim: tuple[float, float] = (0, 1.05)) -> Figure:
    """Bars with 95% interval whiskers from :func:`labkit.measures.stats.group_means_ci`.

    With a one-level index, one bar per group; with two levels (say slice, retriever), bars grouped by the first
    level and coloured by the second. Each bar is labelled with its mean.
    """
    args.table("table", table, example="stats.group_means_ci(...)")
    if column not in table.columns or f"{column} low" not in table.columns:
        have = [c for c in table.columns if f"{c} low" in table.columns]
        raise ValueError(f"column must be one of the table's averaged columns {have}, got {column!r}")
    if table.index.nlevels == 1:
        groups, series = list(table.index), [None]
    elif table.index.nlevels == 2:
        groups = list(dict.fromkeys(table.index.get_level_values(0)))
        series = list(dict.fromkeys(table.index.get_level_values(1)))
    else:
        raise ValueError(f"table must be indexed by one or two levels, got {table.index.nlevels}")
    width = 0.8 / len(series)
    colors = [BLUE, ORANGE, GREEN, GREY]
    fig, ax = plt.subplots(figsize=(max(5.0, 1.3 * len(groups) * max(1, len(series)) ** 0.5), 3.0))
    for j, name in enumerate(series):
        rows = [
            table.loc[g] if name is None else table.loc[(g, name)] if (g, name) in table.index else None for g in groups
        ]
        xs = [i + (j - (len(series) - 1) / 2) * width for i in range(len(groups)) if rows[i] is not None]
        rows = [r for r in rows if r is not None]
        mean = [float(r[column]) for r in rows]
        err = [
            [m - float(r[f"{column} low"]) for m, r in zip(mean, rows, strict=True)],
            [float(r[f"{column} high"]) - m for m, r in zip(mean, rows, strict=True)],
        ]
        ax.bar(
            xs,
            mean,
            width=width * 0.95,
            label=name,
            color=colors[j % len(colors)],
            yerr=err,
            capsize=3,
            error_kw={"elinewidth": 0.8, "ecolor": "#333333"},
        )
        for x, m in zip(xs, mean, strict=True):
            ax.annotate(f"{m:.2f}", (x, m), xytext=(3, 2), textcoords="offset points", ha="left", fontsize=7)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels([str(g) for g in groups])
    ax.set_ylim(*ylim)
    ax.set_ylabel(column)
    ax.set_title(title or f"{column} per group, with bootstrap 95% intervals", fontsize=10)
    if series != [None]:
        ax.legend(fontsize=8, frameon=False, loc="center left", bbox_to_anchor=(1.0, 0.5))  # not over the bars
    fig.tight_layout()
    plt.close(fig)
    return fig


TRIAGE_COLOURS = {"OK": GREEN, "LUCKY": GREY, "GEN_FAIL": ORANGE, "RET_FAIL": BLUE}
"""Stacking order of :func:`plot_triage_by_k`, bottom up: right answers first, then the two kinds of failure."""


def plot_triage_by_k(sweep, title: str | None = None) -> Figure:
    """Stacked bars of the triage cells against k: one bar per row of ``sweep`` (index k, a column per cell).

    ``sweep``: ``pd.DataFrame({k: triage.triage(traces_at(k), k) for k in ks}).T``; counts are whole numbers
    >= 0. Each segment with room for it is labelled with its count.
    """
    import pandas as pd

    if not isinstance(sweep, pd.DataFrame) or sweep.empty:
        raise ValueError("sweep must be a non-empty DataFrame: pd.DataFrame({k: triage.triage(traces_at(k), k)}).T")
    missing = [c for c in TRIAGE_COLOURS if c not in sweep.columns]
    if missing:
        raise ValueError(f"sweep needs a column per triage cell; it lacks {missing} (columns: {list(sweep.columns)})")
    for cell in TRIAGE_COLOURS:
        for k, v in sweep[cell].items():
            args.whole_number(f"sweep[{cell!r}] at k={k}", v, minimum=0)
    ks = [str(k) for k in sweep.index]
    total = float(sweep[list(TRIAGE_COLOURS)].sum(axis=1).max()) or 1.0
    fig, ax = plt.subplots(figsize=(max(5.0, 0.45 * len(ks) + 2.0), 3.2))
    bottom = [0.0] * len(ks)
    for cell, colour in TRIAGE_COLOURS.items():
        values = [float(v) for v in sweep[cell]]
        ax.bar(ks, values, bottom=bottom, color=colour, label=cell, width=0.8)
        for i, v in enumerate(values):
            if v >= 0.06 * total:
                ax.text(i, bottom[i] + v / 2, f"{v:.0f}", ha="center", va="center", fontsize=7, color="white")
        bottom = [b + v for b, v in zip(bottom, values, strict=True)]
    ax.set_xlabel(f"{sweep.index.name or 'k'} (chunks the generator reads)")
    ax.set_ylabel("traces")
    ax.set_title(title or "Triage cells against k", fontsize=10)
    handles, labels = ax.get_legend_handles_labels()  # listed top down, as the segments are stacked
    ax.legend(handles[::-1], labels[::-1], fontsize=8, frameon=False, loc="center left", bbox_to_anchor=(1.0, 0.5))
    fig.tight_layout()
    plt.close(fig)
    return fig


def plot_grid(table, columns: Sequence[str], title: str | None = None) -> Figure:
    """Heatmaps (size x overlap) of some columns of :meth:`labkit.retrieval.grid.ChunkGrid.table`, values annotated."""
    args.table("table", table, example="ChunkGrid(...).table(...)")
    columns = args.strings("columns", columns, allow_empty=False, example='["ER@k bm25", "split rate"]')
    unknown = [c for c in columns if c not in table.columns]
    if unknown:
        raise ValueError(f"columns names {unknown[0]!r}, which is not a column of the table ({list(table.columns)})")
    sizes = list(dict.fromkeys(table.index.get_level_values("size")))
    fig, axes = plt.subplots(1, len(columns), figsize=(3.4 * len(columns), 2.8), squeeze=False)
    for ax, col in zip(axes[0], columns, strict=True):
        rows = [table.xs(s, level="size")[col] for s in sizes]
        n_cols = max(len(r) for r in rows)
        grid = [[float(r.iloc[j]) if j < len(r) else float("nan") for j in range(n_cols)] for r in rows]
        ax.imshow(grid, cmap="Blues", vmin=0, vmax=1, aspect="auto")
        for i, r in enumerate(rows):
            for j, v in enumerate(r):
                ax.text(j, i, f"{v:.3f}", ha="center", va="center", fontsize=8, color="white" if v > 0.6 else "black")
        ax.set_yticks(range(len(sizes)), [str(s) for s in sizes])
        ax.set_xticks(range(n_cols), ["0 %", "25 %", "50 %"][:n_cols])
        ax.set_xlabel("overlap")
        ax.set_ylabel("chunk size (words)")
        ax.set_title(col, fontsize=9)
        ax.grid(False)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    plt.close(fig)
    return fig


def plot_positions(
    published,
    ours: dict | None = None,
    n_docs: int = 20,
    *,
    intervals: dict | None = None,
    baselines: dict | None = None,
    title: str = "this harness on the handbook: control readers",
    xlabel: str | None = None,
) -> Figure:
    """Accuracy by position of the gold passage: Liu et al.'s published curves, and optionally ours beside them.

    ``published``: :func:`labkit.data.corpus.load_reference` ``("lost_in_the_middle_liu2024")``;
    ``ours``: ``{name: {position: accuracy in [0, 1]}}``; ``intervals``: ``{name: {position: (low, high)}}``
    drawn as error bars; ``baselines``: ``{label: accuracy in [0, 1]}`` drawn as horizontal dotted lines (our
    closed-book and oracle). ``title`` and ``xlabel`` name the right panel.
    """
    need = {"model", "n_docs", "position", "accuracy"}
    if not need <= set(getattr(published, "columns", ())):
        raise ValueError("published must be load_reference('lost_in_the_middle_liu2024'): a table with columns "
                         f"{sorted(need)}")  # fmt: skip
    rows = published[published.n_docs == n_docs]
    if rows.empty:
        raise ValueError(f"n_docs must be one of {sorted(set(published.n_docs))} (the published table), got {n_docs!r}")
    unknown = sorted(set(intervals or {}) - set(ours or {}))
    if unknown:
        raise ValueError(f"intervals names {unknown[0]!r}, which is not a curve of ours: {sorted(ours or {})}")
    fig, axes = plt.subplots(1, 2 if ours else 1, figsize=(10.0 if ours else 6.0, 3.3), squeeze=False)
    ax = axes[0][0]
    for model, g in rows.groupby("model", sort=False):
        line = ax.plot(g.position, g.accuracy, marker="o", label=model)[0]
        ax.axhline(g.closed_book.iloc[0], color=line.get_color(), linestyle=":", linewidth=0.8)
    ax.plot([], [], color=GREY, linestyle=":", linewidth=0.8, label="closed book (dotted, in each model's colour)")
    ax.set_xticks(sorted(rows.position.unique()))
    ax.set_xlabel(f"position of the gold passage among {n_docs}")
    ax.set_ylabel("accuracy (%)")
    ax.set_title("Liu et al. (TACL 2024), published", fontsize=9)
    ax.legend(fontsize=7, frameon=False)
    if ours:
        ax2 = axes[0][1]
        for name, acc in ours.items():
            xs = sorted(acc)
            ys = [100 * acc[x] for x in xs]
            if intervals and name in intervals:
                low = [ys[i] - 100 * intervals[name][x][0] for i, x in enumerate(xs)]
                high = [100 * intervals[name][x][1] - ys[i] for i, x in enumerate(xs)]
                ax2.errorbar(xs, ys, yerr=[low, high], marker="s", capsize=3, label=name)
            else:
                ax2.plot(xs, ys, marker="s", label=name)
        for i, (label, value) in enumerate((baselines or {}).items()):
            ax2.axhline(100 * value, color=(GREY, GREEN, ORANGE)[i % 3], linestyle=":", linewidth=1.0)
            ax2.annotate(label, (0.99, 100 * value), xycoords=("axes fraction", "data"), ha="right",
                         va="bottom", fontsize=7, color=(GREY, GREEN, ORANGE)[i % 3])  # fmt: skip
        ax2.set_xticks(sorted({x for acc in ours.values() for x in acc}))
        ax2.set_ylim(0, 100)
        ax2.set_xlabel(xlabel or f"position of the gold chunk among {n_docs}")
        ax2.set_ylabel("accuracy (%)")
        ax2.set_title(title, fontsize=9)
        ax2.legend(fontsize=7, frameon=False)
    fig.tight_layout()
    plt.close(fig)
    return fig
