"""Explorers of rankings and their metrics: 03's playground, 01's fusion explorer and question box, 04's cutoff
explorer, 05's chunk grid.

Each is a thin :class:`labkit.ui.widgets.explorer.Explorer`: its controls, the pure function it wraps, and a renderer
from
that function's value to HTML, defined here as plain functions so that tests check them without a browser.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

import ipywidgets as w

from labkit.core import args
from labkit.data.toys import RUNNING_GRADES, RUNNING_UNRETRIEVED
from labkit.measures import fusion, metrics
from labkit.retrieval import retrievers as retrieval
from labkit.ui import plots
from labkit.ui.widgets.explorer import LAYOUT, STYLE, Explorer, html_table

__all__ = [
    "MetricsPlayground",
    "metrics_playground",
    "parse_grades",
    "grades_text",
    "playground_view",
    "metrics_html",
    "table_html",
    "FusionExplorer",
    "fusion_view",
    "ranking_html",
    "QuestionBox",
    "CutoffExplorer",
    "cutoff_table",
]

# ---------------------------------------------------------------- 03: the metrics playground


def parse_grades(text: str) -> list[float]:
    """``"0, 2, 0, 3, 1"`` -> ``[0, 2, 0, 3, 1]`` (commas or spaces); a clear error otherwise."""
    if not isinstance(text, str):
        raise ValueError(f"grades must be typed as text like '0, 2, 0, 3, 1', got {type(text).__name__} {text!r:.60}")
    parts = [p for p in text.replace(",", " ").split() if p]
    out = []
    for p in parts:
        try:
            v = float(p)
        except ValueError:
            raise ValueError(f"grades: {p!r} is not a number; type grades like 0, 2, 0, 3, 1") from None
        out.append(int(v) if v.is_integer() else v)
    return out


def grades_text(grades: Sequence[float]) -> str:
    """``[0, 2, 0, 3, 1]`` -> ``"0, 2, 0, 3, 1"``, as the playground's text boxes show grades."""
    checked = args.numbers("grades", grades)
    return ", ".join(str(g) for g in (int(x) if x.is_integer() else x for x in checked))


def playground_view(grades: str, unretrieved: str, k: int, thr: int, idcg: str) -> dict[str, Any]:
    """The playground's text boxes parsed and every metric computed
    (:func:`labkit.measures.metrics.ranking_metrics`)."""
    rels, extra = parse_grades(grades), parse_grades(unretrieved)
    if not rels:
        raise ValueError("grades: type at least one grade, e.g. 0, 2, 0, 3, 1")
    result = metrics.ranking_metrics(rels, k, thr, extra, idcg)
    return {"metrics": result, "grades": rels, "unretrieved": extra, "k": k, "idcg": idcg}


def metrics_html(result: dict[str, float | None]) -> str:
    """The playground's result table as HTML (one ``data-metric`` cell per metric; None shows "undefined")."""
    return html_table(result, ".4f", attr="metric", missing="undefined")


