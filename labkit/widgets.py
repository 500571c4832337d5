"""Interactive controls. With ``plots``, the only module that imports ipywidgets.

Each widget wraps a pure function that the notebook calls first with plain
arguments, and exposes ``.result``: the value it currently shows, so the
next notebook cell can print it (nbval compares that printout; it cannot
see inside widgets). Results are shown in an ``HTML`` widget whose cells
carry ``data-metric`` attributes, which the browser tests read.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

import ipywidgets as w
import matplotlib.pyplot as plt
from IPython.display import display

from labkit import metrics, plots

__all__ = ["MetricsPlayground", "metrics_playground", "parse_grades", "metrics_html"]

LAYOUT = w.Layout(width="440px")
STYLE = {"description_width": "150px"}


def parse_grades(text: str) -> list[float]:
    """``"0, 2, 0, 3, 1"`` -> ``[0, 2, 0, 3, 1]`` (commas or spaces); a clear error otherwise."""
    parts = [p for p in text.replace(",", " ").split() if p]
    out = []
    for p in parts:
        try:
            v = float(p)
        except ValueError:
            raise ValueError(f"grades: {p!r} is not a number; type grades like 0, 2, 0, 3, 1") from None
        out.append(int(v) if v.is_integer() else v)
    return out


def _fmt(v: float | None) -> str:
    return "undefined" if v is None else f"{v:.4f}"


def metrics_html(result: dict[str, float | None]) -> str:
    """The playground's result table as HTML (one ``data-metric`` cell per metric)."""
    cells = "".join(
        f'<tr><th style="text-align:left;padding-right:1em">{html.escape(name)}</th>'
        f'<td class="lk-value" data-metric="{html.escape(name)}" style="font-family:monospace">{_fmt(v)}</td></tr>'
        for name, v in result.items()
    )
    return f'<table class="lk-result">{cells}</table>'


class MetricsPlayground(w.VBox):
    """Edit grades, move k and the threshold, flip the IDCG convention, reorder documents.

    Wraps :func:`labkit.metrics.ranking_metrics` and :func:`labkit.plots.plot_gain_discount`.
    """

    def __init__(
        self,
        grades: Sequence[float] = (0, 2, 0, 3, 1),
        k: int = 5,
        thr: int = 1,
        unretrieved: Sequence[float] = (2,),
        idcg: str = "retrieved",
    ):
        metrics.ranking_metrics(grades, k, thr, unretrieved, idcg)  # validate before building controls
        self.grades = w.Text(
            value=", ".join(str(g) for g in grades), description="retrieved grades", layout=LAYOUT, style=STYLE
        )
        self.unretrieved = w.Text(
            value=", ".join(str(g) for g in unretrieved),
            description="judged, not retrieved",
            layout=LAYOUT,
            style=STYLE,
        )
        self.k = w.IntSlider(value=k, min=1, max=10, description="k", layout=LAYOUT, style=STYLE)
        self.thr = w.IntSlider(value=thr, min=1, max=3, description="threshold (grade >=)", layout=LAYOUT, style=STYLE)
        self.idcg = w.ToggleButtons(
            options=[("book: re-sort retrieved", "retrieved"), ("trec_eval: all judged", "all_judged")],
            value=idcg,
            description="IDCG",
            style=STYLE,
        )
        self.position = w.Dropdown(
            options=list(range(1, len(grades) + 1)),
            value=1,
            description="move rank",
            style=STYLE,
            layout=w.Layout(width="260px"),
        )
        self.up = w.Button(description="up", icon="arrow-up", layout=w.Layout(width="80px"))
        self.down = w.Button(description="down", icon="arrow-down", layout=w.Layout(width="80px"))
        self.table = w.HTML()
        self.message = w.HTML()
        self.chart = w.Output()
        self.result: dict[str, float | None] = {}
        for control in (self.grades, self.unretrieved, self.k, self.thr, self.idcg):
            control.observe(self._update, names="value")
        self.up.on_click(lambda _: self._move(-1))
        self.down.on_click(lambda _: self._move(+1))
        super().__init__(
            [
                self.grades,
                self.unretrieved,
                self.k,
                self.thr,
                self.idcg,
                w.HBox([self.position, self.up, self.down]),
                self.message,
                w.HBox([self.table, self.chart]),
            ]
        )
        self._update()

    def current_grades(self) -> list[float]:
        return parse_grades(self.grades.value)

    def _move(self, step: int) -> None:
        try:
            grades = self.current_grades()
        except ValueError:
            return
        i = self.position.value - 1
        j = i + step
        if 0 <= i < len(grades) and 0 <= j < len(grades):
            grades[i], grades[j] = grades[j], grades[i]
            self.grades.value = ", ".join(str(g) for g in grades)
            self.position.value = j + 1

    def _update(self, _change=None) -> None:
        try:
            grades = self.current_grades()
            extra = parse_grades(self.unretrieved.value)
            if not grades:
                raise ValueError("grades: type at least one grade, e.g. 0, 2, 0, 3, 1")
            result = metrics.ranking_metrics(grades, self.k.value, self.thr.value, extra, self.idcg.value)
        except ValueError as err:
            self.message.value = f'<span class="lk-error" style="color:#b00020">{html.escape(str(err))}</span>'
            return
        self.message.value = ""
        n = len(grades)
        if list(self.position.options) != list(range(1, n + 1)):
            self.position.options = list(range(1, n + 1))
        self.result = result
        self.table.value = metrics_html(result)
        fig = plots.plot_gain_discount(grades, self.k.value, extra, self.idcg.value)
        with self.chart:
            self.chart.clear_output(wait=True)
            display(fig)
        plt.close(fig)


def metrics_playground(
    grades: Sequence[float] = (0, 2, 0, 3, 1), k: int = 5, thr: int = 1, unretrieved: Sequence[float] = (2,)
) -> MetricsPlayground:
    """The chapter 03 playground (see :class:`MetricsPlayground`)."""
    return MetricsPlayground(grades, k, thr, unretrieved)
