"""04b's explorer: stage 1's depth k1, stage 2's cut k2 and a reranker against per-slice metrics, one query's ranks
before and after, and what the reranker costs (:mod:`labkit.ui.widgets` re-exports it)."""

from __future__ import annotations

import html
from typing import Any

import ipywidgets as w

from labkit.core import args
from labkit.retrieval.rerank import check_depths
from labkit.ui import plots
from labkit.ui.widgets.explorer import LAYOUT, STYLE, Explorer, html_table

__all__ = ["RerankExplorer", "rerank_view", "rerank_html", "SLICES"]

SLICES = ("easy", "hard", "real", "all")
CUT = "cut at k"


def _means(per_query: Any, slices: dict[str, str], column: str) -> dict[str, float]:
    out = {}
    for s in SLICES:
        rows = per_query[column] if s == "all" else per_query[column][[slices[q] == s for q in per_query.index]]
        out[s] = float(rows.dropna().mean())
    return out


def _check_state(data: dict[str, Any], k1: int, k2: int, reranker: str) -> tuple[int, int]:
    if reranker not in data["k1s"] or reranker == CUT:
        raise ValueError(f"reranker must be one of {[r for r in data['k1s'] if r != CUT]}, got {reranker!r}")
    if k1 not in data["k1s"][reranker]:
        raise ValueError(f"k1 must be one of {list(data['k1s'][reranker])} for {reranker}, got {k1!r}")
    k1, k2 = check_depths(k1, k2)
    if k2 not in data["k2s"]:
        raise ValueError(f"k2 must be one of {list(data['k2s'])}, got {k2!r}")
    return k1, k2


def _summary(data: dict[str, Any], k1: int, k2: int, reranker: str) -> dict[str, Any]:
    """What does not depend on the question: the per-slice table, the curve against k1, the cost line."""
    cut, new = data["metrics"][(CUT, k1)], data["metrics"][(reranker, k1)]
    table = {f"R@{k1} (stage 1)": _means(data["ceiling"][k1].to_frame(), data["slices"], f"R@{k1}")}
    for m in ("nDCG", "RR", "hit"):
        table[f"{m}@{k2} cut"] = _means(cut, data["slices"], f"{m}@{k2}")
        table[f"{m}@{k2} {reranker}"] = _means(new, data["slices"], f"{m}@{k2}")
    k1s = list(data["k1s"][CUT])
    curve = {"R@k1 (stage 1)": [float(data["ceiling"][x].mean()) for x in k1s]}
    for name in (CUT, *(r for r in data["k1s"] if r != CUT)):
        curve[name] = [float(data["metrics"][(name, x)][f"nDCG@{k2}"].mean()) if (name, x) in data["metrics"]
                       else None for x in k1s]  # fmt: skip
    cost = data["cost"]
    return {"k1": k1, "k2": k2, "reranker": reranker, "table": table, "curve": curve, "k1s": k1s,
            "model_cost": cost.loc[k1] if k1 in cost.index else None}  # fmt: skip


def rerank_view(data: dict[str, Any], k1: int, k2: int, reranker: str, qid: str, summary=None) -> dict[str, Any]:
    """One state of the explorer, from ``data`` (:func:`labkit.studies.rerank_study.explorer_data`): per slice,
    stage 1's Recall@k1 and nDCG / RR / hit at k2 cut vs reranked; nDCG@k2 of every ranker against k1 (the
    picture); query ``qid``'s top 10 before and after; the model reranker's cost at k1. ``summary``: the part that
    does not depend on ``qid``, when the caller has it already (the explorer computes each once)."""
    data = args.fields("data", data, ("metrics", "rankings", "ceiling", "k1s", "k2s", "questions", "slices", "qrels",
                                      "snippets", "cost"), "rerank_study.explorer_data()")  # fmt: skip
    k1, k2 = _check_state(data, k1, k2, reranker)
    if qid not in data["questions"]:
        raise ValueError(f"qid {qid!r} is not among the explorer's questions; pick one of its list")
    part = summary if summary is not None else _summary(data, k1, k2, reranker)
    return {**part, "qid": qid, "question": data["questions"][qid],
            "before": data["rankings"][(CUT, k1)][qid][:10], "after": data["rankings"][(reranker, k1)][qid][:10],
            "judged": data["qrels"][qid], "snippets": data["snippets"]}  # fmt: skip


