"""Words with their character offsets, the numbers a text states, and Jaccard similarity.

Taught in ``02_synthetic_hard_questions`` (Jaccard look-alikes) and
``05_chunk_grid`` (chunking by words while keeping offsets).

Two notions of "word", each for its job:

- :func:`word_spans` — whitespace-delimited words with ``(start, end)``
  character offsets. Chunk sizes are counted in these (``wc -w`` counts the
  same words), and offsets map chunks back to the raw document.
- :func:`terms` — lower-cased alphanumeric terms (``ERR-4031`` stays one term,
  ``err-4031``) for set-overlap measures such as Jaccard.
- :func:`numbers` — the numbers a text states, thousands separators dropped (``200,000`` -> ``200000``), for
  every rule that compares an answer's numbers with a reference's (chapters 04, 06, 07).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from labkit import args

__all__ = ["word_spans", "terms", "numbers", "jaccard", "containment"]

_WORD = re.compile(r"\S+")
_TERM = re.compile(r"[^\W_]+(?:[-'][^\W_]+)*")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def word_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of every whitespace-delimited word: ``text[start:end]`` is the word."""
    args.text("text", text, allow_empty=True)
    return [m.span() for m in _WORD.finditer(text)]


def terms(text: str) -> list[str]:
    """Lower-cased terms, punctuation dropped except inside codes (``ERR-4031`` -> ``err-4031``)."""
    args.text("text", text, allow_empty=True)
    return _TERM.findall(text.lower())


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


def _term_set(name: str, value: str | Iterable[str]) -> set[str]:
    if isinstance(value, str):
        return set(terms(value))
    if isinstance(value, bytes | bytearray):
        raise ValueError(f"{name} must be a text or a collection of terms, got bytes: decode it first (.decode())")
    return set(args.strings(name, value, example='"VPN error" or {"vpn", "error"}'))


def jaccard(a: str | Iterable[str], b: str | Iterable[str]) -> float:
    """Jaccard similarity ``|A ∩ B| / |A ∪ B|`` of two term sets (strings are split with :func:`terms`).

    ``a`` and ``b`` are each a text or a collection (set, list) of terms, which are used as given.
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
