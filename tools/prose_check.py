"""Every number a chapter's prose states is a number one of its cells printed; and the prose tells no repository
history.

    python tools/prose_check.py notebooks/*.ipynb             # the problems, a count per chapter; exit 1 if any
    python tools/prose_check.py --explain notebooks/04b*.ipynb  # every prose number and the rule that passed it

:func:`check_notebook` reads an executed ``.ipynb`` as JSON (no kernel, no nbformat) and returns a
:class:`Problem` (chapter, cell index counted from 0, the number or phrase as written, its sentence) for

- **a number no cell printed**: a number in a Markdown cell that no code cell of the same chapter shows in its
  stored outputs (stdout/stderr streams, ``text/plain``, ``text/markdown``, the cell texts of ``text/html``
  tables, an error's message) and that the chapter's code does not set;
- **repository history**: a phrase that tells how the workbook used to be ("as they then were", "after the
  tie-order fix", "built where", "previously", "was changed", "we changed", "now resolves", "an earlier build",
  "no longer" ... see :data:`HISTORY`). History belongs in git; a lesson states what its cells show now.

**Same figure, same rounding.** A prose number matches a printed one written with the same digits; or with fewer
decimals when it is the printed number rounded (half up or half even): ``0.41`` for ``0.4137``, ``90`` for
``89.6``. That is sound because the reader sees the same figure at a coarser grain; the reverse (prose more
precise than the output, ``0.410`` for ``0.41``) never matches. A percentage (``41 %``, ``7.5 points``) matches a
printed share (``0.41``; rounded: ``0.4137``) or a printed percentage. An integer with trailing zeros after
"about" ("around", "roughly", "nearly", "almost", "approximately", "~", "≈") matches a printed number rounded to
those tens or hundreds (``about 2,700`` for ``2,698``). A signed prose number (``−0.04``, ``+0.15``) must match
the printed sign; an unsigned one may be a magnitude (``a loss of 0.06`` for ``−0.060``). ``60 of 121`` is two
numbers, each of which must be printed.

**Where it may be printed.** Same digits and sign: any code cell of the chapter (a recap is a recap). Rounded: a
code cell of the same section (a ``#``/``##`` heading to the next; ``###`` parts stay in their section) or right
before or after the Markdown cell; anywhere when the section prints nothing or is headed "Summary". A magnitude:
only the code cells right before or after the Markdown cell. An estimate written with its interval
(``0.038 [−0.050, 0.138]``, ``+0.050, an interval from −0.04 to +0.15``) is one figure: all its numbers must be
printed on one line, one table row or one run of one-number lines (a Series) of one cell. Without these scopes,
"adjusted p 0.022" passes on a ``-0.022`` printed three cells away and "p 0.68" on a ``0.680`` in a later
section; with them both are found.

**Set by the code.** An unsigned number that a code cell of the chapter sets, with the same decimals (a numeric
literal, or a number inside a string literal; comments do not count), passes: a parameter the code shows (``k =
5``, ``top 3``, ``c = 60``) is not retyped. A signed number (``+0.05``) is a difference, never a parameter.

**Quoted numbers** (the convention). A number quoted from a cited source is not checked when

- its clause (its sentence up to the semicolons around it) carries an author-year citation: ``Liu et al. 2024``,
  ``(Liu et al., 2024)``, ``Liu et al. (2024)``, ``Burges 2010``, ``Cormack, Clarke & Büttcher, SIGIR 2009``,
  ``Smith & Troynikov ... 2024``, ``the Rogan–Gladen estimator (1978)``; or ``Name et al.`` without the year (the
  full reference is given where the work is first cited); or
- an invisible marker follows it in its sentence: ``<!-- quoted: the source, 7.13 -->`` (an HTML comment that
  starts with ``quoted`` and names the source). It covers the numbers of its sentence *before* it, so one put
  right after the quoted figures leaves the rest of the sentence checked. The chapter notes the workbook follows
  ("the source") are not an author-year citation: a figure taken from them carries the marker.

So a workbook figure must not share a clause with a citation: it would not be checked.

**Not figures** (never reported): numbers inside inline code, fenced code, LaTeX (``$...$``, ``$$...$$``), link
targets, URLs, HTML tags and comments; heading lines; list numbering (``1.``, ``**1.**``) and exercise labels
(``**3.2**``); chapter numbers and cross-references (any zero-padded number: ``04``, ``06–09``; ``04b``; a number
beside a link to its chapter's notebook; numbers after "chapter", "section", "exercise", "step", "item", "part",
"§", with their lists: "sections 7.3, 7.5 and 7.6"; a number before "checklist" or "workflow" -- the source's
7.12 -- and the section numbers of the chapter's "Source:" sentence); years (1900-2099, no thousands comma);
model sizes (``1.5B``, ``0.5B``, ``13B``); numbers glued to a name (``BM25``, ``k1``, ``GPT-3.5``,
``Claude-1.3``, ``r4``, ``grade-3``, ``4o``); a metric's k (``nDCG@10``: a name; the k a sentence sets, ``k =
10``, is checked like any number); formula constants written against ``·`` or ``√`` (``p ± 1.96·√...``); a
confidence level (``95 % interval``, ``the middle 95 %``); and the integers 0, 1 and −1 (nulls and bounds: "holds
0", "between −1 and 1"; as counts every chapter prints them anyway).

What it cannot see: which printed number a sentence means. A prose number matching a printed one where it may
be matched passes, so small integers (counts, k values) nearly always pass; the check is sharp for decimals and
intervals, where a stale figure rarely matches another output by chance. A number derived in the prose (a sum,
a difference, a ratio, ``1 − TNR``) is reported: print it.
"""