def _ranks_html(title: str, ranking: list[str], judged: dict[str, int], snippets: dict[str, str], k2: int) -> str:
    items = []
    for i, c in enumerate(ranking, 1):
        grade = judged.get(c, 0)
        mark = f"<b style='color:#2e7d32'>gold, grade {grade}</b>" if grade else "<span>not gold</span>"
        cut = " style='border-bottom:2px solid #b00020'" if i == k2 else ""
        words = html.escape(snippets.get(c, ""))
        items.append(f'<li class="lk-rank" data-chunk="{html.escape(c)}"{cut}><code>{html.escape(c)}</code> {mark}'
                     f"<br><small style='color:#555'>{words} …</small></li>")  # fmt: skip
    return f"<div style='width:360px'><b>{html.escape(title)}</b><ol>{''.join(items)}</ol></div>"


def _summary_html(view: dict[str, Any]) -> dict[str, str]:
    import pandas as pd

    table = pd.DataFrame(view["table"])
    chart = plots.svg_lines(view["k1s"], view["curve"], mark=view["k1"], mark_label=f"k1 = {view['k1']}",
                            log_x=True, xlabel="k1 (stage 1's candidates, log scale)",
                            title=f"nDCG@{view['k2']} against k1, all 30 questions", width=420)  # fmt: skip
    m = view["model_cost"]
    if view["reranker"].startswith("1.5B") and m is not None:
        cost = (
            f'{view["reranker"]} at k1 = {view["k1"]}: <b data-cost="requests">{m["requests per query"]:.0f}</b> '
            f'model requests, <b data-cost="tokens">{m["prompt tokens per query"]:,.0f}</b> prompt tokens and '
            f'<b data-cost="seconds">{m["seconds per query"]:,.0f}</b> s a query ({m["how"]}, recorded)'
        )
    else:
        cost = (
            f'{view["reranker"]} at k1 = {view["k1"]}: <b data-cost="requests">0</b> model requests; '
            "ten features from stage 1's own scores, a few hundred small trees"
        )
    return {"table": html_table(table, ".3f", index_name="slice"), "chart": str(chart),
            "cost": f'<div class="lk-costs">{cost}</div>'}  # fmt: skip


def _ranks_part(view: dict[str, Any]) -> str:
    return (f"<p><b>{html.escape(view['question'])}</b> (the red line is the cut at k2 = {view['k2']})</p>"
            + "<div style='display:flex;gap:1em'>"
            + _ranks_html(f"stage 1 (hybrid), top {min(view['k1'], 10)}", view["before"], view["judged"],
                          view["snippets"], view["k2"])
            + _ranks_html(f"after {view['reranker']}", view["after"], view["judged"], view["snippets"], view["k2"])
            + "</div>")  # fmt: skip


def rerank_html(view: dict[str, Any]) -> dict[str, str]:
    """The explorer's outputs for ``view``: ``table``, ``chart``, ``ranks`` and ``cost`` (HTML / SVG text)."""
    args.fields("view", view, ("table", "curve", "k1s", "before", "after", "judged", "snippets", "k1", "k2",
                               "reranker", "question", "model_cost"), "rerank_view(...)")  # fmt: skip
    return {**_summary_html(view), "ranks": _ranks_part(view)}


