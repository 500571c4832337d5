"""labkit.ui.plots.verdicts: judges at (TNR, TPR) with their Wilson crosses; strategies at (cost, pass rate)."""

import pandas as pd
import pytest

from labkit.measures import stats
from labkit.ui import plots


def _report():
    table = pd.DataFrame({"truth": [True] * 6 + [False] * 4, "good": [True] * 5 + [False] * 5,
                          "yes": [True] * 10})  # fmt: skip
    return stats.judge_report(table, ["good", "yes"], truth="truth")


def test_plot_judges_puts_each_judge_at_its_tnr_and_tpr_with_both_intervals():
    report = _report()
    fig = plots.plot_judges(report)
    ax = fig.axes[0]
    points = [tuple(line.get_xydata()[0]) for line in ax.lines if line.get_marker() == "o"]
    assert points == [(report.loc["good", "TNR"], report.loc["good", "TPR"]), (0.0, 1.0)]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["good (J = 0.83)", "yes (J = 0.00)"]
    caps = [c for c in ax.collections if len(c.get_segments()) == 1]  # one x and one y whisker per judge
    lo, hi = report.attrs["ends"]["good"]["TPR"]  # the interval's ends as numbers, not its printed text
    assert (lo, hi) == pytest.approx(stats.wilson(5, 6)[1:])
    assert any(abs(seg[0][1] - lo) < 1e-12 and abs(seg[1][1] - hi) < 1e-12 for c in caps for seg in c.get_segments())
    with pytest.raises(ValueError, match="lacks"):
        plots.plot_judges(report.drop(columns="J"))
    bare = report.copy()
    bare.attrs = {}
    with pytest.raises(ValueError, match="ends"):
        plots.plot_judges(bare)
    with pytest.raises(ValueError, match="no judge to draw"):
        plots.plot_judges(report.iloc[:0])


def test_plot_judges_gives_any_number_of_judges_their_own_colour_and_marker():
    truth = [True] * 6 + [False] * 4
    table = pd.DataFrame({"truth": truth, **{f"j{i}": truth[i:] + truth[:i] for i in range(9)}})
    report = stats.judge_report(table, [f"j{i}" for i in range(9)], truth="truth")
    ax = plots.plot_judges(report).axes[0]
    styles = [
        (line.get_color(), line.get_marker()) for line in ax.lines if line.get_marker() not in ("None", "", "|", "_")
    ]
    assert len(styles) == 9 and len(set(styles)) == 9
    assert len({plots.judge_style(i) for i in range(56)}) == 56


def test_plot_cost_quality_draws_one_point_per_strategy_with_its_interval():
    table = pd.DataFrame({"USD": [1.0, 3.0], "pass rate": [0.4, 0.7], "low": [0.3, 0.6], "high": [0.5, 0.8]},
                         index=["small", "large"])  # fmt: skip
    ax = plots.plot_cost_quality(table, "USD").axes[0]
    assert [tuple(line.get_xydata()[0]) for line in ax.lines if line.get_marker() == "o"] == [(1.0, 0.4), (3.0, 0.7)]
    assert [t.get_text() for t in ax.texts] == ["small", "large"]
    with pytest.raises(ValueError, match=r"no column\(s\) \['cost'\]"):
        plots.plot_cost_quality(table, "cost")


def test_score_split_draws_one_panel_per_reranker_and_refuses_an_empty_side():
    fig = plots.plot_score_split({"a": ([1.0, 2.0], [0.0, 0.5, 0.2]), "b": ([0.3], [0.3, 0.3])})
    assert len(fig.axes) == 2 and fig.axes[0].get_title() == "a"
    with pytest.raises(ValueError, match="both non-empty"):
        plots.plot_score_split({"a": ([], [0.1])})
    with pytest.raises(ValueError, match="non-empty dict"):
        plots.plot_score_split({})
