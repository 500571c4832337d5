"""A corpus embedded one text at a time, on every core: :func:`encode_each` behind ``MiniLM.encode_each``.

Each text runs alone (a batch of one, unpadded), so its vector depends on that text only, whatever folder it is in
(:mod:`.vector_files` stores a folder's vectors per file by content). One onnxruntime session with two intra-op
threads spends much of a short text's run waiting on its own threads; one single-threaded session per core, each
taking every n-th text, keeps both cores busy: measured on 2 cores, 400 handbook chunks, 34.8 texts/s with one
session, 47.5 with two single-threaded ones, the vectors bit-identical (bench/folder_bench.py prints the folder
figures).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

__all__ = ["encode_each", "workers"]

MAX_WORKERS = 4


def workers() -> int:
    """How many single-threaded sessions: the cores this process may use, at most :data:`MAX_WORKERS`."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(MAX_WORKERS, cores))


@lru_cache(maxsize=2)
def _sessions(model_path: str, n: int) -> tuple:
    import onnxruntime as ort

    def one():
        options = ort.SessionOptions()
        options.log_severity_level = 3
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        return ort.InferenceSession(model_path, options, providers=["CPUExecutionProvider"])

    return tuple(one() for _ in range(n))


def encode_each(model: Any, texts: Sequence[str], bar: Any = None) -> Any:
    """Unit-length vectors of ``texts`` (already checked), each run alone, in order; ``model`` is the
    ``MiniLM`` (its tokenizer, model file and pooling), ``bar`` an optional progress bar to advance."""
    from concurrent.futures import ThreadPoolExecutor

    import numpy as np

    sessions = _sessions(str(model.model_path), workers())
    out = np.zeros((len(texts), model.dim), dtype=np.float32)
    lock = threading.Lock()

    def part(k: int) -> None:
        for i in range(k, len(texts), len(sessions)):
            e = model.tokenizer.encode(texts[i])  # one text: padded to its own length, i.e. not at all
            ids, mask, types = (np.array([x], dtype=np.int64) for x in (e.ids, e.attention_mask, e.type_ids))
            out[i] = model._run(ids, mask, types, session=sessions[k])
            if bar is not None:
                with lock:
                    bar.update()

    with ThreadPoolExecutor(len(sessions)) as pool:
        list(pool.map(part, range(len(sessions))))  # list(): a worker's error is raised here
    return out
