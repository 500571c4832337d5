"""05's explorer: chunk size, overlap and k against per-slice Recall@k, nDCG@k and evidence recall, with what the
chunking costs, and the evidence-recall grid as a picture (:mod:`labkit.ui.widgets` re-exports it)."""

from __future__ import annotations

import html
from typing import Any

import ipywidgets as w

from labkit.core import args
from labkit.retrieval.grid import budget_k
from labkit.ui import plots
from labkit.ui.plots.svg import side_by_side, svg_heatmap
from labkit.ui.widgets.explorer import LAYOUT, STYLE, Explorer
from labkit.ui.widgets.rankings import table_html

__all__ = ["ChunkGridExplorer", "MODES", "chunk_grid_view", "costs_html", "grid_er_picture"]


# ---------------------------------------------------------------- 05: the chunk grid


IGNORED_HANDLE = "#c8c8c8"
"""The handle colour of the slider the explorer's mode ignores (greyed, still movable)."""
MODES = ("equal budget", "shared k")
"""How the explorer picks k: ``"equal budget"`` (k per size, :func:`labkit.retrieval.grid.budget_k`: every size reads
about the same number of words) or ``"shared k"`` (one k for every size: bigger chunks read more words)."""


def chunk_grid_view(grid, size: int, overlap_share: float, k: int = 10, mode: str = "shared k",
                    budget: int = 1280) -> dict[str, Any]:  # fmt: skip
    """One configuration of a :class:`labkit.retrieval.grid.ChunkGrid`; ``overlap_share`` is a fraction of ``size``.

    ``mode="equal budget"`` reads ``k = budget_k(size, budget)`` chunks (``max(1, budget // size)``: about ``budget``
    words whatever the size) and ignores ``k``; ``mode="shared k"`` reads ``k`` chunks at every size. The view's
    ``k`` is the one used. Below this function ``overlap`` is always in words, as
    :func:`labkit.text.chunking.chunk_corpus` takes it: the share is turned into words here
    (``int(size * overlap_share)``), once, and ``view["overlap"]`` holds words.
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES} ('equal budget': k per size for about `budget` words read), "
                         f"got {mode!r}")  # fmt: skip
    words = int(size * args.finite_number("overlap_share", overlap_share, minimum=0, maximum=0.99))
    if mode == "equal budget":
        k = budget_k(size, budget)
    table = grid.evaluate(size, words, k, evidence=True)
    return {
        "size": size,
        "overlap": words,
        "k": k,
        "mode": mode,
        "budget": budget if mode == "equal budget" else None,
        "costs": grid.costs(size, words, k),
        "table": table,
    }


def costs_html(view: dict[str, Any]) -> str:
    """The chunk grid's costs line: one ``data-cost`` per cost, four significant digits."""
    args.fields("view", view, ("costs", "size", "overlap"), "chunk_grid_view(...)")
    costs = ", ".join(
        f'{html.escape(name)} <b data-cost="{html.escape(name)}">{v:.4g}</b>' for name, v in view["costs"].items()
    )
    how = (
        f'k = <b data-read="k">{view["k"]}</b> for a budget of {view["budget"]} words'
        if view.get("mode") == "equal budget"
        else f'k = <b data-read="k">{view["k"]}</b> at every size'
    )
    return f'<div class="lk-costs">size {view["size"]}, overlap {view["overlap"]} words, {how}: {costs}</div>'


def grid_er_picture(curves, sizes, shares, size: int, overlap_share: float, k: int, budget: int | None = None):
    """05's picture: each retriever's mean ER over the size x overlap grid, the current cell marked. ``budget=None``:
    at one shared ``k`` (:func:`labkit.ui.plots.svg_grid_er`); a budget in words: each size at its own
    ``budget_k(size, budget)``, so the cells compare equal numbers of words read. ``curves`` as ``svg_grid_er``'s."""
    if budget is None:
        return plots.svg_grid_er(curves, sizes, shares, size, overlap_share, k)
    curves = args.mapping("curves", curves, example="{(size, overlap share, retriever): evidence_curve}")
    ks = {sz: budget_k(sz, budget) for sz in sizes}
    short = [(key, len(c)) for key, c in curves.items() if len(c) < ks[key[0]]]
    if short:
        (sz, f, r), n = short[0]
        raise ValueError(f"curves[({sz}, {f}, {r!r})] stops at ER@{n}, but a budget of {budget} words reads "
                         f"{ks[sz]} chunks of {sz}: compute the curves to max_k >= {ks[sz]}")  # fmt: skip
    names = list(dict.fromkeys(r for _, _, r in curves))
    cols = [f"{f:.0%}" for f in shares]
    read = ", ".join(f"{ks[sz]}" for sz in sizes)
    return side_by_side(*(
        svg_heatmap(sizes, cols, [[curves[(sz, f, r)][ks[sz] - 1] for f in shares] for sz in sizes],
                    mark=(size, f"{overlap_share:.0%}"), mark_label=f"size {size}, overlap {overlap_share:.0%}",
                    title=f"ER@k {r}, ~{budget} words (k = {read})", xlabel="overlap", ylabel="size (words)")
        for r in names))  # fmt: skip


