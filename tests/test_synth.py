"""Synthetic questions: the source's toy, quotes located as spans, every drop counted, bad input named."""

from __future__ import annotations

import json

import pytest

from labkit import synth, toys
from labkit.chunking import Chunk


def test_the_source_toy_finds_the_same_look_alikes():
    assert synth.similar_chunks(toys.SYNTH_SOURCE_TARGET, toys.SYNTH_CHUNKS_VI, 2) == toys.SYNTH_SOURCE_SIMILAR


def test_similar_chunks_by_embedding_and_bad_input():
    vectors = {"a": [1.0, 0.0], "b": [0.6, 0.8], "c": [0.0, 1.0], "d": [0.8, 0.6]}
    chunks = dict.fromkeys(vectors, "text")
    assert synth.similar_chunks("a", chunks, 2, by="embedding", vectors=vectors) == ["d", "b"]
    with pytest.raises(ValueError, match="target 'zz' is not a chunk id"):
        synth.similar_chunks("zz", chunks)
    with pytest.raises(ValueError, match="n must be <= 3"):
        synth.similar_chunks("a", chunks, 4)
    with pytest.raises(ValueError, match='by must be "jaccard" or "embedding"'):
        synth.similar_chunks("a", chunks, by="bm25")
    with pytest.raises(ValueError, match="needs vectors"):
        synth.similar_chunks("a", chunks, by="embedding")


def test_locate_quote_exact_then_normalised_never_guessed():
    doc = "Intro.\nThe lodging cap is **USD 230**  per\nnight in Singapore. “Quoted” text."
    assert synth.locate_quote("USD 230", doc) == (doc.index("USD 230"), doc.index("USD 230") + 7)
    start, end = synth.locate_quote("the lodging cap is USD 230 per night in Singapore.", doc)
    assert doc[start:end] == "The lodging cap is **USD 230**  per\nnight in Singapore"
    s2, e2 = synth.locate_quote('"quoted" text', doc)
    assert doc[s2:e2] == "“Quoted” text"
    assert synth.locate_quote("USD 320 per night", doc) is None


DOC = "Badges cost 200,000 VND to replace, deducted from the salary. Other text follows here."
CHUNK = Chunk("d#0", "d", 0, 0, 60, DOC[:60], 10)


def reply(**kw):
    base = {
        "question": "How much is a new badge?",
        "answer": "200,000 VND",
        "quote": "Badges cost 200,000 VND to replace",
    }
    return json.dumps({**base, **kw})


def test_generate_qa_keeps_good_rows_and_counts_every_drop():
    row = synth.generate_qa(CHUNK, DOC, lambda p, schema=None, max_tokens=None: reply())
    assert (row["doc"], row["start"], row["end"]) == ("d", 0, 34) and DOC[row["start"] : row["end"]].startswith(
        "Badges"
    )
    cases = {
        "not json at all": "malformed reply",
        reply(quote="Badges cost 300,000 VND to replace"): "quote not found",
        reply(quote="Other text follows here."): "outside the target chunk",
        reply(quote="Badges"): "quote shorter than 4 words",
        reply(question=""): "empty question",
    }
    for bad, reason in cases.items():
        dropped = synth.generate_qa(CHUNK, DOC, lambda p, schema=None, max_tokens=None, r=bad: r)
        assert isinstance(dropped, synth.Dropped) and reason in dropped.reason, (bad, dropped)


def test_an_empty_chunk_is_refused():
    doc = "Some text.   \n  "
    empty = Chunk("d#1", "d", 1, 10, 16, doc[10:16], 0)
    with pytest.raises(ValueError, match="chunk 'd#1' is empty"):
        synth.generate_qa(empty, doc, lambda p, **k: reply())


def test_realism_prompt_rating_and_filter():
    shots = [{"question": "wfh fridays ok?", "rating": 5}, {"question": "According to the document, X?", "rating": 2}]
    p = synth.realism_prompt("can i expense a taxi", shots)
    assert "QUESTION: wfh fridays ok?\nRATING: 5" in p and p.endswith("QUESTION: can i expense a taxi")
    replies = iter(['{"rating": 4}', '{"rating": 9}', "four"])
    ratings = synth.rate_realism(["a", "b", "c"], lambda prompt, **k: next(replies), shots)
    assert ratings == [4, None, None]  # out of range and unreadable replies are None, counted by the caller
    rows = [{"q": 1, "realism": 4}, {"q": 2, "realism": 2}, {"q": 3, "realism": None}]
    kept, dropped = synth.filter_realistic(rows, 3)
    assert [r["q"] for r in kept] == [1] and [r["q"] for r in dropped] == [2, 3]
    for bad in (0, 6, float("nan")):
        with pytest.raises(ValueError, match="threshold must be"):
            synth.filter_realistic(rows, bad)
    with pytest.raises(ValueError, match=r"examples\[0\]\['rating'\] must be <= 5"):
        synth.realism_prompt("q", [{"question": "x", "rating": 7}])
