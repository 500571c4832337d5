"""labkit.stats per-group intervals and the bars that draw them."""

import numpy as np
import pandas as pd
import pytest

from labkit import plots, stats


def _frame():
    rng = np.random.default_rng(3)
    return pd.DataFrame(
        {
            "slice": ["easy"] * 80 + ["real"] * 20,
            "retriever": (["bm25", "dense"] * 50),
            "hit": np.r_[rng.random(80) < 0.9, rng.random(20) < 0.5].astype(int),
        }
    )


def test_group_means_ci_matches_the_plain_mean_and_bootstrap():
    f = _frame()
    t = stats.group_means_ci(f, "slice", "hit")
    assert list(t.index) == ["easy", "real"] and t.loc["easy", "n"] == 80
    easy = f.loc[f["slice"] == "easy", "hit"]
    assert t.loc["easy", "hit"] == pytest.approx(easy.mean())
    assert (t.loc["easy", "hit low"], t.loc["easy", "hit high"]) == pytest.approx(stats.bootstrap_ci(easy)[1:])
    # the small slice has the wider interval
    width = t["hit high"] - t["hit low"]
    assert width["real"] > width["easy"]
    assert stats.fmt_ci_table(t).loc["real", "hit"].count("[") == 1


def test_two_level_groups_and_bars():
    t = stats.group_means_ci(_frame(), ["slice", "retriever"], ["hit"])
    assert t.index.nlevels == 2 and len(t) == 4
    fig = plots.plot_bars_ci(t, "hit")
    assert len(fig.axes[0].patches) == 4


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"by": "nope", "columns": "hit"}, "no column"),
        ({"by": "slice", "columns": []}, "at least one column"),
        ({"by": "slice", "columns": "hit", "n": 5}, "n"),
    ],
)
def test_group_means_ci_refuses_bad_input_by_name(kwargs, message):
    with pytest.raises(ValueError, match=message):
        stats.group_means_ci(_frame(), **kwargs)


def test_empty_and_non_frames_are_refused():
    with pytest.raises(ValueError, match="frame is empty"):
        stats.group_means_ci(_frame().iloc[:0], "slice", "hit")
    with pytest.raises(ValueError, match="DataFrame"):
        stats.group_means_ci([1, 2], "slice", "hit")
    with pytest.raises(ValueError, match="averaged columns"):
        plots.plot_bars_ci(stats.group_means_ci(_frame(), "slice", "hit"), "slice")
