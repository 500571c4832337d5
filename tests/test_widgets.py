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