from __future__ import annotations

import io
import json
import re
import sys
import tokenize
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal, InvalidOperation
from html.parser import HTMLParser
from pathlib import Path

__all__ = [
    "HISTORY",
    "Problem",
    "Verdict",
    "check_cells",
    "check_notebook",
    "explain_cells",
    "explain_notebook",
    "main",
]


@dataclass(frozen=True)
class Problem:
    """One finding: ``kind`` is ``"number"`` (a figure no cell printed) or ``"history"`` (a history phrase);
    ``text`` is the number as written (``"0.022"``, ``"−0.04"``, ``"41 %"``) or the phrase found."""

    chapter: str
    cell: int
    kind: str
    text: str
    sentence: str

    @property
    def key(self) -> tuple[str, int, str, str]:
        return (self.chapter, self.cell, self.kind, self.text)

    def __str__(self) -> str:
        what = "number not printed" if self.kind == "number" else "history in the lesson"
        return f"{self.chapter} cell {self.cell}: {what}: {self.text!r} in: {self.sentence}"


# ---------------------------------------------------------------------------------------------------- numbers

MINUS = "−-"  # U+2212 and the hyphen-minus; an en dash (–) is a range, never a sign
_PROSE_NUMBER = re.compile(r"([−+-]?)((?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)")
_PRINTED_NUMBER = re.compile(r"([−+-]?)(\d+(?:,\d{3})*(?:\.\d+)?(?:[eE][−+-]?\d+)?)")
_APPROX = re.compile(  # "about 2,700", and "about 90 s and 2,700 tokens"
    r"(?:\babout|\baround|\broughly|\bnearly|\balmost|\bapproximately|~|≈)\s*"
    r"(?:[\d.,]+\s*[^\W\d]*\s+(?:and|or|to)\s+)?$",
    re.IGNORECASE,
)


def _decimal(digits: str) -> Decimal:
    return Decimal(digits.replace(",", "").replace("−", "-"))


def _places(d: Decimal) -> int:
    exponent = d.as_tuple().exponent
    return max(0, -exponent) if isinstance(exponent, int) else 0


EXACT, ROUNDED, MAGNITUDE = 0, 1, 2
"""How loosely a prose number matched a printed one: the same digits and sign (or a share written as a percentage,
no digit dropped); rounded to fewer decimals; or an unsigned prose number for a printed negative one (a
magnitude: "a loss of 0.06" for -0.060), rounded or not."""


class Printed:
    """The numbers one code cell printed: (decimals, magnitude rounded to them) -> {(sign, exact)}."""

    def __init__(self) -> None:
        self.plain: dict[tuple[int, Decimal], set[tuple[str, bool]]] = {}
        self.percent: dict[tuple[int, Decimal], set[tuple[str, bool]]] = {}
        self.magnitudes: set[Decimal] = set()

    @staticmethod
    def _add(index: dict, value: Decimal, places: int, sign: str) -> None:
        magnitude = abs(value)
        for d in range(0, min(places, 12) + 1):
            step = Decimal(1).scaleb(-d)
            for rounding in (ROUND_HALF_UP, ROUND_HALF_EVEN):
                q = magnitude.quantize(step, rounding=rounding)
                for s in ("+", "-") if q == 0 else (sign,):
                    index.setdefault((d, q), set()).add((s, d == places))

    def add(self, value: Decimal, sign: str) -> None:
        places = _places(value)
        self._add(self.plain, value, places, sign)
        self._add(self.percent, value, places, sign)  # a printed percentage: "41.3" in a "%" column
        if places >= 2:  # a printed share: 0.413 -> 41.3 %, 0.4137 -> 41 % rounded
            self._add(self.percent, value * 100, places - 2, sign)
        self.magnitudes.add(abs(value))

    def add_text(self, text: str) -> None:
        for m in _PRINTED_NUMBER.finditer(text):
            start = m.start(2)
            if start > 0 and (text[start - 1].isalpha() or text[start - 1] in "_."):
                continue  # glued to a name: q017, k1
            sign = "-" if m.group(1) and m.group(1) in MINUS and not _alnum_before(text, m.start()) else "+"
            body = m.group(2)
            try:
                self.add(_decimal(body), sign)
            except InvalidOperation:
                continue
            if "," in body:  # "2,712" is 2712, but "[1,3,5]" is three numbers: keep both readings
                for part in body.split(","):
                    self.add(_decimal(part), "+")

    def match(self, value: Decimal, places: int, sign: str | None, percent: bool, approx: bool) -> int | None:
        """The closest tier at which this cell printed the prose number (``EXACT`` ...), or None."""
        signs = (self.percent if percent else self.plain).get((places, abs(value)), set())
        best = None
        for printed_sign, exact in signs:
            if sign is None and printed_sign == "-":
                tier = MAGNITUDE
            elif sign is None or sign == printed_sign:
                tier = EXACT if exact else ROUNDED
            else:
                continue
            best = tier if best is None else min(best, tier)
        if best is None and approx and places == 0 and not percent:
            digits = str(int(abs(value)))
            zeros = len(digits) - len(digits.rstrip("0"))
            step = Decimal(1).scaleb(zeros)
            if zeros and any(m.quantize(step, rounding=ROUND_HALF_UP) == abs(value) for m in self.magnitudes):
                best = ROUNDED
        return best


