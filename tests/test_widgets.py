"""Explorers from state to HTML, without a browser: what each state shows, errors in place, the widget keeps working.

Every explorer is checked state by state against labkit's own pure functions (``html_for`` renders any state
without moving the widget; ``html_cells`` reads the keyed cells back). The browser tests (tests/browser/) then
only need to prove the wiring in real JupyterLab.
"""

from __future__ import annotations

import ipywidgets as w
import pandas as pd
import pytest

from labkit.data.toys import RUNNING_GRADES, RUNNING_UNRETRIEVED
from labkit.judges.faithfulness import Verdict
from labkit.measures import fusion, metrics, stats, triage
from labkit.ui import plots, widgets
from labkit.ui.widgets import chunks
from labkit.ui.widgets.explorer import Explorer, html_cells, html_table, html_text


def cells(html_: str, attr: str = "cell") -> dict[str, str]:
    return dict(html_cells(html_, attr))


# ---------------------------------------------------------------- the one table helper and its reader


def test_html_table_keys_every_value_cell_and_formats_by_type():
    frame = pd.DataFrame({"n": [3, 12], "R@10": [0.5, float("nan")]}, index=pd.Index(["easy", "a<b"], name="slice"))
    table = html_table(frame, ".2f")
    # ints stay ints in a row that also holds floats; NaN is an empty cell; labels are escaped
    assert cells(table) == {"easy|n": "3", "easy|R@10": "0.50", "a<b|n": "12", "a<b|R@10": ""}
    assert "<th>slice</th>" in table and "a&lt;b" in table and table.count('class="lk-value"') == 4

    columns = pd.MultiIndex.from_tuples([("R@10", "bm25"), ("R@10", "dense")])
    two_levels = pd.DataFrame([[0.1, 0.25]], index=["easy"], columns=columns)
    table = html_table(two_levels, ".4f", index_name="slice", key="{column}|{row}")
    assert cells(table) == {"R@10|bm25|easy": "0.1000", "R@10|dense|easy": "0.2500"}
    assert "<th>R@10<br>bm25</th>" in table

    pairs = html_table({"P@k": 0.4, "R@k": None}, ".4f", attr="metric", missing="undefined")
    assert cells(pairs, "metric") == {"P@k": "0.4000", "R@k": "undefined"} and pairs.count("<tr>") == 2  # no header
    tuples = pd.DataFrame({"x": [1]}, index=pd.MultiIndex.from_tuples([("hard", "kept")]))
    assert cells(html_table(tuples)) == {"hard · kept|x": "1"}


def test_html_cells_and_html_text_read_what_a_browser_shows():
    page = (
        '<p>fix <b class="lk-priority">gen</b></p></span><ol><li data-qid="q&amp;1"><code>a</code>\n  b<br>c</li></ol>'
    )
    assert html_cells(page, "qid") == [("q&1", "a bc")]  # textContent: <br> adds nothing, whitespace squeezed
    assert html_text(page) == "fix gena bc"  # the stray </span> closes nothing


# ---------------------------------------------------------------- the explorer skeleton


def _square(n):
    if n < 0:
        raise ValueError("n must be >= 0")
    return pd.DataFrame({"square": [n * n]}, index=pd.Index(["row"], name="what"))


def test_explorer_state_to_html_and_errors_in_place():
    e = Explorer({"n": w.IntSlider(value=2, min=-3, max=3)}, _square, html_table)
    assert cells(e.output.value) == {"row|square": "4"} and "lk-output-output" in e.output._dom_classes
    assert cells(e.html_for(n=3)) == {"row|square": "9"} and e.state == {"n": 2}  # html_for leaves the widget be
    e.controls["n"].value = -1
    assert e.result == {"error": "ValueError: n must be >= 0"} and "lk-error" in e.message.value
    assert e.output.value == ""  # no stale number under a control that has moved
    e.controls["n"].value = 1
    assert e.message.value == "" and e.result.loc["row", "square"] == 1
    with pytest.raises(ValueError, match="no control named 'm'"):
        e.html_for(m=1)
    with pytest.raises(ValueError, match="at least one control"):
        Explorer({}, _square, html_table)


class _Twice(Explorer):
    input_errors = (ValueError,)

    def __init__(self):
        def compute(n):
            if n == 9:
                raise RuntimeError("broken")
            return {"n": n, "square": _square(n).loc["row", "square"]}

        outputs = {"a": w.HTML(), "b": w.HTML()}
        render = lambda v: {"a": f"<b>{v['n']}</b>", "b": f"<i>{v['square']}</i>"}  # noqa: E731
        super().__init__({"n": w.IntSlider(value=2, min=-3, max=9)}, compute, render, outputs=outputs,
                         summary=lambda v: v["n"])  # fmt: skip