class RerankExplorer(Explorer):
    """Pick k1, k2, a reranker and a question: per-slice metrics cut vs reranked, nDCG@k2 against k1 for every
    ranker (the picture), the question's ranks before and after, and the cost line. Wraps :func:`rerank_view`;
    with the model reranker the k1 slider stands at the one k1 it was recorded at, greyed."""

    css_class = "lk-rerank-explorer"

    def __init__(self, data: dict[str, Any], k1: int = 20, k2: int = 3, reranker: str | None = None, qid=None):
        data = args.fields("data", data, ("k1s", "k2s", "questions"), "rerank_study.explorer_data()")
        self.data = data
        rerankers = [r for r in data["k1s"] if r != CUT]
        self.reranker = w.ToggleButtons(options=rerankers, value=reranker or rerankers[0], description="reranker",
                                        style={**STYLE, "button_width": "auto"})  # fmt: skip
        self.k1 = w.SelectionSlider(options=list(data["k1s"][CUT]), value=k1, description="k1 (stage 1)",
                                    continuous_update=False, layout=LAYOUT, style=STYLE)  # fmt: skip
        self.k2 = w.SelectionSlider(options=list(data["k2s"]), value=k2, description="k2 (kept)",
                                    continuous_update=False, layout=LAYOUT, style=STYLE)  # fmt: skip
        options = [(f"{q[:70]}{'…' if len(q) > 70 else ''}", qid_) for qid_, q in data["questions"].items()]
        self.question = w.Dropdown(options=options, value=qid or options[0][1], description="question",
                                   layout=w.Layout(width="640px"), style=STYLE)  # fmt: skip
        self._lock_k1()
        self.reranker.observe(self._lock_k1, names="value")  # before the explorer's own update: k1 first
        self.table, self.chart, self.ranks, self.cost = w.HTML(), w.HTML(), w.HTML(), w.HTML()
        self._summaries: dict[tuple, dict[str, Any]] = {}
        self._drawn: dict[tuple, dict[str, str]] = {}
        self._warm()
        super().__init__(
            {"reranker": self.reranker, "k1": self.k1, "k2": self.k2, "qid": self.question},
            self._view,
            self._render,
            outputs={"cost": self.cost, "table": self.table, "chart": self.chart, "ranks": self.ranks},
            summary=lambda v: {"k1": v["k1"], "k2": v["k2"], "reranker": v["reranker"], "qid": v["qid"],
                               "table": {c: {s: round(x, 4) for s, x in col.items()} for c, col in v["table"].items()},
                               "after": v["after"][: v["k2"]]},
        )  # fmt: skip

    def _view(self, reranker, k1, k2, qid):
        key = (reranker, k1, k2)
        if key not in self._summaries:
            k1, k2 = _check_state(self.data, k1, k2, reranker)
            self._summaries[key] = _summary(self.data, k1, k2, reranker)
        return rerank_view(self.data, k1, k2, reranker, qid, summary=self._summaries[key])

    def _render(self, view: dict[str, Any]) -> dict[str, str]:
        """The table, picture and cost line of a (reranker, k1, k2) drawn once; the ranks for each question."""
        key = (view["reranker"], view["k1"], view["k2"])
        if key not in self._drawn:
            self._drawn[key] = _summary_html(view)
        return {**self._drawn[key], "ranks": _ranks_part(view)}

    def _warm(self) -> None:
        """Every (reranker, k1, k2) state computed and drawn now (15 of them, a fraction of a second), so that no
        move of a control waits for pandas or the SVG."""
        first = next(iter(self.data["questions"]))
        for reranker in (r for r in self.data["k1s"] if r != CUT):
            for k1 in self.data["k1s"][reranker]:
                for k2 in self.data["k2s"]:
                    if k2 <= k1:
                        self._render(self._view(reranker, k1, k2, first))

    def _lock_k1(self, _change=None) -> None:
        """A reranker recorded at one k1 (the model): the slider moves there and is greyed; the others free it."""
        allowed = list(self.data["k1s"][self.reranker.value])
        if self.k1.value not in allowed:
            self.k1.value = allowed[-1]
        self.k1.disabled = len(allowed) == 1
        self.k1.tooltip = f"{self.reranker.value} was recorded at k1 = {allowed[0]} only" if len(allowed) == 1 else None

    def arrange(self) -> list[w.Widget]:
        return [self.reranker, self.k1, self.k2, self.cost, w.HBox([self.table, self.chart]), self.question,
                self.ranks, self.message]  # fmt: skip