class Shown:
    """What one code cell printed: all its numbers, and its rows: each line (an HTML table's row) holding two
    numbers or more, and each run of lines holding one number each (a Series or a list printed one per line)."""

    def __init__(self, texts: Iterable[str]) -> None:
        self.numbers = Printed()
        self.rows: list[Printed] = []
        for text in texts:
            self.numbers.add_text(text)
            run: list[str] = []
            for line in [*text.splitlines(), ""]:
                count = len(_PRINTED_NUMBER.findall(line))
                if count == 1:
                    run.append(line)
                    continue
                if len(run) >= 2:
                    self._row("\n".join(run))
                run = []
                if count >= 2:
                    self._row(line)

    def _row(self, text: str) -> None:
        row = Printed()
        row.add_text(text)
        self.rows.append(row)


def _alnum_before(text: str, i: int) -> bool:
    return i > 0 and (text[i - 1].isalnum() or text[i - 1] in "_)]")


class _HTMLText(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag in ("style", "script"):
            self._skip += 1
        elif tag in ("td", "th"):
            self.parts.append(" | ")
        elif tag in ("tr", "br", "p", "div", "li", "table", "h1", "h2", "h3", "h4", "pre"):
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("style", "script"):
            self._skip = max(0, self._skip - 1)
        else:
            self.parts.append(" ")

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.parts.append(re.sub(r"\s+", " ", data))


def html_text(html: str) -> str:
    """The text of an HTML output, a table row per line (its cells joined by ``|``), without styles and scripts."""
    parser = _HTMLText()
    parser.feed(html)
    parser.close()
    return "".join(parser.parts)


_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def _joined(value: str | list[str]) -> str:
    return value if isinstance(value, str) else "".join(value)


def output_texts(cell: dict) -> Iterator[str]:
    """Every text a code cell's stored outputs show a reader."""
    for out in cell.get("outputs", []):
        kind = out.get("output_type")
        if kind == "stream":
            yield _joined(out.get("text", ""))
        elif kind in ("execute_result", "display_data"):
            data = out.get("data", {})
            for mime in ("text/plain", "text/markdown", "text/latex"):
                if mime in data:
                    yield _joined(data[mime])
            if "text/html" in data:
                yield html_text(_joined(data["text/html"]))
        elif kind == "error":
            yield out.get("evalue", "")
            yield _ANSI.sub("", "\n".join(out.get("traceback", [])))


def code_numbers(source: str) -> set[tuple[Decimal, int]]:
    """``(magnitude, decimals)`` of each number a code cell's source sets (``0.5`` and ``0.50`` differ): numeric
    literals and numbers inside string literals (``"nDCG@10"``), not comments. Lines of IPython magics and shell
    escapes are skipped."""
    lines = [line for line in source.splitlines() if not line.lstrip().startswith(("%", "!"))]
    text = "\n".join(lines) + "\n"
    found: set[tuple[Decimal, int]] = set()
    pieces: list[str] = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.NUMBER:
                pieces.append(tok.string.replace("_", "").rstrip("jJ"))
            elif tok.type == tokenize.STRING or tok.type in _FSTRING_TYPES:
                pieces.extend(m.group(2) for m in _PRINTED_NUMBER.finditer(tok.string))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        # not Python (a cell of another language): every number outside a '#' comment
        stripped = "\n".join(line.split("#", 1)[0] for line in lines)
        pieces = [m.group(2) for m in _PRINTED_NUMBER.finditer(stripped)]
    for piece in pieces:
        try:
            value = Decimal(piece.replace(",", "")) if not piece.lower().startswith("0x") else Decimal(int(piece, 16))
        except (InvalidOperation, ValueError):
            continue
        found.add((abs(value), _places(value)))
        if "," in piece:
            found.update((Decimal(p), _places(Decimal(p))) for p in piece.split(",") if p)
    return found


_FSTRING_TYPES = {getattr(tokenize, n) for n in ("FSTRING_MIDDLE",) if hasattr(tokenize, n)}


# ------------------------------------------------------------------------------------------- Markdown masking

_FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.MULTILINE | re.DOTALL)
_DISPLAY_MATH = re.compile(r"\$\$.*?\$\$", re.DOTALL)
_INLINE_MATH = re.compile(r"(?<![\\$])\$(?!\s)[^$\n]+?(?<![\s\\])\$(?!\d)")
_CODE_SPAN = re.compile(r"(`+)(?!`).+?(?<!`)\1(?!`)", re.DOTALL)
_COMMENT = re.compile(r"<!--(.*?)-->", re.DOTALL)
_TAG = re.compile(r"</?[A-Za-z][^>\n]*>")
_LINK_TARGET = re.compile(r"\]\([^)\s]*(?:\s+\"[^\"]*\")?\)")
_URL = re.compile(r"\bhttps?://\S+|\bwww\.\S+")
_HEADING = re.compile(r"^ {0,3}#{1,6}\s.*$", re.MULTILINE)
_LIST_NUMBER = re.compile(r"^\s*(?:[*_]{2})?\d+[.)](?=[\s*_])", re.MULTILINE)
_EXERCISE_LABEL = re.compile(r"^\s*(?:[*_]{2})(?:Exercise\s+)?\d+[a-z]?\.\d+", re.MULTILINE | re.IGNORECASE)
_NUM = r"\d+[a-z]?(?:\.\d+)*"
_KEYWORD_LIST = re.compile(
    rf"(?:\b(?:chapters?|sections?|exercises?|steps?|items?|parts?)|§)\s*{_NUM}"
    rf"(?:\s*(?:\([^()]*\))?\s*(?:,|\band\b|\bor\b|\bto\b|–|-|&)\s*(?:§\s*)?{_NUM})*",
    re.IGNORECASE,
)
_SECTION_BEFORE = re.compile(r"\d+\.\d+(?=\s+(?:checklist|workflow)\b)", re.IGNORECASE)
_CONFIDENCE = re.compile(
    r"\b(?:middle\s+)?\d{2}(?:\.\d+)?\s?%(?=(?:\s+(?:bootstrap|paired|simultaneous|Wilson|confidence|two-sided))*"
    r"\s+(?:intervals?|level|CI)\b)|\bmiddle\s+\d{2}(?:\.\d+)?\s?%",
    re.IGNORECASE,
)
_SOURCE_SENTENCE = re.compile(r"^\s*Source:[^\n]*?(?:\.(?=\s)|$)", re.MULTILINE)
_QUOTED_MARK = "\x00"