def test_explorer_input_errors_keep_the_last_result_and_other_errors_replace_it():
    e = _Twice()
    assert e.result == 2 and e.outputs["b"].value == "<i>4</i>"
    assert e.html_for(n=3) == {"a": "<b>3</b>", "b": "<i>9</i>"}
    e.controls["n"].value = -1  # the learner's input: the message alone, the last good numbers stay
    assert e.result == 2 and e.outputs["b"].value == "<i>4</i>"
    assert "n must be &gt;= 0" in e.message.value and "ValueError" not in e.message.value
    e.controls["n"].value = 9  # anything else: its type, an error result, empty outputs
    assert e.result == {"error": "RuntimeError: broken"} and "RuntimeError: broken" in e.message.value
    assert e.outputs["a"].value == e.outputs["b"].value == ""
    e.controls["n"].value = 1
    assert (e.result, e.message.value, e.outputs["a"].value) == (1, "", "<b>1</b>")


class _Counted(Explorer):
    """n (a slider), colour (a selection) and a note (free text): counts every compute call by state."""

    def __init__(self, **kw):
        self.calls: list[tuple] = []

        def compute(n, colour, note):
            self.calls.append((n, colour, note))
            if n == 3:
                raise RuntimeError("no 3")
            return f"{n}-{colour}-{note}"

        controls = {"n": w.IntSlider(value=0, min=0, max=4), "colour": w.Dropdown(options=["red", "green", "blue"]),
                    "note": w.Text(value="x")}  # fmt: skip
        super().__init__(controls, compute, lambda v: f"<b>{v}</b>", **kw)


def test_explorer_keeps_each_state_it_has_shown_and_computes_ahead_what_one_move_reaches_nearest_first():
    e = _Counted()
    assert e.calls == [(0, "red", "x")]
    assert [(s["n"], s["colour"]) for s in e.neighbours()] == [
        (1, "red"), (0, "green"), (2, "red"), (0, "blue"), (3, "red"), (4, "red")]  # fmt: skip
    e.controls["n"].value = 1
    e.controls["n"].value = 0  # a revisit: shown from what was kept, not computed again
    assert e.calls == [(0, "red", "x"), (1, "red", "x")] and e.output.value == "<b>0-red-x</b>"
    e.controls["colour"].value = "green"  # the middle option: the next one first, then the previous one
    assert [s["colour"] for s in e.neighbours() if s["n"] == 0] == ["blue", "red"]
    e.controls["n"].value = 2
    assert e.warm() == 4  # n 1, blue, red, n 4; n 3 fails (skipped: it shows its error when reached); n 0 was kept
    assert (3, "green", "x") in e.calls and e.warm() == 0
    before = len(e.calls)
    e.controls["n"].value = 1
    assert len(e.calls) == before and e.output.value == "<b>1-green-x</b>"
    e.controls["n"].value = 3  # the failing state fails in place, as without the cache
    assert e.result == {"error": "RuntimeError: no 3"} and e.output.value == ""
    e.controls["n"].disabled = True  # a locked control offers no move
    assert all(s["n"] == 3 for s in e.neighbours())


def test_the_moves_of_a_slow_control_are_computed_ahead_after_the_others():
    e = _Counted()
    e.warm()
    assert set(e._cost) == {"n", "colour"} and all(t >= 0 for t in e._cost.values())  # noted per control moved
    e._cost["n"] = 1.0  # n's states took a second each: every colour first
    assert [(s["n"], s["colour"]) for s in e.neighbours()] == [
        (0, "green"), (0, "blue"), (1, "red"), (2, "red"), (3, "red"), (4, "red")]  # fmt: skip


def test_a_long_control_offers_its_next_and_previous_value_and_its_two_ends():
    e = Explorer({"n": w.IntSlider(value=50, min=0, max=100)}, lambda n: n, str)
    assert [s["n"] for s in e.neighbours()] == [51, 49, 0, 100]
    e.controls["n"].value = 100
    assert [s["n"] for s in e.neighbours()] == [99, 0]


def test_computing_ahead_stops_at_ahead_max_states(monkeypatch):
    from labkit.ui.widgets import explorer

    loop = _Loop()
    monkeypatch.setattr(explorer, "_kernel_loop", lambda: loop)
    e = _Counted()
    e.ahead_max = 2
    e.page._on_page(e.page, {"hello": True}, [])
    while loop.turn():
        pass
    assert e.calls == [(0, "red", "x"), (1, "red", "x"), (0, "green", "x")]  # the two nearest


