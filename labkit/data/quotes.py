"""Gold given as a quote: find it in a document's text and turn it into character offsets.

Taught in ``10_your_own_documents``; ``python -m labkit text FILE --find QUOTE`` runs it from the shell.

**The gold rule.** Offsets count characters (Python ``str`` indices) in the text the tool extracts from the file,
the text it chunks and indexes, not in the raw file: an HTML page's extracted Markdown-like text
(:func:`labkit.data.folder.html_to_text`), a text or Markdown file with its line ends normalised to LF (CRLF and
CR become one ``\\n``) and a leading byte-order mark dropped. ``python -m labkit text FILE`` prints that text.
A quote avoids counting at all: :func:`find_quote` looks for it with every run of whitespace (spaces, tabs, line
ends) matching any other, so a quote copied from a browser or an editor is found across line breaks. It must occur
exactly once: zero or several matches are an error (:func:`locate_quote`) that shows the nearest match or every
candidate's offsets, so the quote can be lengthened or corrected. The alternative, taking the first match, would
put the gold on whichever copy of a repeated sentence comes first, silently.
"""

from __future__ import annotations

import re

from labkit.core import args

__all__ = ["find_quote", "locate_quote", "nearest_match", "normalise_space", "GOLD_RULE"]

GOLD_RULE = ("offsets count characters in the text the tool extracts (HTML: the extracted text; text and Markdown: "
             "line ends normalised to LF), which `python -m labkit text FILE` prints; or give the evidence as a "
             "\"quote\" and the tool finds it")  # fmt: skip
"""The gold rule in one sentence, as the command's help, the errors and data/README.md say it."""

SHOWN = 60
"""How many characters of a quote or a passage an error message shows."""


def normalise_space(text: str) -> str:
    """``text`` with every run of whitespace one space, stripped: how a passage is searched for a quote whole (an
    outside system's passage, a judged passage)."""
    return " ".join(args.text("text", text, allow_empty=True).split())


def _pattern(quote: str) -> re.Pattern:
    words = quote.split()
    return re.compile(r"\s+".join(re.escape(w) for w in words))


def find_quote(text: str, quote: str) -> list[tuple[int, int]]:
    """Every ``(start, end)`` where ``quote`` occurs in ``text``, any run of whitespace matching any other
    (non-overlapping, in order). ``[]`` when it does not occur."""
    text = args.text("text", text, allow_empty=True)
    quote = args.text("quote", quote)
    if not quote.strip():
        raise ValueError("quote must hold words, got only whitespace: copy the passage that answers the question")
    return [(m.start(), m.end()) for m in _pattern(quote).finditer(text)]


def nearest_match(text: str, quote: str) -> str:
    """Where the closest thing to ``quote`` is in ``text``, said in words: the same words ignoring case, else the
    longest run of the quote's first words that occurs (with its offset), else that not even its first word does."""
    text = args.text("text", text, allow_empty=True)
    quote = args.text("quote", quote)
    words = quote.split()
    if not words:
        return "the quote holds no words"
    m = re.compile(_pattern(quote).pattern, re.IGNORECASE).search(text)
    if m:
        return f"found when case is ignored at [{m.start()}, {m.end()}): {_short(text[m.start() : m.end()])}"
    lo, hi, best = 1, len(words), None
    while lo <= hi:  # the longest prefix of the quote's words that occurs (a prefix that occurs has prefixes that do)
        mid = (lo + hi) // 2
        m = _pattern(" ".join(words[:mid])).search(text)
        if m:
            best, lo = (mid, m), mid + 1
        else:
            hi = mid - 1
    if best is None:
        return f"not even its first word {words[0]!r} occurs"
    n, m = best
    after = text[m.end() : m.end() + 40]
    return (f"its first {n} of {len(words)} words occur at offset {m.start()}, followed by {after!r} instead of "
            f"{' '.join(words[n : n + 4])!r}")  # fmt: skip


def locate_quote(text: str, quote: str, where: str = "quote", doc: str = "the document") -> tuple[int, int]:
    """``(start, end)`` of the one place ``quote`` occurs in ``text``; a ValueError starting with ``where`` (e.g.
    ``"Q.jsonl line 3 (q3) gold[0]"``) and naming ``doc`` and the quote when it occurs zero or several times."""
    where = args.text("where", where)
    doc = args.text("doc", doc)
    found = find_quote(text, quote)
    if len(found) == 1:
        return found[0]
    if not found:
        raise ValueError(f"{where}: quote {_short(quote)} is not in {doc}'s extracted text ({len(text):,} characters)"
                         f"; {nearest_match(text, quote)}. See the text with `python -m labkit text` on the file, "
                         "or give start/end")  # fmt: skip
    offsets = ", ".join(f"[{a}, {b})" for a, b in found[:10]) + (", ..." if len(found) > 10 else "")
    raise ValueError(
        f"{where}: quote {_short(quote)} occurs {len(found)} times in {doc}'s extracted text, at "
        f"{offsets}: lengthen the quote until it occurs once, or give start/end of the one you mean"
    )


def _short(s: str) -> str:
    s = " ".join(s.split())
    return repr(s if len(s) <= SHOWN else s[: SHOWN - 3] + "...")