def _mask(text: str, spans: Iterable[tuple[int, int]], keep_newlines: bool = True) -> str:
    chars = list(text)
    for start, end in spans:
        for i in range(start, end):
            if not (keep_newlines and chars[i] == "\n"):
                chars[i] = " "
    return "".join(chars)


def masked_markdown(source: str) -> tuple[str, str]:
    """``(readable, checked)``: the cell without its HTML comments (a ``<!-- quoted -->`` marker kept as one
    ``\\x00``), and the same text, character for character, with every place whose numbers are not prose
    figures blanked out (code, math, tags, link targets, URLs, headings, list numbers, references)."""
    # 1. the quoted markers become one character; other comments vanish (both texts keep the same positions)
    readable = _COMMENT.sub(lambda m: _QUOTED_MARK if m.group(1).strip().lower().startswith("quoted") else "", source)
    spans: list[tuple[int, int]] = []
    for pattern in (_FENCE, _DISPLAY_MATH, _CODE_SPAN, _INLINE_MATH, _TAG, _LINK_TARGET, _URL, _HEADING):
        spans += [m.span() for m in pattern.finditer(readable)]
    checked = _mask(readable, spans)
    spans = []
    for pattern in (_LIST_NUMBER, _EXERCISE_LABEL, _KEYWORD_LIST, _SECTION_BEFORE, _CONFIDENCE):
        spans += [m.span() for m in pattern.finditer(checked)]
    for m in _SOURCE_SENTENCE.finditer(checked):  # "Source: sections 7.10–7.12 ... (and the pitfalls of 7.11)"
        spans += [(m.start() + n.start(), m.start() + n.end()) for n in re.finditer(r"\d+\.\d+", m.group())]
    return readable, _mask(checked, spans)


# --------------------------------------------------------------------------------------------------- sentences

_BLOCK_BREAK = re.compile(r"\n\s*\n|\n(?=\s*(?:[*+-]|\d+[.)])\s)|\n(?=\s*\|)|\n(?=\s*#)")
_ABBREVIATIONS = ("et al.", "e.g.", "i.e.", "vs.", "cf.", "approx.", "Fig.", "fig.", "No.", "etc.", "al.")
_SENTENCE_END = re.compile(r"[.!?][\"”’')\]*_]*\s+(?=[\"“(\[*_]*[A-Z0-9])")


def sentences(text: str) -> list[tuple[int, int]]:
    """The spans of ``text``'s sentences: split at blank lines, list items, table rows and headings, then at a
    full stop followed by a capital (not after "et al.", "e.g." and the like)."""
    spans = []
    start = 0
    for brk in [*_BLOCK_BREAK.finditer(text), None]:
        end = brk.start() if brk else len(text)
        s = start
        for m in _SENTENCE_END.finditer(text, start, end):
            head = text[s : m.start() + 1]
            if head.endswith(_ABBREVIATIONS):
                continue
            spans.append((s, m.end()))
            s = m.end()
        spans.append((s, end))
        start = brk.end() if brk else len(text)
    return [(a, b) for a, b in spans if text[a:b].strip()]


