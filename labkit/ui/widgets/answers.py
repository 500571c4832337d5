"""Explorers of generated questions, judged claims and what answers cost: 02's synthetic sets, 06's judged
answers, 09's routing and cascade.

Each is a thin :class:`labkit.ui.widgets.explorer.Explorer`: its controls, the pure function it wraps, and a renderer
from
that function's value to HTML, defined here as plain functions so that tests check them without a browser. The
functions that call a model (a judge, a generator) come in as arguments: a widget never calls one itself.
"""

from __future__ import annotations

import html
from typing import Any

import ipywidgets as w

from labkit.core import args
from labkit.judges.faithfulness import faithfulness, quote_in_context
from labkit.measures import stats
from labkit.studies import cascade
from labkit.studies import synth_data as sd
from labkit.ui import plots
from labkit.ui.widgets.explorer import LAYOUT, STYLE, Explorer, html_table

__all__ = [
    "SynthExplorer",
    "synth_html",
    "FaithfulnessExplorer",
    "faithfulness_view",
    "faithfulness_html",
    "RoutingExplorer",
    "routing_html",
    "CascadeExplorer",
    "cascade_html",
]

# ---------------------------------------------------------------- 02: synthetic questions, filtered


def synth_html(view: Any) -> str:
    """What :func:`labkit.studies.synth_data.filter_view` returns, as the explorer shows it."""
    args.attributes("view", view, ("counts", "examples", "table"), "studies.synth_data.filter_view(...)")

    def rating(r) -> str:
        return "" if r.realism != r.realism else f"{r.realism:.0f}"  # NaN: not rated

    examples = "".join(
        f'<li class="lk-example" data-verdict="{html.escape(r.verdict)}">'
        f"<b>{html.escape(r.verdict)}</b> [{html.escape(r.set)}, rating {rating(r)}] {html.escape(r.question)}</li>"
        for r in view.examples.itertuples()
    )
    return (
        "<b>Kept and dropped by the threshold</b>"
        + html_table(view.counts)
        + "<b>Recall@10 and MRR@10, bootstrap 95% intervals</b>"
        + html_table(stats.fmt_ci_table(view.table), index_name="questions")
        + f"<b>Examples</b><ul>{examples}</ul>"
    )


class SynthExplorer(Explorer):
    """Chapter 02: a realism threshold, the hard set's distractor method and a retriever (wraps ``filter_view``)."""

    css_class = "lk-synth-explorer"

    def __init__(self, frame: Any, threshold: int = 4, method: str = "both", retriever: str = "hybrid"):
        controls = {
            "threshold": w.IntSlider(value=threshold, min=1, max=5, description="keep rating ≥",
                                     continuous_update=False, layout=LAYOUT, style=STYLE),
            "method": w.ToggleButtons(options=list(sd.METHODS), value=method, description="distractors",
                                      style=STYLE),
            "retriever": w.Dropdown(options=list(sd.RETRIEVERS), value=retriever, description="retriever",
                                    layout=LAYOUT, style=STYLE),
        }  # fmt: skip
        super().__init__(controls, lambda **s: sd.filter_view(frame, **s), synth_html)


# ---------------------------------------------------------------- 06: faithfulness, claim by claim

_VERDICT_COLOUR = {"supported": "#1a7f37", "unsupported": "#9a6700", "contradicted": "#cf222e", None: "#6e7781"}


def faithfulness_view(row: dict, judge: Any, mode: str = "PASS/FAIL") -> dict[str, Any]:
    """One recorded answer (``row``: qid, question, answer, context) judged claim by claim by ``judge``."""
    args.fields("row", row, ("answer", "context"), "one of faithfulness_data.answered()'s rows")

    if mode not in ("PASS/FAIL", "score"):
        raise ValueError(f"mode must be 'PASS/FAIL' or 'score', got {mode!r}")
    return {"row": row, "judged": faithfulness(row["answer"], row["context"], judge), "mode": mode}


def faithfulness_html(row: dict, result, mode: str = "PASS/FAIL") -> str:
    """One judged answer as HTML: the question, the answer's claims with verdicts and quotes, the score or
    PASS/FAIL, and the context with every quote that really occurs in it highlighted (``<mark>``)."""
    args.fields("row", row, ("context",), "one of faithfulness_data.answered()'s rows")
    args.attributes("result", result, ("score", "status", "verdicts"), "faithfulness.faithfulness(...)")

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


class FaithfulnessExplorer(Explorer):
    """Pick a question and a judge: the answer's claims with verdicts, the score or PASS/FAIL, the evidence.

    Wraps :func:`labkit.judges.faithfulness.faithfulness` (:func:`faithfulness_view`, :func:`faithfulness_html`) over
    recorded answers (``rows``: dicts with qid, question, answer, context) and named judges. A judge that fails
    (no recording for a claim, say) is shown in place and the explorer keeps working.
    """

    css_class = "lk-faithfulness-explorer"

    def __init__(self, rows, judges, qid=None, judge=None, mode="PASS/FAIL"):
        rows = args.sequence("rows", rows, example="list(faithfulness_data.answered())")
        rows = [args.fields(f"rows[{i}]", r, ("qid",), "faithfulness_data.answered()") for i, r in enumerate(rows)]
        args.mapping("judges", judges, example='{"lexical": faithfulness.lexical_judge}')
        self._rows = {r["qid"]: r for r in rows}
        if not self._rows:
            raise ValueError("rows must hold at least one answered question")
        self._judges = dict(judges)
        options = [(f"{q}: {str(r.get('question', ''))[:70]}", q) for q, r in self._rows.items()]  # id and text
        self.question = w.Dropdown(options=options, value=qid or next(iter(self._rows)), description="question",
                                   layout=w.Layout(width="640px"), style=STYLE)  # fmt: skip
        self.judge = w.Dropdown(options=list(self._judges), value=judge or next(iter(self._judges)),
                                description="judge", layout=LAYOUT, style=STYLE)  # fmt: skip
        self.mode = w.ToggleButtons(options=["PASS/FAIL", "score"], value=mode, description="show",
                                    style={**STYLE, "button_width": "auto"})  # fmt: skip
        self.view = w.HTML()
        super().__init__(
            {"question": self.question, "judge": self.judge, "mode": self.mode},
            lambda question, judge, mode: {**faithfulness_view(self._rows[question], self._judges[judge], mode),
                                           "judge": judge},
            lambda v: faithfulness_html(v["row"], v["judged"], v["mode"]),
            outputs={"view": self.view},
            summary=lambda v: {
                "qid": v["row"]["qid"],
                "judge": v["judge"],
                "verdicts": [x.verdict for x in v["judged"].verdicts],
                "score": None if v["judged"].score is None else round(v["judged"].score, 4),
                "status": v["judged"].status,
            },
        )  # fmt: skip


