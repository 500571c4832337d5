"""One word, two Unicode spellings: ``é`` composed (NFC) or ``e`` + a combining accent (NFD).

Terms, Jaccard, containment, the quote locator, the quote guard, the lexical judge and BM25 treat both spellings
as one word; offsets (word spans, chunk boundaries, located quotes) always index the *original* text and never
cut an accent off its letter.
"""

from __future__ import annotations

import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from labkit.generation import synth
from labkit.judges import faithfulness
from labkit.retrieval import retrievers as retrieval
from labkit.text import chunking
from labkit.text import words as text

FAST = settings(derandomize=True, deadline=None, max_examples=60, database=None)

NFC = lambda s: unicodedata.normalize("NFC", s)  # noqa: E731
NFD = lambda s: unicodedata.normalize("NFD", s)  # noqa: E731

# letters that compose and decompose, a letter that case-folds to two (ß), marks with no composed form (q + dot),
# Hangul (jamo compose into syllables), spaces, punctuation and Markdown's asterisks
PIECES = ["e", "é", "e\u0301", "E\u0301", "ß", "SS", "n\u0303", "q\u0307", "한", "\u1112\u1161\u11ab", "a", "x",
          "1", " ", "  ", "\n", "-", ".", ",", "*", "’"]  # fmt: skip
TEXTS = st.lists(st.sampled_from(PIECES), min_size=1, max_size=40).map("".join)


def _starts_piece(s: str, i: int) -> bool:
    return i in (0, len(s)) or text._starts_piece(s[i])


def test_the_two_spellings_are_one_term():
    word = "Café naïve Straße ERR-4031"
    assert text.terms(NFD(word)) == text.terms(NFC(word)) == ["café", "naïve", "strasse", "err-4031"]
    assert text.jaccard(NFD(word), NFC(word)) == 1.0
    assert text.containment(NFD("café"), "un café noir") == 1.0
    assert text.jaccard({NFD("café")}, {NFC("café")}) == 1.0  # terms given as a set: same spelling too
    assert text.terms("q\u0307uite") == ["q\u0307uite"]  # a mark with no composed form stays in its word


@FAST
@given(TEXTS)
def test_terms_jaccard_and_containment_ignore_the_spelling(s):
    assert text.terms(NFD(s)) == text.terms(NFC(s)) == text.terms(s)
    assert text.jaccard(NFD(s), NFC(s)) == (1.0 if text.terms(s) else 0.0)
    assert text.containment(NFD(s), NFC(s)) == (1.0 if text.terms(s) else 0.0)


@FAST
@given(TEXTS)
def test_word_spans_and_chunks_index_the_original_text(s):
    spans = text.word_spans(s)
    assert [s[a:b] for a, b in spans] == s.split()
    for size, overlap in ((1, 0), (3, 1)):
        for c in chunking.chunk_document("d", s, size, overlap) if s.split() else []:
            assert c.text == s[c.start_char : c.end_char]


@FAST
@given(TEXTS)
def test_fold_with_offsets_maps_every_folded_character_to_whole_original_characters(s):
    folded, start, end = text.fold_with_offsets(s)
    assert folded == text.fold(s)  # piece by piece, the same as the whole
    assert len(start) == len(end) == len(folded)
    for a, b in zip(start, end, strict=True):
        assert 0 <= a < b <= len(s) and _starts_piece(s, a) and _starts_piece(s, b)
    pieces = list(dict.fromkeys(zip(start, end, strict=True)))
    assert "".join(text.fold(s[a:b]) for a, b in pieces) == folded
    assert pieces[0][0] == 0 and pieces[-1][1] == len(s)
    assert all(b == c for (_, b), (c, _) in zip(pieces, pieces[1:], strict=False))  # adjacent, no gap


@FAST
@given(TEXTS, TEXTS, TEXTS, st.sampled_from([NFC, NFD, str.upper, lambda x: NFD(x).upper(), lambda x: x]))
def test_a_quote_in_another_spelling_is_located_on_whole_characters_of_the_document(before, quote, after, spell):
    document = before + " " + quote + " " + after
    wanted, _, _ = synth._normalised(quote.strip().strip(" .,;:"))
    span = synth.locate_quote(spell(quote), document) if quote.strip(" .,;:\n") else None
    if span is None:
        assert not wanted.strip() or not spell(quote).strip(" .,;:\n")
        return
    a, b = span
    assert 0 <= a < b <= len(document)
    assert _starts_piece(document, a) and _starts_piece(document, b)  # no accent cut off its letter
    found, _, _ = synth._normalised(document[a:b])
    assert found.strip(" .,;:") == synth._normalised(spell(quote).strip().strip(" .,;:"))[0].strip(" .,;:")


def test_the_quote_guard_the_lexical_judge_and_bm25_read_both_spellings():
    context = "Le café est servi à 8 h. Hors de la cuisine, rien."
    assert faithfulness.quote_in_context(NFD("CAFÉ est servi"), context)
    assert faithfulness.lexical_judge(context, NFD("Le café est servi à 8 h.")).supported
    assert faithfulness.mentions_entity(NFD("un café"), ["CAFÉ"])
    bm25 = retrieval.BM25Retriever(chunking.chunk_document("d", NFC(context), 4, 0))
    assert bm25.search(NFD("café servi"), 1) == bm25.search(NFC("café servi"), 1)
    assert bm25.tokenize([NFD("café")]) == bm25.tokenize([NFC("café")])
