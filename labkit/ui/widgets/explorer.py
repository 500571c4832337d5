"""The explorer skeleton: controls -> a pure function -> HTML, with errors shown in place.

An :class:`Explorer` is built from three things: named controls (sliders, toggles, dropdowns, text boxes), the
pure function the notebook has already shown (called with the controls' values as keyword arguments), and a
renderer from that function's value to HTML. ``.result`` is the value on screen, so the next cell can print it
(nbval compares the printout; it cannot see inside widgets), and :meth:`Explorer.html_for` gives the HTML for
any state without a browser, so unit tests cover the rendering and the browser tests only need to prove the
wiring. The chapters' explorers (:mod:`labkit.ui.widgets`) are thin subclasses.

:func:`html_table` is the one HTML table of the explorers: every value cell has class ``lk-value`` and a
``data-*`` key (``data-cell="<row>|<column>"`` by default), which the browser tests read.

Speed: every state an explorer has computed is kept (:attr:`Explorer.cache_size` of them) and sent to the page,
which draws it itself when a control reaches it, without waiting for the kernel (:mod:`labkit.ui.widgets.ahead`).
Once a page listens, the states one move away are computed while the learner looks at the current one, one per
turn of the kernel's event loop, so a key press for a state not yet computed waits for one state at most.
``bench/explorer_bench.py`` prints the kernel's side; the browser tests print key-to-screen latencies.
"""

from __future__ import annotations

import html
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from html.parser import HTMLParser
from typing import Any

import ipywidgets as w
from IPython import get_ipython

from labkit.ui.widgets.ahead import SWEEP_MAX, Ahead, computed_ahead, reachable, values_of

__all__ = ["Explorer", "html_table", "html_cells", "html_text", "error_html", "LAYOUT", "STYLE"]

LAYOUT = w.Layout(width="440px")
STYLE = {"description_width": "150px"}
ERROR_COLOUR = "#b00020"
SLOW_S = 0.03  # a control whose states take longer to compute is computed ahead after the others
AHEAD_DELAY_S = 0.05  # from a state shown to computing its neighbours (see Explorer._warm_ahead)


def error_html(err: BaseException, with_type: bool = True) -> str:
    """An exception as the red line (class ``lk-error``) an explorer shows in place of its result.

    ``with_type=False`` for a learner's input error, whose message already says what to type instead.
    """
    text = f"{type(err).__name__}: {err}" if with_type else str(err)
    return f'<p class="lk-error" style="color:{ERROR_COLOUR}">{html.escape(text)}</p>'


def _cell(v: Any, fmt: str, missing: str) -> str:
    if v is None or (isinstance(v, float) and v != v):  # None and NaN
        return html.escape(missing)
    return format(v, fmt) if isinstance(v, float) else html.escape(str(v))


def _label(key: Any, sep: str) -> str:
    return sep.join(map(str, key)) if isinstance(key, tuple) else str(key)


def html_table(
    table: Any,
    fmt: str = ".3f",
    index_name: str | None = None,
    css: str = "lk-result",
    *,
    key: str | None = None,
    attr: str = "cell",
    missing: str = "",
) -> str:
    """A table as HTML; each value cell has class ``lk-value`` and ``data-<attr>`` = ``key`` filled in.

    ``table`` is a DataFrame (a header row, then one row per index label) or a mapping of label -> value (a
    Series too: two columns, labels left-aligned, no header row). ``key`` is a format string of ``row`` and
    ``column``: ``"{row}|{column}"`` by default for a frame, ``"{row}"`` for a mapping. A tuple label (a
    MultiIndex) is joined with " · " in a row header; a tuple column shows one level per line and is joined
    with "|" in the key, so ``key="{column}|{row}"`` gives ``data-cell="nDCG@10|bm25|easy"``. Floats are
    printed with ``fmt`` (``".4f"``, ``".4g"``, ``".1%"``), other values as text; None and NaN as ``missing``.
    """

    def td(row: Any, column: Any, value: Any, pattern: str) -> str:
        name = html.escape(pattern.format(row=_label(row, " · "), column=_label(column, "|")))
        return (
            f'<td class="lk-value" data-{attr}="{name}" style="font-family:monospace">{_cell(value, fmt, missing)}</td>'
        )

    if not isinstance(table, Mapping) and not hasattr(table, "items"):
        raise ValueError(f"table must be a DataFrame or a mapping label -> value, got {type(table).__name__} "
                         f"{table!r:.60}")  # fmt: skip
    if isinstance(table, Mapping) or not hasattr(table, "columns"):  # a mapping or a Series: label -> value
        rows = "".join(
            f'<tr><th style="text-align:left;padding-right:1em">{html.escape(_label(label, " · "))}</th>'
            f"{td(label, '', value, key or '{row}')}</tr>"
            for label, value in table.items()
        )
        return f'<table class="{css}">{rows}</table>'
    name = index_name if index_name is not None else (table.index.name or "")
    head = "".join(f"<th>{'<br>'.join(html.escape(str(p)) for p in _parts(c))}</th>" for c in table.columns)
    rows = "".join(  # row by row as tuples: iterrows would turn a row of ints and floats into floats
        f"<tr><th>{html.escape(_label(label, ' · '))}</th>"
        + "".join(td(label, c, v, key or "{row}|{column}") for c, v in zip(table.columns, row, strict=True))
        + "</tr>"
        for label, row in zip(table.index, table.itertuples(index=False, name=None), strict=True)
    )
    return f'<table class="{css}"><tr><th>{html.escape(str(name))}</th>{head}</tr>{rows}</table>'