class MetricsPlayground(Explorer):
    """Edit grades, move k and the threshold, flip the IDCG convention, reorder documents.

    Wraps :func:`labkit.measures.metrics.ranking_metrics` and draws :func:`labkit.ui.plots.plot_gain_discount`'s bars
    with
    :func:`labkit.ui.plots.svg_gain_discount` (:func:`playground_view`). A grade that is not a number is the
    learner's input: the message names it and the last good numbers stay.
    """

    css_class = "lk-playground"
    input_errors = (ValueError,)

    def __init__(
        self,
        grades: Sequence[float] = RUNNING_GRADES,
        k: int = 5,
        thr: int = 1,
        unretrieved: Sequence[float] = RUNNING_UNRETRIEVED,
        idcg: str = "retrieved",
    ):
        if not len(grades):
            raise ValueError("grades must hold at least one retrieved document's grade, e.g. (3, 0, 2, 1)")
        metrics.ranking_metrics(grades, k, thr, unretrieved, idcg)  # validate before building controls
        max_k = max(10, len(grades))
        if k > max_k:
            raise ValueError(f"k must be <= {max_k} in the playground (its slider stops there), got {k}")
        if thr not in (1, 2, 3):  # the slider's range: any other value would be clamped without a word
            raise ValueError(f"thr must be 1, 2 or 3 in the playground (the grades it shows), got {thr!r}")
        self.grades = w.Text(value=grades_text(grades), description="retrieved grades", layout=LAYOUT, style=STYLE)
        self.unretrieved = w.Text(value=grades_text(unretrieved), description="judged, not retrieved",
                                  layout=LAYOUT, style=STYLE)  # fmt: skip
        self.k = w.IntSlider(value=k, min=1, max=max_k, description="k", layout=LAYOUT, style=STYLE)
        self.thr = w.IntSlider(value=thr, min=1, max=3, description="threshold (grade >=)", layout=LAYOUT, style=STYLE)
        self.idcg = w.ToggleButtons(
            options=[("book: re-sort retrieved", "retrieved"), ("trec_eval: all judged", "all_judged")],
            value=idcg,
            description="IDCG",
            style={**STYLE, "button_width": "auto"},
        )
        self.position = w.Dropdown(options=list(range(1, len(grades) + 1)), value=1, description="move rank",
                                   style=STYLE, layout=w.Layout(width="260px"))  # fmt: skip
        self.up = w.Button(description="up", icon="arrow-up", layout=w.Layout(width="80px"))
        self.down = w.Button(description="down", icon="arrow-down", layout=w.Layout(width="80px"))
        self.up.on_click(lambda _: self._move(-1))
        self.down.on_click(lambda _: self._move(+1))
        controls = {"grades": self.grades, "unretrieved": self.unretrieved, "k": self.k, "thr": self.thr,
                    "idcg": self.idcg}  # fmt: skip
        self.table, self.chart = w.HTML(), w.HTML()
        super().__init__(controls, playground_view, self._render, outputs={"table": self.table, "chart": self.chart},
                         summary=lambda view: view["metrics"])  # fmt: skip
        self.grades.observe(self._renumber, names="value")

    @staticmethod
    def _render(view: dict[str, Any]) -> dict[str, Any]:
        # SVG text drawn in Python (~2 ms), not a matplotlib PNG (~170 ms per move on two cores)
        chart = plots.svg_gain_discount(view["grades"], view["k"], view["unretrieved"], view["idcg"])
        return {"table": metrics_html(view["metrics"]), "chart": str(chart)}

    def arrange(self) -> list[w.Widget]:
        moves = w.HBox([self.position, self.up, self.down])
        return [*self.controls.values(), moves, self.message, w.HBox([self.table, self.chart])]

    def current_grades(self) -> list[float]:
        return parse_grades(self.grades.value)

    def _renumber(self, _change=None) -> None:
        """The "move rank" dropdown offers one rank per grade (after a valid edit)."""
        try:
            n = len(self.current_grades())
        except ValueError:
            return
        if n and list(self.position.options) != list(range(1, n + 1)):
            self.position.options = list(range(1, n + 1))

    def _move(self, step: int) -> None:
        try:
            grades = self.current_grades()
        except ValueError:
            return
        i = self.position.value - 1
        j = i + step
        if 0 <= i < len(grades) and 0 <= j < len(grades):
            grades[i], grades[j] = grades[j], grades[i]
            self.grades.value = grades_text(grades)
            self.position.value = j + 1


def metrics_playground(
    grades: Sequence[float] = RUNNING_GRADES,
    k: int = 5,
    thr: int = 1,
    unretrieved: Sequence[float] = RUNNING_UNRETRIEVED,
) -> MetricsPlayground:
    """The chapter 03 playground (see :class:`MetricsPlayground`)."""
    return MetricsPlayground(grades, k, thr, unretrieved)


# ---------------------------------------------------------------- tables of metrics per slice (01, 04, 05)


def table_html(table: Any, index_name: str | None = None) -> str:
    """A metrics table (columns = (metric, retriever)) as HTML: ``data-cell="<metric>|<retriever>|<row>"``, four
    decimals. The rows' header is ``index_name``, else the table's own index name; a table whose rows have neither
    is refused rather than labelled with a guess."""
    name = index_name if index_name is not None else getattr(getattr(table, "index", None), "name", None)
    if not isinstance(name, str) or not name.strip():
        raise ValueError("table_html needs to know what the table's rows are: pass index_name (e.g. 'slice'), or "
                         "name the index (table.index.name = 'slice')")  # fmt: skip
    return html_table(table, ".4f", index_name=name, key="{column}|{row}")


# ---------------------------------------------------------------- 01: fusion explorer and question box


