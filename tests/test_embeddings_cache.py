"""Embedding caches live outside the repository: committed vectors are read-only inputs, new ones go to the user
cache (or memory), and a damaged cache file is recomputed, never a numpy pickle error."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import numpy as np
import pytest

from labkit import data_dir
from labkit.data.corpus import load_corpus, load_queries
from labkit.retrieval import embeddings
from labkit.retrieval.retrievers import DenseRetriever
from labkit.studies import pydocs
from labkit.text import structure
from labkit.text.chunking import chunk_corpus, chunk_document


class Counting:
    """A stand-in model: deterministic unit vectors of the right width, and a count of the texts it embedded."""

    def __init__(self):
        self.embedded = 0

    def encode(self, texts, progress=False):
        self.embedded += len(texts)
        rng = np.random.default_rng(len(texts))
        v = rng.normal(size=(len(texts), embeddings.DIM)).astype(np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)


@pytest.fixture(autouse=True)
def fresh_memory(monkeypatch):
    monkeypatch.setattr(embeddings, "_MEMORY", {})


def _snapshot(folder: Path) -> set[tuple]:
    """Every file and folder under ``folder`` with its size and modification time."""
    out = set()
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = Path(root) / name
            st = path.lstat()
            out.add((str(path.relative_to(folder)), st.st_size, st.st_mtime_ns))
    return out


def _set_writable(folder: Path, writable: bool) -> None:
    for root, dirs, files in os.walk(folder):
        for name in files:
            mode = stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH
            os.chmod(Path(root) / name, mode | (stat.S_IWUSR if writable else 0))
        for name in [*dirs, "."]:
            mode = stat.S_IRUSR | stat.S_IXUSR | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH
            os.chmod(Path(root) / name, mode | (stat.S_IWUSR if writable else 0))


@pytest.fixture
def read_only_data(tmp_path, monkeypatch):
    """A copy of data/, made read-only, as LABKIT_DATA; LABKIT_CACHE in a fresh folder."""
    copy = tmp_path / "data"
    shutil.copytree(data_dir(), copy, ignore=shutil.ignore_patterns("__pycache__"))
    _set_writable(copy, False)
    monkeypatch.setenv("LABKIT_DATA", str(copy))
    monkeypatch.setenv("LABKIT_CACHE", str(tmp_path / "cache"))
    try:
        yield copy
    finally:
        _set_writable(copy, True)


def test_a_new_chunking_is_embedded_into_the_user_cache_with_data_read_only(read_only_data, tmp_path):
    before = _snapshot(read_only_data)
    doc = load_corpus()["hr-remote-work-2025"]
    chunks = chunk_document(doc.id, doc.text, 40, 0)[:3]  # a chunking nobody committed
    assert not (
        embeddings.committed_dir() / embeddings.cache_name([c.id for c in chunks], [c.text for c in chunks])
    ).exists()

    dense = DenseRetriever(chunks)  # the real model, reading its tokenizer from the read-only copy
    assert dense.vectors.shape == (3, embeddings.DIM)
    assert dense.search("how many remote days a week", 1)[0][0] in {c.id for c in chunks}

    written = sorted(p.name for p in (tmp_path / "cache" / "embeddings").glob("*.npy"))
    assert written == [embeddings.cache_name(dense.ids, [c.text for c in chunks])]
    assert embeddings.cache_path(dense.ids, [c.text for c in chunks]).is_file()
    assert _snapshot(read_only_data) == before, "something was written under the data folder"


def test_committed_vectors_are_read_not_recomputed(read_only_data, tmp_path):
    chunks = chunk_corpus(load_corpus(), 128, 32)
    model = Counting()
    vectors = embeddings.cached_embeddings([c.id for c in chunks], [c.text for c in chunks], model)
    assert model.embedded == 0 and vectors.shape == (len(chunks), embeddings.DIM)
    assert not list((tmp_path / "cache").rglob("*.npy"))  # nothing copied into the user cache either


def test_without_a_writable_cache_vectors_stay_in_memory(tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder would go")
    monkeypatch.setenv("LABKIT_CACHE", str(blocker / "cache"))
    assert embeddings.cache_dir() is None and embeddings.cache_path(["a#0"], ["some text"]) is None
    model = Counting()
    first = embeddings.cached_embeddings(["a#0", "a#1"], ["first text", "second text"], model)
    second = embeddings.cached_embeddings(["a#0", "a#1"], ["first text", "second text"], model)
    assert model.embedded == 2 and np.array_equal(first, second)
    assert [p.name for p in tmp_path.iterdir()] == ["not-a-folder"]


def _damage(kind: str, path: Path) -> None:
    good = Counting().encode(["first text", "second text"])
    if kind == "truncated":
        np.save(path, good)
        path.write_bytes(path.read_bytes()[:200])
    elif kind == "wrong shape":
        np.save(path, good[:, :10])
    elif kind == "wrong dtype":
        np.save(path, good.astype(np.float64))
    elif kind == "pickle":
        np.save(path, np.array([{"not": "vectors"}], dtype=object), allow_pickle=True)
    elif kind == "not numpy":
        path.write_bytes(b"\x80\x04this is not an npy file")
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "nan":
        np.save(path, np.full_like(good, np.nan))


DAMAGE = ["truncated", "wrong shape", "wrong dtype", "pickle", "not numpy", "empty", "nan"]


@pytest.mark.parametrize("kind", DAMAGE)
def test_a_damaged_user_cache_file_is_recomputed_and_replaced(kind, tmp_path, monkeypatch):
    monkeypatch.setenv("LABKIT_CACHE", str(tmp_path))
    ids, texts = ["a#0", "a#1"], ["first text", "second text"]
    path = embeddings.cache_path(ids, texts)
    _damage(kind, path)
    model = Counting()
    vectors = embeddings.cached_embeddings(ids, texts, model)
    assert model.embedded == 2 and vectors.shape == (2, embeddings.DIM)
    assert np.array_equal(np.load(path, allow_pickle=False), vectors)  # the damaged file was replaced
    # no temporary file left behind: the corpus's file, and its one document's by content
    assert sorted(p.name for p in path.parent.iterdir()) == sorted([embeddings.BY_CONTENT, path.name])
    assert [p.name for p in (path.parent / embeddings.BY_CONTENT).iterdir()] == [embeddings.content_name(texts)]
    embeddings.cached_embeddings(ids, texts, model)
    assert model.embedded == 2


@pytest.mark.parametrize("kind", ["truncated", "pickle"])
def test_a_damaged_committed_file_is_recomputed_and_left_alone(kind, tmp_path, monkeypatch):
    data = tmp_path / "data"
    (data / "embeddings").mkdir(parents=True)
    monkeypatch.setenv("LABKIT_DATA", str(data))
    monkeypatch.setenv("LABKIT_CACHE", str(tmp_path / "cache"))
    ids, texts = ["a#0", "a#1"], ["first text", "second text"]
    committed = embeddings.committed_dir() / embeddings.cache_name(ids, texts)
    _damage(kind, committed)
    damaged = committed.read_bytes()
    model = Counting()
    vectors = embeddings.cached_embeddings(ids, texts, model)
    assert model.embedded == 2 and vectors.shape == (2, embeddings.DIM)
    assert committed.read_bytes() == damaged
    assert np.array_equal(np.load(embeddings.cache_path(ids, texts), allow_pickle=False), vectors)


def test_committed_caches_are_exactly_the_grid_chunkings():
    """Every chunking the notebooks embed (05's grid and structure-aware chunkers, 10's two) is committed (CI never
    embeds), and no stale file is."""
    corpus = load_corpus()
    expected = set()
    for size in (64, 128, 256):
        for frac in (0, 0.25, 0.5):
            chunks = chunk_corpus(corpus, size, int(size * frac))
            expected.add(embeddings.cache_name([c.id for c in chunks], [c.text for c in chunks]))
    for variant in structure.VARIANTS.values():  # 05's structure-aware chunkers
        chunks = structure.chunk_corpus(corpus, 128, 32, **variant)
        expected.add(embeddings.cache_name([c.id for c in chunks], [c.text for c in chunks]))
    for variant in ("windows", "sections + table header"):  # 10's, on the bundled Python documentation
        chunks = structure.chunk_corpus(pydocs.corpus(), 128, 32, **structure.VARIANTS[variant])
        expected.add(embeddings.cache_name([c.id for c in chunks], [c.text for c in chunks]))
    from labkit.retrieval import dilution  # 05's dilution cell: the dev split's gold spans (tools/embed_spans.py)

    spans = dilution.span_texts(load_queries(split="dev"), corpus)
    texts = [corpus[s.doc].text[s.start : s.end] for _, s in spans.values()]
    expected.add(embeddings.cache_name(list(spans), texts))
    present = {p.name for p in embeddings.committed_dir().glob("*.npy")}
    assert present == expected, f"stale: {sorted(present - expected)}; missing: {sorted(expected - present)}"


def test_a_corpus_embedded_afresh_shows_progress_a_batch_of_queries_does_not(capsys):
    from labkit.retrieval.embeddings import PROGRESS_FROM, default_model

    texts = [f"policy sentence number {i}" for i in range(PROGRESS_FROM)]
    default_model().encode(texts)
    assert "embedding" not in capsys.readouterr().err  # queries: no bar in a notebook's stored output
    default_model().encode(texts, progress=True)
    assert f"embedding {PROGRESS_FROM} texts" in capsys.readouterr().err


def test_the_chapters_queries_come_from_the_committed_table_and_other_texts_are_embedded():
    import numpy as np

    from labkit.retrieval import embeddings
    from labkit.studies import handbook as hb

    queries = [q.search_text for q in hb.handbook().queries]
    table = np.load(embeddings.committed_dir() / embeddings.QUERY_TABLE)
    listed = set(table["texts"].tolist())
    assert set(queries) <= listed, "a chapter query is missing from the table: run tools/embed_queries.py"
    got = embeddings.query_vectors([queries[0], "a text no chapter searches"])
    stored = table["vectors"][table["texts"].tolist().index(queries[0])]
    assert np.array_equal(got[0], stored)
    live = embeddings.default_model().encode(["a text no chapter searches"])[0]
    assert np.array_equal(got[1], live)


def test_chapter_10s_bundled_questions_are_in_the_table_as_the_chapters_own_call_embeds_them():
    """The FAQ's labelled questions and the 1.5B's generated ones: listed, and each group's stored vectors are the
    ones one call of the model gives it (the chapter's batch), so reading the table ranks as embedding them did."""
    import sys

    import numpy as np

    from labkit import ROOT
    from labkit.retrieval import embeddings

    sys.path.insert(0, str(ROOT / "tools"))
    import embed_queries

    table = np.load(embeddings.committed_dir() / embeddings.QUERY_TABLE)
    stored = dict(zip(table["texts"].tolist(), table["vectors"], strict=True))
    groups = embed_queries.chapter_10_groups()
    assert [len(g) for g in groups] == [80, 30]
    for group in groups:
        assert set(group) <= set(stored), "a chapter 10 question is missing: run tools/embed_queries.py"
        assert np.array_equal(np.stack([stored[t] for t in group]), embeddings.default_model().encode(group))


def test_a_query_table_rewritten_keeps_the_vectors_it_had_and_embeds_only_new_texts(tmp_path):
    path, model = tmp_path / "queries.npz", Counting()
    assert embeddings.write_query_table(["a", "b"], path, model) == 2
    before = dict(zip(*(lambda t: (t["texts"].tolist(), t["vectors"]))(np.load(path)), strict=True))
    assert embeddings.write_query_table(["b", "c", "a"], path, model) == 3
    table = np.load(path)
    assert table["texts"].tolist() == ["b", "c", "a"] and model.embedded == 3  # two, then only "c"
    assert np.array_equal(table["vectors"][0], before["b"]) and np.array_equal(table["vectors"][2], before["a"])


def test_one_typed_question_is_embedded_once_and_a_batch_is_always_embedded_afresh(monkeypatch):
    monkeypatch.setattr(embeddings, "_TYPED", {})
    monkeypatch.setattr(embeddings, "TYPED_MAX", 2)
    model = Counting()
    first = embeddings.query_vectors(["a typed question"], model)
    first[0, 0] = 99.0  # the caller's copy: what is kept stays as the model gave it
    again = embeddings.query_vectors(["a typed question"], model)
    assert model.embedded == 1 and again[0, 0] != 99.0
    embeddings.query_vectors(["a typed question", "another"], model)  # a batch: quantized with the batch
    assert model.embedded == 3
    for text in ("b", "c"):  # two more kept: the oldest is dropped, and embedded again when typed again
        embeddings.query_vectors([text], model)
    embeddings.query_vectors(["a typed question"], model)
    assert model.embedded == 6
