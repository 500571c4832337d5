"""Small charts drawn as SVG text in Python: what an explorer redraws on every move (chapters 01, 03, 05, 07, 09).

A matplotlib PNG costs ~150 ms per update on two cores; these cost about a millisecond, so a picture never slows
a slider. Each function takes plain numbers and returns an :class:`Svg`: Jupyter shows it as the image itself
(``_repr_svg_``), an explorer puts ``str(svg)`` into its HTML output. The text is deterministic (coordinates
printed to one decimal), so nbval can compare it. The control's current value is marked, and the mark's element
carries ``data-mark`` (its text says the value), which the browser tests read.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from typing import Any

from labkit.core import args
from labkit.measures import metrics
from labkit.ui.plots.figures import MAX_K

__all__ = [
    "Svg",
    "Panels",
    "svg_lines",
    "svg_stacked_bars",
    "svg_heatmap",
    "svg_gain_discount",
    "side_by_side",
    "PALETTE",
]

PALETTE = ("#3b6ea8", "#e08a2c", "#4c9a5b", "#8e5ea2", "#9a9a9a", "#c4463a")
FONT = 'font-family="sans-serif"'


class Svg:
    """An SVG drawing as text: ``str(svg)`` is the ``<svg>`` element, ``svg.title`` says what it shows."""

    def __init__(self, text: str, title: str):
        self.text, self.title = text, title

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"<Svg: {self.title}>"

    def _repr_svg_(self) -> str:
        return self.text

    def __eq__(self, other: object) -> bool:  # equal to its own text, as an explorer's output holds it
        return (
            other.text == self.text
            if isinstance(other, Svg)
            else other == self.text
            if isinstance(other, str)
            else NotImplemented
        )

    def __hash__(self) -> int:
        return hash(self.text)


class Panels(Svg):
    """Several drawings in one row, as HTML text: Jupyter shows it as HTML (``_repr_html_``)."""

    def _repr_svg_(self):  # not one SVG image: shown as HTML instead
        return None

    def _repr_html_(self) -> str:
        return self.text


def side_by_side(*drawings: Svg) -> Panels:
    """Several drawings in one row, as HTML (an explorer output holding two panels)."""
    cells = "".join(f'<div style="flex:none">{d}</div>' for d in drawings)
    title = " | ".join(d.title for d in drawings)
    return Panels(f'<div class="lk-chart" style="display:flex;flex-wrap:wrap;gap:8px">{cells}</div>', title)


def _esc(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _n(v: float) -> str:
    return f"{v:.1f}"


def _text(x: float, y: float, text: Any, size: int = 10, anchor: str = "middle", extra: str = "") -> str:
    return (f'<text x="{_n(x)}" y="{_n(y)}" font-size="{size}" text-anchor="{anchor}" {FONT}{extra}>'
            f"{_esc(text)}</text>")  # fmt: skip


def _svg(width: int, height: int, title: str, body: list[str]) -> Svg:
    text = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        f'role="img" aria-label="{_esc(title)}"><title>{_esc(title)}</title>' + "".join(body) + "</svg>"
    )
    return Svg(text, title)


def _finite(name: str, v: Any) -> float | None:
    """A value to draw: a finite number, or None for a gap (None or NaN)."""
    if v is None or (isinstance(v, float) and v != v):
        return None
    return args.finite_number(name, v)


class _Frame:
    """The plot area of a chart: data coordinates -> pixels, axes, ticks."""

    def __init__(self, width, height, xlim, ylim, *, log_x=False, left=38, right=10, top=22, bottom=30):
        self.w, self.h, self.log_x = width, height, log_x
        self.left, self.right, self.top, self.bottom = left, width - right, top, height - bottom
        self.xlim, self.ylim = xlim, ylim

    def _tx(self, v: float) -> float:
        return math.log10(v) if self.log_x else v

    def x(self, v: float) -> float:
        a, b = (self._tx(v) for v in self.xlim)
        return self.left + (self._tx(v) - a) / ((b - a) or 1) * (self.right - self.left)

    def y(self, v: float) -> float:
        a, b = self.ylim
        return self.bottom - (v - a) / ((b - a) or 1) * (self.bottom - self.top)

    def axes(self, xticks, yticks, xlabel="", ylabel="", yfmt=".1f") -> list[str]:
        out = [f'<line x1="{_n(self.left)}" y1="{_n(self.bottom)}" x2="{_n(self.right)}" y2="{_n(self.bottom)}" '
               f'stroke="#555"/>', f'<line x1="{_n(self.left)}" y1="{_n(self.top)}" x2="{_n(self.left)}" '
               f'y2="{_n(self.bottom)}" stroke="#555"/>']  # fmt: skip
        for pos, label in xticks:
            out.append(_text(pos, self.bottom + 11, label, 9))
        for v in yticks:
            out.append(f'<line x1="{_n(self.left)}" y1="{_n(self.y(v))}" x2="{_n(self.right)}" y2="{_n(self.y(v))}" '
                       f'stroke="#e4e4e4"/>')  # fmt: skip
            out.append(_text(self.left - 3, self.y(v) + 3, format(v, yfmt), 9, "end"))
        if xlabel:
            out.append(_text((self.left + self.right) / 2, self.h - 3, xlabel, 9))
        if ylabel:
            cx, cy = 9, (self.top + self.bottom) / 2
            out.append(_text(cx, cy, ylabel, 9, extra=f' transform="rotate(-90 {_n(cx)} {_n(cy)})"'))
        return out


def _legend(names: Sequence[str], colours: Sequence[str], x: float, y: float, swatch: str = "line") -> list[str]:
    out = []
    for i, (name, colour) in enumerate(zip(names, colours, strict=True)):
        yy = y + 12 * i
        if swatch == "line":
            out.append(f'<line x1="{_n(x)}" y1="{_n(yy - 3)}" x2="{_n(x + 12)}" y2="{_n(yy - 3)}" stroke="{colour}" '
                       'stroke-width="2"/>')  # fmt: skip
        else:
            out.append(f'<rect x="{_n(x)}" y="{_n(yy - 8)}" width="10" height="8" fill="{colour}"/>')
        out.append(_text(x + 15, yy, name, 9, "start"))
    return out


def svg_lines(
    xs: Sequence[float],
    series: Mapping[str, Sequence[float | None]],
    *,
    mark: float | None = None,
    mark_label: str = "",
    log_x: bool = False,
    ylim: tuple[float, float] = (0.0, 1.0),
    title: str = "",
    xlabel: str = "",
    ylabel: str = "",
    width: int = 330,
    height: int = 200,
    yfmt: str = ".2f",
) -> Svg:
    """One line per series over ``xs`` (a value None or NaN leaves a gap), the legend at the right, and ``mark``
    (one of ``xs``) as a dashed vertical line labelled ``mark_label`` (default ``"x = <mark>"``), ``data-mark``
    on the label. ``log_x``: a log-scaled x axis (``xs`` > 0); each of ``xs`` gets a tick."""
    xs = args.sequence("xs", xs, allow_empty=False, example="[1, 3, 10]")
    series = args.mapping("series", series, example='{"easy": [0.8, 0.85, 0.9]}')
    xs = [args.finite_number(f"xs[{i}]", v, minimum=1e-300 if log_x else None) for i, v in enumerate(xs)]
    if not xs:
        raise ValueError("xs is empty: give the x values the series are drawn at, e.g. [1, 3, 10]")
    if not series:
        raise ValueError("series is empty: give {name: [y per x]}, e.g. {'easy': [0.5, 0.6, 0.7]}")
    for name, ys in series.items():
        if len(ys) != len(xs):
            raise ValueError(f"series[{name!r}] has {len(ys)} values for {len(xs)} xs: give one value per x")
    if mark is not None and mark not in xs:
        raise ValueError(f"mark must be one of xs {xs}, got {mark!r}")
    lo, hi = ylim
    legend_w = 8 + 6 * max(len(str(n)) for n in series) + 18
    f = _Frame(width, height, (min(xs), max(xs)) if len(xs) > 1 else (xs[0] - 1, xs[0] + 1), ylim, log_x=log_x,
               right=legend_w + 12, top=30)  # fmt: skip
    body = [_text(width / 2, 13, title, 11, extra=' font-weight="bold"')] if title else []
    ticks = [lo + (hi - lo) * i / 4 for i in range(5)]
    body += f.axes([(f.x(x), f"{x:g}") for x in xs], ticks, xlabel, ylabel, yfmt)
    colours = [PALETTE[i % len(PALETTE)] for i in range(len(series))]
    if mark is not None:
        mx = f.x(mark)
        body.append(f'<line x1="{_n(mx)}" y1="{_n(f.top)}" x2="{_n(mx)}" y2="{_n(f.bottom)}" stroke="#b00020" '
                    'stroke-dasharray="4 3"/>')  # fmt: skip
        label = mark_label or f"x = {mark:g}"
        body.append(_text(mx, f.top - 3, label, 9, extra=f' fill="#b00020" data-mark="{_esc(label)}"'))
    for (name, ys), colour in zip(series.items(), colours, strict=True):
        points = [(x, _finite(f"series[{name!r}]", y)) for x, y in zip(xs, ys, strict=True)]
        runs, cur = [], []
        for x, y in points:
            if y is None:
                runs, cur = runs + [cur] if cur else runs, []
            else:
                cur.append(f"{_n(f.x(x))},{_n(f.y(min(max(y, lo), hi)))}")
        runs += [cur] if cur else []
        body += [f'<polyline points="{" ".join(r)}" fill="none" stroke="{colour}" stroke-width="1.6"/>' for r in runs]
        for x, y in points:
            if y is not None:
                body.append(f'<circle cx="{_n(f.x(x))}" cy="{_n(f.y(min(max(y, lo), hi)))}" r="2.4" fill="{colour}"/>')
    body += _legend([str(n) for n in series], colours, f.right + 10, f.top + 8)
    return _svg(width, height, title or "lines", body)


def svg_stacked_bars(
    xs: Sequence[Any],
    segments: Mapping[str, Sequence[float]],
    *,
    colours: Mapping[str, str] | None = None,
    mark: Any = None,
    mark_label: str = "",
    title: str = "",
    xlabel: str = "",
    ylabel: str = "share",
    shares: bool = True,
    width: int = 360,
    height: int = 200,
) -> Svg:
    """One stacked bar per x, the ``segments`` bottom up (values >= 0); with ``shares`` each bar is scaled to its
    total (so it reads as shares, an empty bar stays empty). ``mark``: one of ``xs``, outlined and labelled, with
    ``data-mark`` on its label."""
    xs = args.sequence("xs", xs, allow_empty=False, example="[1, 3, 5]")
    segments = args.mapping("segments", segments, example='{"OK": [10, 12, 14]}')
    xs = list(xs)
    if not xs:
        raise ValueError("xs is empty: give one x per bar, e.g. the k values")
    if not segments:
        raise ValueError("segments is empty: give {name: [value per x]}")
    for name, vs in segments.items():
        if len(vs) != len(xs):
            raise ValueError(f"segments[{name!r}] has {len(vs)} values for {len(xs)} xs: give one value per x")
    if mark is not None and mark not in xs:
        raise ValueError(f"mark must be one of xs {xs}, got {mark!r}")
    values = {n: [args.finite_number(f"segments[{n!r}][{i}]", v, minimum=0) for i, v in enumerate(vs)]
              for n, vs in segments.items()}  # fmt: skip
    totals = [sum(v[i] for v in values.values()) for i in range(len(xs))]
    top = 1.0 if shares else (max(totals) or 1.0)
    legend_w = 8 + 6 * max(len(str(n)) for n in segments) + 18
    f = _Frame(width, height, (0, len(xs)), (0, top), right=legend_w + 12, top=30)
    body = [_text(width / 2, 13, title, 11, extra=' font-weight="bold"')] if title else []
    step = max(1, math.ceil(len(xs) / 12))
    xticks = [(f.x(i + 0.5), str(x)) for i, x in enumerate(xs) if i % step == 0 or x == mark]
    yfmt = ".0%" if shares else ".3g"
    body += f.axes(xticks, [top * i / 4 for i in range(5)], xlabel, ylabel, yfmt)
    names = list(values)
    cols = [(colours or {}).get(n, PALETTE[i % len(PALETTE)]) for i, n in enumerate(names)]
    bar_w = (f.x(1) - f.x(0)) * 0.8
    for i in range(len(xs)):
        base = 0.0
        scale = (1 / totals[i] if totals[i] else 0.0) if shares else 1.0
        for name, colour in zip(names, cols, strict=True):
            v = values[name][i] * scale
            if v > 0:
                y0, y1 = f.y(base), f.y(base + v)
                body.append(f'<rect x="{_n(f.x(i + 0.1))}" y="{_n(y1)}" width="{_n(bar_w)}" height="{_n(y0 - y1)}" '
                            f'fill="{colour}"><title>{_esc(xs[i])} · {_esc(name)}: '
                            f"{format(v, '.1%' if shares else '.4g')}</title></rect>")  # fmt: skip
            base += v
    if mark is not None:
        i = xs.index(mark)
        label = mark_label or f"{mark}"
        body.append(f'<rect x="{_n(f.x(i + 0.05))}" y="{_n(f.top)}" width="{_n(bar_w * 1.125)}" '
                    f'height="{_n(f.bottom - f.top)}" fill="none" stroke="#b00020" stroke-width="1.5"/>')  # fmt: skip
        body.append(_text(f.x(i + 0.5), f.top - 3, label, 9, extra=f' fill="#b00020" data-mark="{_esc(label)}"'))
    body += _legend(names[::-1], cols[::-1], f.right + 10, f.top + 8, swatch="box")
    return _svg(width, height, title or "stacked bars", body)


def _blue(v: float) -> str:
    """White (0) to the workbook's blue (1)."""
    t = min(max(v, 0.0), 1.0)
    r, g, b = (round(255 + (c - 255) * t) for c in (0x3B, 0x6E, 0xA8))
    return f"#{r:02x}{g:02x}{b:02x}"


