"""A notebook's stored outputs checked for intervals that cannot be right: zero width, or a verdict that says the
opposite of the interval printed beside it.

:func:`scan_notebook_intervals` reads a ``.ipynb`` as JSON (no kernel, no nbformat) and looks at each output's
``text/plain``, its stdout stream and its ``text/html`` (the HTML only when the output has no plain-text version
of itself: a DataFrame stores both, and is read once). Problems come back as ``"<chapter> cell N: ..."``, ``N``
counting the notebook's cells from 0:

- a **zero-width interval**: ``0.200 [0.200, 0.200]`` (any ``[x, x]`` of two equal decimals), or a table row whose
  ``low``/``high`` columns (``X low``/``X high``, ``sim low``/``sim high``) are equal;
- a **verdict against its line's interval**: "resolved" or "shown" beside an interval that holds the null, "not
  resolved" or "not shown" beside one that excludes it. The null is 0, or the number after "against" on the line;
  a verdict's interval is the nearest one before it on the line (after it, when there is none before);
- a **table verdict against its row's interval**: a True/False ``resolved`` column that disagrees with the row's
  simultaneous interval (``sim low``/``sim high``, else ``low``/``high``).

An interval printed as reaching the null (``[0.000, 0.156]``) holds it as printed: a reader cannot tell otherwise.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

__all__ = ["scan_notebook_intervals", "scan_text", "scan_html"]

_NUM = r"[-−+]?\d*\.\d+"
INTERVAL = re.compile(rf"\[\s*({_NUM})\s*,\s*({_NUM})\s*\]")
VERDICT = re.compile(r"\b(not resolved|not shown|unresolved|resolved|shown)\b", re.IGNORECASE)
AGAINST = re.compile(r"\bagainst\s+([-−+]?\d*\.?\d+)")
POSITIVE = ("resolved", "shown")


def _float(text: str) -> float:
    return float(text.replace("−", "-"))


def _line_problems(line: str) -> list[str]:
    """Zero-width intervals and contradicted verdicts on one line of output."""
    out = []
    intervals = [(m.start(), m.end(), _float(m.group(1)), _float(m.group(2)), m.group(0))
                 for m in INTERVAL.finditer(line)]  # fmt: skip
    for _, _, low, high, text in intervals:
        if low == high:
            out.append(f"zero-width interval {text}: {line.strip()[:160]}")
    against = AGAINST.search(line)
    null = _float(against.group(1)) if against else 0.0
    for v in VERDICT.finditer(line):
        word = v.group(1).lower()
        before = [iv for iv in intervals if iv[1] <= v.start() and iv[2] <= iv[3]]
        after = [iv for iv in intervals if iv[0] >= v.end() and iv[2] <= iv[3]]
        if not before and not after:
            continue
        _, _, low, high, text = before[-1] if before else after[0]
        holds = low <= null <= high
        if word in POSITIVE and holds:
            out.append(f"'{v.group(1)}' beside {text}, which holds {null:g}: {line.strip()[:160]}")
        elif word not in POSITIVE and not holds:
            out.append(f"'{v.group(1)}' beside {text}, which excludes {null:g}: {line.strip()[:160]}")
    return out


def _pairs(names: list[str]) -> list[tuple[str, str]]:
    """The (low, high) column pairs among ``names``: ``low``/``high`` and ``X low``/``X high``."""
    out = []
    for name in names:
        if name == "low" or name.endswith(" low"):
            partner = name[:-3] + "high"
            if partner in names:
                out.append((name, partner))
    return out


def _row_problems(label: str, row: dict[str, str]) -> list[str]:
    """Zero-width ``low``/``high`` cells and a True/False ``resolved`` against its interval, in one table row."""
    out = []
    numbers = {}
    for name, value in row.items():
        try:
            numbers[name] = _float(value)
        except ValueError:
            continue
    pairs = [(lo, hi) for lo, hi in _pairs(list(row)) if lo in numbers and hi in numbers]
    for lo, hi in pairs:
        if numbers[lo] == numbers[hi]:
            out.append(f"row '{label}': zero-width interval {lo}/{hi} [{row[lo]}, {row[hi]}]")
    verdict = row.get("resolved", "").strip()
    if verdict in ("True", "False") and pairs:
        lo, hi = ("sim low", "sim high") if ("sim low", "sim high") in pairs else pairs[0]
        holds = numbers[lo] <= 0 <= numbers[hi]
        if (verdict == "True") == holds:
            said = "holds" if holds else "excludes"
            out.append(f"row '{label}': resolved={verdict} but {lo}/{hi} [{row[lo]}, {row[hi]}] {said} 0")
    return out


def _is_header(names: list[str]) -> bool:
    return bool(_pairs(names)) or "resolved" in names


def scan_text(text: str) -> list[str]:
    """Problems in plain text: every line, and every pandas table (its header, then its rows) in it."""
    out = []
    header: list[tuple[str, int, int]] | None = None
    for line in text.splitlines():
        out += _line_problems(line)
        tokens = [(m.group(0), m.start(), m.end()) for m in re.finditer(r"\S+(?: \S+)*", line)]
        if not line.strip():
            header = None
        elif _is_header([t[0] for t in tokens]) and not INTERVAL.search(line):
            header = tokens
        elif header is not None:
            row, first = {}, len(line)
            for name, _, end in header:
                if end <= len(line) and line[end - 1] != " " and (end == len(line) or line[end] == " "):
                    value = line[:end].split()[-1]
                    row[name] = value
                    first = min(first, end - len(value))
            if row:
                out += _row_problems(line[:first].strip() or "?", row)
    return out


class _Tables(HTMLParser):
    """The rows of every HTML table: a list of ``(in_head, [(tag, text), ...])``."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[tuple[bool, list[tuple[str, str]]]] = []
        self.head = False
        self.cell: list[str] | None = None
        self.tag = ""

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag == "thead":
            self.head = True
        elif tag == "tr":
            self.rows.append((self.head, []))
        elif tag in ("td", "th") and self.rows:
            self.cell, self.tag = [], tag

    def handle_endtag(self, tag: str) -> None:
        if tag == "thead":
            self.head = False
        elif tag in ("td", "th") and self.cell is not None:
            self.rows[-1][1].append((self.tag, " ".join("".join(self.cell).split())))
            self.cell = None

    def handle_data(self, data: str) -> None:
        if self.cell is not None:
            self.cell.append(data)


