"""labkit.generation.positions: the harness's controls behave as designed (flat and cliff), bad input is refused."""

import pytest

from labkit.data.corpus import load_corpus, load_queries
from labkit.generation.positions import (
    LexicalReader,
    TruncatingReader,
    build_contexts,
    position_accuracy,
    visible_passages,
)
from labkit.retrieval.retrievers import BM25Retriever, make_run
from labkit.text.chunking import chunk_corpus, spans_to_qrels


@pytest.fixture(scope="module")
def setting():
    corpus, queries = load_corpus(), load_queries(split="dev")
    chunks = chunk_corpus(corpus, 128, 32)
    qrels = spans_to_qrels(queries, chunks)
    run = make_run(BM25Retriever(chunks), queries, 60)
    contexts = build_contexts(queries, chunks, qrels, run, n_docs=10)
    return contexts, {d: doc.text for d, doc in corpus.items()}


def test_contexts_hold_gold_and_distractors_without_evidence(setting):
    contexts, texts = setting
    assert len(contexts) > 100
    for ctx in contexts:
        assert len(ctx["distractors"]) == 9
        spans = [texts[s.doc][s.start : s.end] for s in ctx["evidence"]]
        assert any(s in ctx["gold"] for s in spans)
        assert not any(s in d for s in spans for d in ctx["distractors"])


def test_position_blind_reader_gives_a_flat_curve(setting):
    contexts, texts = setting
    acc = position_accuracy(contexts, LexicalReader(), [1, 4, 7, 10], texts)
    assert len(set(acc.values())) == 1 and 0 < acc[1] < 1


def test_truncating_reader_cannot_answer_past_its_window(setting):
    contexts, texts = setting
    acc = position_accuracy(contexts, TruncatingReader(window_words=500), [1, 10], texts)
    assert acc[1] > 0 and acc[10] == 0.0


def test_a_reader_that_always_takes_the_first_passage_is_right_only_at_position_1(setting):
    contexts, texts = setting
    acc = position_accuracy(contexts, lambda question, passages: passages[0], [1, 2, 10], texts)
    assert acc == {1: 1.0, 2: 0.0, 10: 0.0}


def test_visible_passages_keep_the_whole_passages_that_fit_in_order():
    passages = ["a b c", "d e", "f g h i", "j"]
    assert visible_passages(passages, 5) == ["a b c", "d e"]  # 3 + 2 words; the next would make 9
    assert visible_passages(passages, 10) == passages
    assert visible_passages(passages, 2) == []  # the first passage alone is longer than the window
    assert visible_passages([], 5) == []


def test_the_truncating_reader_answers_like_the_full_reader_on_the_visible_passages(setting):
    contexts, _ = setting
    full, cut = LexicalReader(), TruncatingReader(window_words=500)
    for ctx in contexts[:40]:
        passages = [ctx["gold"], *ctx["distractors"]]
        assert cut(ctx["question"], passages) == full(ctx["question"], visible_passages(passages, 500))


def test_bad_input(setting):
    contexts, texts = setting
    with pytest.raises(ValueError, match="must be a whole number from 1 to 10"):
        position_accuracy(contexts, LexicalReader(), [11], texts)
    with pytest.raises(ValueError, match="contexts is empty"):
        position_accuracy([], LexicalReader(), [1], texts)
    with pytest.raises(ValueError, match="window_words must be"):
        TruncatingReader(0)
    with pytest.raises(ValueError, match="passages is empty"):
        LexicalReader()("q", [])
    with pytest.raises(ValueError, match="window_words must be"):
        visible_passages(["a b"], 0)
    with pytest.raises(ValueError, match=r"passages\[1\] must be a string"):
        visible_passages(["a b", 3], 10)