def fusion_view(runs, qrels, groups, c: float, weights: Sequence[float], qid: str, k: int = 10, top_n: int = 5):
    """The per-slice table of :func:`labkit.measures.fusion.hybrid_table` and the fused top ``top_n`` of one query,
    scored."""
    table = fusion.hybrid_table(runs, qrels, groups, c=c, weights=weights, k=k)
    by_text = {name: args.by_id(f"runs[{name!r}]", run) for name, run in runs.items()}
    lacking = [name for name, run in by_text.items() if str(qid) not in run]
    if lacking:
        raise ValueError(f"qid {qid!r} has no ranking in runs[{lacking[0]!r}]: pick a query every run retrieved")
    fused, score = fusion.rrf([run[str(qid)] for run in by_text.values()], c=c, top_n=top_n, weights=weights)
    ranking = [(d, score[d]) for d in fused]
    judged = dict(args.by_id("qrels", qrels).get(str(qid), {}))
    return {"table": table, "ranking": ranking, "judged": judged, "qid": qid, "top_n": top_n}


def ranking_html(
    ranking: Sequence[tuple[str, float]], judged: dict[str, int], title: str, texts: Mapping[str, str] | None = None
) -> str:
    """A ranking as a numbered list: ``data-chunk`` per item, its score, its grade if it is gold (or "not gold"),
    and with ``texts`` the first words of the chunk."""
    ranking = args.sequence("ranking", ranking, example='[("hr-leave#0", 0.81), ...]')
    args.mapping("judged", judged, example='{"hr-leave#0": 3}')
    args.text("title", title, allow_empty=True)
    items = []
    for chunk_id, score in ranking:
        grade = judged.get(chunk_id, 0)
        mark = f" <b style='color:#2e7d32'>gold, grade {grade}</b>" if grade else " <span>not gold</span>"
        line = ""
        if texts is not None and chunk_id in texts:
            words = " ".join(texts[chunk_id].split()[:16])
            line = f"<br><small style='color:#555'>{html.escape(words)} …</small>"
        items.append(
            f'<li class="lk-rank" data-chunk="{html.escape(chunk_id)}">'
            f"<code>{html.escape(chunk_id)}</code> {score:.5f}{mark}{line}</li>"
        )
    return f"<div><b>{html.escape(title)}</b><ol>{''.join(items)}</ol></div>"


C_STEPS = (1, 3, 10, 30, 60, 100, 200)
"""The RRF constants the explorer offers: log-spaced, so each step of the slider changes the fused order."""


class FusionExplorer(Explorer):
    """Sliders for RRF's ``c`` (log-spaced steps, :data:`C_STEPS`) and one weight per retriever; per-slice metrics,
    a picture of the hybrid's metrics against every ``c`` (the current one marked) and one fused ranking update
    (each chunk with its first words when ``texts`` maps chunk ids to text).

    Wraps :func:`labkit.measures.fusion.hybrid_table` and :func:`labkit.measures.fusion.rrf` (:func:`fusion_view`), the
    table
    computed by :class:`labkit.measures.fusion.HybridSweep` (the same numbers, ~20x faster). ``runs`` are the
    retrievers' deep rankings ``{name: {qid: [chunk ids]}}``, computed once. A weight's move computes the table
    at every ``c`` of the slider (the picture needs them), so a move of ``c`` only looks one up. The weights'
    controls are named ``"weight <retriever>"``.
    """

    css_class = "lk-fusion-explorer"

    def __init__(self, runs, qrels, groups, questions, c=fusion.DEFAULT_C, k=10, top_n=5, query=None, texts=None):
        self.runs, self.qrels, self.groups, self.k, self.top_n, self.texts = runs, qrels, groups, k, top_n, texts
        self.sweep = fusion.HybridSweep(runs, qrels, groups, k=k)
        self._curves: dict[tuple[float, ...], dict[float, Any]] = {}
        steps = sorted({*C_STEPS, fusion.check_c(c)})
        self.c = w.SelectionSlider(options=steps, value=c, description="RRF constant c", continuous_update=False,
                                   layout=LAYOUT, style=STYLE)  # fmt: skip
        self.weights = {
            name: w.FloatSlider(
                value=1.0,
                min=0.0,
                max=2.0,
                step=0.1,
                description=f"weight {name}",
                continuous_update=False,
                layout=LAYOUT,
                style=STYLE,
            )  # fmt: skip
            for name in runs
        }
        options = [(f"{qid}: {text[:70]}", qid) for qid, text in questions.items()]
        self.query = w.Dropdown(options=options, value=query or options[0][1], description="query",
                                layout=w.Layout(width="640px"), style=STYLE)  # fmt: skip
        controls = {"c": self.c, "query": self.query, **{f"weight {n}": s for n, s in self.weights.items()}}
        self.table, self.chart, self.ranking = w.HTML(), w.HTML(), w.HTML()
        super().__init__(
            controls,
            self._view,
            self._render,
            outputs={"table": self.table, "chart": self.chart, "ranking": self.ranking},
            summary=lambda v: {"table": v["table"].round(4), "ranking": [d for d, _ in v["ranking"]]},
        )

    def curve(self, weights: Sequence[float]) -> dict[float, Any]:
        """``{c: hybrid table}`` for every ``c`` of the slider at ``weights`` (each weights once)."""
        key = tuple(float(x) for x in weights)
        if key not in self._curves:
            self._curves[key] = {x: self.sweep.table(x, key) for x in self.c.options}
        return self._curves[key]

    def _view(self, c, query, **weights):
        ws = [weights[f"weight {n}"] for n in self.runs]
        curve = self.curve(ws)
        fused, score = fusion.rrf([run[query] for run in self.runs.values()], c=c, top_n=self.top_n, weights=ws)
        return {"table": curve[c], "ranking": [(d, score[d]) for d in fused], "judged": dict(self.qrels.get(query, {})),
                "qid": query, "top_n": self.top_n, "c": c, "curve": curve}  # fmt: skip

    def _render(self, view) -> dict[str, str]:
        title = f"fused top {view['top_n']} for {view['qid']}"
        ranking = ranking_html(view["ranking"], view["judged"], title, self.texts)
        chart = str(plots.svg_fusion_by_c(view["curve"], view["c"]))
        return {"table": table_html(view["table"], index_name="slice"), "chart": chart, "ranking": ranking}

    def arrange(self) -> list[w.Widget]:
        return [self.c, *self.weights.values(), self.table, self.chart, self.query, self.ranking, self.message]


