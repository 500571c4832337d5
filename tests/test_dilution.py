"""labkit.retrieval.dilution: a gold span's similarity to the chunk holding it, per chunking."""

from types import SimpleNamespace

import numpy as np
import pytest

from labkit.data.corpus import Span, load_corpus, load_queries
from labkit.retrieval import dilution, embeddings
from labkit.text.chunking import chunk_corpus, chunk_document


def test_span_chunk_similarity_is_the_cosine_with_the_chunk_holding_the_span_whole():
    corpus = load_corpus()
    queries = load_queries(split="dev")[:6]
    chunkings = {64: chunk_corpus(corpus, 64, 0), 256: chunk_corpus(corpus, 256, 0)}
    table = dilution.span_chunk_similarity(queries, corpus, chunkings)
    spans = dilution.span_texts(queries, corpus)
    assert len(table) == 2 * len(spans)  # every span in every chunking: a cut span is a row too, not dropped
    row = table[table["held whole"]].iloc[0]
    q, s = spans[row["span"]]
    chunks = chunkings[row["chunking"]]
    holder = next(c for c in chunks if c.doc == s.doc and c.start_char <= s.start and s.end <= c.end_char)
    text = corpus[s.doc].text[s.start : s.end]
    model = embeddings.default_model()
    want = float(model.encode([text])[0] @ model.encode([holder.text])[0])
    assert row["span · chunk"] == pytest.approx(want, abs=2e-3)  # cached vectors: another CPU's last digits
    cut = table[~table["held whole"]]
    assert cut["span · chunk"].isna().all() and cut["query · chunk"].isna().all()
    assert table.groupby("span")["query · span"].nunique().eq(1).all()


def test_span_texts_and_bad_input():
    corpus = {"d": SimpleNamespace(text="one two three four five six seven eight")}
    q = SimpleNamespace(qid="q", slice="easy", gold=[Span("d", 0, 3, 1), Span("d", 4, 13, 3)])
    assert list(dilution.span_texts([q], corpus)) == ["q:1"]  # grade 1 is left out; ids count every span
    with pytest.raises(ValueError, match="corpus lacks"):
        dilution.span_texts([SimpleNamespace(qid="x", gold=[Span("e", 0, 3, 3)])], corpus)
    with pytest.raises(ValueError, match="no gold span has grade >= 3"):
        dilution.span_texts([SimpleNamespace(qid="x", gold=[Span("d", 0, 3, 1)])], corpus, min_grade=3)
    with pytest.raises(ValueError, match="chunkings is empty"):
        dilution.span_chunk_similarity([q], corpus, {})
    with pytest.raises(ValueError, match=r"chunkings\[4\] is empty"):
        dilution.span_chunk_similarity([q], corpus, {4: []})
    assert chunk_document("d", corpus["d"].text, 4, 0)  # the toy corpus chunks


def test_the_dev_spans_vectors_are_committed():
    corpus = load_corpus()
    spans = dilution.span_texts(load_queries(split="dev"), corpus)
    texts = [corpus[s.doc].text[s.start : s.end] for _, s in spans.values()]
    path = embeddings.committed_dir() / embeddings.cache_name(list(spans), texts)
    assert path.is_file(), "run tools/embed_spans.py"
    stored = np.load(path, allow_pickle=False)
    assert stored.shape == (len(spans), embeddings.DIM)
    live = embeddings.default_model().encode(texts[:3])
    assert np.abs(stored[:3] - live).max() < 1e-2