def test_a_control_found_slow_while_computing_ahead_goes_last_or_is_dropped_when_the_kernel_must_stay_free(
    monkeypatch,
):
    import time

    from labkit.ui.widgets import explorer

    loop = _Loop()
    monkeypatch.setattr(explorer, "_kernel_loop", lambda: loop)
    calls = []

    def compute(n, colour):
        calls.append((n, colour))
        time.sleep(0.04 if colour != "red" else 0)  # a new colour is slow
        return f"{n}-{colour}"

    e = Explorer({"n": w.IntSlider(value=0, max=4), "colour": w.Dropdown(options=["red", "green", "blue"])},
                 compute, str)  # fmt: skip
    e.page._on_page(e.page, {"hello": True}, [])
    while loop.turn():
        pass
    assert calls[1:] == [(1, "red"), (0, "green"), (2, "red"), (3, "red"), (4, "red"), (0, "blue")]  # blue last
    t = _Counted()  # free text: a typed note can only be answered by the kernel, so slow states are dropped
    compute_t = t.compute
    t.compute = lambda n, colour, note: (time.sleep(0.04) if colour != "red" else None) or compute_t(n, colour, note)
    t.page._on_page(t.page, {"hello": True}, [])
    while loop.turn():
        pass
    assert [(n, c) for n, c, _ in t.calls[1:]] == [(1, "red"), (0, "green"), (2, "red"), (3, "red"), (4, "red")]


def test_explorer_forgets_its_oldest_state_beyond_cache_size():
    e = _Counted()
    e.cache_size = 2
    for n in (1, 2, 0):
        e.controls["n"].value = n
    assert e.calls == [(0, "red", "x"), (1, "red", "x"), (2, "red", "x"), (0, "red", "x")]  # 0 had been dropped


class _Loop:
    """A stand-in for the kernel's event loop: keeps the callbacks, runs them when told."""

    def __init__(self):
        self.later: list = []

    def call_later(self, delay, fn):
        self.later.append((delay, fn))

    def add_callback(self, fn):
        self.later.append((0, fn))

    def turn(self) -> int:
        """Run the callbacks queued so far (one turn of the loop); how many."""
        todo, self.later = self.later, []
        for _, fn in todo:
            fn()
        return len(todo)


def test_in_a_kernel_the_neighbours_are_computed_one_per_turn_once_a_page_listens(monkeypatch):
    from labkit.ui.widgets import explorer

    loop = _Loop()
    monkeypatch.setattr(explorer, "_kernel_loop", lambda: loop)
    e = _Counted()
    e.controls["note"].value = "x"  # no page yet (nbval, a script): nothing is computed ahead
    assert e.calls == [(0, "red", "x")] and loop.later == []
    e.page._on_page(e.page, {"hello": True}, [])  # a page listens: the chain starts after the delay
    assert [d for d, _ in loop.later] == [explorer.AHEAD_DELAY_S]
    assert loop.turn() == 1 and len(e.calls) == 2  # one state per turn
    e.controls["colour"].value = "blue"  # a move while the chain runs: the chain goes on with the new neighbours
    assert len(loop.later) == 1 and e.calls[-1] == (0, "blue", "x")
    while loop.turn():
        pass
    assert e.calls[3:] == [(1, "blue", "x"), (0, "green", "x"), (2, "blue", "x"), (3, "blue", "x"), (4, "blue", "x")]
    e.controls["note"].value = "y"  # free text: no neighbour of its own; the others' are new states
    while loop.turn():
        pass
    assert e.calls[-7:] == [(0, "blue", "y"), (1, "blue", "y"), (0, "green", "y"), (2, "blue", "y"),
                            (0, "red", "y"), (3, "blue", "y"), (4, "blue", "y")]  # fmt: skip


# ---------------------------------------------------------------- 03: the metrics playground


def _metrics_shown(v):
    return "undefined" if v is None else f"{v:.4f}"


def test_playground_shows_labkit_metrics_and_chart_for_every_state():
    pg = widgets.MetricsPlayground()  # the running example
    assert pg.grades.value == widgets.grades_text(RUNNING_GRADES)
    assert pg.unretrieved.value == widgets.grades_text(RUNNING_UNRETRIEVED)
    for move in ({}, {"k": 3}, {"thr": 2, "idcg": "all_judged"}, {"grades": "3, 0, 1, 2", "unretrieved": ""},
                 {"grades": "0 0", "unretrieved": ""}):  # fmt: skip
        s = {**pg.state, **move}
        grades, extra = widgets.parse_grades(s["grades"]), widgets.parse_grades(s["unretrieved"])
        want = metrics.ranking_metrics(grades, s["k"], s["thr"], extra, s["idcg"])
        shown = pg.html_for(**move)
        assert cells(shown["table"], "metric") == {name: _metrics_shown(v) for name, v in want.items()}, move
    assert cells(shown["table"], "metric")["R@k"] == "undefined"  # no relevant document at all
    pg.k.value = 3
    assert pg.result == metrics.ranking_metrics(RUNNING_GRADES, 3, 1, RUNNING_UNRETRIEVED)
    assert pg.table.value == pg.html_for()["table"]
    assert pg.chart.value == str(plots.svg_gain_discount(RUNNING_GRADES, 3, RUNNING_UNRETRIEVED))
    assert f"nDCG@3 = {pg.result['nDCG@k']:.4f}" in html_text(pg.chart.value)  # the title says what the table says