# ---------------------------------------------------------------- 09: routing cost at k


def routing_html(stats: dict[str, float]) -> str:
    """The routing statistics of one k: ``data-stat`` per statistic, four significant digits."""
    return html_table(stats, ".4g", attr="stat", missing="nan")


class RoutingExplorer(Explorer):
    """One slider, k: prompt sizes, where a window filter routes the requests, the price, the filter's errors,
    and a picture of the routing and the errors at every k with the current one marked
    (:func:`labkit.ui.plots.svg_routing`).

    Wraps ``stats(k) -> dict`` (the notebook passes a function built on :func:`labkit.measures.router.routing_at_k`).
    Every k of the slider is computed once, when the explorer is built (the picture needs them all), so a move
    only redraws.
    """

    css_class = "lk-routing-explorer"

    def __init__(self, stats, k=5, max_k=20):
        args.function("stats", stats, "lambda k: router.routing_at_k(...)")
        self.by_k = {x: dict(stats(x)) for x in range(1, max_k + 1)}
        self.k = w.IntSlider(value=k, min=1, max=max_k, description="k (chunks in the prompt)",
                             continuous_update=False, layout=w.Layout(width="480px"),
                             style={"description_width": "190px"})  # fmt: skip
        self.table, self.chart = w.HTML(), w.HTML()
        super().__init__(
            {"k": self.k},
            lambda k: {"k": k, "row": self.by_k[k]},
            lambda v: {"table": routing_html(v["row"]), "chart": str(plots.svg_routing(self.by_k, v["k"]))},
            outputs={"table": self.table, "chart": self.chart},
            summary=lambda v: dict(v["row"]),
        )

    def arrange(self) -> list[w.Widget]:
        return [self.k, w.HBox([self.table, self.chart]), self.message]


# ---------------------------------------------------------------- 09: one request of the cascade


def _verdict(correct: Any) -> str:
    if correct is None or correct != correct:  # None or NaN: the check could not judge it
        return "not judged"
    return "right" if correct else "not right"


def cascade_html(view: dict[str, Any]) -> str:
    """:func:`labkit.studies.cascade.request_view` as the explorer shows it: both answers with their verdicts, the
    check's decision, and each strategy's cost (``data-cost="<strategy>|<column>"``)."""
    args.fields("view", view, ("escalated", "cost", "cascade correct"), "studies.cascade.request_view(...)")
    import pandas as pd

    def answer(which: str) -> str:
        return (
            f'<p class="lk-answer-{which}"><b>{html.escape(view[which])}</b> '
            f'(<span data-verdict="{which}">{_verdict(view[f"{which} correct"])}</span>): '
            f"<q>{html.escape(view[f'{which} answer'])}</q></p>"
        )

    decision = "escalated to the large model" if view["escalated"] else "kept the small answer (grounded)"
    cost = pd.DataFrame(view["cost"]).T.rename_axis("strategy")
    return (
        f"<p><b>{html.escape(view['qid'])}</b> {html.escape(view['question'])}</p>"
        + answer("small")
        + f'<p>the check: <b class="lk-decision">{decision}</b>; the cascade ships an answer that is '
        f'<b data-verdict="cascade">{_verdict(view["cascade correct"])}</b></p>'
        + answer("large")
        + html_table(cost, ".4g", attr="cost", missing="-")
    )


class CascadeExplorer(Explorer):
    """Chapter 09: pick a request, read what the cascade did with it (:func:`labkit.studies.cascade.request_view`).

    ``table``: :func:`labkit.studies.cascade.cascade_table`; ``questions``: qid -> question text. Each request is listed
    with :func:`labkit.studies.cascade.outcome_label`, so the check's two kinds of error are easy to find.
    """

    css_class = "lk-cascade-explorer"

    def __init__(self, table, questions=None, qid=None):
        args.table("table", table, example="cascade.cascade_table(...)")
        questions = dict(questions or {})
        options = [(f"{q} · {cascade.outcome_label(r)}", q) for q, r in table.iterrows()]
        if not options:
            raise ValueError("table must hold at least one request: cascade.cascade_table(...)")
        self.request = w.Dropdown(options=options, value=qid or options[0][1], description="request",
                                  layout=w.Layout(width="560px"), style=STYLE)  # fmt: skip
        super().__init__(
            {"request": self.request},
            lambda request: cascade.request_view(table, request, questions.get(request, "")),
            cascade_html,
            summary=lambda v: {"qid": v["qid"], "escalated": v["escalated"], "small correct": v["small correct"],
                               "large correct": v["large correct"], "cascade correct": v["cascade correct"]},
        )  # fmt: skip