_NAME = r"[A-Z][\w’'–-]+"
_CITATION = re.compile(
    rf"{_NAME}(?:\s+(?:et\s+al\.|&\s+{_NAME}|and\s+{_NAME}))?(?:’s|'s)?"
    r"(?:,?\s+[A-Z][A-Za-z]*)?[,\s]*\(?(?:19|20)\d{2}[a-z]?\)?"  # Burges 2010, Liu et al. (2024), SIGIR 2009
    rf"|\b{_NAME}\s+et\s+al\."  # Liu et al.
    rf"|{_NAME}\s+[a-z]+\s+\((?:19|20)\d{{2}}[a-z]?\)"  # the Rogan–Gladen estimator (1978)
)
_AUTHORS = re.compile(rf"\b{_NAME}\s+(?:&|and)\s+{_NAME}")  # Smith & Troynikov, ... 2024
_YEAR = re.compile(r"(?<![\w.,])(?:19|20)\d{2}(?!\w|,\d{3}|\.\d)")


def cites(sentence: str) -> bool:
    """Whether a sentence carries an author-year citation (see the module's docstring)."""
    for m in _CITATION.finditer(sentence):
        if m.group().split()[0].strip("(") not in _NOT_NAMES:
            return True
    return bool(_YEAR.search(sentence)) and any(
        m.group().split()[0] not in _NOT_NAMES for m in _AUTHORS.finditer(sentence)
    )


# Capitalised words that start a sentence before a year without being an author ("In 2024", "The 2025 rule")
_NOT_NAMES = {"In", "The", "A", "An", "On", "By", "Since", "From", "Until", "Before", "After", "Its", "This", "Each"}


def _clean(sentence: str) -> str:
    return " ".join(sentence.replace(_QUOTED_MARK, "").split())


# ----------------------------------------------------------------------------------------------------- history

HISTORY: dict[str, re.Pattern[str]] = {
    name: re.compile(pattern, re.IGNORECASE)
    for name, pattern in {
        "as they then were": r"\bas (?:they|it|these|those|this|that) then (?:were|was|stood|read)\b",
        "then were": r"\b(?:were|was) then\b(?= (?:printed|shown|recorded|labelled|built|stored))",
        "after the fix": r"\b(?:after|before|since|until) (?:the|that|this|a) (?:[\w-]+ )?fix\b",
        "tie-order fix": r"\btie[- ]order (?:fix|change)\b|\bexact ties fell\b",
        "built where": r"\b(?:built|run|recorded|computed) (?:where|with an? (?:older|earlier|previous))\b",
        "no longer": r"\bno longer\b",
        "used to": r"(?<!\bbe )(?<!\bis )(?<!\bare )(?<!\bwas )(?<!\bwere )(?<!\bbeen )(?<!\bnot )\bused to "
        r"(?:be|read|print|show|say|give|hold|pass|fail|resolve|reach|cross|sit)\b",
        "once passed": r"\bonce (?:passed|failed|read|printed|showed|held|resolved|was|were)\b",
        "previously": r"\bpreviously\b|\bformerly\b|\boriginally\b",
        "was changed": r"\b(?:was|were|has been|have been) (?:changed|updated|re-?recorded|rebuilt)\b",
        "we changed": r"\bwe (?:changed|fixed|corrected|updated|re-?ran|rebuilt|re-?recorded)\b",
        "now resolves": r"\bnow (?:resolves?|reads|prints|shows|holds|passes|fails|gives)\b",
        "an earlier build": r"\b(?:earlier|previous|older|last) (?:build|version|recording|release|commit)\b",
        "(was N)": r"\((?:was|previously|formerly) [−+-]?\d",
        "anymore": r"\banymore\b|\bany more\b(?=\s*[.,;:)])",
    }.items()
}
"""Phrases that tell the workbook's history, by name. "no longer" is history unless its clause (from the sentence's
start, a colon, a semicolon, a parenthesis or a dash) opens with the condition it contrasts: "With 64-word
chunks, 24 sentences no longer fit", "At an equal budget the largest chunks no longer run away", "...: once the
passages are another question's, 18 of the 24 are no longer right" are the lesson's own comparisons; "(which the
handbook's own test queries no longer resolve either" is history. "used to" counts only as "X used to be/read/
print/..." (not "the prompt used to generate", "was not used to choose")."""

_CONDITION = re.compile(r"(?:^|[:;(—])[\W_]*(?:with|at|from|when|if|once|under|given|for)\b[^:;(—]*$", re.IGNORECASE)