def test_playground_shows_a_bad_grade_in_place_and_recovers():
    pg = widgets.MetricsPlayground()
    good, table = dict(pg.result), pg.table.value
    pg.grades.value = "0, 1e999, 3"  # an infinite grade
    assert "lk-error" in pg.message.value and "finite" in pg.message.value
    assert pg.result == good and pg.table.value == table  # the last good result stays, nothing half-updated
    pg.grades.value = "0, x, 3"
    assert "&#x27;x&#x27; is not a number" in pg.message.value
    pg.grades.value = " "
    assert "at least one grade" in pg.message.value
    pg.grades.value = "3, 2, 1"
    assert pg.message.value == "" and pg.result["nDCG@k"] == pytest.approx(1.0)


def test_playground_buttons_move_a_document_and_the_ranks_follow_the_grades():
    pg = widgets.MetricsPlayground()
    pg.position.value = 2
    pg.down.click()
    assert (pg.grades.value, pg.position.value) == ("0, 0, 2, 3, 1", 3)
    pg.up.click()
    pg.up.click()
    assert (pg.grades.value, pg.position.value) == ("2, 0, 0, 3, 1", 1)
    pg.up.click()  # already at the top: nothing moves
    assert pg.grades.value == "2, 0, 0, 3, 1"
    pg.grades.value = "1, 2, 3"
    assert list(pg.position.options) == [1, 2, 3]
    pg.grades.value = "1, x"  # not valid: the ranks stay
    assert list(pg.position.options) == [1, 2, 3]


def test_playground_refuses_a_k_its_slider_cannot_show():
    with pytest.raises(ValueError, match="k must be <= 10 in the playground"):
        widgets.MetricsPlayground(k=50)
    assert widgets.MetricsPlayground(grades=[0] * 12, k=12).k.max == 12


# ---------------------------------------------------------------- 01, 04: rankings of two retrievers

RUNS = {"bm25": {"q1": ["a", "b", "c"], "q2": ["d", "a", "b"]}, "dense": {"q1": ["c", "a", "d"], "q2": ["a", "d", "c"]}}
QRELS = {"q1": {"c": 3, "b": 1}, "q2": {"a": 2}}
GROUPS = {"q1": "easy", "q2": "hard"}


def _table_cells(table) -> dict[str, str]:
    return {f"{m}|{n}|{group}": f"{v:.4f}" for group, row in table.iterrows() for (m, n), v in row.items()}


def test_fusion_explorer_shows_the_hybrid_table_and_the_fused_ranking():
    ex = widgets.FusionExplorer(RUNS, QRELS, GROUPS, {"q1": "first?", "q2": "second?"}, k=3, top_n=3, query="q1")
    for move in ({}, {"c": 1}, {"weight dense": 0.0, "query": "q2"}, {"weight bm25": 2.0, "c": 200}):
        s = {**ex.state, **move}
        weights = [s["weight bm25"], s["weight dense"]]
        shown = ex.html_for(**move)
        table = fusion.hybrid_table(RUNS, QRELS, GROUPS, c=s["c"], weights=weights, k=3)
        assert cells(shown["table"]) == _table_cells(table), move
        fused, score = fusion.rrf([RUNS[n][s["query"]] for n in RUNS], c=s["c"], top_n=3, weights=weights)
        grade = QRELS[s["query"]]
        assert html_cells(shown["ranking"], "chunk") == [
            (d, f"{d} {score[d]:.5f}" + (f" gold, grade {grade[d]}" if d in grade else " not gold")) for d in fused
        ], move
        assert html_text(shown["ranking"]).startswith(f"fused top 3 for {s['query']}")
    assert ex.c.options == widgets.rankings.C_STEPS  # log-spaced: every step moves the fused order
    chart = ex.html_for(c=10)["chart"]  # the hybrid against every c, c = 10 marked, in both panels
    curve = {c: fusion.hybrid_table(RUNS, QRELS, GROUPS, c=c, weights=[1.0, 1.0], k=3) for c in ex.c.options}
    assert chart == plots.svg_fusion_by_c(curve, 10) and [v for _, v in html_cells(chart, "mark")] == ["c = 10"] * 2
    texts = {d: f"text of {d} " * 20 for run in RUNS.values() for d in run["q1"]}
    with_text = widgets.FusionExplorer(RUNS, QRELS, GROUPS, {"q1": "first?"}, k=3, top_n=1, query="q1", c=7,
                                       texts=texts)  # fmt: skip
    assert 7 in with_text.c.options and "text of" in with_text.ranking.value
    ex.weights["dense"].value = 0.0  # the hybrid is BM25's own ranking
    assert ex.result["ranking"] == RUNS["bm25"]["q1"]
    assert ex.result["table"].equals(fusion.hybrid_table(RUNS, QRELS, GROUPS, weights=[1.0, 0.0], k=3).round(4))