def _parts(column: Any) -> tuple:
    return column if isinstance(column, tuple) else (column,)


class _Reader(HTMLParser):
    """Each element's text as a browser's ``textContent`` has it, for the elements carrying ``data-<attr>``."""

    VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}

    def __init__(self, attr: str | None):
        super().__init__(convert_charrefs=True)
        self.attr, self.open, self.cells, self.text = f"data-{attr}", [], [], []

    def handle_starttag(self, tag, attrs):
        if tag not in self.VOID:
            key = dict(attrs).get(self.attr)
            self.open.append((tag, None if key is None else len(self.cells)))
            if key is not None:
                self.cells.append([key, ""])

    def handle_endtag(self, tag):
        if any(t == tag for t, _ in self.open):  # a stray end tag closes nothing
            while self.open.pop()[0] != tag:
                pass

    def handle_data(self, data):
        self.text.append(data)
        for _, i in self.open:
            if i is not None:
                self.cells[i][1] += data


def _squeeze(text: str) -> str:
    return " ".join(text.split())


def html_cells(text: str, attr: str = "cell") -> list[tuple[str, str]]:
    """``(key, text)`` of every element with ``data-<attr>`` in ``text``, in document order: what a test reads.

    The inverse of :func:`html_table` (``html_cells(html_table(frame))`` -> ``[("easy|R@10", "0.712"), ...]``);
    the text is the element's ``textContent`` with runs of whitespace squeezed to one space.
    """
    reader = _Reader(attr)
    reader.feed(text)
    reader.close()
    return [(key, _squeeze(value)) for key, value in reader.cells]


def html_text(text: str) -> str:
    """All the text of ``text`` (HTML) as a browser's ``textContent`` has it, runs of whitespace squeezed."""
    reader = _Reader(None)
    reader.feed(text)
    reader.close()
    return _squeeze("".join(reader.text))


def _key(state: Mapping[str, Any]) -> tuple | None:
    """A state as a dictionary key, or None when a value cannot be one (such a state is never cached)."""
    try:
        key = tuple(sorted(state.items()))
        hash(key)
    except TypeError:
        return None
    return key


def _kernel_loop() -> Any:
    """The running kernel's event loop (tornado), or None outside a kernel (a script, a unit test)."""
    return getattr(getattr(get_ipython(), "kernel", None), "io_loop", None)