def history_phrases(sentence: str) -> list[str]:
    """The history phrases of one sentence, longest first where two overlap ("after the tie-order fix", not
    also "tie-order fix")."""
    found: list[tuple[int, int]] = []
    for name, pattern in HISTORY.items():
        for m in pattern.finditer(sentence):
            if name == "no longer" and _CONDITION.search(sentence[: m.start()]):
                continue  # "With 64-word chunks, 24 sentences no longer fit": the lesson's own comparison
            found.append(m.span())
    found.sort(key=lambda span: (span[0], -span[1]))
    kept: list[tuple[int, int]] = []
    for a, b in found:
        if not any(a >= ka and b <= kb for ka, kb in kept):
            kept = [(ka, kb) for ka, kb in kept if not (ka >= a and kb <= b)] + [(a, b)]
    return [sentence[a:b] for a, b in sorted(kept)]


# ------------------------------------------------------------------------------------------------------- check


@dataclass(frozen=True)
class Verdict:
    """Why one prose number or phrase passed or failed (``python tools/prose_check.py --explain``): ``why`` is
    ``"problem"``, ``"history"``, or the rule that let it pass ("not a figure: a year", "quoted", "set by the
    code", "printed: rounded, cell 27", ...)."""

    chapter: str
    cell: int
    text: str
    why: str
    sentence: str


def _prose_numbers(checked: str) -> Iterator[tuple[re.Match[str], str | None, int, int, str]]:
    """``(match, sign, percent, thousands, skip)`` for every number of a masked cell text: ``percent`` is the
    length of a following ``" %"``/``"%"``/``" points"`` (0 when there is none), ``thousands`` 1000 after a
    ``k``, and ``skip`` the reason it is not a figure at all ("" when it may be one)."""
    for m in _PROSE_NUMBER.finditer(checked):
        sign_text = m.group(1)
        start, end = m.start(2), m.end(2)
        before = checked[start - 1] if start else ""
        before_sign = checked[m.start() - 1] if m.start() else ""
        after = checked[end : end + 2]
        skip = ""
        if before.isalpha() or before and before in "_.":
            skip = "glued to a name"  # BM25, k1, r4, and 4b.1's 1
        elif before == "@":
            skip = "a metric's k"  # nDCG@10
        elif sign_text and (before_sign.isalpha() or before_sign and before_sign in "_."):
            skip = "glued to a name"  # GPT-3.5, Claude-1.3, ERR-4031
        elif after[:1] == "." and checked[end + 1 : end + 2].isdigit():
            skip = "a section path"  # 7.12.3
        thousands = 1
        if not skip and after[:1].isalpha():
            if after[:1] == "k" and not after[1:2].isalpha():
                thousands = 1000  # 32k tokens
            elif after[:1] in "BM" and not after[1:2].isalpha():
                skip = "a model size"  # 1.5B, 7M
            else:
                skip = "glued to a name"  # 04b, 2s, 4o, 10th
        if sign_text in MINUS and before_sign.isdigit() or sign_text and before_sign and before_sign in ")]":
            sign_text = ""  # 4-5: a range, not a sign
        sign = {"−": "-", "-": "-", "+": "+", "": None}[sign_text]
        percent = re.match(r"\s?%|[\s-](?:percentage\s)?points?\b", checked[end:])
        yield m, sign, percent.end() if percent else 0, thousands, skip


def _not_a_figure(body: str, value: Decimal, percent: int, before: str, after: str) -> str:
    """Why a number that looks like a figure is not one ("" when it is one)."""
    digits = body.replace(",", "")
    if "." not in digits and len(digits) > 1 and digits.startswith("0"):
        return "a chapter number or version"  # 04, 06–09, 0613
    if "." not in digits and abs(value) <= 1 and not percent:
        return "a null or bound (0, 1, −1)"
    if re.fullmatch(r"(?:19|20)\d{2}", body):
        return "a year"
    if re.search(r"[√·][*_]*$", before) or re.match(r"[*_]*[·√]", after):
        return "a formula constant"  # p ± 1.96·√(...)
    return ""


_SECTION_HEADING = re.compile(r"^ {0,3}#{1,2}\s+(.*)$", re.MULTILINE)
_RECAP = re.compile(r"\b(?:summary|recap|takeaways|in short)\b", re.IGNORECASE)


def _sections(cells: list[dict]) -> tuple[list[int], dict[int, list[tuple[int, int]]], set[int]]:
    """Each cell's section (the count of ``#`` and ``##`` headings before it: a ``###`` part stays in its
    section), per Markdown cell the ``(position, section)`` of each such heading it holds (a cell can open a
    section part-way through), and the sections that recap the chapter (headed "Summary" or the like)."""
    section, of_cell, inside, recap = 0, [], {}, set()
    for index, cell in enumerate(cells):
        of_cell.append(section)
        if cell.get("cell_type") == "markdown":
            marks = []
            for m in _SECTION_HEADING.finditer(_COMMENT.sub("", _joined(cell.get("source", "")))):
                section += 1
                marks.append((m.start(), section))
                if _RECAP.search(m.group(1)):
                    recap.add(section)
            inside[index] = marks
    return of_cell, inside, recap


def _adjacent(cells: list[dict], index: int) -> set[int]:
    """The code cells right before and right after a Markdown cell (up to the next Markdown cell each way)."""
    found = set()
    for step in (-1, 1):
        i = index + step
        while 0 <= i < len(cells) and cells[i].get("cell_type") == "code":
            found.add(i)
            i += step
    return found


