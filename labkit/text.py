"""Words with their character offsets, and Jaccard similarity.

Taught in ``02_synthetic_hard_questions`` (Jaccard look-alikes) and
``05_chunk_grid`` (chunking by words while keeping offsets).

Two notions of "word", each for its job:

- :func:`word_spans` — whitespace-delimited words with ``(start, end)``
  character offsets. Chunk sizes are counted in these (``wc -w`` counts the
  same words), and offsets map chunks back to the raw document.
- :func:`terms` — lower-cased alphanumeric terms (``ERR-4031`` stays one term,
  ``err-4031``) for set-overlap measures such as Jaccard.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["word_spans", "terms", "jaccard"]

_WORD = re.compile(r"\S+")
_TERM = re.compile(r"[^\W_]+(?:[-'][^\W_]+)*")


def word_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of every whitespace-delimited word: ``text[start:end]`` is the word."""
    if not isinstance(text, str):
        raise ValueError(f"text must be a string, got {type(text).__name__}")
    return [m.span() for m in _WORD.finditer(text)]


def terms(text: str) -> list[str]:
    """Lower-cased terms, punctuation dropped except inside codes (``ERR-4031`` -> ``err-4031``)."""
    if not isinstance(text, str):
        raise ValueError(f"text must be a string, got {type(text).__name__}")
    return _TERM.findall(text.lower())


def jaccard(a: str | Iterable[str], b: str | Iterable[str]) -> float:
    """Jaccard similarity ``|A ∩ B| / |A ∪ B|`` of two term sets (strings are split with :func:`terms`).

    Two empty texts have similarity 0 (not 1): nothing in common is not "identical" for a look-alike search.
    """
    sa = set(terms(a)) if isinstance(a, str) else set(a)
    sb = set(terms(b)) if isinstance(b, str) else set(b)
    union = sa | sb
    return len(sa & sb) / len(union) if union else 0.0