class _Fixed:
    def __init__(self, ids):
        self.ids = ids

    def search(self, question, k):
        return [(d, 1.0 / (i + 1)) for i, d in enumerate(self.ids[:k])]


def test_question_box_shows_each_retrievers_top_k_and_keeps_them_on_an_empty_question():
    box = widgets.QuestionBox({"bm25": _Fixed(["a", "b", "c"]), "dense": _Fixed(["c", "a"])}, question="vpn", k=3)
    want = {"bm25|1": "a", "bm25|2": "b", "bm25|3": "c", "dense|1": "c", "dense|2": "a", "dense|3": ""}
    assert cells(box.output.value) == want and box.result.shape == (3, 2)
    box.text.value = "  "
    assert "question must be a non-empty string" in box.message.value and cells(box.output.value) == want
    box.text.value = "leave"
    assert box.message.value == ""


def test_question_box_puts_a_search_button_beside_the_question():
    """Tab from the question lands on the button in the same cell (see QuestionBox); the button commits the text."""
    box = widgets.QuestionBox({"bm25": _Fixed(["a", "b"])}, question="vpn", k=2)
    row = box.children[0]
    assert isinstance(row, w.HBox) and row.children == (box.text, box.search)
    assert box.search.description == "search" and box.children[1:3] == (box.message, box.output)


def test_cutoff_explorer_shows_mrr_and_hit_rate_at_each_k():
    ex = widgets.CutoffExplorer(RUNS, QRELS, GROUPS, k=2, max_k=3)
    for k in (1, 2, 3):
        cut = {name: {q: r[:k] for q, r in run.items()} for name, run in RUNS.items()}
        want = _table_cells(metrics.compare_runs(cut, QRELS, GROUPS, (f"RR@{k}", f"hit@{k}")))
        assert cells(ex.html_for(k=k)) == want
    shown = cells(ex.html_for(k=3))  # by hand: q1's first gold in BM25 is b at rank 2; q2's in dense is a at 1
    assert (shown["RR@3|bm25|easy"], shown["RR@3|dense|hard"], shown["hit@3|bm25|easy"]) == (
        "0.5000",
        "1.0000",
        "1.0000",
    )
    ex.k.value = 1
    assert list(ex.result.columns.get_level_values(0).unique()) == ["RR@1", "hit@1"]


# ---------------------------------------------------------------- 05: the chunk grid


class _Grid:
    def __init__(self):
        self.calls = []

    def evaluate(self, size, overlap, k, evidence=False):
        self.calls.append((size, overlap, k))
        columns = pd.MultiIndex.from_tuples([("R@10", "bm25"), ("ER@10", "bm25")])
        return pd.DataFrame([[size / 1000, overlap / 100 + k / 1e4]], index=pd.Index(["all"], name="slice"),
                            columns=columns)  # fmt: skip

    def costs(self, size, overlap, k):
        return {"chunks": 1000 / (size - overlap), "words read": k * size}

    retrievers = ("bm25",)

    def evidence_curve(self, size, overlap, retriever, max_k):
        return [min(1.0, size / 512 + overlap / 1000 + k / 100) for k in range(1, max_k + 1)]


def test_chunk_grid_explorer_shows_costs_and_table_of_each_configuration():
    grid = _Grid()
    ex = widgets.ChunkGridExplorer(grid, mode="shared k")
    assert grid.calls == [(128, 32, 10)]  # the widget's overlap share, 25 % of 128, is 32 words below it
    chart = ex.chart.value  # ER@10 over the whole grid, the current cell (128, 25 %) marked
    assert [v for _, v in html_cells(chart, "mark")] == [f"{128 / 512 + 32 / 1000 + 0.1:.3f}"]
    assert "ER@10 bm25" in html_text(chart) and "size 128, overlap 25%" in chart
    assert html_cells(ex.html_for(k=3)["chart"], "mark") == [("size 128, overlap 25%", f"{0.25 + 0.032 + 0.03:.3f}")]
    shown = ex.html_for(size=256, overlap_share=0.5, k=7)
    assert html_text(shown["costs"]) == (
        "size 256, overlap 128 words, k = 7 at every size: chunks 7.812, words read 1792"
    )
    assert cells(shown["costs"], "cost") == {"chunks": "7.812", "words read": "1792"}
    assert cells(shown["costs"], "read") == {"k": "7"}
    assert cells(shown["table"]) == {"R@10|bm25|all": "0.2560", "ER@10|bm25|all": "1.2807"}
    ex.overlap.value = 0.0
    assert ex.result["overlap"] == 0 and ex.result["costs"] == grid.costs(128, 0, 10)
    assert cells(ex.html_for(budget=320)["costs"], "read") == {"k": "10"}  # shared k: the budget is ignored


