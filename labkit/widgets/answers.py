"""Explorers of generated questions, answers and what they cost: 02's synthetic sets, 04's position study, 06's
judged answers, 07's triage, 08's triage per slice, 09's routing.

Each is a thin :class:`labkit.explorer.Explorer`: its controls, the pure function it wraps, and a renderer from
that function's value to HTML, defined here as plain functions so that tests check them without a browser. The
functions that call a model (a judge, a generator) come in as arguments: a widget never calls one itself.
"""

from __future__ import annotations

import functools
import html
from typing import Any

import ipywidgets as w

from labkit.explorer import LAYOUT, STYLE, Explorer, html_table

__all__ = [
    "SynthExplorer",
    "synth_html",
    "FaithfulnessExplorer",
    "faithfulness_view",
    "faithfulness_html",
    "TriageExplorer",
    "triage_view",
    "triage_html",
    "SliceTriageExplorer",
    "slice_triage_view",
    "slice_triage_html",
    "RoutingExplorer",
    "routing_html",
    "CascadeExplorer",
    "cascade_html",
    "PositionExplorer",
    "position_html",
]

# ---------------------------------------------------------------- 02: synthetic questions, filtered


def synth_html(view: Any) -> str:
    """What :func:`labkit.synth_data.filter_view` returns, as the explorer shows it."""
    from labkit import stats

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
        from labkit import synth_data

        controls = {
            "threshold": w.IntSlider(value=threshold, min=1, max=5, description="keep rating ≥",
                                     continuous_update=False, layout=LAYOUT, style=STYLE),
            "method": w.ToggleButtons(options=list(synth_data.METHODS), value=method, description="distractors",
                                      style=STYLE),
            "retriever": w.Dropdown(options=list(synth_data.RETRIEVERS), value=retriever, description="retriever",
                                    layout=LAYOUT, style=STYLE),
        }  # fmt: skip
        super().__init__(controls, lambda **s: synth_data.filter_view(frame, **s), synth_html)


# ---------------------------------------------------------------- 06: faithfulness, claim by claim

_VERDICT_COLOUR = {"supported": "#1a7f37", "unsupported": "#9a6700", "contradicted": "#cf222e", None: "#6e7781"}


def faithfulness_view(row: dict, judge: Any, mode: str = "PASS/FAIL") -> dict[str, Any]:
    """One recorded answer (``row``: qid, question, answer, context) judged claim by claim by ``judge``."""
    from labkit.faithfulness import faithfulness

    if mode not in ("PASS/FAIL", "score"):
        raise ValueError(f"mode must be 'PASS/FAIL' or 'score', got {mode!r}")
    return {"row": row, "judged": faithfulness(row["answer"], row["context"], judge), "mode": mode}


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


class FaithfulnessExplorer(Explorer):
    """Pick a question and a judge: the answer's claims with verdicts, the score or PASS/FAIL, the evidence.

    Wraps :func:`labkit.faithfulness.faithfulness` (:func:`faithfulness_view`, :func:`faithfulness_html`) over
    recorded answers (``rows``: dicts with qid, question, answer, context) and named judges. A judge that fails
    (no recording for a claim, say) is shown in place and the explorer keeps working.
    """

    css_class = "lk-faithfulness-explorer"

    def __init__(self, rows, judges, qid=None, judge=None, mode="PASS/FAIL"):
        self._rows = {r["qid"]: r for r in rows}
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


# ---------------------------------------------------------------- 07: triage


def triage_view(traces: list[dict], k: int, cell: str, n_examples: int = 3) -> dict[str, Any]:
    """The 2x2 counts of ``traces`` at ``k``, the priority, and the first ``n_examples`` traces of ``cell`` as
    :func:`labkit.triage.drill_down` reads them (plus ``read``: the chunks the reader saw)."""
    from labkit import triage

    counts = triage.triage(traces, k)
    chosen = [t for t in traces if triage.quadrant(t, k) == cell][:n_examples]
    examples = [{**triage.drill_down(t, k), "read": list(t["retrieved"][:k]), "passed": bool(t["answer_pass"])}
                for t in chosen]  # fmt: skip
    return {"k": k, "n": len(traces), "counts": counts, "priority": triage.priority(counts), "examples": examples}