class ChunkGridExplorer(Explorer):
    """Pick a chunk size, an overlap, and how k is chosen; see per-slice metrics and what the chunking costs.

    Wraps :meth:`labkit.retrieval.grid.ChunkGrid.evaluate` and :meth:`labkit.retrieval.grid.ChunkGrid.costs`
    (:func:`chunk_grid_view`). ``mode`` (control "compare at"): ``"equal budget"``, the default, reads
    ``budget_k(size, budget)`` chunks at each size (about ``budget`` words whatever the size; control "budget
    (words)"), ``"shared k"`` reads ``k`` chunks at every size (control "k"), the comparison chapter 05 warns about.
    The control the mode ignores is left movable (a move changes nothing; the costs line says which k is read): a
    control disabled from the kernel would swallow a key press the page sends before the kernel re-enables it. It is
    greyed instead (its handle, :data:`IGNORED_HANDLE`) and its tooltip says why (:meth:`mark_ignored`).
    A configuration is chunked, indexed and evaluated the first time it is chosen, then cached. The picture
    (:func:`grid_er_picture`) is each retriever's ER over the whole grid at the current budget or k, the current
    cell marked: every chunking of the grid is built with the explorer (chapter 05 has built them all by then) and
    its ER@1..max computed in one pass (:meth:`labkit.retrieval.grid.ChunkGrid.evidence_curve`).
    """

    css_class = "lk-chunk-grid"

    def __init__(self, grid, sizes=(64, 128, 256), overlap_shares=(0.0, 0.25, 0.5), size=128, overlap_share=0.25, k=10,
                 mode="equal budget", budget=1280, budgets=(320, 640, 960, 1280)):  # fmt: skip
        if not hasattr(grid, "retrievers") or not hasattr(grid, "evidence_curve"):
            raise ValueError(
                f"grid must be a labkit.retrieval.grid.ChunkGrid (grid.ChunkGrid(handbook, ...)), got {grid!r:.60}"
            )
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        budgets = [args.whole_number(f"budgets[{i}]", b) for i, b in enumerate(args.sequence("budgets", budgets))]
        if budget not in budgets:
            raise ValueError(f"budget must be one of budgets {budgets} (words read), got {budget!r}")
        self.grid = grid
        self.mode = w.ToggleButtons(options=[("equal reading budget", "equal budget"), ("shared k", "shared k")],
                                    value=mode, description="compare at", style=STYLE)  # fmt: skip
        self.budget = w.SelectionSlider(options=budgets, value=budget, description="budget (words)",
                                        continuous_update=False, layout=LAYOUT, style=STYLE)  # fmt: skip
        self.size = w.SelectionSlider(options=list(sizes), value=size, description="chunk size (words)",
                                      continuous_update=False, layout=LAYOUT, style=STYLE)  # fmt: skip
        self.overlap = w.SelectionSlider(options=[(f"{f:.0%}", f) for f in overlap_shares], value=overlap_share,
                                         description="overlap", continuous_update=False, layout=LAYOUT,
                                         style=STYLE)  # fmt: skip
        self.k = w.IntSlider(value=k, min=1, max=20, description="k", continuous_update=False, layout=LAYOUT,
                             style=STYLE)  # fmt: skip
        self.costs, self.table, self.chart = w.HTML(), w.HTML(), w.HTML()
        names = [r for r in grid.retrievers if r in ("bm25", "dense", "hybrid")]
        max_k = max(self.k.max, *(budget_k(sz, b) for sz in sizes for b in budgets))
        self.curves = {(sz, f, r): grid.evidence_curve(sz, int(sz * f), r, max_k)
                       for sz in sizes for f in overlap_shares for r in names}  # fmt: skip
        self._views: dict[tuple, dict[str, Any]] = {}
        self.mode.observe(lambda _: self.mark_ignored(), names="value")
        self.mark_ignored()
        super().__init__(
            {"size": self.size, "overlap_share": self.overlap, "k": self.k, "mode": self.mode, "budget": self.budget},
            self._view,
            lambda view: {"costs": costs_html(view), "table": table_html(view["table"], index_name="slice"),
                          "chart": str(grid_er_picture(self.curves, sizes, overlap_shares, view["size"],
                                                       view["share"], view["k"], view["budget"]))},
            outputs={"costs": self.costs, "table": self.table, "chart": self.chart},
            summary=lambda view: {key: v for key, v in view.items() if key != "share"}
            | {"table": view["table"].round(4)},
        )  # fmt: skip

    def mark_ignored(self) -> None:
        """Grey the control the current mode ignores and say why in its tooltip; the other one as ipywidgets draws
        it. A style and a tooltip only: the control stays movable (see the class docstring)."""
        budget_mode = self.mode.value == "equal budget"
        for control, ignored, why in (
            (self.k, budget_mode, "k is set by the reading budget"),
            (self.budget, not budget_mode, "the budget is not used: one k for every size"),
        ):
            control.style.handle_color = IGNORED_HANDLE if ignored else None
            control.tooltip = f"not used in this mode ({why}): switch 'compare at' to use it" if ignored else None

    def _view(self, size, overlap_share, k, mode="equal budget", budget=1280):
        """:func:`chunk_grid_view`, each state once (a revisit only redraws; a move of the control the mode ignores
        reuses the view)."""
        key = (size, overlap_share, mode, budget if mode == "equal budget" else k)
        if key not in self._views:
            view = chunk_grid_view(self.grid, size, overlap_share, k, mode=mode, budget=budget)
            self._views[key] = {**view, "share": overlap_share}
        return self._views[key]

    def arrange(self) -> list[w.Widget]:
        return [self.mode, self.budget, self.size, self.overlap, self.k, self.costs,
                w.HBox([self.table, self.chart]), self.message]  # fmt: skip