def test_chunk_grid_explorer_compares_sizes_at_an_equal_reading_budget_by_default():
    from labkit.retrieval.grid import budget_k

    grid = _Grid()
    ex = widgets.ChunkGridExplorer(grid)  # the default: every size reads about 1,280 words
    assert ex.state["mode"] == "equal budget"  # no control is disabled: a page draws kept states before the kernel
    assert grid.calls == [(128, 32, 10)] and ex.result["k"] == 10 and ex.result["budget"] == 1280
    for size, want in ((64, 20), (128, 10), (256, 5)):
        assert budget_k(size, 1280) == want
        shown = ex.html_for(size=size, overlap_share=0.0, k=3)  # k is ignored at an equal budget
        assert cells(shown["costs"], "read") == {"k": str(want)}
        assert cells(shown["costs"], "cost")["words read"] == str(want * size)
        mark = html_cells(shown["chart"], "mark")  # each size's cell at its own k: ER@k over the grid
        assert mark == [(f"size {size}, overlap 0%", f"{size / 512 + want / 100:.3f}")]
    chart = html_text(ex.html_for(budget=640)["chart"])
    assert "ER@k bm25, ~640 words (k = 10, 5, 2)" in chart
    assert ex.html_for(budget=320, size=256)["costs"].count('data-read="k">1<') == 1  # 320 // 256, at least 1
    # the control the mode ignores is greyed, says why, and stays movable; the other is drawn as ipywidgets draws it
    greyed = chunks.IGNORED_HANDLE
    assert (ex.k.style.handle_color, ex.budget.style.handle_color) == (greyed, None)
    assert "set by the reading budget" in ex.k.tooltip and ex.budget.tooltip is None and not ex.k.disabled
    ex.mode.value = "shared k"
    assert ex.result["k"] == 10 and ex.result["budget"] is None
    assert (ex.k.style.handle_color, ex.budget.style.handle_color) == (None, greyed)
    assert ex.k.tooltip is None and "one k for every size" in ex.budget.tooltip and not ex.budget.disabled
    assert widgets.ChunkGridExplorer(grid).k.style.handle_color == greyed
    assert ex.k.style.handle_color is None  # each explorer greys its own controls, not a style they share
    ex.k.value = 4
    assert ex.result["k"] == 4
    ex.mode.value = "equal budget"
    assert ex.result["k"] == 10  # back to the budget's k, whatever the k slider says
    assert (ex.k.style.handle_color, ex.budget.style.handle_color) == (greyed, None)
    with pytest.raises(ValueError, match="mode must be one of"):
        widgets.ChunkGridExplorer(grid, mode="same k")
    with pytest.raises(ValueError, match="budget must be one of budgets"):
        widgets.ChunkGridExplorer(grid, budget=1000)
    with pytest.raises(ValueError, match="mode must be one of"):
        widgets.chunk_grid_view(grid, 128, 0.25, mode="budget")


# ---------------------------------------------------------------- 07: triage

TRACES = [
    {"qid": "q1", "question": "How long?", "gold": ["a"], "retrieved": ["a", "b"], "answer_pass": True,
     "gold_spans": ["ten days"], "answer": "It is ten days."},
    {"qid": "q2", "question": "Who <decides>?", "gold": ["c"], "retrieved": ["a", "b", "c"], "answer_pass": False,
     "gold_spans": ["the <HR> team"], "answer": "Ask IT."},
    {"qid": "q3", "question": "Where?", "gold": ["b"], "retrieved": ["a", "b"], "answer_pass": False},
]  # fmt: skip


def test_triage_explorer_shows_counts_priority_and_the_chosen_cells_traces():
    asked = []
    ex = widgets.TriageExplorer(lambda k: asked.append(k) or TRACES, k=2, max_k=3)
    for k in (2, 3):
        counts = triage.triage(TRACES, k)
        shown = ex.html_for(k=k)
        want = {f"{q}|traces": str(c) for q, c in counts.items()} | {
            f"{q}|share": f"{c / 3:.1%}" for q, c in counts.items()
        }
        assert cells(shown["table"]) == want
        assert f'<b class="lk-priority">{triage.priority(counts)}</b>' in shown["table"]
    gen = html_cells(ex.html_for(k=2, cell="GEN_FAIL")["examples"], "qid")
    assert gen == [("q3", "q3 Where?gold: b (rank 2); read: a, bgold span: not recordedanswer (holds no gold span):")]
    ret = ex.html_for(k=2, cell="RET_FAIL")["examples"]
    assert "Who &lt;decides&gt;?" in ret and '<q class="lk-gold-span">the &lt;HR&gt; team</q>' in ret
    assert "c (not read)" in html_text(ret)
    assert "It is ten days." in html_text(ex.html_for(cell="OK")["examples"])
    assert html_text(ex.html_for(cell="LUCKY")["examples"]) == "no trace in this cell"
    ex.k.value = 3
    ex.cell.value = "OK"
    ex.k.value = 2
    counts = triage.triage(TRACES, 2)
    assert asked == [1, 2, 3]  # each k once, all when the explorer is built: the picture shows them
    assert ex.result == {"k": 2, "counts": counts, "priority": triage.priority(counts), "examples": ["q1"]}
    chart = ex.chart.value  # the cells against k, k = 2 marked, drawn by plots
    sweep = {k: triage.triage(TRACES, k) for k in (1, 2, 3)}
    assert chart == plots.svg_triage_shares(sweep, 2, list(plots.TRIAGE_COLOURS), "cells against k",
                                            plots.TRIAGE_COLOURS)  # fmt: skip
    assert [v for _, v in html_cells(chart, "mark")] == ["k = 2"]