def _example_html(d: dict[str, Any]) -> str:
    ranks = ", ".join(f"{g} ({f'rank {r}' if r else 'not read'})" for g, r in d["gold_ranks"].items())
    spans = " | ".join(f'<q class="lk-gold-span">{html.escape(s)}</q>' for s in d["gold_spans"]) or "not recorded"
    answer = d["answer"][:240] + ("…" if len(d["answer"]) > 240 else "")
    reference = ""
    if d.get("reference"):
        reference = f'<br>reference: <q class="lk-reference">{html.escape(d["reference"])}</q>'
    verdict = ""
    if d.get("judged_by"):
        why = f" ({html.escape(d['why'])})" if d.get("why") else ""
        verdict = (f'<br>{html.escape(d["judged_by"])}: <b class="lk-verdict">{"pass" if d["passed"] else "fail"}'
                   f"</b>{why}")  # fmt: skip
    return (
        f'<li class="lk-example" data-qid="{html.escape(d["qid"])}"><b>{html.escape(d["qid"])}</b> '
        f'{html.escape(d["question"])}<div style="font-size:0.85em;line-height:1.4">gold: <code>{html.escape(ranks)}'
        f"</code>; read: <code>{html.escape(', '.join(d['read']))}</code><br>gold span: {spans}"
        f'<br>answer{"" if d["answer_has_span"] else " (holds no gold span)"}: <q class="lk-answer">'
        f"{html.escape(answer)}</q>{reference}{verdict}</div></li>"
    )


def triage_html(view: dict[str, Any]) -> dict[str, str]:
    """The triage table (traces and share per cell: ``data-cell="<cell>|traces"``), the priority, the examples."""
    import pandas as pd

    counts, n = view["counts"], view["n"]
    table = pd.DataFrame({"traces": list(counts.values()), "share": [c / n for c in counts.values()]},
                         index=pd.Index(list(counts), name="cell"))  # fmt: skip
    items = "".join(_example_html(d) for d in view["examples"])
    return {
        "table": html_table(table, ".1%")
        + f'<p>fix first: <b class="lk-priority">{html.escape(view["priority"])}</b></p>',
        "examples": f"<ol>{items}</ol>" if items else '<p class="lk-empty">no trace in this cell</p>',
    }


class TriageExplorer(Explorer):
    """Slider k, a cell picker and (optionally) a reader picker: the 2x2 counts, the priority, example traces.

    Wraps :func:`labkit.triage.triage`, :func:`labkit.triage.priority` and :func:`labkit.triage.drill_down`
    (:func:`triage_view`) over ``traces_at(k)`` (a function returning the traces of a pipeline that reads the
    top ``k`` chunks), or over ``traces_at(k, reader)`` when ``readers`` names the choices (a language model
    recorded at one k raises for the others: the message says which k exists). Each (k, reader) is computed
    once. Each example shows its gold span, the answer and, for a model's traces, the reference answer and the
    verdict of the check that judged it.
    """

    css_class = "lk-triage-explorer"

    def __init__(self, traces_at, k=5, max_k=20, n_examples=3, readers=None, reader=None):
        from labkit import triage

        self.n_examples = n_examples
        traces_at = functools.cache(traces_at)
        self.k = w.IntSlider(value=k, min=1, max=max_k, description="k (chunks read)", continuous_update=False,
                             layout=LAYOUT, style=STYLE)  # fmt: skip
        self.cell = w.ToggleButtons(options=list(triage.QUADRANTS), value="GEN_FAIL", description="examples of",
                                    style={**STYLE, "button_width": "auto"})  # fmt: skip
        self.table, self.examples = w.HTML(), w.HTML()
        controls: dict[str, w.ValueWidget] = {"k": self.k, "cell": self.cell}
        if readers:
            readers = list(readers)
            self.reader = w.ToggleButtons(options=readers, value=reader or readers[0], description="reader · check",
                                          style={**STYLE, "button_width": "auto"})  # fmt: skip
            controls = {"reader": self.reader, **controls}
            compute = lambda reader, k, cell: {**triage_view(traces_at(k, reader), k, cell, n_examples),  # noqa: E731
                                               "reader": reader}  # fmt: skip
        else:
            self.reader = None
            compute = lambda k, cell: triage_view(traces_at(k), k, cell, n_examples)  # noqa: E731
        super().__init__(
            controls,
            compute,
            triage_html,
            outputs={"table": self.table, "examples": self.examples},
            summary=lambda v: {**({"reader": v["reader"]} if "reader" in v else {}), "k": v["k"],
                               "counts": v["counts"], "priority": v["priority"],
                               "examples": [d["qid"] for d in v["examples"]]},
        )  # fmt: skip

    def arrange(self) -> list[w.Widget]:
        top = [self.reader] if self.reader is not None else []
        return [*top, self.k, self.table, self.cell, self.examples, self.message]


