"""05's explorer: chunk size, overlap and k against per-slice Recall@k, nDCG@k and evidence recall, with what the
chunking costs, and the evidence-recall grid as a picture (:mod:`labkit.ui.widgets` re-exports it)."""

from __future__ import annotations

import html
from typing import Any

import ipywidgets as w

from labkit.core import args
from labkit.ui import plots
from labkit.ui.widgets.explorer import LAYOUT, STYLE, Explorer
from labkit.ui.widgets.rankings import table_html

__all__ = ["ChunkGridExplorer", "chunk_grid_view", "costs_html"]


# ---------------------------------------------------------------- 05: the chunk grid


def chunk_grid_view(grid, size: int, overlap_share: float, k: int) -> dict[str, Any]:
    """One configuration of a :class:`labkit.retrieval.grid.ChunkGrid`; ``overlap_share`` is a fraction of ``size``.

    Below this function ``overlap`` is always in words, as :func:`labkit.text.chunking.chunk_corpus` takes it: the
    share is turned into words here (``int(size * overlap_share)``), once, and ``view["overlap"]`` holds words.
    """
    words = int(size * args.finite_number("overlap_share", overlap_share, minimum=0, maximum=0.99))
    table = grid.evaluate(size, words, k, evidence=True)
    return {"size": size, "overlap": words, "k": k, "costs": grid.costs(size, words, k), "table": table}


def costs_html(view: dict[str, Any]) -> str:
    """The chunk grid's costs line: one ``data-cost`` per cost, four significant digits."""
    args.fields("view", view, ("costs", "size", "overlap"), "chunk_grid_view(...)")
    costs = ", ".join(
        f'{html.escape(name)} <b data-cost="{html.escape(name)}">{v:.4g}</b>' for name, v in view["costs"].items()
    )
    return f'<div class="lk-costs">size {view["size"]}, overlap {view["overlap"]} words: {costs}</div>'


class ChunkGridExplorer(Explorer):
    """Pick a chunk size, an overlap and k; see per-slice metrics and what the chunking costs.

    Wraps :meth:`labkit.retrieval.grid.ChunkGrid.evaluate` and :meth:`labkit.retrieval.grid.ChunkGrid.costs`
    (:func:`chunk_grid_view`). A configuration is chunked, indexed and evaluated the first time it is chosen,
    then cached. The picture (:func:`labkit.ui.plots.svg_grid_er`) is each retriever's ER@k over the whole grid at the
    current k, the current cell marked: every chunking of the grid is built with the explorer (chapter 05 has
    built them all by then) and its ER@1..20 computed in one pass
    (:meth:`labkit.retrieval.grid.ChunkGrid.evidence_curve`).
    """

    css_class = "lk-chunk-grid"

    def __init__(self, grid, sizes=(64, 128, 256), overlap_shares=(0.0, 0.25, 0.5), size=128, overlap_share=0.25, k=10):
        if not hasattr(grid, "retrievers") or not hasattr(grid, "evidence_curve"):
            raise ValueError(
                f"grid must be a labkit.retrieval.grid.ChunkGrid (grid.ChunkGrid(handbook, ...)), got {grid!r:.60}"
            )
        self.grid = grid
        self.size = w.SelectionSlider(options=list(sizes), value=size, description="chunk size (words)",
                                      continuous_update=False, layout=LAYOUT, style=STYLE)  # fmt: skip
        self.overlap = w.SelectionSlider(options=[(f"{f:.0%}", f) for f in overlap_shares], value=overlap_share,
                                         description="overlap", continuous_update=False, layout=LAYOUT,
                                         style=STYLE)  # fmt: skip
        self.k = w.IntSlider(value=k, min=1, max=20, description="k", continuous_update=False, layout=LAYOUT,
                             style=STYLE)  # fmt: skip
        self.costs, self.table, self.chart = w.HTML(), w.HTML(), w.HTML()
        names = [r for r in grid.retrievers if r in ("bm25", "dense", "hybrid")]
        self.curves = {(sz, f, r): grid.evidence_curve(sz, int(sz * f), r, self.k.max)
                       for sz in sizes for f in overlap_shares for r in names}  # fmt: skip
        self._views: dict[tuple, dict[str, Any]] = {}
        super().__init__(
            {"size": self.size, "overlap_share": self.overlap, "k": self.k},
            self._view,
            lambda view: {"costs": costs_html(view), "table": table_html(view["table"]),
                          "chart": str(plots.svg_grid_er(self.curves, sizes, overlap_shares, view["size"],
                                                     view["share"], view["k"]))},
            outputs={"costs": self.costs, "table": self.table, "chart": self.chart},
            summary=lambda view: {key: v for key, v in view.items() if key != "share"}
            | {"table": view["table"].round(4)},
        )  # fmt: skip

    def _view(self, size, overlap_share, k):
        """:func:`chunk_grid_view`, each state once (a revisit only redraws)."""
        key = (size, overlap_share, k)
        if key not in self._views:
            self._views[key] = {**chunk_grid_view(self.grid, size, overlap_share, k), "share": overlap_share}
        return self._views[key]

    def arrange(self) -> list[w.Widget]:
        return [*self.controls.values(), self.costs, w.HBox([self.table, self.chart]), self.message]