def test_triage_explorer_locks_k_for_a_reader_recorded_at_one_k():
    def traces_at(k, reader):
        if reader == "model" and k != 2:
            raise ValueError("the model's answers are recorded at k = 2 only")
        return TRACES

    ex = widgets.TriageExplorer(traces_at, k=2, max_k=3, readers=["model", "control"], recorded_k={"model": 2})
    assert ex.k.disabled and ex.k.value == 2 and ex.message.value == ""
    ex.reader.value = "control"
    assert not ex.k.disabled
    ex.k.value = 3
    ex.reader.value = "model"  # back to the model: k returns to 2, no error is ever shown
    assert (ex.k.value, ex.k.disabled, ex.message.value) == (2, True, "")
    assert ex.result["reader"] == "model" and ex.result["k"] == 2
    assert sorted(ex.sweeps["model"]) == [2] and sorted(ex.sweeps["control"]) == [1, 2, 3]  # one bar: one k
    ex.reader.value = "control"
    ex.k.value = 3  # computed ahead: the model where picking it puts k (2), never a state that has no traces
    assert {(s["reader"], s["k"]) for s in ex.neighbours()} == {("control", 3), ("control", 2), ("control", 1),
                                                               ("model", 2)}  # fmt: skip
    with pytest.raises(ValueError, match="recorded_k names 'other'"):
        widgets.TriageExplorer(traces_at, k=2, readers=["model"], recorded_k={"other": 2})


def test_every_explorer_shows_a_readable_preview_before_its_cell_runs():
    ex = widgets.TriageExplorer(lambda k: TRACES, k=2, max_k=3)
    bundle = ex._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle  # the live widget, once the cell has run
    assert bundle["text/plain"] == "TriageExplorer: run this cell (Shift+Enter) to use the explorer"
    assert "Run this cell" in bundle["text/html"] and ex.table.value in bundle["text/html"]


def test_slice_triage_explorer_shows_one_slice_its_gap_and_its_traces():
    traces = [{**t, "slice": s} for t, s in zip(TRACES, ("easy", "real", "real"), strict=True)]
    ex = widgets.SliceTriageExplorer(traces, k=2)
    assert list(ex.group.options) == ["easy", "real", "all"] and ex.result["group"] == "all"
    gaps = triage.stage_gap(traces, 2)
    real = ex.html_for(group="real")
    assert cells(real["table"]) == {"OK|traces": "0", "GEN_FAIL|traces": "1", "LUCKY|traces": "0",
                                    "RET_FAIL|traces": "1", "OK|share": "0.0%", "GEN_FAIL|share": "50.0%",
                                    "LUCKY|share": "0.0%", "RET_FAIL|share": "50.0%"}  # fmt: skip
    gap = html_cells(real["table"], "gap")
    assert gaps.loc["real", "n"] == 2 and gap == [("real", stats.fmt_ci(gaps.loc["real", "gap"], None, None))]
    assert "too few traces for an interval: not settled" in real["table"]  # stage_gap gives 2 traces no interval
    many = widgets.slice_triage_view([{**t, "slice": "real"} for t in TRACES * 5], 2, "real", "OK")
    want = triage.stage_gap([{**t, "slice": "real"} for t in TRACES * 5], 2).loc["real"]
    shown = widgets.slice_triage_html(many)["table"]
    assert html_cells(shown, "gap") == [("real", stats.fmt_ci(*want[["gap", "gap low", "gap high"]]))]
    assert [q for q, _ in html_cells(real["examples"], "qid")] == ["q2"]  # RET_FAIL, the default cell
    ex.cell.value = "GEN_FAIL"
    ex.group.value = "real"
    assert ex.result["examples"] == ["q3"] and ex.result["counts"]["GEN_FAIL"] == 1
    with pytest.raises(ValueError, match="group must be one of"):
        widgets.slice_triage_view(traces, 2, "hard", "OK")


def _traces_at(k):
    if k == 7:
        raise RuntimeError("the pipeline broke at k=7")
    return TRACES[:2]


