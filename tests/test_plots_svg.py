"""plots.svg: the explorers' pictures, drawn as SVG text (what each shows is read back as a browser would)."""

from __future__ import annotations

import pytest

from labkit.data.toys import RUNNING_GRADES, RUNNING_UNRETRIEVED
from labkit.measures import metrics
from labkit.ui import plots
from labkit.ui.widgets.explorer import html_cells, html_text


def test_lines_mark_the_current_x_and_leave_gaps_for_missing_values():
    svg = plots.svg_lines([1, 3, 10], {"easy": [0.5, None, 0.7], "all": [0.4, 0.5, float("nan")]}, mark=3,
                          mark_label="c = 3", log_x=True, title="R@10")  # fmt: skip
    text = str(svg)
    assert text.startswith("<svg") and text.count("<polyline") == 3  # easy in two pieces, all in one
    assert html_cells(text, "mark") == [("c = 3", "c = 3")]
    assert svg == plots.svg_lines([1, 3, 10], {"easy": [0.5, None, 0.7], "all": [0.4, 0.5, float("nan")]}, mark=3,
                                  mark_label="c = 3", log_x=True, title="R@10")  # deterministic  # fmt: skip
    assert repr(svg) == "<Svg: R@10>" and svg._repr_svg_() == text
    with pytest.raises(ValueError, match="mark must be one of xs"):
        plots.svg_lines([1, 2], {"a": [0, 1]}, mark=5)
    with pytest.raises(ValueError, match="one value per x"):
        plots.svg_lines([1, 2], {"a": [0]})


def test_stacked_bars_scale_to_shares_and_heatmap_marks_its_cell():
    bars = str(plots.svg_stacked_bars([1, 2], {"OK": [1, 3], "RET_FAIL": [1, 1]}, mark=2, mark_label="k = 2"))
    assert "2 · OK: 75.0%" in html_text(bars) and "1 · RET_FAIL: 50.0%" in html_text(bars)
    assert html_cells(bars, "mark") == [("k = 2", "k = 2")]
    with pytest.raises(ValueError, match=">= 0"):
        plots.svg_stacked_bars([1], {"OK": [-1]})
    heat = str(plots.svg_heatmap([64, 128], ["0 %", "25 %"], [[0.1, 0.2], [0.3, None]], mark=(64, "25 %")))
    assert html_cells(heat, "mark") == [("64 · 25 %", "0.200")] and "0.300" in html_text(heat)
    with pytest.raises(ValueError, match="2 rows of 2 values"):
        plots.svg_heatmap([64, 128], ["0 %", "25 %"], [[0.1, 0.2]])


def test_gain_discount_svg_says_what_ranking_metrics_says():
    m = metrics.ranking_metrics(RUNNING_GRADES, 5, 1, RUNNING_UNRETRIEVED, "all_judged")
    text = html_text(str(plots.svg_gain_discount(RUNNING_GRADES, 5, RUNNING_UNRETRIEVED, "all_judged")))
    assert f"nDCG@5 = {m['nDCG@k']:.4f}" in text and "trec_eval: all judged" in text and "/2.58" in text
    with pytest.raises(ValueError, match="k"):
        plots.svg_gain_discount(RUNNING_GRADES, 0)


def test_routing_and_triage_pictures_need_the_marked_k():
    row = {"share to nano": 0.5, "share to mini": 0.25, "filter recall": 1.0, "filter overflow": 0.0,
           "filter overpay": 0.1}  # fmt: skip
    panels = plots.svg_routing({1: row, 2: row}, 2)
    assert panels._repr_html_() == str(panels) and [v for _, v in html_cells(str(panels), "mark")] == ["k = 2"] * 2
    assert "none: 25.0%" in html_text(str(panels))  # what no window holds
    with pytest.raises(ValueError, match="k must be one of"):
        plots.svg_routing({1: row}, 3)
    tri = plots.svg_triage_shares({3: {"OK": 2, "LUCKY": 0, "GEN_FAIL": 1, "RET_FAIL": 1}}, 3, ["OK", "GEN_FAIL"])
    assert html_cells(str(tri), "mark") == [("k = 3", "k = 3")]
