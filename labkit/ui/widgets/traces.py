"""Explorers of a reader's answers, trace by trace: 04's position study (one question through every
placement of its gold passage), 07's triage and 08's triage per slice.

Each is a thin :class:`labkit.ui.widgets.explorer.Explorer`: its controls, the pure function it wraps, and a renderer
from
that function's value to HTML, defined here as plain functions so that tests check them without a browser. The
answers come in recorded (traces, study tables): a widget never calls a model itself.
"""

from __future__ import annotations

import functools
import html
import math
from typing import Any

import ipywidgets as w

from labkit.core import args
from labkit.measures import stats, triage
from labkit.studies import position_view as pv
from labkit.ui import plots
from labkit.ui.widgets.explorer import LAYOUT, STYLE, Explorer, html_table

__all__ = [
    "PositionExplorer",
    "position_html",
    "TriageExplorer",
    "triage_view",
    "triage_html",
    "SliceTriageExplorer",
    "slice_triage_view",
    "slice_triage_html",
]


# ---------------------------------------------------------------- 04: one question through the position study


def position_html(view: dict[str, Any], width: int = 220) -> str:
    """:func:`labkit.studies.position_view.trial_view` as the explorer shows it: the question, its reference and
    pattern, the chosen trial's passages in prompt order (the gold highlighted, each cut to ``width``
    characters), the answer with its verdict (``data-verdict="trial"``), and every trial's answer
    (``data-trial="<trial>|<column>"``)."""
    keys = ("reference", "pattern", "passages", "answer", "verdict", "answers", "trial", "retrieved")
    args.fields("view", view, keys, "studies.position_view.trial_view(...)")

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
    answer and the verdict, beside the question's other trials (wraps :func:`labkit.studies.position_view.trial_view`).

    ``table``: :func:`labkit.studies.position_study.run_study` with a check column (``add_check``); ``contexts``: the
    study's contexts; ``queries``: qid -> Query, for the reference answers. Each question is listed with its
    :func:`labkit.studies.position_view.question_pattern`, so the ones that lose the gold in the middle are easy to
    find.
    """

    css_class = "lk-position-explorer"

    def __init__(self, table, contexts, queries=None, qid=None, trial=None, column="correct"):
        args.table("table", table, example="position_study.run_study(...)")
        if "qid" not in table:
            raise ValueError("table needs a 'qid' column: pass what position_study.run_study(...) returns")
        qids = list(dict.fromkeys(table["qid"]))
        if not qids:
            raise ValueError("table must hold at least one trial: position_study.run_study(...)")
        options = [(f"{q} · {pv.question_pattern(table, q, column)}", q) for q in qids]
        choices = pv.trial_choices(table)
        self.question = w.Dropdown(options=options, value=qid or qids[0], description="question",
                                   layout=w.Layout(width="520px"), style=STYLE)  # fmt: skip
        self.trial = w.Dropdown(options=choices, value=trial or choices[0], description="trial",
                                layout=LAYOUT, style=STYLE)  # fmt: skip
        super().__init__(
            {"question": self.question, "trial": self.trial},
            lambda question, trial: pv.trial_view(table, contexts, question, trial, queries, column),
            position_html,
            summary=lambda v: {"qid": v["qid"], "trial": v["trial"], "verdict": v["verdict"],
                               "pattern": v["pattern"]},
        )  # fmt: skip


# ---------------------------------------------------------------- 07: triage


def triage_view(traces: list[dict], k: int, cell: str, n_examples: int = 3) -> dict[str, Any]:
    """The 2x2 counts of ``traces`` at ``k``, the priority, and the first ``n_examples`` traces of ``cell`` as
    :func:`labkit.measures.triage.drill_down` reads them (plus ``read``: the chunks the reader saw)."""

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
    args.fields("view", view, ("counts", "examples", "n", "priority"), "triage_view(...)")
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


def _sweep(traces_at, ks) -> dict[int, dict[str, int]]:
    """``{k: triage counts}`` for the picture; a k whose traces fail is left out (choosing it shows the error)."""
    out = {}
    for k in ks:
        try:
            out[k] = triage.triage(traces_at(k), k)
        except Exception:  # noqa: BLE001 - shown in place when that k is chosen, not at construction
            continue
    return out


class TriageExplorer(Explorer):
    """Slider k, a cell picker and (optionally) a reader picker: the 2x2 counts, the priority, example traces.

    Wraps :func:`labkit.measures.triage.triage`, :func:`labkit.measures.triage.priority` and
    :func:`labkit.measures.triage.drill_down`
    (:func:`triage_view`) over ``traces_at(k)`` (a function returning the traces of a pipeline that reads the
    top ``k`` chunks), or over ``traces_at(k, reader)`` when ``readers`` names the choices (a language model
    recorded at one k raises for the others: the message says which k exists). ``recorded_k`` maps such a
    reader to its one k: picking it sets the slider there and locks it, so the explorer never offers a state
    that has no traces. Each (k, reader) is computed once. Each example shows its gold span, the answer and,
    for a model's traces, the reference answer and the verdict of the check that judged it. The picture
    (:func:`labkit.ui.plots.svg_triage_shares`) shows the reader's cells at every k it has, the current k marked:
    every k is computed when the explorer is built, so a move only redraws.
    """

    css_class = "lk-triage-explorer"

    def __init__(self, traces_at, k=5, max_k=20, n_examples=3, readers=None, reader=None, recorded_k=None):
        args.function("traces_at", traces_at, "lambda k, reader: triage.reader_traces(...)")
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
            self.recorded_k = dict(recorded_k or {})
            unknown = sorted(set(self.recorded_k) - set(readers))
            if unknown:
                raise ValueError(f"recorded_k names {unknown[0]!r}, which is not among readers {readers}")
            self.reader.observe(self._lock_k, names="value")  # before the explorer's own update: k first
            self._lock_k()
            # the picture: each reader's cells at every k it has (one k for a reader recorded at one), computed now
            self.sweeps = {r: _sweep(lambda x, r=r: traces_at(x, r), self._ks(r, max_k)) for r in readers}
            compute = lambda reader, k, cell: {**triage_view(traces_at(k, reader), k, cell, n_examples),  # noqa: E731
                                               "reader": reader, "sweep": self.sweeps[reader]}  # fmt: skip
        else:
            self.reader = None
            self.sweeps = {None: _sweep(traces_at, range(1, max_k + 1))}
            compute = lambda k, cell: {**triage_view(traces_at(k), k, cell, n_examples),  # noqa: E731
                                       "sweep": self.sweeps[None]}  # fmt: skip
        self.chart = w.HTML()
        super().__init__(
            controls,
            compute,
            self._render,
            outputs={"table": self.table, "chart": self.chart, "examples": self.examples},
            summary=lambda v: {**({"reader": v["reader"]} if "reader" in v else {}), "k": v["k"],
                               "counts": v["counts"], "priority": v["priority"],
                               "examples": [d["qid"] for d in v["examples"]]},
        )  # fmt: skip

    def neighbours(self) -> list[dict[str, Any]]:
        """As :meth:`Explorer.neighbours`, with k where picking the reader puts it (its one recorded k)."""
        states = super().neighbours()
        if self.reader is None:
            return states
        return [{**s, "k": self.recorded_k.get(s["reader"], s["k"])} for s in states]

    def _ks(self, reader: str, max_k: int) -> list[int]:
        fixed = self.recorded_k.get(reader)
        return [fixed] if fixed is not None else list(range(1, max_k + 1))

    @staticmethod
    def _render(view: dict[str, Any]) -> dict[str, str]:
        title = f"cells against k ({view['reader']})" if "reader" in view else "cells against k"
        chart = plots.svg_triage_shares(view["sweep"], view["k"], list(plots.TRIAGE_COLOURS), title,
                                        plots.TRIAGE_COLOURS)  # fmt: skip
        return {**triage_html(view), "chart": str(chart)}

    def _lock_k(self, _change=None) -> None:
        """A reader recorded at one k only: the slider moves there and is locked; any other reader unlocks it."""
        fixed = self.recorded_k.get(self.reader.value)
        if fixed is not None:
            self.k.value = fixed
        self.k.disabled = fixed is not None
        self.k.tooltip = f"{self.reader.value} was recorded at k = {fixed} only" if fixed is not None else None

    def arrange(self) -> list[w.Widget]:
        top = [self.reader] if self.reader is not None else []
        return [*top, self.k, w.HBox([self.table, self.chart]), self.cell, self.examples, self.message]


# ---------------------------------------------------------------- 08: triage per slice


def slice_triage_view(traces: list[dict], k: int, group: str, cell: str, n_examples: int = 3, by: str = "slice"):
    """One group's row of :func:`labkit.measures.triage.stage_gap` (the cells, the gap between the stages with its
    interval, the priority, ``clear``) and the first ``n_examples`` traces of ``cell`` in that group, as
    :func:`triage_view` reads them. ``group`` is a value of ``t[by]``, or ``"all"``."""

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
    args.fields("view", view, ("counts", "examples", "n", "priority", "group", "clear"), "slice_triage_view(...)")

    shown = triage_html(view)
    settled = "the interval excludes 0" if view["clear"] else "the interval includes 0: not settled"
    shown_gap = stats.fmt_ci(view["gap"], view["low"], view["high"])
    if math.isnan(view["low"]):  # triage.stage_gap gives a group of too few traces no interval
        shown_gap, settled = stats.fmt_ci(view["gap"], None, None), "too few traces for an interval: not settled"
    shown["table"] += (
        f'<p>gap (GEN_FAIL − RET_FAIL) / traces: <b data-gap="{html.escape(view["group"])}">'
        f"{shown_gap}</b> ({settled})</p>"
    )
    return shown


class SliceTriageExplorer(Explorer):
    """Chapter 08: a slice picker and a cell picker over one pipeline's traces at one k: the slice's 2x2, the
    gap between the stages with its interval, the advice, and example traces with the answer, the reference and
    the verdict (wraps :func:`slice_triage_view`: :func:`labkit.measures.triage.stage_gap` and
    :func:`labkit.measures.triage.drill_down`)."""

    css_class = "lk-slice-triage-explorer"

    def __init__(self, traces, k, group="all", cell="RET_FAIL", n_examples=3, by="slice"):

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