def test_an_exception_in_a_callback_is_shown_and_the_widget_keeps_working():
    tx = widgets.TriageExplorer(_traces_at, k=2)
    assert tx.result["counts"]["OK"] == 1
    tx.k.value = 7
    assert tx.result == {"error": "RuntimeError: the pipeline broke at k=7"}
    assert "lk-error" in tx.message.value and "k=7" in tx.message.value and tx.table.value == ""
    tx.k.value = 3
    assert tx.message.value == "" and tx.result["counts"]["GEN_FAIL"] == 1


# ---------------------------------------------------------------- 09: routing


def test_routing_explorer_shows_each_statistic_and_its_picture_and_computes_each_k_once():
    asked = []

    def stats(k):
        asked.append(k)
        return {
            "tokens p50": 123.456 * k,
            "$ per 1k requests": float("nan") if k == 3 else 0.0123456,
            "share to nano": 1 / k,
            "filter recall": 1.0,
            "filter overflow": 0.1 * (k == 4),
            "filter overpay": 0.0,
        }

    ex = widgets.RoutingExplorer(stats, k=2, max_k=5)
    assert asked == [1, 2, 3, 4, 5]  # every k once, up front: the picture shows them all
    assert cells(ex.table.value, "stat") == {
        "tokens p50": "246.9",
        "$ per 1k requests": "0.01235",
        "share to nano": "0.5",
        "filter recall": "1",
        "filter overflow": "0",
        "filter overpay": "0",
    }
    assert [v for _, v in html_cells(ex.chart.value, "mark")] == ["k = 2", "k = 2"]  # both panels mark k
    ex.k.value = 3
    assert cells(ex.table.value, "stat")["$ per 1k requests"] == "nan"
    assert ex.chart.value == plots.svg_routing(ex.by_k, 3) and "k = 3" in html_text(ex.chart.value)
    ex.k.value = 2
    assert asked == [1, 2, 3, 4, 5] and ex.result == {**stats(2)}


# ---------------------------------------------------------------- 06: faithfulness


def test_faithfulness_explorer_shows_verdicts_quotes_and_highlights_real_evidence():
    rows = [
        {"qid": "q1", "question": "How many days?", "answer": "You get 15 days. It is paid in cash.",
         "context": "Employees get 15 days of leave."},
    ]  # fmt: skip

    def judge(context, claim):
        if "15" in claim:
            return Verdict(claim, "supported", "Employees get 15 days of leave.")
        return Verdict(claim, "unsupported", "paid in cash")  # a quote that is not in the context

    fx = widgets.FaithfulnessExplorer(rows, {"fake": judge})
    assert fx.result == {"qid": "q1", "judge": "fake", "verdicts": ["supported", "unsupported"], "score": 0.5,
                         "status": "FAIL"}  # fmt: skip
    html_ = fx.view.value
    assert "<mark>Employees get 15 days of leave.</mark>" in html_ and "<mark>paid in cash" not in html_
    assert [v for _, v in html_cells(html_, "verdict")] == ["supported You get 15 days.quote: \"Employees get 15 "
                                                             'days of leave."', 'unsupported It is paid in cash.'
                                                             'quote: "paid in cash"']  # fmt: skip
    assert cells(html_, "status") == {"FAIL": "FAIL"}
    fx.mode.value = "score"
    assert "score <b>0.50</b>" in fx.view.value and fx.view.value == fx.html_for()

    def broken(context, claim):
        raise ValueError("claim is too long")

    fx2 = widgets.FaithfulnessExplorer(rows, {"fake": judge, "broken": broken})
    fx2.judge.value = "broken"
    assert "claim is too long" in fx2.message.value and fx2.view.value == ""
    assert fx2.result == {"error": "ValueError: claim is too long"}
    fx2.judge.value = "fake"
    assert fx2.result["status"] == "FAIL" and fx2.message.value == ""


# ---------------------------------------------------------------- 02: synthetic questions


def test_synth_explorer_renders_the_filter_view():
    from test_synth import _frame

    e = widgets.SynthExplorer(_frame(), threshold=4)
    assert e.result.counts.loc["synthetic-easy", "kept"] == 2
    html_ = e.output.value
    assert 'data-cell="synthetic-hard|kept"' in html_ and 'data-cell="synthetic-hard, kept|R@10"' in html_
    assert html_.count('class="lk-example"') == len(e.result.examples)
    e.controls["threshold"].value = 5
    assert e.result.counts.loc["synthetic-easy", "kept"] == 1
    e.controls["method"].value = "embedding"
    assert e.result.counts["kept"].sum() + e.result.counts["dropped"].sum() == 6


def test_table_html_names_its_rows_or_refuses():
    import pandas as pd

    from labkit.ui.widgets.rankings import table_html

    table = pd.DataFrame({("R@10", "bm25"): [0.5, 0.25]}, index=["easy", "hard"])
    with pytest.raises(ValueError, match="index_name"):
        table_html(table)  # rows of unknown kind: not labelled "slice" by guess
    assert "<th>slice</th>" in table_html(table, index_name="slice")
    table.index.name = "kind"
    assert "<th>kind</th>" in table_html(table)