_N = r"[−+-]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
_INTERVALS = (
    re.compile(rf"(?:({_N})\s*)?\[\s*({_N})\s*,\s*({_N})\s*\]"),  # 0.038 [−0.050, 0.138], [0.94, 1]
    re.compile(  # +0.050, an interval from −0.04 to +0.15
        rf"(?:({_N}),?\s+(?:an?\s+|its\s+|the\s+)?(?:[\w-]+\s+)?)?\binterval\s+(?:is\s+|of\s+|from\s+)?({_N})\s+"
        rf"(?:to|and)\s+({_N})"
    ),
)
"""An estimate and its interval, written together, are one figure: all its numbers must be printed on one line
(one table row) of one cell."""

_TIER_NAMES = {EXACT: "exact", ROUNDED: "rounded", MAGNITUDE: "magnitude"}
_MASKED_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


class _Chapter:
    """A chapter's code: what each code cell printed, the numbers its sources set, and its sections."""

    def __init__(self, cells: list[dict]) -> None:
        self.cells = cells
        self.shown: dict[int, Shown] = {}
        self.in_code: set[tuple[Decimal, int]] = set()
        for index, cell in enumerate(cells):
            if cell.get("cell_type") == "code":
                self.shown[index] = Shown(output_texts(cell))
                self.in_code |= code_numbers(_joined(cell.get("source", "")))
        self.section_of_cell, self.headings, self.recaps = _sections(cells)
        self.by_section: dict[int, set[int]] = {}  # the cells of each section that print a number
        for index, shown in self.shown.items():
            if shown.numbers.plain:
                self.by_section.setdefault(self.section_of_cell[index], set()).add(index)

    def section_at(self, index: int, pos: int) -> int:
        section = self.section_of_cell[index]
        for at, number in self.headings.get(index, []):
            if at <= pos:
                section = number
        return section

    def allowed(self, tier: int | None, code_index: int, section: int, adjacent: set[int]) -> bool:
        """Where a prose number may be matched: with the same digits and sign, in any cell of the chapter;
        rounded, in a cell of its own section (``#``/``##`` heading to the next) or right before or after its
        Markdown cell, or anywhere when its section recaps (prints nothing, or is headed "Summary"); as the
        magnitude of a printed negative, only right before or after its Markdown cell."""
        if tier == EXACT:
            return True
        if tier == ROUNDED:
            scope = self.by_section.get(section)
            return not scope or section in self.recaps or code_index in scope or code_index in adjacent
        return tier == MAGNITUDE and code_index in adjacent

    def find(self, members: list[tuple], section: int, adjacent: set[int]) -> str:
        """Where the figure was printed ("" when nowhere it may be matched): one number in a cell, an interval
        on one row of a cell."""
        for code_index, shown in self.shown.items():
            if len(members) == 1:
                tier = shown.numbers.match(*members[0])
                if tier is not None and self.allowed(tier, code_index, section, adjacent):
                    return f"printed: {_TIER_NAMES[tier]}, cell {code_index}"
                continue
            for row in shown.rows:
                tiers = [row.match(*x) for x in members]
                if all(t is not None and self.allowed(t, code_index, section, adjacent) for t in tiers):
                    return f"printed: {_TIER_NAMES[max(tiers)]} on one row, cell {code_index}"
        return ""


def _in_code(member: tuple, in_code: set[tuple[Decimal, int]]) -> bool:
    """Whether the code sets a prose number: the same value with the same decimals (``0.5`` is not ``0.50``), or
    a percentage for a share (``25 %`` for ``0.25``). A signed number (``+0.05``) is a difference, never a
    parameter."""
    value, places, sign, percent, _approx = member
    if sign:
        return False
    if percent and (abs(value) / 100, places + 2) in in_code:
        return True
    return (abs(value), places) in in_code