class Explorer(w.VBox):
    """Controls -> ``compute(**values)`` -> ``render(value)`` as HTML; any error is shown in place.

    - ``outputs``: the widgets the rendering goes to, by name (default one ``HTML`` named ``output``); with more
      than one, ``render`` returns ``{name: value}`` (HTML text, or PNG bytes for an ``Image``).
    - ``summary``: what ``.result`` holds, from ``compute``'s value (default: the value itself), for a function
      whose value carries more than the numbers on screen (scores, the traces behind the examples, ...).
    - :attr:`input_errors`: exception types that are the learner's input (a grade typed as "x"): the message
      alone is shown and the last good result stays on screen and in ``.result``. Any other exception is shown
      with its type, ``.result`` becomes ``{"error": "<Type>: <message>"}`` and the outputs are emptied, so
      no stale number sits under a control that has moved.
    - :meth:`arrange`: the widgets from top to bottom; a subclass overrides it to interleave controls and outputs.

    Each output widget has the CSS class ``lk-output-<name>`` and the error line the class ``lk-error``.

    Every state shown is kept (up to :attr:`cache_size`, the oldest dropped first) and sent to the page (``page``,
    :mod:`labkit.ui.widgets.ahead`), which draws a kept state itself the moment a control reaches it. Once a page
    listens, the nearest :attr:`ahead_max` states one move away are computed ahead (:meth:`warm`) while the
    learner looks: ``compute`` must be pure, as every explorer's is.
    """

    css_class = "lk-explorer"
    input_errors: tuple[type[Exception], ...] = ()
    cache_size = 256
    ahead_max = 32

    def __init__(
        self,
        controls: Mapping[str, w.ValueWidget],
        compute: Callable[..., Any],
        render: Callable[[Any], Any],
        *,
        outputs: Mapping[str, w.ValueWidget] | None = None,
        summary: Callable[[Any], Any] | None = None,
    ):
        if not controls:
            raise ValueError("controls must name at least one control: an explorer without one is a table")
        self.controls = dict(controls)
        self.compute, self.render = compute, render
        self.summary = summary if summary is not None else (lambda value: value)
        self.outputs = dict(outputs) if outputs else {"output": w.HTML()}
        self.output = next(iter(self.outputs.values()))
        for name, out in self.outputs.items():
            out.add_class(f"lk-output-{name}")  # so that a browser test finds each output by name
        self.message = w.HTML()
        self.result: Any = None
        self._shown: OrderedDict[tuple, tuple[dict[str, Any], Any, Mapping[str, Any]]] = OrderedDict()
        self._ahead: list[dict[str, Any]] = []
        self._cost: dict[str, float] = {}  # control -> seconds its last state computed ahead took
        html_only = all(isinstance(out, w.HTML) for out in self.outputs.values())
        self.page = Ahead(self.controls, self.outputs, self._resend) if html_only else None
        for control in self.controls.values():
            control.observe(self._update, names="value")
        super().__init__([*self.arrange(), *([self.page] if self.page is not None else [])])
        self.add_class(self.css_class)
        self._update()

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        """The live widget, plus what a notebook shows before its cell has run (an opened, untrusted notebook
        renders the ``text/html`` fallback, not the widget): a line saying to run the cell, then the outputs'
        first state as static HTML (a chart only as a note: it is drawn when the cell runs)."""
        bundle = dict(super()._repr_mimebundle_(**kwargs) or {})
        parts = []
        for out in self.outputs.values():
            if isinstance(out, w.Image):
                parts.append("<p><i>(a chart: it is drawn when the cell runs)</i></p>")
            elif isinstance(out.value, str):
                parts.append(out.value)
        hint = "Run this cell (Shift+Enter) to use the explorer; until then, its first state:"
        bundle["text/plain"] = f"{type(self).__name__}: run this cell (Shift+Enter) to use the explorer"
        bundle["text/html"] = f'<div class="lk-preview"><p><b>{hint}</b></p>{"".join(parts)}</div>'
        return bundle

    def arrange(self) -> list[w.Widget]:
        """The widgets from top to bottom: the controls, the outputs, the error line."""
        return [*self.controls.values(), *self.outputs.values(), self.message]

    @property
    def state(self) -> dict[str, Any]:
        """The controls' current values, by name: the keyword arguments of ``compute``."""
        return {name: control.value for name, control in self.controls.items()}

    def html_for(self, **state: Any) -> Any:
        """What the explorer would show for ``state`` (missing names keep their current value), without showing it.

        The HTML, or with several outputs ``{name: value}``. Errors are raised, not shown.
        """
        unknown = sorted(set(state) - set(self.controls))
        if unknown:
            raise ValueError(f"no control named {unknown[0]!r}; the controls are {sorted(self.controls)}")
        return self.render(self.compute(**{**self.state, **state}))

    def _compute_shown(self, state: Mapping[str, Any], ahead: bool = False) -> tuple[Mapping[str, Any], Any]:
        """``({output: value}, result)`` for ``state``, from the cache or computed (and then kept); ``ahead``: before
        the learner moves there, so a model call is refused and nothing kept (``ahead.computed_ahead``)."""
        key = _key(state)
        if key is not None and key in self._shown:
            self._shown.move_to_end(key)
            return self._shown[key][:2]

        def fresh() -> tuple[Mapping[str, Any], Any]:
            value = self.compute(**state)
            shown = self.render(value)
            return (shown if isinstance(shown, Mapping) else {next(iter(self.outputs)): shown}), self.summary(value)

        out = computed_ahead(fresh) if ahead else fresh()
        if key is not None:
            self._shown[key] = (*out, dict(state))
            while len(self._shown) > self.cache_size:
                self._shown.popitem(last=False)
            if self.page is not None:
                self.page.keep(state, out[0])
        return out

    def _resend(self) -> None:
        """A page has started listening: send it every state kept (see :mod:`labkit.ui.widgets.ahead`), then start
        computing ahead around the current state."""
        for shown, _, state in list(self._shown.values()):
            self.page.keep(state, shown)
        self._warm_ahead()

    def neighbours(self) -> list[dict[str, Any]]:
        """The states one move away from the current one (one control moved:
        :func:`labkit.ui.widgets.ahead.reachable`), nearest first: every control's next value, then every control's
        previous one, then two steps away, and so on; the moves of a control whose states took over
        :data:`SLOW_S` to compute ahead come after all the others (01's weights: a new weight recomputes the
        table at every c), so the cheap states are ready first."""
        state, names = self.state, list(self.controls)
        moves = [(d, i, v) for i, (name, control) in enumerate(self.controls.items()) for d, v in reachable(control)]
        slow = lambda i: self._cost.get(names[i], 0.0) > SLOW_S  # noqa: E731
        return [{**state, names[i]: v} for _, i, v in sorted(moves, key=lambda m: (slow(m[1]), m[0], m[1]))]

    def warm(self, states: list[dict[str, Any]] | None = None) -> int:
        """Compute and keep ``states`` (default: :meth:`neighbours`) now; how many were new. A state that fails, or
        would call a model (:func:`labkit.ui.widgets.ahead.computed_ahead`), is skipped: the learner's move computes
        it. The time of a state one control away from the current one is noted against that control."""
        new, current = 0, self.state
        for state in self.neighbours() if states is None else states:
            key = _key(state)
            if key is None or key in self._shown:
                continue
            moved = [name for name in self.controls if state.get(name) != current[name]]
            start = time.perf_counter()
            try:
                self._compute_shown(state, ahead=True)
            except Exception:  # noqa: BLE001, S112 - computed ahead only; the move itself will show the error
                continue
            finally:
                if len(moved) == 1:
                    self._cost[moved[0]] = time.perf_counter() - start
            new += 1
        return new

    def _slow(self, state: Mapping[str, Any]) -> bool:
        """Whether ``state`` moves a control whose states took over :data:`SLOW_S` to compute ahead."""
        return any(self._cost.get(n, 0.0) > SLOW_S for n in state if state[n] != self.controls[n].value)

    def _keep_free(self) -> bool:
        """Whether some move of this explorer can only be answered by the kernel: a control too long to compute
        ahead whole (01's question list), or free text (a question box). Then slow states are not computed ahead,
        so that such a move never waits behind one (01: a new weight recomputes the table at every c)."""
        return any(values_of(c) is None or len(values_of(c)) > SWEEP_MAX for c in self.controls.values())

    def _warm_ahead(self) -> None:
        """In a kernel whose page listens (no page, as under nbval: nothing to draw ahead, nothing computed):
        compute the current state's nearest :attr:`ahead_max` neighbours one per turn of the event loop, starting
        :data:`AHEAD_DELAY_S` after this state was sent (so the kernel leaves the 2 cores to the server and the
        browser while they carry and draw it). A key press that arrives meanwhile waits for one state at most."""
        loop = _kernel_loop()
        if loop is None or self.page is None or not self.page.listening:
            return
        running = bool(self._ahead)  # a chain is still under way: it goes on with the new list
        new = [s for s in self.neighbours() if _key(s) is not None and _key(s) not in self._shown]
        self._ahead = [s for s in new if not (self._keep_free() and self._slow(s))][: self.ahead_max]

        def step() -> None:
            if self._ahead:
                self.warm([self._ahead.pop(0)])
                # a control found slow just now: its other states go last (a stable sort), or are dropped when some
                # moves must go to the kernel (a long list, a text box): the kernel stays free to answer those
                self._ahead = [s for s in sorted(self._ahead, key=self._slow)
                               if not (self._keep_free() and self._slow(s))]  # fmt: skip
            if self._ahead:
                loop.add_callback(step)

        if self._ahead and not running:  # after the redraw has left: the server and the browser need the cores
            loop.call_later(AHEAD_DELAY_S, step)

    def _update(self, _change=None) -> None:
        """Compute and render everything first, then show it: an error leaves nothing half-updated."""
        try:
            shown, result = self._compute_shown(self.state)
        except self.input_errors as err:
            self.message.value = error_html(err, with_type=False)
            return
        except Exception as err:  # noqa: BLE001 - a UI callback must never die silently
            # otherwise the exception would vanish into the browser console and freeze the widget
            self.message.value = error_html(err)
            self.result = {"error": f"{type(err).__name__}: {err}"}
            for out in self.outputs.values():
                out.value = b"" if isinstance(out, w.Image) else ""
            return
        for name, value in shown.items():
            self.outputs[name].value = value
        self.result = result
        self.message.value = ""
        self._warm_ahead()