class QuestionBox(Explorer):
    """Type any question; see each retriever's top ``k`` side by side (wraps :func:`retrieval.side_by_side`).

    The table's cells are ``data-cell="<retriever>|<rank>"``. An empty question is the learner's input: the
    message says so and the last rankings stay.
    """

    css_class = "lk-question-box"
    input_errors = (ValueError,)

    def __init__(self, retrievers, question="I can't sign in to the VPN from home", k=5):
        self.retrievers, self.k = retrievers, k
        self.text = w.Text(value=question, description="question", continuous_update=False,
                           layout=w.Layout(width="640px"), style=STYLE)  # fmt: skip
        # Enter, Tab or a click here commits the question (the box sends it when it loses focus). The button also
        # keeps Tab's focus in this cell: focus in the next cell makes JupyterLab activate that cell, which held
        # the page for 50-90 ms on 2 cores (a Chromium profile: Notebook._evtFocusIn -> activeCellIndex).
        self.search = w.Button(description="search", tooltip="search (Enter or Tab does the same)",
                               layout=w.Layout(width="90px"))  # fmt: skip
        super().__init__({"question": self.text}, lambda question: retrieval.side_by_side(question, retrievers, k),
                         lambda frame: html_table(frame, key="{column}|{row}"))  # fmt: skip

    def arrange(self) -> list[w.Widget]:
        return [w.HBox([self.text, self.search]), self.message, self.output]


# ---------------------------------------------------------------- 04: the cutoff explorer


def cutoff_table(runs, qrels, groups, k: int):
    """MRR@k and hit rate@k per slice for several runs cut at ``k`` (:func:`labkit.measures.metrics.compare_runs`)."""
    args.mapping("runs", runs, example='{"bm25": bm25_run, "dense": dense_run}')
    k = args.whole_number("k", k)
    cut = {name: {q: list(r[:k]) for q, r in run.items()} for name, run in runs.items()}
    return metrics.compare_runs(cut, qrels, groups, (f"RR@{k}", f"hit@{k}"))


class CutoffExplorer(Explorer):
    """One slider, k: MRR@k and hit rate@k per slice for several runs (wraps :func:`cutoff_table`)."""

    css_class = "lk-cutoff-explorer"

    def __init__(self, runs, qrels, groups, k=5, max_k=20):
        self.runs, self.qrels, self.groups = runs, qrels, groups
        self.k = w.IntSlider(value=k, min=1, max=max_k, description="k", continuous_update=False, layout=LAYOUT,
                             style=STYLE)  # fmt: skip
        self.table = w.HTML()
        super().__init__({"k": self.k}, lambda k: cutoff_table(runs, qrels, groups, k), table_html,
                         outputs={"table": self.table}, summary=lambda table: table.round(4))  # fmt: skip