def _cell_verdicts(chapter: str, code: _Chapter, index: int, source: str) -> list[Verdict]:
    readable, checked = masked_markdown(source)
    spans = sentences(readable)
    adjacent = _adjacent(code.cells, index)
    verdicts: list[Verdict] = []

    def sentence_span(pos: int) -> tuple[int, int]:
        return next(((a, b) for a, b in spans if a <= pos < b), (0, len(readable)))

    def verdict(start: int, text: str, why: str) -> None:
        a, b = sentence_span(start)
        verdicts.append(Verdict(chapter, index, text, why, _clean(readable[a:b])))

    # numbers hidden by the masks: inline code, LaTeX, links, headings, chapter and section references, ...
    for m in _MASKED_NUMBER.finditer(readable):
        if not checked[m.start() : m.end()].strip():
            verdict(m.start(), m.group(), "not prose: code, math, a link, a heading or a reference")

    candidates: dict[int, tuple] = {}
    for m, sign, percent, thousands, skip in _prose_numbers(checked):
        body = m.group(2)
        value = _decimal(body) * thousands
        written = readable[m.start() : m.end() + percent] + ("k" if thousands > 1 else "")
        if not skip and thousands == 1:
            skip = _not_a_figure(body, value, percent, checked[: m.start()], checked[m.end() :])
        if not skip and re.search(
            rf"\]\({re.escape(body)}[a-z]?_\w*\.ipynb", readable[slice(*sentence_span(m.start()))]
        ):
            skip = "a chapter's number beside its link"  # | 10 | [Your own documents](10_your_own_documents.ipynb)
        if skip:
            verdict(m.start(), written, f"not a figure: {skip}")
            continue
        approx = bool(_APPROX.search(checked[: m.start()]))
        candidates[m.start()] = (written, (value, _places(_decimal(body)), sign, bool(percent), approx))

    figures: list[tuple[int, str, list[tuple]]] = []  # (start, as written, members): an interval is one figure
    grouped: set[int] = set()
    for pattern in _INTERVALS:
        for g in pattern.finditer(checked):
            starts = [g.start(i) for i in (1, 2, 3) if g.start(i) in candidates]
            if len(starts) >= 2 and not grouped & set(starts):
                grouped.update(starts)
                written = " ".join(readable[g.start(1) if g.start(1) >= 0 else g.start() : g.end()].split())
                figures.append((g.start(), written, [candidates[s][1] for s in starts]))
    for start, (written, member) in candidates.items():
        if start not in grouped:
            figures.append((start, written, [member]))

    for start, written, members in sorted(figures, key=lambda f: f[0]):
        a, b = sentence_span(start)
        clause = re.split(r";", readable[a:b][: start - a])[-1] + re.split(r";", readable[start:b])[0]
        if cites(clause):
            verdict(start, written, "quoted: its clause cites a source")
        elif _QUOTED_MARK in readable[start:b]:
            verdict(start, written, "quoted: a <!-- quoted --> marker follows it")
        elif len(members) == 1 and _in_code(members[0], code.in_code):
            verdict(start, written, "set by the code")
        else:
            where = code.find(members, code.section_at(index, start), adjacent)
            verdict(start, written, where or "problem")

    for a, b in spans:
        for phrase in history_phrases(" ".join(checked[a:b].split())):
            verdicts.append(Verdict(chapter, index, phrase.lower(), "history", _clean(readable[a:b])))
    return verdicts


def explain_cells(chapter: str, cells: list[dict]) -> list[Verdict]:
    """Every number and history phrase of a chapter's Markdown cells, with why it passed or failed."""
    code = _Chapter(cells)
    verdicts: list[Verdict] = []
    for index, cell in enumerate(cells):
        if cell.get("cell_type") == "markdown":
            verdicts += _cell_verdicts(chapter, code, index, _joined(cell.get("source", "")))
    return verdicts


def check_cells(chapter: str, cells: list[dict]) -> list[Problem]:
    """The problems of one chapter given its cells (``cell_type``, ``source``, ``outputs``), as in a notebook."""
    return [
        Problem(v.chapter, v.cell, "number" if v.why == "problem" else "history", v.text, v.sentence)
        for v in explain_cells(chapter, cells)
        if v.why in ("problem", "history")
    ]


def chapter_of(path: str | Path) -> str:
    """A notebook's chapter as printed: ``"04b"`` for ``04b_reranking.ipynb``."""
    return Path(path).stem.split("_", 1)[0]


def _cells(path: str | Path) -> list[dict]:
    return json.loads(Path(path).read_text(encoding="utf-8")).get("cells", [])


def check_notebook(path: str | Path) -> list[Problem]:
    """The problems of one executed notebook (see the module's docstring)."""
    return check_cells(chapter_of(path), _cells(path))


def explain_notebook(path: str | Path) -> list[Verdict]:
    """Every prose number and history phrase of one executed notebook, with why it passed or failed."""
    return explain_cells(chapter_of(path), _cells(path))


def main(argv: list[str] | None = None) -> int:
    """Print every problem of the notebooks named, then a count per chapter; 1 if any was found. With
    ``--explain``, every prose number instead, with the rule that passed it or ``problem``."""
    args = list(sys.argv[1:] if argv is None else argv)
    explain = "--explain" in args
    paths = [a for a in args if a != "--explain"]
    if not paths:
        print("usage: python tools/prose_check.py [--explain] notebooks/*.ipynb", file=sys.stderr)
        return 2
    counts: dict[str, list[int]] = {}
    for path in paths:
        chapter = chapter_of(path)
        if explain:
            for v in explain_notebook(path):
                print(f"{v.chapter} cell {v.cell}: {v.text!r}: {v.why}")
            continue
        counts[chapter] = [0, 0]
        for problem in check_notebook(path):
            counts[chapter][problem.kind == "history"] += 1
            print(problem)
    if explain:
        return 0
    print()
    print(f"{'chapter':<8}{'numbers':>8}{'history':>8}")
    for chapter, (numbers, history) in counts.items():
        print(f"{chapter:<8}{numbers:>8}{history:>8}")
    totals = [sum(c[i] for c in counts.values()) for i in (0, 1)]
    print(f"{'total':<8}{totals[0]:>8}{totals[1]:>8}")
    return 1 if sum(totals) else 0


if __name__ == "__main__":
    sys.exit(main())
