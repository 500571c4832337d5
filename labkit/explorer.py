"""The explorer skeleton: controls -> a pure function -> HTML, with errors shown in place.

An :class:`Explorer` is built from three things: named controls (sliders, toggles, dropdowns), the pure function
the notebook has already shown (called with the controls' values as keyword arguments), and a renderer from
that function's result to HTML. ``.result`` is the value on screen, so the next cell can print it (nbval compares
the printout; it cannot see inside widgets), and :meth:`Explorer.html_for` gives the HTML for any state without a
browser, so unit tests cover the rendering and the browser tests only need to prove the wiring.

:func:`html_table` is the one HTML table of the explorers built here: every value cell carries
``data-cell="<row>|<column>"``, which the browser tests read.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping
from typing import Any

import ipywidgets as w

from labkit.widgets import LAYOUT, STYLE, _in_place

__all__ = ["Explorer", "html_table", "SynthExplorer", "synth_html"]


def _cell(v: Any, digits: int) -> str:
    if isinstance(v, float):
        return "" if v != v else f"{v:.{digits}f}"  # NaN shows as an empty cell
    return html.escape(str(v))


def html_table(frame: Any, digits: int = 3, index_name: str | None = None, css: str = "lk-result") -> str:
    """A DataFrame as an HTML table; each value cell has ``data-cell="<row>|<column>"`` and class ``lk-value``."""
    name = index_name if index_name is not None else (frame.index.name or "")
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in frame.columns)
    rows = []
    for key, row in frame.iterrows():
        label = " · ".join(map(str, key)) if isinstance(key, tuple) else str(key)
        cells = "".join(
            f'<td class="lk-value" data-cell="{html.escape(f"{label}|{c}")}" style="font-family:monospace">'
            f"{_cell(v, digits)}</td>"
            for c, v in row.items()
        )
        rows.append(f"<tr><th>{html.escape(label)}</th>{cells}</tr>")
    return f'<table class="{css}"><tr><th>{html.escape(str(name))}</th>{head}</tr>{"".join(rows)}</table>'


class Explorer(w.VBox):
    """Controls -> ``compute(**values)`` -> ``render(result)`` as HTML; any error is shown in place."""

    css_class = "lk-explorer"

    def __init__(
        self, controls: Mapping[str, w.ValueWidget], compute: Callable[..., Any], render: Callable[[Any], str]
    ):
        if not controls:
            raise ValueError("controls must name at least one control: an explorer without one is a table")
        self.controls = dict(controls)
        self.compute, self.render = compute, render
        self.output = w.HTML()
        self.result: Any = None
        for control in self.controls.values():
            control.observe(self._update, names="value")
        super().__init__([*self.controls.values(), self.output])
        self.add_class(self.css_class)
        self._update()

    @property
    def state(self) -> dict[str, Any]:
        """The controls' current values, by name: the keyword arguments of ``compute``."""
        return {name: control.value for name, control in self.controls.items()}

    def html_for(self, **state: Any) -> str:
        """The HTML the explorer would show for ``state`` (missing names keep their current value)."""
        unknown = sorted(set(state) - set(self.controls))
        if unknown:
            raise ValueError(f"no control named {unknown[0]!r}; the controls are {sorted(self.controls)}")
        return self.render(self.compute(**{**self.state, **state}))

    @_in_place
    def _update(self, _change=None) -> None:
        self.result = self.compute(**self.state)
        self.output.value = self.render(self.result)


# ---------------------------------------------------------------- chapter 02


def synth_html(view: Any) -> str:
    """What :func:`labkit.synth_data.filter_view` returns, as the explorer shows it."""
    from labkit import stats

    examples = "".join(
        f'<li class="lk-example" data-verdict="{html.escape(r.verdict)}">'
        f"<b>{html.escape(r.verdict)}</b> [{html.escape(r.set)}, rating {_cell(r.realism, 0)}] "
        f"{html.escape(r.question)}</li>"
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
