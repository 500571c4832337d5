"""Words with their character offsets, the numbers a text states, and Jaccard similarity.

Taught in ``02_synthetic_hard_questions`` (Jaccard look-alikes) and
``05_chunk_grid`` (chunking by words while keeping offsets).

Two notions of "word", each for its job:

- :func:`word_spans` — whitespace-delimited words with ``(start, end)``
  character offsets. Chunk sizes are counted in these (``wc -w`` counts the
  same words), and offsets map chunks back to the raw document.
- :func:`terms` — case-folded alphanumeric terms (``ERR-4031`` stays one term,
  ``err-4031``) for set-overlap measures such as Jaccard.
- :func:`numbers` — the numbers a text states, thousands separators dropped (``200,000`` -> ``200000``), for
  every rule that compares an answer's numbers with a reference's (chapters 04, 06, 07).

Unicode: one word can be typed two ways, ``é`` as one character (NFC) or as ``e`` plus a combining accent (NFD,
what macOS file names and some editors produce). :func:`fold` makes them one spelling (NFC, case folded), and
:func:`terms`, :func:`jaccard` and :func:`containment` compare folded terms, so both spellings are one term.
:func:`word_spans` never normalises: its offsets index the text as given, so a span cut from them is the
original's own characters. Code that matches normalised text and must return offsets folds piece by piece
(:func:`fold_with_offsets`), each piece a character and the combining marks that follow it.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from functools import cache, lru_cache

from labkit.core import args

__all__ = ["word_spans", "terms", "numbers", "jaccard", "containment", "fold", "fold_with_offsets"]

_WORD = re.compile(r"\S+")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def word_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of every whitespace-delimited word: ``text[start:end]`` is the word."""
    args.text("text", text, allow_empty=True)
    return [m.span() for m in _WORD.finditer(text)]


def fold(text: str) -> str:
    """``text`` in one spelling for comparisons: canonical composition (NFC) of its case-folded form, so
    ``"Cafe\u0301"`` (NFD) and ``"café"`` fold alike, as do ``"STRASSE"`` and ``"straße"``. Lengths may change;
    use :func:`fold_with_offsets` when positions in the original matter."""
    return _fold(args.text("text", text, allow_empty=True))


def _fold(text: str) -> str:
    return unicodedata.normalize("NFC", unicodedata.normalize("NFD", text).casefold())


def _starts_piece(ch: str) -> bool:
    """True when ``ch`` begins a new piece: not a combining mark, not a Hangul vowel or final jamo (which compose
    with what precedes them)."""
    return (
        unicodedata.combining(ch) == 0
        and not unicodedata.category(ch).startswith("M")
        and not ("\u1160" <= ch <= "\u11ff" or "\ud7b0" <= ch <= "\ud7ff")
    )


def fold_with_offsets(text: str) -> tuple[str, list[int], list[int]]:
    """:func:`fold` of ``text`` with, for each character of the result, the ``start`` and ``end`` offsets in
    ``text`` of the piece it came from: ``text[start[i]:end[j]]`` is the original of the folded ``[i:j+1]``.

    Pieces are a character and the combining marks after it, folded one at a time, so a match in the folded
    text maps back to whole characters of the original (never half of an ``e`` + accent pair).
    """
    args.text("text", text, allow_empty=True)
    out: list[str] = []
    start: list[int] = []
    end: list[int] = []
    a = 0
    for b in range(1, len(text) + 1):
        if b < len(text) and not _starts_piece(text[b]):
            continue
        piece = _fold(text[a:b])
        out.append(piece)
        start.extend([a] * len(piece))
        end.extend([b] * len(piece))
        a = b
    return "".join(out), start, end


@cache
def _term_pattern() -> re.Pattern:
    # Python's \w has no combining marks: an accent left uncomposed by NFC (or a vowel sign of an Indic script)
    # would cut its word in two, so marks may follow any letter of a term
    marks = "".join(re.escape(chr(c)) for c in range(0x300, 0x20000) if unicodedata.category(chr(c)).startswith("M"))
    part = rf"[^\W_](?:[^\W_]|[{marks}])*"
    return re.compile(rf"{part}(?:[-']{part})*")


def terms(text: str) -> list[str]:
    """Folded terms (:func:`fold`: NFC, case folded), punctuation dropped except inside codes (``ERR-4031`` ->
    ``err-4031``); an NFC and an NFD spelling of a word give the same term."""
    args.text("text", text, allow_empty=True)
    return _term_pattern().findall(fold(text))


def numbers(text: str) -> list[str]:
    """The numbers in ``text``, in order, as written but with thousands separators dropped.

    ``"200,000 VND"`` -> ``["200000"]``; ``"1.5 days"`` -> ``["1.5"]``; ``"1,5"`` stays ``"1,5"`` (a comma
    followed by anything but groups of three digits is not a thousands separator). A number glued to letters
    counts too: ``"ERR-4031"`` -> ``["4031"]``.
    """
    args.text("text", text, allow_empty=True)
    out = []
    for n in _NUMBER.findall(text):
        groups = re.split(r"[.,]", n)
        if "," in n and all(len(g) == 3 for g in groups[1:]):
            n = "".join(groups)
        out.append(n)
    return out


@lru_cache(maxsize=16384)
def _text_terms(text: str) -> frozenset[str]:
    """A text's term set, kept for the texts seen last: a look-alike search compares one chunk with every other,
    and each chunk's terms are found once, not once per comparison."""
    return frozenset(terms(text))


def _term_set(name: str, value: str | Iterable[str]) -> frozenset[str] | set[str]:
    if isinstance(value, str):
        return _text_terms(value)
    if isinstance(value, bytes | bytearray):
        raise ValueError(f"{name} must be a text or a collection of terms, got bytes: decode it first (.decode())")
    given = args.strings(name, value, example='"VPN error" or {"vpn", "error"}')
    return {unicodedata.normalize("NFC", t) for t in given}


def jaccard(a: str | Iterable[str], b: str | Iterable[str]) -> float:
    """Jaccard similarity ``|A ∩ B| / |A ∪ B|`` of two term sets (strings are split with :func:`terms`).

    ``a`` and ``b`` are each a text or a collection (set, list) of terms, which are used as given (in NFC, so
    both Unicode spellings of a term are one term; a text's terms are also case folded).
    Two empty texts have similarity 0 (not 1): nothing in common is not "identical" for a look-alike search.
    """
    sa, sb = _term_set("a", a), _term_set("b", b)
    union = sa | sb
    return len(sa & sb) / len(union) if union else 0.0


def containment(a: str | Iterable[str], b: str | Iterable[str]) -> float:
    """The share of ``a``'s terms that also occur in ``b``: ``|A ∩ B| / |A|`` (0 for an empty ``a``).

    Unlike Jaccard it does not shrink because ``b`` is long: for a ten-word question against a 128-word chunk it
    says how much of the question's wording the chunk holds.
    """
    sa, sb = _term_set("a", a), _term_set("b", b)
    return len(sa & sb) / len(sa) if sa else 0.0
