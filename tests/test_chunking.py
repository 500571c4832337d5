"""labkit.text.words and labkit.text.chunking: the chapter's split-rate table, tiling properties, gold remapping."""

import itertools
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labkit.data.corpus import Span, load_corpus, load_queries

# (doc length, answer start, answer length) in tokens: the source chapter's made-up gold set
from labkit.data.toys import SPLIT_GOLD as SEED_GOLD
from labkit.text.chunking import (
    chunk_corpus,
    chunk_document,
    chunk_spans,
    contains_span,
    spans_to_qrels,
    split_stats,
)
from labkit.text.words import jaccard, terms, word_spans

# the chapter's printed table: size overlap chunks cost split-rate
SEED_TABLE = """\
 128      0     64   1.00       88%
 128     32     82   1.31       25%
 128     64    116   1.90       25%
 256      0     33   1.00       62%
 256     64     40   1.27       25%
 256    128     56   1.80        0%
 512      0     18   1.00       25%
 512    128     22   1.23        0%
 512    256     25   1.57        0%"""


def test_split_rate_table_of_the_source_chapter():
    rows = []
    for size, frac in itertools.product([128, 256, 512], [0, 0.25, 0.5]):
        s = split_stats(SEED_GOLD, size, int(size * frac))
        rows.append(f"{size:4d} {s.overlap:6d} {s.chunks:6d} {s.cost:6.2f} {s.split_rate:9.0%}")
    assert "\n".join(rows) == SEED_TABLE


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda: chunk_spans(100, 256, 256), "overlap (256) must be smaller than size (256)"),
        (lambda: chunk_spans(100, 0, 0), "size must be >= 1"),
        (lambda: chunk_spans(0, 10, 2), "empty document"),
        (lambda: chunk_spans(10, 4, -1), "overlap must be >= 0"),
        (lambda: chunk_spans(10, 4.5, 1), "size must be a whole number"),
        (lambda: chunk_document("d", "   \n", 4, 1), "document 'd' is empty"),
        (lambda: contains_span([(0, 4)], 3, 3), "is empty"),
        (lambda: chunk_corpus({}), "corpus is empty"),
        (lambda: split_stats([(10, 8, 5)], 4, 1), "does not fit"),
    ],
)
def test_bad_input(call, words):
    with pytest.raises(ValueError) as info:
        call()
    assert words in str(info.value)


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 400), st.integers(1, 64), st.data())
def test_windows_cover_every_token_and_honour_overlap(n, size, data):
    overlap = data.draw(st.integers(0, size - 1))
    spans = chunk_spans(n, size, overlap)
    covered = set()
    for s, e in spans:
        covered.update(range(s, e))
        assert 0 <= s < e <= n and e - s <= size
    assert covered == set(range(n))
    assert spans[0][0] == 0 and spans[-1][1] == n
    for (s1, e1), (s2, _) in zip(spans, spans[1:], strict=False):
        assert s2 - s1 == size - overlap  # constant stride
        assert e1 - s2 == overlap  # neighbours share exactly `overlap` tokens (all but the cut last one)


words_text = st.lists(st.text(alphabet="abc|-.#\n ", min_size=1, max_size=6), min_size=1, max_size=80).map(" ".join)


@settings(max_examples=200, deadline=None)
@given(words_text, st.integers(1, 12), st.data())
def test_chunks_are_document_slices_and_tile_it(text, size, data):
    if not word_spans(text):
        return
    overlap = data.draw(st.integers(0, size - 1))
    chunks = chunk_document("doc", text, size, overlap)
    for c in chunks:
        assert c.text == text[c.start_char : c.end_char]
        assert c.id == f"doc#{c.index}"
    assert chunks[0].start_char == 0 and chunks[-1].end_char == len(text)
    if overlap == 0:
        assert "".join(c.text for c in chunks) == text


def q(qid, *spans):
    return SimpleNamespace(qid=qid, gold=[Span(*s) for s in spans])


def test_spans_to_qrels_hand_worked():
    text = "one two three four five six seven eight nine ten"
    # size 4, overlap 1: words [0,4) [3,7) [6,10) -> chars [0,19) [14,34) [28,48)
    chunks = chunk_document("d", text, 4, 1)
    assert [(c.start_char, c.end_char) for c in chunks] == [(0, 19), (14, 34), (28, 48)]
    qrels = spans_to_qrels(
        [
            q("whole", ("d", 8, 13, 3)),  # "three" lies inside chunk 0 only
            q("cut", ("d", 14, 29, 3)),  # "four five six s": inside chunk 1, partly in 0 and 2
            q("two-spans", ("d", 0, 3, 2), ("d", 4, 7, 3)),  # same chunk, keeps the highest grade
            q("split", ("d", 8, 40, 3)),  # no chunk holds it whole: every touched chunk gets 1
        ],
        chunks,
    )
    assert qrels["whole"] == {"d#0": 3}
    assert qrels["cut"] == {"d#0": 1, "d#1": 3, "d#2": 1}
    assert qrels["two-spans"] == {"d#0": 3}
    assert qrels["split"] == {"d#0": 1, "d#1": 1, "d#2": 1}


def test_spans_to_qrels_unknown_doc():
    with pytest.raises(ValueError, match="has no chunks"):
        spans_to_qrels([q("x", ("nope", 0, 3, 3))], chunk_document("d", "a b c", 2, 0))


def test_every_query_gets_a_judged_chunk_at_any_chunking():
    corpus, queries = load_corpus(), load_queries()
    for size, overlap in [(64, 0), (128, 32), (512, 128)]:
        qrels = spans_to_qrels(queries, chunk_corpus(corpus, size, overlap))
        assert all(qrels[x.qid] for x in queries)


def test_terms_and_jaccard():
    assert terms("VPN error ERR-4031, see it's FAQ.") == ["vpn", "error", "err-4031", "see", "it's", "faq"]
    assert jaccard("a b c", "b c d") == pytest.approx(0.5)
    assert jaccard("", "") == 0.0
    assert word_spans("ab  c") == [(0, 2), (4, 5)]
