"""Interactive controls. With ``plots``, the only module that imports ipywidgets.

Each widget wraps a pure function that the notebook calls first with plain
arguments, and exposes ``.result``: the value it currently shows, so the
next notebook cell can print it (nbval compares that printout; it cannot
see inside widgets). Results are shown in an ``HTML`` widget whose cells
carry ``data-metric`` attributes, which the browser tests read.
"""

from __future__ import annotations

import functools
import html
from collections.abc import Sequence

import ipywidgets as w

from labkit import fusion, metrics, plots, retrieval

__all__ = [
    "MetricsPlayground",
    "metrics_playground",
    "parse_grades",
    "metrics_html",
    "FusionExplorer",
    "QuestionBox",
    "table_html",
    "ChunkGridExplorer",
    "CutoffExplorer",
    "RoutingExplorer",
    "TriageExplorer",
    "FaithfulnessExplorer",
    "faithfulness_html",
]

LAYOUT = w.Layout(width="440px")
STYLE = {"description_width": "150px"}


def error_html(err: BaseException) -> str:
    """An exception as the red line a widget shows in place of its result."""
    return f'<p class="lk-error" style="color:#b00020">{html.escape(type(err).__name__)}: {html.escape(str(err))}</p>'


def _in_place(update):
    """Run a widget's update; on any error show it in the widget (``.lk-error``) and keep the widget working.

    An exception raised in an ipywidgets callback would otherwise vanish into the browser console (or the
    log) and leave the widget frozen on its last result. ``result`` becomes ``{"error": ...}`` so the next
    notebook cell shows it too.
    """

    @functools.wraps(update)
    def run(self, change=None):
        box = self.__dict__.get("_error_box")
        if box is None:
            box = self._error_box = w.HTML()
            self.children = (*self.children, box)
        try:
            update(self, change)
        except Exception as err:  # noqa: BLE001 - a UI callback must never die silently
            box.value = error_html(err)
            self.result = {"error": f"{type(err).__name__}: {err}"}
            return
        box.value = ""

    return run


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
        max_k = max(10, len(grades))
        if k > max_k:
            raise ValueError(f"k must be <= {max_k} in the playground (its slider stops there), got {k}")
        self.grades = w.Text(
            value=", ".join(str(g) for g in grades), description="retrieved grades", layout=LAYOUT, style=STYLE
        )
        self.unretrieved = w.Text(
            value=", ".join(str(g) for g in unretrieved),
            description="judged, not retrieved",
            layout=LAYOUT,
            style=STYLE,
        )
        self.k = w.IntSlider(value=k, min=1, max=max_k, description="k", layout=LAYOUT, style=STYLE)
        self.thr = w.IntSlider(value=thr, min=1, max=3, description="threshold (grade >=)", layout=LAYOUT, style=STYLE)
        self.idcg = w.ToggleButtons(
            options=[("book: re-sort retrieved", "retrieved"), ("trec_eval: all judged", "all_judged")],
            value=idcg,
            description="IDCG",
            style={**STYLE, "button_width": "auto"},
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
        self.chart = w.Image(format="png")
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
        self.add_class("lk-playground")
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

    @_in_place
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
        self.chart.value = plots.figure_png(plots.plot_gain_discount(grades, self.k.value, extra, self.idcg.value))


def metrics_playground(
    grades: Sequence[float] = (0, 2, 0, 3, 1), k: int = 5, thr: int = 1, unretrieved: Sequence[float] = (2,)
) -> MetricsPlayground:
    """The chapter 03 playground (see :class:`MetricsPlayground`)."""
    return MetricsPlayground(grades, k, thr, unretrieved)


def table_html(table) -> str:
    """A metrics table (rows = slices, columns = (metric, retriever)) as HTML with ``data-cell`` keys."""
    metrics_, names = table.columns.get_level_values(0), table.columns.get_level_values(1)
    head = "".join(f"<th>{html.escape(m)}<br>{html.escape(n)}</th>" for m, n in zip(metrics_, names, strict=True))
    rows = []
    for group, row in table.iterrows():
        cells = "".join(
            f'<td class="lk-value" data-cell="{html.escape(f"{m}|{n}|{group}")}" style="font-family:monospace">'
            f"{v:.4f}</td>"
            for (m, n), v in row.items()
        )
        rows.append(f"<tr><th>{html.escape(str(group))}</th>{cells}</tr>")
    return f'<table class="lk-result"><tr><th>slice</th>{head}</tr>{"".join(rows)}</table>'


def _ranking_html(ranking: list[tuple[str, float]], judged: dict[str, int], title: str) -> str:
    items = []
    for chunk_id, score in ranking:
        grade = judged.get(chunk_id, 0)
        mark = f" <b style='color:#2e7d32'>gold, grade {grade}</b>" if grade else ""
        items.append(
            f'<li class="lk-rank" data-chunk="{html.escape(chunk_id)}">'
            f"<code>{html.escape(chunk_id)}</code> {score:.5f}{mark}</li>"
        )
    return f"<div><b>{html.escape(title)}</b><ol>{''.join(items)}</ol></div>"


class FusionExplorer(w.VBox):
    """Sliders for RRF's ``c`` and one weight per retriever; per-slice metrics and one fused ranking update.

    Wraps :func:`labkit.fusion.hybrid_table` and :func:`labkit.fusion.rrf`. ``runs`` are the
    retrievers' deep rankings ``{name: {qid: [chunk ids]}}``, computed once, so a slider move
    only re-fuses and re-evaluates.
    """

    def __init__(self, runs, qrels, groups, questions, c=60, k=10, top_n=5, query=None):
        self.runs, self.qrels, self.groups, self.k, self.top_n = runs, qrels, groups, k, top_n
        self.c = w.IntSlider(value=c, min=1, max=200, description="RRF constant c", continuous_update=False,
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
        self.table = w.HTML()
        self.ranking = w.HTML()
        self.result: dict = {}
        for control in (self.c, self.query, *self.weights.values()):
            control.observe(self._update, names="value")
        super().__init__([self.c, *self.weights.values(), self.table, self.query, self.ranking])
        self.add_class("lk-fusion-explorer")
        self._update()

    @_in_place
    def _update(self, _change=None) -> None:
        weights = [s.value for s in self.weights.values()]
        table = fusion.hybrid_table(self.runs, self.qrels, self.groups, c=self.c.value, weights=weights, k=self.k)
        qid = self.query.value
        fused, score = fusion.rrf([run[qid] for run in self.runs.values()], c=self.c.value, top_n=self.top_n,
                                  weights=weights)  # fmt: skip
        ranking = [(d, score[d]) for d in fused]
        self.result = {"table": table.round(4), "ranking": [d for d, _ in ranking]}
        self.table.value = table_html(table)
        self.ranking.value = _ranking_html(ranking, self.qrels.get(qid, {}), f"fused top {self.top_n} for {qid}")


class QuestionBox(w.VBox):
    """Type any question; see each retriever's top ``k`` side by side (wraps :func:`retrieval.side_by_side`)."""

    def __init__(self, retrievers, question="I can't sign in to the VPN from home", k=5):
        self.retrievers, self.k = retrievers, k
        self.text = w.Text(value=question, description="question", continuous_update=False,
                           layout=w.Layout(width="640px"), style=STYLE)  # fmt: skip
        self.output = w.HTML()
        self.message = w.HTML()
        self.result = None
        self.text.observe(self._update, names="value")
        super().__init__([self.text, self.message, self.output])
        self.add_class("lk-question-box")
        self._update()

    @_in_place
    def _update(self, _change=None) -> None:
        try:
            frame = retrieval.side_by_side(self.text.value, self.retrievers, self.k)
        except ValueError as err:
            self.message.value = f'<span class="lk-error" style="color:#b00020">{html.escape(str(err))}</span>'
            return
        self.message.value = ""
        self.result = frame
        head = "".join(f"<th>{html.escape(c)}</th>" for c in frame.columns)
        body = "".join(
            f"<tr><th>{rank}</th>"
            + "".join(
                f'<td data-cell="{html.escape(f"{c}|{rank}")}"><code>{html.escape(v)}</code></td>'
                for c, v in row.items()
            )  # fmt: skip
            + "</tr>"
            for rank, row in frame.iterrows()
        )
        self.output.value = f'<table class="lk-result"><tr><th>rank</th>{head}</tr>{body}</table>'


class ChunkGridExplorer(w.VBox):
    """Pick a chunk size, an overlap and k; see per-slice metrics and what the chunking costs.

    Wraps :meth:`labkit.grid.ChunkGrid.evaluate` and :meth:`labkit.grid.ChunkGrid.costs`. A
    configuration is chunked, indexed and evaluated the first time it is chosen, then cached.
    """

    def __init__(self, grid, sizes=(64, 128, 256), overlap_fractions=(0.0, 0.25, 0.5), size=128, overlap=0.25, k=10):
        self.grid = grid
        self.size = w.SelectionSlider(options=list(sizes), value=size, description="chunk size (words)",
                                      continuous_update=False, layout=LAYOUT, style=STYLE)  # fmt: skip
        self.overlap = w.SelectionSlider(options=[(f"{f:.0%}", f) for f in overlap_fractions], value=overlap,
                                         description="overlap", continuous_update=False, layout=LAYOUT,
                                         style=STYLE)  # fmt: skip
        self.k = w.IntSlider(value=k, min=1, max=20, description="k", continuous_update=False, layout=LAYOUT,
                             style=STYLE)  # fmt: skip
        self.costs = w.HTML()
        self.table = w.HTML()
        self.result: dict = {}
        for control in (self.size, self.overlap, self.k):
            control.observe(self._update, names="value")
        super().__init__([self.size, self.overlap, self.k, self.costs, self.table])
        self.add_class("lk-chunk-grid")
        self._update()

    @_in_place
    def _update(self, _change=None) -> None:
        size, k = self.size.value, self.k.value
        overlap = int(size * self.overlap.value)
        table = self.grid.evaluate(size, overlap, k, evidence=True)
        costs = self.grid.costs(size, overlap, k)
        self.result = {"size": size, "overlap": overlap, "k": k, "costs": costs, "table": table.round(4)}
        self.costs.value = (
            f'<div class="lk-costs">size {size}, overlap {overlap} words: '
            + ", ".join(
                f'{html.escape(name)} <b data-cost="{html.escape(name)}">{v:.4g}</b>' for name, v in costs.items()
            )
            + "</div>"
        )
        self.table.value = table_html(table)


class CutoffExplorer(w.VBox):
    """One slider, k: MRR@k and hit rate@k per slice for several runs (wraps :func:`metrics.compare_runs`)."""

    def __init__(self, runs, qrels, groups, k=5, max_k=20):
        self.runs, self.qrels, self.groups = runs, qrels, groups
        self.k = w.IntSlider(value=k, min=1, max=max_k, description="k", continuous_update=False, layout=LAYOUT,
                             style=STYLE)  # fmt: skip
        self.table = w.HTML()
        self.result = None
        self.k.observe(self._update, names="value")
        super().__init__([self.k, self.table])
        self.add_class("lk-cutoff-explorer")
        self._update()

    @_in_place
    def _update(self, _change=None) -> None:
        k = self.k.value
        cut = {name: {q: list(r[:k]) for q, r in run.items()} for name, run in self.runs.items()}
        table = metrics.compare_runs(cut, self.qrels, self.groups, (f"RR@{k}", f"hit@{k}"))
        self.result = table.round(4)
        self.table.value = table_html(table)


class RoutingExplorer(w.VBox):
    """One slider, k: prompt sizes, where a window filter routes the requests, the price, the filter's errors.

    Wraps ``stats(k) -> dict`` (the notebook passes a function built on :func:`labkit.router.routing_at_k`);
    each k is computed once, then cached.
    """

    def __init__(self, stats, k=5, max_k=20):
        self._stats, self._cache = stats, {}
        self.k = w.IntSlider(value=k, min=1, max=max_k, description="k (chunks in the prompt)",
                             continuous_update=False, layout=w.Layout(width="480px"),
                             style={"description_width": "190px"})  # fmt: skip
        self.table = w.HTML()
        self.result: dict = {}
        self.k.observe(self._update, names="value")
        super().__init__([self.k, self.table])
        self.add_class("lk-routing-explorer")
        self._update()

    @_in_place
    def _update(self, _change=None) -> None:
        k = self.k.value
        if k not in self._cache:
            self._cache[k] = self._stats(k)
        self.result = dict(self._cache[k])
        rows = "".join(
            f'<tr><th style="text-align:left;padding-right:1em">{html.escape(name)}</th>'
            f'<td class="lk-value" data-stat="{html.escape(name)}" style="font-family:monospace">{v:.4g}</td></tr>'
            for name, v in self.result.items()
        )
        self.table.value = f'<table class="lk-result">{rows}</table>'


class TriageExplorer(w.VBox):
    """Slider k and a cell picker: the 2x2 counts, the priority, and example traces of the chosen cell.

    Wraps :func:`labkit.triage.triage` and :func:`labkit.triage.priority` over ``traces_at(k)``
    (a function returning the traces of a pipeline that reads the top ``k`` chunks); each k is cached. Each
    example shows what :func:`labkit.triage.drill_down` returns for it, gold span and answer included.
    """

    def __init__(self, traces_at, k=5, max_k=20, n_examples=3):
        from labkit import triage as triage_mod

        self._triage, self._traces_at, self._cache, self.n_examples = triage_mod, traces_at, {}, n_examples
        self.k = w.IntSlider(value=k, min=1, max=max_k, description="k (chunks read)", continuous_update=False,
                             layout=LAYOUT, style=STYLE)  # fmt: skip
        self.cell = w.ToggleButtons(options=list(triage_mod.QUADRANTS), value="GEN_FAIL", description="examples of",
                                    style={**STYLE, "button_width": "auto"})  # fmt: skip
        self.table = w.HTML()
        self.examples = w.HTML()
        self.result: dict = {}
        for control in (self.k, self.cell):
            control.observe(self._update, names="value")
        super().__init__([self.k, self.table, self.cell, self.examples])
        self.add_class("lk-triage-explorer")
        self._update()

    @_in_place
    def _update(self, _change=None) -> None:
        k = self.k.value
        if k not in self._cache:
            self._cache[k] = self._traces_at(k)
        traces = self._cache[k]
        counts = self._triage.triage(traces, k)
        first = self._triage.priority(counts)
        chosen = [t for t in traces if self._triage.quadrant(t, k) == self.cell.value][: self.n_examples]
        self.result = {"k": k, "counts": counts, "priority": first, "examples": [t["qid"] for t in chosen]}
        n = len(traces)
        rows = "".join(
            f'<tr><th style="text-align:left;padding-right:1em">{q}</th>'
            f'<td class="lk-value" data-count="{q}" style="font-family:monospace">{c}</td>'
            f'<td style="font-family:monospace;padding-left:1em">{c / n:.1%}</td></tr>'
            for q, c in counts.items()
        )
        self.table.value = (
            f'<table class="lk-result">{rows}</table><p>fix first: <b class="lk-priority">{html.escape(first)}</b></p>'
        )
        items = "".join(  # each example as triage.drill_down reads it: where the gold sat, its span, the answer
            f'<li class="lk-example" data-qid="{html.escape(d["qid"])}"><b>{html.escape(d["qid"])}</b> '
            f'{html.escape(d["question"])}<div style="font-size:0.85em;line-height:1.4">gold: <code>'
            + html.escape(", ".join(f"{g} ({f'rank {r}' if r else 'not read'})" for g, r in d["gold_ranks"].items()))
            + f"</code>; read: <code>{html.escape(', '.join(t['retrieved'][:k]))}</code><br>gold span: "
            + (" | ".join(f'<q class="lk-gold-span">{html.escape(s)}</q>' for s in d["gold_spans"]) or "not recorded")
            + f'<br>answer{"" if d["answer_has_span"] else " (holds no gold span)"}: <q class="lk-answer">'
            f"{html.escape(d['answer'][:160])}{'…' if len(d['answer']) > 160 else ''}</q></div></li>"
            for t, d in ((t, self._triage.drill_down(t, k)) for t in chosen)
        )
        self.examples.value = f"<ol>{items}</ol>" if items else "<p>no trace in this cell</p>"


_VERDICT_COLOUR = {"supported": "#1a7f37", "unsupported": "#9a6700", "contradicted": "#cf222e", None: "#6e7781"}


def faithfulness_html(row: dict, result, mode: str = "PASS/FAIL") -> str:
    """One judged answer as HTML: the question, the answer's claims with verdicts and quotes, the score or
    PASS/FAIL, and the context with every quote that really occurs in it highlighted (``<mark>``)."""
    from labkit.faithfulness import quote_in_context

    if mode not in ("PASS/FAIL", "score"):
        raise ValueError(f"mode must be 'PASS/FAIL' or 'score', got {mode!r}")
    head = (
        f'<span class="lk-status" data-status="{result.status}"><b>{result.status}</b></span>'
        if mode == "PASS/FAIL"
        else f'<span class="lk-score">score <b>{"n/a" if result.score is None else f"{result.score:.2f}"}</b></span>'
    )
    claims = "".join(
        f'<li class="lk-claim" data-verdict="{v.verdict or "error"}">'
        f'<b style="color:{_VERDICT_COLOUR[v.verdict]}">{html.escape(v.verdict or "judge error")}</b>'
        f"{' (guard)' if v.guarded else ''} {html.escape(v.claim)}"
        + (f'<br><small>quote: "{html.escape(v.quote[:160])}"</small>' if v.quote else "")
        + "</li>"
        for v in result.verdicts
    )
    context = html.escape(row["context"])
    for v in result.verdicts:
        q = v.quote.strip()
        if q and quote_in_context(q, row["context"]) and html.escape(q) in context:
            context = context.replace(html.escape(q), f"<mark>{html.escape(q)}</mark>", 1)
    return (
        f"<p><b>{html.escape(row['qid'])}</b> {html.escape(row['question'])}</p>"
        f"<p>answer: {html.escape(row['answer'])}</p><p>{head}</p><ol>{claims}</ol>"
        f'<details><summary>context the reader saw</summary><pre style="white-space:pre-wrap">{context}</pre></details>'
    )


class FaithfulnessExplorer(w.VBox):
    """Pick a question and a judge: the answer's claims with verdicts, the score or PASS/FAIL, the evidence.

    Wraps :func:`labkit.faithfulness.faithfulness` (and :func:`faithfulness_html`) over recorded answers
    (``rows``: dicts with qid, question, answer, context) and named judges.
    """

    def __init__(self, rows, judges, qid=None, judge=None, mode="PASS/FAIL"):
        from labkit import faithfulness as fa

        self._fa, self._rows = fa, {r["qid"]: r for r in rows}
        if not self._rows:
            raise ValueError("rows must hold at least one answered question")
        self._judges = dict(judges)
        self.question = w.Dropdown(options=list(self._rows), value=qid or next(iter(self._rows)),
                                   description="question", layout=LAYOUT, style=STYLE)  # fmt: skip
        self.judge = w.Dropdown(options=list(self._judges), value=judge or next(iter(self._judges)),
                                description="judge", layout=LAYOUT, style=STYLE)  # fmt: skip
        self.mode = w.ToggleButtons(options=["PASS/FAIL", "score"], value=mode, description="show",
                                    style={**STYLE, "button_width": "auto"})  # fmt: skip
        self.view = w.HTML()
        self.result: dict = {}
        for control in (self.question, self.judge, self.mode):
            control.observe(self._update, names="value")
        super().__init__([self.question, self.judge, self.mode, self.view])
        self.add_class("lk-faithfulness-explorer")
        self._update()

    @_in_place
    def _update(self, _change=None) -> None:
        row = self._rows[self.question.value]
        try:
            res = self._fa.faithfulness(row["answer"], row["context"], self._judges[self.judge.value])
        except (ValueError, LookupError) as err:  # shown in place; the widget keeps working
            self.view.value = f'<p class="lk-error" style="color:#cf222e">{html.escape(str(err))}</p>'
            self.result = {"error": str(err)}
            return
        self.view.value = faithfulness_html(row, res, self.mode.value)
        self.result = {
            "qid": row["qid"],
            "judge": self.judge.value,
            "verdicts": [v.verdict for v in res.verdicts],
            "score": None if res.score is None else round(res.score, 4),
            "status": res.status,
        }