def scan_html(html: str) -> list[str]:
    """Problems in HTML: each table row read as a line, and pandas tables by their header's column names."""
    parser = _Tables()
    parser.feed(html)
    out, names = [], []
    for in_head, cells in parser.rows:
        out += _line_problems("  ".join(text for _, text in cells))
        if in_head:
            texts = [text for _, text in cells]
            if _is_header(texts):
                names = texts
            continue
        values = [text for tag, text in cells if tag == "td"]
        if names and values and len(values) <= len(names):
            label = " ".join(text for tag, text in cells if tag == "th") or "?"
            out += _row_problems(label, dict(zip(names[-len(values) :], values, strict=True)))
    without_tags = re.sub(r"<[^>]+>", " ", html)
    if "<table" not in html:
        out += [p for line in without_tags.splitlines() for p in _line_problems(line)]
    return out


def _joined(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def scan_notebook_intervals(path: str | Path) -> list[str]:
    """``"<chapter> cell N: <problem>"`` for every zero-width interval and contradicted verdict stored in the
    outputs of the notebook at ``path`` (see the module docstring); ``[]`` for a clean notebook."""
    path = Path(path)
    notebook = json.loads(path.read_text(encoding="utf-8"))
    problems: list[str] = []
    for i, cell in enumerate(notebook.get("cells", [])):
        found: list[str] = []
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream":
                if output.get("name") == "stdout":
                    found += scan_text(_joined(output.get("text", "")))
                continue
            data = output.get("data", {})
            plain = _joined(data.get("text/plain", ""))
            if plain:
                found += scan_text(plain)
            if "text/html" in data and (not plain or plain.lstrip().startswith("<")):
                found += scan_html(_joined(data["text/html"]))
        for problem in dict.fromkeys(found):
            problems.append(f"{path.stem} cell {i}: {problem}")
    return problems