# ---------------------------------------------------------------- 08: triage per slice


def slice_triage_view(traces: list[dict], k: int, group: str, cell: str, n_examples: int = 3, by: str = "slice"):
    """One group's row of :func:`labkit.triage.stage_gap` (the cells, the gap between the stages with its
    interval, the priority, ``clear``) and the first ``n_examples`` traces of ``cell`` in that group, as
    :func:`triage_view` reads them. ``group`` is a value of ``t[by]``, or ``"all"``."""
    from labkit import triage

    gaps = triage.stage_gap(traces, k, by=by)
    if group not in gaps.index:
        raise ValueError(f"group must be one of {list(gaps.index)}, got {group!r}")
    chosen = traces if group == "all" else [t for t in traces if str(t[by]) == group]
    row = gaps.loc[group]
    gap = {"gap": float(row["gap"]), "low": float(row["gap low"]), "high": float(row["gap high"]),
           "clear": bool(row["clear"])}  # fmt: skip
    return {**triage_view(chosen, k, cell, n_examples), "group": group, **gap}


def slice_triage_html(view: dict[str, Any]) -> dict[str, str]:
    """:func:`triage_html` of the group, with the gap line (``data-gap``: the gap and its interval)."""
    from labkit import stats

    shown = triage_html(view)
    settled = "the interval excludes 0" if view["clear"] else "the interval includes 0: not settled"
    shown["table"] += (
        f'<p>gap (GEN_FAIL − RET_FAIL) / traces: <b data-gap="{html.escape(view["group"])}">'
        f"{stats.fmt_ci(view['gap'], view['low'], view['high'])}</b> ({settled})</p>"
    )
    return shown


class SliceTriageExplorer(Explorer):
    """Chapter 08: a slice picker and a cell picker over one pipeline's traces at one k: the slice's 2x2, the
    gap between the stages with its interval, the advice, and example traces with the answer, the reference and
    the verdict (wraps :func:`slice_triage_view`: :func:`labkit.triage.stage_gap` and
    :func:`labkit.triage.drill_down`)."""

    css_class = "lk-slice-triage-explorer"

    def __init__(self, traces, k, group="all", cell="RET_FAIL", n_examples=3, by="slice"):
        from labkit import triage

        groups = list(triage.stage_gap(traces, k, by=by).index)
        self.group = w.ToggleButtons(options=groups, value=group, description=by,
                                     style={**STYLE, "button_width": "auto"})  # fmt: skip
        self.cell = w.ToggleButtons(options=list(triage.QUADRANTS), value=cell, description="examples of",
                                    style={**STYLE, "button_width": "auto"})  # fmt: skip
        self.table, self.examples = w.HTML(), w.HTML()
        super().__init__(
            {"group": self.group, "cell": self.cell},
            lambda group, cell: slice_triage_view(traces, k, group, cell, n_examples, by),
            slice_triage_html,
            outputs={"table": self.table, "examples": self.examples},
            summary=lambda v: {"group": v["group"], "counts": v["counts"], "priority": v["priority"],
                               "gap": (round(v["gap"], 3), round(v["low"], 3), round(v["high"], 3)),
                               "examples": [d["qid"] for d in v["examples"]]},
        )  # fmt: skip

    def arrange(self) -> list[w.Widget]:
        return [self.group, self.table, self.cell, self.examples, self.message]


# ---------------------------------------------------------------- 09: routing cost at k


def routing_html(stats: dict[str, float]) -> str:
    """The routing statistics of one k: ``data-stat`` per statistic, four significant digits."""
    return html_table(stats, ".4g", attr="stat", missing="nan")


class RoutingExplorer(Explorer):
    """One slider, k: prompt sizes, where a window filter routes the requests, the price, the filter's errors.

    Wraps ``stats(k) -> dict`` (the notebook passes a function built on :func:`labkit.router.routing_at_k`);
    each k is computed once.
    """

    css_class = "lk-routing-explorer"

    def __init__(self, stats, k=5, max_k=20):
        stats = functools.cache(stats)
        self.k = w.IntSlider(value=k, min=1, max=max_k, description="k (chunks in the prompt)",
                             continuous_update=False, layout=w.Layout(width="480px"),
                             style={"description_width": "190px"})  # fmt: skip
        self.table = w.HTML()
        super().__init__({"k": self.k}, lambda k: dict(stats(k)), routing_html, outputs={"table": self.table})


