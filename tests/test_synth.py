"""Synthetic questions: the source's toy, quotes located as spans, every drop counted, bad input named."""

from __future__ import annotations

import json

import pytest

from labkit.data import toys
from labkit.generation import synth
from labkit.text.chunking import Chunk


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


DOC2 = "Remote work is allowed two days a week. Register in HRM before 17:00 on the previous working day. End."
TARGET = Chunk("r#0", "r", 0, 0, len(DOC2), DOC2, 18)
LOOKALIKE = Chunk("l#0", "l", 0, 0, 40, "Annual leave is registered in HRM early.", 7)
TEXTS = {"r": DOC2, "l": LOOKALIKE.text}


def test_build_hard_set_keeps_distractor_spans_and_counts_drops():
    good = json.dumps(
        {"question": "wfh friday deadline?", "answer": "17:00 Thursday", "quote": "Register in HRM before 17:00"}
    )
    replies = iter([good, "{not json"])
    rows, dropped = synth.build_hard_set(
        [TARGET, TARGET], TEXTS, lambda p, **k: next(replies), distractors=lambda t: [LOOKALIKE]
    )
    assert len(rows) == 1 and len(dropped) == 1 and "malformed reply" in dropped[0].reason
    assert rows[0]["distractors"] == [{"doc": "l", "start": 0, "end": 40, "chunk": "l#0"}]
    assert DOC2[rows[0]["start"] : rows[0]["end"]] == "Register in HRM before 17:00"
    with pytest.raises(ValueError, match="returned the target itself"):
        synth.build_hard_set([TARGET], TEXTS, lambda p, **k: good, distractors=lambda t: [TARGET])
    with pytest.raises(ValueError, match="returned no chunk"):
        synth.build_hard_set([TARGET], TEXTS, lambda p, **k: good, distractors=lambda t: [])
    with pytest.raises(ValueError, match="which corpus_texts does not hold"):
        synth.build_hard_set([TARGET], {"l": "x"}, lambda p, **k: good, distractors=lambda t: [LOOKALIKE])
    with pytest.raises(ValueError, match="targets"):
        synth.build_hard_set([], TEXTS, lambda p, **k: good, distractors=lambda t: [LOOKALIKE])


def _frame():
    import pandas as pd

    rows = []
    for i in range(8):
        for ret in ("bm25", "hybrid"):
            s = "synthetic-easy" if i < 4 else "synthetic-hard"
            rows.append({"qid": f"syn-{s[10:]}-{i + 1:03d}", "set": s, "retriever": ret, "R@10": float(i % 2),
                         "RR@10": 0.5 * (i % 2), "method": None if i < 4 else ("jaccard", "embedding")[i % 2],
                         "realism": [5, 2, 4, 3, 5, 1, None, 4][i], "question": f"q{i}"})  # fmt: skip
    return pd.DataFrame(rows)


def test_filter_view_counts_and_measures_what_the_threshold_keeps():
    from labkit.studies import synth_data as sd

    v = sd.filter_view(_frame(), threshold=4, method="both", retriever="hybrid")
    assert v.counts.loc["synthetic-easy"].tolist() == [2, 2]  # ratings 5, 2, 4, 3
    assert v.counts.loc["synthetic-hard"].tolist() == [2, 2]  # 5, 1, unrated (dropped), 4
    assert list(v.table.index) == ["synthetic-easy, all", "synthetic-easy, kept", "synthetic-hard, all",
                                   "synthetic-hard, kept"]  # fmt: skip
    assert v.table.loc["synthetic-hard, kept", "n"] == 2
    assert set(v.examples["verdict"]) == {"kept", "dropped"}
    one = sd.filter_view(_frame(), threshold=1, method="jaccard")
    assert one.counts.loc["synthetic-hard"].tolist() == [1, 1]  # jaccard rows: i=4 (rated 5) and i=6 (unrated)
    for bad, msg in (({"threshold": 0}, "threshold must be"), ({"method": "bm25"}, "method must be one of"),
                     ({"retriever": "x"}, "retriever must be one of")):  # fmt: skip
        with pytest.raises(ValueError, match=msg):
            sd.filter_view(_frame(), **bad)


def test_as_queries_writes_valid_rows_with_provenance(tmp_path):
    from labkit.data.corpus import load_queries
    from labkit.studies import handbook as hb
    from labkit.studies import synth_data as sd

    h = hb.handbook()
    c = sd.targets()[0]
    doc = h.corpus[c.doc].text
    s = c.start_char + doc[c.start_char : c.end_char].index(" ") + 1
    row = {"question": "q?", "answer": "a", "quote": doc[s : s + 30], "doc": c.doc, "start": s, "end": s + 30,
           "target": c.id, "set": "hard", "method": "jaccard", "i": 4,
           "distractors": [{"doc": d.doc, "start": d.start_char, "end": d.end_char, "chunk": d.id}
                           for d in sd.distractors_for(c, "jaccard")]}  # fmt: skip
    (q,) = sd.as_queries([row])
    assert q["qid"] == "syn-hard-005" and q["slice"] == "synthetic-hard" and q["split"] == "dev"
    assert q["provenance"]["prompt_version"] == sd.PROMPT_VERSION and q["provenance"]["target"] == c.id
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps(q) + "\n", encoding="utf-8")
    (loaded,) = load_queries(path=path)
    assert (
        loaded.gold[0].start == s and len(loaded.distractors) == 2 and loaded.extra["provenance"]["method"] == "jaccard"
    )


def test_with_ratings_refuses_a_relabelled_set_column():
    from labkit.studies import synth_data as sd

    frame = _frame()
    frame.loc[frame["set"] == "synthetic-hard", "set"] = "synthetic-hard (jaccard)"
    rated = [{"set": "easy", "i": 0, "realism": 4, "question": "q"}]
    with pytest.raises(ValueError, match=r"per_query_frame\['set'\] has 'synthetic-hard \(jaccard\)'"):
        sd.with_ratings(frame, [], rated)


def test_the_committed_generated_sets_are_rebuilt_from_the_recordings_and_their_spans_are_real():
    """Byte for byte from the cassette; every gold span inside its target chunk; every distractor a real chunk of
    another document (the spans themselves are validated against the corpus by load_queries)."""
    from labkit.studies import handbook as hb
    from labkit.studies import synth_data as sd

    for kind, text in sd.render_sets().items():
        assert sd.set_path(kind).read_text(encoding="utf-8") == text, f"run python -m labkit synth write-sets ({kind})"
    chunks = {c.id: c for c in hb.handbook().chunks}
    spans = {(c.doc, c.start_char, c.end_char) for c in chunks.values()}
    queries = sd.load_sets()
    assert {q.slice for q in queries} == {"synthetic-easy", "synthetic-hard"}
    for q in queries:
        target = chunks[q.extra["provenance"]["target"]]
        (g,) = q.gold
        assert g.doc == target.doc and target.start_char <= g.start < g.end <= target.end_char, q.qid
        assert bool(q.distractors) == (q.slice == "synthetic-hard"), q.qid
        for d in q.distractors:
            assert (d.doc, d.start, d.end) in spans and d.doc != g.doc, q.qid
