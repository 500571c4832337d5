"""A corpus in no cache is embedded document by document and stored by content: a re-run after editing one file
embeds that file's chunks only, and each text is embedded alone, so its vector is the same whatever folder (and
whichever batch-mates) it comes with."""

from __future__ import annotations

import numpy as np
import pytest

from labkit.data import folder
from labkit.retrieval import embeddings
from labkit.text.chunking import chunk_corpus


@pytest.fixture(autouse=True)
def fresh(tmp_path, monkeypatch):
    monkeypatch.setattr(embeddings, "_MEMORY", {})
    monkeypatch.setenv("LABKIT_CACHE", str(tmp_path / "cache"))


class CountingEach:
    """The real model, counting the texts it is asked to embed (``encode_each``, as cached_embeddings calls it)."""

    def __init__(self):
        self.model = embeddings.default_model()
        self.texts: list[str] = []

    def encode_each(self, texts, progress=False):
        self.texts += list(texts)
        return self.model.encode_each(texts, progress=progress)


WORDS = ("the retriever ranks every chunk of the folder by its cosine to the question, and the reader then reads "
         "the top three of them before it answers").split()  # fmt: skip


def _write(root, names_and_sizes):
    for name, n in names_and_sizes.items():
        body = " ".join(f"{WORDS[i % len(WORDS)]}{i // len(WORDS)}" for i in range(n))
        (root / name).write_text(f"# {name}\n\n{body}\n", encoding="utf-8")


def _chunks(root):
    chunks = chunk_corpus(folder.load_folder(root).corpus, 40, 10)
    return [c.id for c in chunks], [c.text for c in chunks]


def test_editing_one_file_re_embeds_that_file_only(tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    _write(root, {"a.md": 90, "b b.md": 70, "c.md": 50})
    ids, texts = _chunks(root)
    model = CountingEach()
    cold = embeddings.cached_embeddings(ids, texts, model)
    assert model.texts == texts  # a cold run embeds every chunk once
    model.texts.clear()
    assert np.array_equal(embeddings.cached_embeddings(ids, texts, model), cold) and model.texts == []
    (root / "b b.md").write_text("# b b.md\n\nan edited page about leave and the retriever\n", encoding="utf-8")
    ids2, texts2 = _chunks(root)
    again = embeddings.cached_embeddings(ids2, texts2, model)
    edited = [t for i, t in zip(ids2, texts2, strict=True) if i.startswith("b b.md#")]
    assert model.texts == edited and len(edited) == 1  # only the edited file's chunk was embedded
    for i, chunk_id in enumerate(ids2):  # the other files' vectors are the ones the cold run stored
        if not chunk_id.startswith("b b.md#"):
            assert np.array_equal(again[i], cold[ids.index(chunk_id)])


def test_a_file_keeps_its_vectors_whatever_folder_it_is_in(tmp_path):
    """The reproducibility rule: each text is embedded alone, so its vector never depends on the other files."""
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    _write(one, {"shared.md": 80, "x.md": 200})
    _write(two, {"shared.md": 80, "y.md": 15, "z.md": 120})
    ids1, texts1 = _chunks(one)
    v1 = embeddings.cached_embeddings(ids1, texts1, CountingEach())
    (tmp_path / "cache").rename(tmp_path / "other-cache")  # a fresh cache: the second folder embeds everything
    model = CountingEach()
    ids2, texts2 = _chunks(two)
    v2 = embeddings.cached_embeddings(ids2, texts2, model)
    assert len(model.texts) == len(texts2)
    shared = [i for i in ids2 if i.startswith("shared.md#")]
    assert shared
    for chunk_id in shared:
        assert np.array_equal(v1[ids1.index(chunk_id)], v2[ids2.index(chunk_id)])


def test_encode_each_gives_a_text_the_vector_it_has_alone():
    model = embeddings.default_model()
    texts = ["vpn certificate expired", "a much longer text about parental leave, remote work and the office", "x y"]
    together = model.encode_each(texts)
    for i, t in enumerate(texts):
        assert np.array_equal(model.encode_each([t])[0], together[i])
    assert np.allclose(np.linalg.norm(together, axis=1), 1, atol=1e-6)
    # the same model as encode: batched with padding, a vector may differ in its last digits, no more
    assert (together * model.encode(texts)).sum(axis=1).min() > 0.9999


def test_encode_each_shows_progress_for_a_corpus(monkeypatch, capsys):
    monkeypatch.setattr(embeddings, "PROGRESS_FROM", 3)
    embeddings.default_model().encode_each(["one text", "two texts"], progress=True)
    assert "embedding" not in capsys.readouterr().err
    embeddings.default_model().encode_each(["one text", "two texts", "three texts"], progress=True)
    assert "embedding 3 texts" in capsys.readouterr().err


@pytest.mark.parametrize(
    "texts, message",
    [("one string", "wrap a single text"), (["ok", "  "], r"texts\[1\] is empty"), (["ok", 3], r"texts\[1\] must be")],
)
def test_encode_each_refuses_bad_input(texts, message):
    with pytest.raises(ValueError, match=message):
        embeddings.default_model().encode_each(texts)


def test_content_name_hashes_texts_not_ids():
    assert embeddings.content_name(["a", "b"]) == embeddings.content_name(["a", "b"])
    assert embeddings.content_name(["a", "b"]) != embeddings.content_name(["b", "a"])
    assert embeddings.content_name(["a", "b"]).startswith(embeddings.MODEL_ID + "-each-")


def test_encode_each_spreads_texts_over_one_session_per_core_and_keeps_their_order(monkeypatch):
    from labkit.retrieval import each_text

    model = embeddings.default_model()
    texts = [f"text number {i}: " + " ".join(["leave", "policy", "vpn", "badge"][: 1 + i % 4]) for i in range(9)]
    alone = np.vstack([model.encode([t]) for t in texts])  # each text in its own batch of one, the main session
    monkeypatch.setattr(each_text, "workers", lambda: 3)  # three sessions, texts dealt round-robin
    spread = model.encode_each(texts)
    np.testing.assert_allclose(spread, alone, atol=1e-6)  # the same vectors, in the same order
    assert np.array_equal(spread, model.encode_each(texts))  # and the same bits on a second run
    monkeypatch.setattr(each_text, "workers", lambda: 1)
    assert np.array_equal(spread, model.encode_each(texts))  # whatever the number of sessions