# ---------------------------------------------------------------- 09: one request of the cascade


def _verdict(correct: Any) -> str:
    if correct is None or correct != correct:  # None or NaN: the check could not judge it
        return "not judged"
    return "right" if correct else "not right"


def cascade_html(view: dict[str, Any]) -> str:
    """:func:`labkit.cascade.request_view` as the explorer shows it: both answers with their verdicts, the
    check's decision, and each strategy's cost (``data-cost="<strategy>|<column>"``)."""
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
    """Chapter 09: pick a request, read what the cascade did with it (wraps :func:`labkit.cascade.request_view`).

    ``table``: :func:`labkit.cascade.cascade_table`; ``questions``: qid -> question text. Each request is listed
    with :func:`labkit.cascade.outcome_label`, so the check's two kinds of error are easy to find.
    """

    css_class = "lk-cascade-explorer"

    def __init__(self, table, questions=None, qid=None):
        from labkit import cascade

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


# ---------------------------------------------------------------- 04: one question through the position study


def position_html(view: dict[str, Any], width: int = 220) -> str:
    """:func:`labkit.position_study.trial_view` as the explorer shows it: the question, its reference and
    pattern, the chosen trial's passages in prompt order (the gold highlighted, each cut to ``width``
    characters), the answer with its verdict (``data-verdict="trial"``), and every trial's answer
    (``data-trial="<trial>|<column>"``)."""

    def passage(p: dict[str, Any]) -> str:
        text = p["text"].replace("\n", " ")
        text = text[:width] + ("…" if len(text) > width else "")
        style = ' style="background:#fff3b0"' if p["gold"] else ""
        return f'<li class="lk-passage{" lk-gold" if p["gold"] else ""}"{style}>{html.escape(text)}</li>'

    reference = ""
    if view["reference"]:
        reference = f' · reference: <q class="lk-reference">{html.escape(view["reference"])}</q>'
    retrieved = "; ".join(f"the retriever ranked the gold {at}" for at in view["retrieved"].values())
    passages = "".join(passage(p) for p in view["passages"])
    return (
        f"<p><b>{html.escape(view['qid'])}</b> {html.escape(view['question'])}{reference}<br>"
        f'verdicts at the ends and the middle: <code class="lk-pattern">{html.escape(view["pattern"])}</code>'
        f"{'; ' + html.escape(retrieved) if retrieved else ''}</p>"
        f'<p><b>{html.escape(view["trial"])}</b>: <span data-verdict="trial">{html.escape(view["verdict"])}</span> '
        f'<q class="lk-answer">{html.escape(view["answer"])}</q></p>'
        + (f'<ol style="font-size:0.85em;line-height:1.35">{passages}</ol>' if passages else "<p>(no passages)</p>")
        + "<b>Every trial of this question</b>"
        + html_table(view["answers"], attr="trial")
    )


class PositionExplorer(Explorer):
    """Chapter 04: pick a question and a trial of the position study, read the passages the model got, its
    answer and the verdict, beside the question's other trials (wraps :func:`labkit.position_study.trial_view`).

    ``table``: :func:`labkit.position_study.run_study` with a check column (``add_check``); ``contexts``: the
    study's contexts; ``queries``: qid -> Query, for the reference answers. Each question is listed with its
    :func:`labkit.position_study.question_pattern`, so the ones that lose the gold in the middle are easy to
    find.
    """

    css_class = "lk-position-explorer"

    def __init__(self, table, contexts, queries=None, qid=None, trial=None, column="correct"):
        from labkit import position_study as ps

        qids = list(dict.fromkeys(table["qid"]))
        if not qids:
            raise ValueError("table must hold at least one trial: position_study.run_study(...)")
        options = [(f"{q} · {ps.question_pattern(table, q, column)}", q) for q in qids]
        choices = ps.trial_choices(table)
        self.question = w.Dropdown(options=options, value=qid or qids[0], description="question",
                                   layout=w.Layout(width="520px"), style=STYLE)  # fmt: skip
        self.trial = w.Dropdown(options=choices, value=trial or choices[0], description="trial",
                                layout=LAYOUT, style=STYLE)  # fmt: skip
        super().__init__(
            {"question": self.question, "trial": self.trial},
            lambda question, trial: ps.trial_view(table, contexts, question, trial, queries, column),
            position_html,
            summary=lambda v: {"qid": v["qid"], "trial": v["trial"], "verdict": v["verdict"],
                               "pattern": v["pattern"]},
        )  # fmt: skip