def svg_heatmap(
    rows: Sequence[Any],
    columns: Sequence[Any],
    values: Sequence[Sequence[float | None]],
    *,
    mark: tuple[Any, Any] | None = None,
    mark_label: str = "",
    title: str = "",
    xlabel: str = "",
    ylabel: str = "",
    fmt: str = ".3f",
    vlim: tuple[float, float] = (0.0, 1.0),
    width: int = 230,
    height: int = 170,
) -> Svg:
    """A grid of cells, ``values[i][j]`` at row ``rows[i]`` and column ``columns[j]``, shaded from white (vlim[0])
    to blue (vlim[1]) and printed with ``fmt`` (None or NaN: an empty cell). ``mark``: ``(row, column)``,
    outlined, with ``data-mark`` on its value."""
    rows = args.sequence("rows", rows, allow_empty=False, example="[64, 128, 256]")
    columns = args.sequence("columns", columns, allow_empty=False, example='["0%", "25%", "50%"]')
    values = [args.sequence(f"values[{i}]", v, allow_empty=False) for i, v in
              enumerate(args.sequence("values", values, allow_empty=False))]  # fmt: skip
    rows, columns = list(rows), list(columns)
    if not rows or not columns:
        raise ValueError("rows and columns must each hold at least one label")
    if len(values) != len(rows) or any(len(r) != len(columns) for r in values):
        raise ValueError(f"values must be {len(rows)} rows of {len(columns)} values, one per (row, column)")
    if mark is not None and (mark[0] not in rows or mark[1] not in columns):
        raise ValueError(f"mark must be a (row, column) of {rows} x {columns}, got {mark!r}")
    f = _Frame(width, height, (0, len(columns)), (len(rows), 0), left=44, top=22, bottom=30, right=6)
    body = [_text(width / 2, 13, title, 11, extra=' font-weight="bold"')] if title else []
    cw, ch = f.x(1) - f.x(0), f.y(1) - f.y(0)
    lo, hi = vlim
    for i, row in enumerate(rows):
        body.append(_text(f.left - 4, f.y(i + 0.5) + 3, row, 9, "end"))
        for j in range(len(columns)):
            v = _finite(f"values[{i}][{j}]", values[i][j])
            fill = "#f4f4f4" if v is None else _blue((v - lo) / ((hi - lo) or 1))
            body.append(f'<rect x="{_n(f.x(j))}" y="{_n(f.y(i))}" width="{_n(cw)}" height="{_n(ch)}" fill="{fill}" '
                        'stroke="#fff"/>')  # fmt: skip
            if v is not None:
                marked = mark is not None and (row, columns[j]) == tuple(mark)
                label = mark_label or f"{row} · {columns[j]}"
                extra = f' data-mark="{_esc(label)}"' if marked else ""
                colour = "#fff" if (v - lo) / ((hi - lo) or 1) > 0.6 else "#222"
                body.append(_text(f.x(j + 0.5), f.y(i + 0.5) + 3, format(v, fmt), 9,
                                  extra=f' fill="{colour}"{extra}'))  # fmt: skip
    for j, col in enumerate(columns):
        body.append(_text(f.x(j + 0.5), f.bottom + 11, col, 9))
    if mark is not None:
        i, j = rows.index(mark[0]), columns.index(mark[1])
        body.append(f'<rect x="{_n(f.x(j) + 1)}" y="{_n(f.y(i) + 1)}" width="{_n(cw - 2)}" height="{_n(ch - 2)}" '
                    'fill="none" stroke="#b00020" stroke-width="2.5"/>')  # fmt: skip
    if xlabel:
        body.append(_text((f.left + f.right) / 2, height - 3, xlabel, 9))
    if ylabel:
        cy = (f.top + f.bottom) / 2
        body.append(_text(9, cy, ylabel, 9, extra=f' transform="rotate(-90 9 {_n(cy)})"'))
    return _svg(width, height, title or "heatmap", body)


