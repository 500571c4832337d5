"""The flat layout every metric family computes on.

A run, one ranking or a thousand, is three parallel arrays, one entry per retrieved document:
``q`` (query number ``0 .. nq - 1``), ``rank`` (1-based) and ``grade``. Each family's formula is
written once over these arrays, summed per query with ``np.bincount``; a single ranking is the
case ``nq = 1`` (:func:`one_query`), so the per-ranking functions and the batch ``evaluate`` run
the same code.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def one_query(grades: Sequence[float]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(q, rank, grade)`` of a single ranking: query 0, ranks 1..n, the grades in order."""
    n = len(grades)
    return np.zeros(n, dtype=np.int64), np.arange(1, n + 1, dtype=np.int64), np.asarray(grades, dtype=float)


def group_ranks(group: np.ndarray) -> np.ndarray:
    """1-based position of each row inside its run of equal, sorted ``group`` codes."""
    n = len(group)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
    lengths = np.diff(np.r_[starts, n])
    return np.arange(n) - np.repeat(starts, lengths) + 1


def per_query(q: np.ndarray, values: np.ndarray, nq: int) -> np.ndarray:
    """Sum of ``values`` per query (0 for a query with no row), in row order."""
    return np.bincount(q, weights=values, minlength=nq)
