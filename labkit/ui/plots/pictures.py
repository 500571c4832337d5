"""The explorers' pictures, one per chapter, composed from :mod:`labkit.ui.plots.svg`'s charts (01, 05, 07, 09).

Each takes what its explorer has computed (the hybrid table at every ``c``, ER@k over the grid, the triage cells
at every k, the routing at every k) and the control's current value, which it marks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from labkit.core import args
from labkit.ui.plots.svg import PALETTE, Panels, Svg, side_by_side, svg_heatmap, svg_lines, svg_stacked_bars

__all__ = ["svg_fusion_by_c", "svg_grid_er", "svg_triage_shares", "svg_routing"]


def svg_fusion_by_c(curve: Mapping[float, Any], c: float) -> Panels:
    """01's picture: the hybrid's per-slice metrics against RRF's ``c`` (one panel per metric of the tables, a log
    axis), ``c`` marked. ``curve``: ``{c: fusion.hybrid_table(...)}`` at the current weights."""
    curve = args.mapping("curve", curve, example="{c: fusion.hybrid_table(...)}")
    if not curve:
        raise ValueError("curve is empty: give {c: fusion.hybrid_table(...)} for at least one c")
    cs = sorted(curve)
    panels = []
    for m in dict.fromkeys(col[0] for col in curve[cs[0]].columns):
        column = [curve[x][(m, "hybrid")].to_dict() for x in cs]  # one lookup per table, not per cell
        series = {g: [float(col[g]) for col in column] for g in curve[cs[0]].index}
        panels.append(svg_lines(cs, series, mark=c, mark_label=f"c = {c:g}", log_x=True, xlabel="c (log scale)",
                                      title=f"hybrid {m} per slice against c", width=300))  # fmt: skip
    return side_by_side(*panels)


def svg_grid_er(curves: Mapping[tuple[int, float, str], Sequence[float]], sizes, shares, size: int,
                      overlap_share: float, k: int) -> Panels:  # fmt: skip
    """05's picture: mean ER@k of each retriever over the size x overlap grid at ``k``, the current cell marked.
    ``curves``: ``{(size, overlap share, retriever): ChunkGrid.evidence_curve(...)}`` (ER@1, ER@2, ...)."""
    curves = args.mapping("curves", curves, example="{(size, overlap share, retriever): evidence_curve}")
    sizes, shares = args.sequence("sizes", sizes, allow_empty=False), args.sequence("shares", shares, allow_empty=False)
    names = list(dict.fromkeys(r for _, _, r in curves))
    cols = [f"{f:.0%}" for f in shares]
    panels = [
        svg_heatmap(
            sizes,
            cols,
            [[curves[(sz, f, r)][k - 1] for f in shares] for sz in sizes],
            mark=(size, f"{overlap_share:.0%}"),
            mark_label=f"size {size}, overlap {overlap_share:.0%}",
            title=f"ER@{k} {r}",
            xlabel="overlap",
            ylabel="size (words)",
        )  # fmt: skip
        for r in names
    ]
    return side_by_side(*panels)


def svg_routing(by_k: Mapping[int, Mapping[str, float]], k: int) -> Panels:
    """09's picture: left, where the window filter sends the requests at each k (``share to <model>`` of
    :func:`labkit.measures.router.routing_at_k`, what no model holds as ``none``); right, the filter's errors against k
    (recall, overflow, overpay). ``by_k``: ``{k: routing_at_k(...)}``; ``k``: the one marked. HTML, two panels."""
    by_k = args.mapping("by_k", by_k, example="{k: router.routing_at_k(...)}")
    if not by_k:
        raise ValueError("by_k is empty: give {k: router.routing_at_k(...)} for at least one k")
    ks = sorted(by_k)
    if k not in by_k:
        raise ValueError(f"k must be one of the k values of by_k ({ks[0]}..{ks[-1]}), got {k!r}")
    models = [name.removeprefix("share to ") for name in by_k[ks[0]] if name.startswith("share to ")]
    if not models:
        raise ValueError("by_k must hold router.routing_at_k(...) rows: no 'share to <model>' in them")
    shares = {m: [by_k[x][f"share to {m}"] for x in ks] for m in models}
    shares["none"] = [max(0.0, 1 - sum(by_k[x][f"share to {m}"] for m in models)) for x in ks]
    colours = {m: PALETTE[i % len(PALETTE)] for i, m in enumerate(models)} | {"none": "#c4463a"}
    left = svg_stacked_bars(ks, shares, colours=colours, mark=k, mark_label=f"k = {k}", xlabel="k (chunks)",
                            title="where the filter sends the requests", width=330)  # fmt: skip
    errors = {name: [by_k[x][f"filter {name}"] for x in ks] for name in ("recall", "overflow", "overpay")}
    right = svg_lines(ks, errors, mark=k, mark_label=f"k = {k}", xlabel="k (chunks)", ylabel="share of requests",
                      title="the chars/4 filter's errors", width=300)  # fmt: skip
    return side_by_side(left, right)


def svg_triage_shares(
    sweep: Mapping[int, Mapping[str, int]], k: int, cells: Sequence[str], title: str = "", colours=None
) -> Svg:
    """07's picture: the shares of the triage cells (``cells``, bottom up) against k, ``k`` marked. ``sweep``:
    ``{k: triage.triage(traces_at(k), k)}`` (a reader recorded at one k has one bar)."""
    sweep = args.mapping("sweep", sweep, example="{k: triage.triage(traces, k)}")
    cells = args.strings("cells", cells, allow_empty=False)
    if not sweep:
        raise ValueError("sweep is empty: give {k: triage.triage(traces, k)} for at least one k")
    ks = sorted(sweep)
    if k not in sweep:
        raise ValueError(f"k must be one of the k values of sweep {ks}, got {k!r}")
    segments = {cell: [sweep[x].get(cell, 0) for x in ks] for cell in cells}
    return svg_stacked_bars(
        ks,
        segments,
        colours=colours,
        mark=k,
        mark_label=f"k = {k}",
        xlabel="k (chunks read)",
        title=title or "triage cells against k",
        width=360 if len(ks) > 3 else 240,
    )