def svg_gain_discount(
    rels: Sequence[float], k: int, unretrieved: Sequence[float] = (), idcg: str = "retrieved", width: int = 540
) -> Svg:
    """:func:`labkit.ui.plots.plot_gain_discount` drawn as SVG, for the 03 playground (the same bars: the gain, the
    discounted gain, the ideal ordering's discounted gain as an outline, the divisor under each rank; DCG, IDCG
    and nDCG in the title)."""
    k = args.whole_number("k", k, maximum=MAX_K, hint=f"more than {MAX_K} bars are unreadable and slow to draw")
    m = metrics.ranking_metrics(rels, k, 1, unretrieved, idcg)
    gain = [max(float(r), 0.0) for r in list(rels)[:k]]
    gain += [0.0] * (k - len(gain))
    ideal = metrics.graded.ideal_gains(rels, k, unretrieved, idcg)
    ideal = list(ideal) + [0.0] * (k - len(ideal))
    disc = [1 / math.log2(r + 1) for r in range(1, k + 1)]
    top = max(3.2, max(gain + ideal) + 0.2)
    height = 210
    f = _Frame(width, height, (0, k), (0, top), left=34, right=120, top=34, bottom=44)
    conv = "book: re-sort retrieved" if idcg == "retrieved" else "trec_eval: all judged"
    title = f"DCG@{k} = {m['DCG@k']:.4f}   IDCG@{k} = {m['IDCG@k']:.4f}   nDCG@{k} = {m['nDCG@k']:.4f}"
    body = [_text(width / 2, 12, title, 10, extra=' font-weight="bold"'), _text(width / 2, 24, f"({conv})", 9)]
    body += f.axes([(f.x(i + 0.5), str(i + 1)) for i in range(k)], [0, 1, 2, 3], "", "gain", ".0f")
    bw = (f.x(1) - f.x(0)) * 0.7
    for i in range(k):
        x = f.x(i + 0.15)
        for v, style in ((gain[i], 'fill="#3b6ea8" fill-opacity="0.25"'), (gain[i] * disc[i], 'fill="#3b6ea8"'),
                         (ideal[i] * disc[i], 'fill="none" stroke="#e08a2c" stroke-width="1.6"')):  # fmt: skip
            if v > 0:
                body.append(
                    f'<rect x="{_n(x)}" y="{_n(f.y(v))}" width="{_n(bw)}" height="{_n(f.y(0) - f.y(v))}" {style}/>'
                )
        body.append(_text(f.x(i + 0.5), f.bottom + 22, f"/{1 / disc[i]:.2f}", 8))
    body.append(_text((f.left + f.right) / 2, height - 3, "rank (below it the divisor log2(rank+1))", 9))
    body += _legend(["gain (grade)", "discounted gain", "ideal, discounted"], ["#a9bfd9", "#3b6ea8", "#e08a2c"],
                    f.right + 10, f.top + 8, swatch="box")  # fmt: skip
    return _svg(width, height, f"gains and discounts at k = {k}", body)
