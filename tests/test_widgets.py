"""Widgets from state to HTML, without a browser: errors are shown in place and the widget keeps working.

The browser tests (tests/browser/) prove the wiring in real JupyterLab; these prove what each state shows.
"""

from __future__ import annotations

import pytest

from labkit import widgets
from labkit.faithfulness import Verdict


def test_playground_shows_a_bad_grade_in_place_and_recovers():
    pg = widgets.MetricsPlayground()
    good = dict(pg.result)
    pg.grades.value = "0, 1e999, 3"  # an infinite grade
    assert "lk-error" in pg.message.value and "finite" in pg.message.value
    assert pg.result == good  # the last good result stays, nothing half-updated
    pg.grades.value = "3, 2, 1"
    assert pg.message.value == "" and pg.result["nDCG@k"] == pytest.approx(1.0)


def test_playground_refuses_a_k_its_slider_cannot_show():
    with pytest.raises(ValueError, match="k must be <= 10 in the playground"):
        widgets.MetricsPlayground(k=50)
    assert widgets.MetricsPlayground(grades=[0] * 12, k=12).k.max == 12


def _traces_at(k):
    if k == 7:
        raise RuntimeError("the pipeline broke at k=7")
    return [
        {"qid": "q1", "question": "?", "gold": ["a"], "retrieved": ["a", "b"], "answer_pass": True},
        {"qid": "q2", "question": "?", "gold": ["c"], "retrieved": ["a", "b"], "answer_pass": False},
    ]


def test_an_exception_in_a_callback_is_shown_and_the_widget_keeps_working():
    tx = widgets.TriageExplorer(_traces_at, k=5)
    assert tx.result["counts"]["OK"] == 1
    tx.k.value = 7
    assert tx.result == {"error": "RuntimeError: the pipeline broke at k=7"}
    assert "lk-error" in tx._error_box.value and "k=7" in tx._error_box.value
    tx.k.value = 6
    assert tx._error_box.value == "" and tx.result["counts"]["RET_FAIL"] == 1


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
    html = fx.view.value
    assert "<mark>Employees get 15 days of leave.</mark>" in html and "<mark>paid in cash" not in html
    assert 'data-verdict="unsupported"' in html
    fx.mode.value = "score"
    assert "score <b>0.50</b>" in fx.view.value

    def broken(context, claim):
        raise ValueError("claim is too long")

    fx2 = widgets.FaithfulnessExplorer(rows, {"fake": judge, "broken": broken})
    fx2.judge.value = "broken"
    assert "claim is too long" in fx2.view.value and fx2.result == {"error": "claim is too long"}
    fx2.judge.value = "fake"
    assert fx2.result["status"] == "FAIL"


# ---------------------------------------------------------------- the explorer skeleton and chapter 02's explorer


def test_explorer_state_to_html_and_errors_in_place():
    import ipywidgets as w
    import pandas as pd

    from labkit.explorer import Explorer, html_table

    def compute(n):
        if n < 0:
            raise ValueError("n must be >= 0")
        return pd.DataFrame({"square": [n * n]}, index=pd.Index(["row"], name="what"))

    e = Explorer({"n": w.IntSlider(value=2, min=-3, max=3)}, compute, html_table)
    assert 'data-cell="row|square"' in e.output.value and ">4<" in e.output.value
    assert ">9<" in e.html_for(n=3) and e.state == {"n": 2}  # html_for leaves the widget as it is
    e.controls["n"].value = -1
    assert e.result == {"error": "ValueError: n must be >= 0"} and "lk-error" in e._error_box.value
    e.controls["n"].value = 1
    assert e._error_box.value == "" and e.result.loc["row", "square"] == 1
    with pytest.raises(ValueError, match="no control named 'm'"):
        e.html_for(m=1)
    with pytest.raises(ValueError, match="at least one control"):
        Explorer({}, compute, html_table)


def test_synth_explorer_renders_the_filter_view():
    from test_synth import _frame

    from labkit.explorer import SynthExplorer

    e = SynthExplorer(_frame(), threshold=4)
    assert e.result.counts.loc["synthetic-easy", "kept"] == 2
    html_ = e.output.value
    assert 'data-cell="synthetic-hard|kept"' in html_ and 'data-cell="synthetic-hard, kept|R@10"' in html_
    assert html_.count('class="lk-example"') == len(e.result.examples)
    e.controls["threshold"].value = 5
    assert e.result.counts.loc["synthetic-easy", "kept"] == 1
    e.controls["method"].value = "embedding"
    assert e.result.counts["kept"].sum() + e.result.counts["dropped"].sum() == 6
