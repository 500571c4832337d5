"""Files of vectors in the user cache: read safely, written atomically, and stored per document by content.

Used by :mod:`labkit.retrieval.embeddings` (taught in ``01_rrf_hybrid_retrieval``; ``10_your_own_documents`` and
``python -m labkit report`` embed a user's folder through it).

A corpus no cache holds whole is embedded file by file (``_by_content``): its chunks are grouped by document
(the chunk id up to its last ``#``), and each document's vectors are kept in the user cache, in :data:`BY_CONTENT`,
under a hash of its chunks' texts. A user who edits one file of a folder and runs the report again re-embeds that
file's chunks only. What makes the stored vectors safe to reuse: such a corpus is embedded with the model's
``encode_each``, each text alone (a batch of one, no padding), so a text's vector depends on that text and nothing
else: not on the other files of the folder, not on which of them changed, not on the order they were embedded in.
The int8 model's activations are quantised per input tensor, so in a batch a vector may depend on its batch-mates;
alone, it cannot. Alone, a text is also never padded, and only one text's activations are held in memory instead of
a batch's (``bench/folder_bench.py`` measures both ways). A model without ``encode_each`` is called once per
document, so a document's vectors still never depend on another document.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

__all__ = ["BY_CONTENT"]  # the functions are labkit.retrieval.embeddings' helpers, called with checked arguments

BY_CONTENT = "by-content"
"""The sub-folder of the embedding cache holding one file of vectors per document's chunk texts."""


def _load(path: Path, n: int, dim: int) -> np.ndarray | None:
    """The vectors in ``path``, or ``None`` when it is missing or not an ``(n, dim)`` float32 array of finite values."""
    import numpy as np

    if not path.is_file():
        return None
    try:
        vectors = np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError):  # truncated, not an .npy file, or a pickle we refuse to run
        return None
    if not isinstance(vectors, np.ndarray):  # an .npz archive
        vectors.close()
        return None
    if vectors.dtype != np.float32 or vectors.shape != (n, dim) or not np.isfinite(vectors).all():
        return None
    return vectors


def _save(folder: Path, name: str, vectors: np.ndarray) -> bool:
    """Write atomically (a reader never sees half a file); ``False`` when the folder cannot take it."""
    import numpy as np

    tmp = None
    try:
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".", suffix=".tmp.npy", delete=False) as f:
            tmp = Path(f.name)
            np.save(f, vectors, allow_pickle=False)
        os.replace(tmp, folder / name)
        return True
    except BaseException as e:  # nothing half-written is left behind, whatever stopped the write
        if tmp is not None:
            tmp.unlink(missing_ok=True)
        if isinstance(e, OSError):
            return False
        raise


def _content_name(texts: Sequence[str], salt: str, prefix: str) -> str:
    """``<prefix>-each-<hash>.npy``: a hash of ``salt`` (the model) and ``texts`` in order."""
    h = hashlib.sha256(f"{salt}\0each".encode())
    for t in texts:
        h.update(f"\0{t}".encode())
    return f"{prefix}-each-{h.hexdigest()[:24]}.npy"


def _by_content(
    ids: list[str], texts: list[str], model: Any, folder: Path | None, name_of: Callable[[list[str]], str], dim: int
) -> np.ndarray:
    """The vectors of ``texts`` (chunk ``ids``): per document from ``folder/by-content`` (file ``name_of(its texts)``)
    when there, the rest embedded by ``model`` and stored there (``folder`` ``None``: nothing stored)."""
    import numpy as np

    groups: dict[str, list[int]] = {}
    for i, chunk_id in enumerate(ids):
        groups.setdefault(chunk_id.rsplit("#", 1)[0], []).append(i)
    store = None
    if folder is not None:
        store = folder / BY_CONTENT
        try:
            store.mkdir(exist_ok=True)
        except OSError:
            store = None
    found: list[tuple[list[int], np.ndarray]] = []
    missing: list[tuple[str, list[int]]] = []
    for rows in groups.values():
        file = name_of([texts[i] for i in rows])
        vectors = None if store is None else _load(store / file, len(rows), dim)
        if vectors is None:
            missing.append((file, rows))
        else:
            found.append((rows, vectors))
    new: list[tuple[list[int], np.ndarray]] = []
    each = getattr(model, "encode_each", None)
    if missing and each is not None:  # one call, one progress bar; each vector independent of the others
        rows = [i for _, r in missing for i in r]
        vectors = each([texts[i] for i in rows], progress=True)
        start = 0
        for _, r in missing:
            new.append((r, vectors[start : start + len(r)]))
            start += len(r)
    elif missing:  # another model: one call per document, so a document's vectors never depend on another's
        new = [(r, np.asarray(model.encode([texts[i] for i in r]), dtype=np.float32)) for _, r in missing]
    width = new[0][1].shape[1] if new else dim  # a stand-in model may give another width
    out = np.zeros((len(texts), width), dtype=np.float32)
    for rows, vectors in found + new:
        out[rows] = vectors
    if store is not None:
        for (file, _), (_, vectors) in zip(missing, new, strict=True):
            if not _save(store, file, np.ascontiguousarray(vectors, dtype=np.float32)):
                break
    return out
