"""Exercises of chapter 05 the chunk grid: expected values from the toys or the chapter's own objects."""

from __future__ import annotations

from labkit import toys
from labkit.exercises._base import Exercise


def _toy_split_rate(size: int, overlap: int) -> float:
    from labkit.chunking import split_stats

    return split_stats(toys.SPLIT_GOLD, size, overlap).split_rate


def _n_chunks(doc_id: str, size: int, overlap: int) -> int:
    from labkit.chunking import chunk_document
    from labkit.data import load_corpus

    doc = load_corpus()[doc_id]
    return len(chunk_document(doc.id, doc.text, size, overlap))


EXERCISES: dict[str, Exercise] = {
    "5.1": Exercise(
        "split rate of the toy gold set at size 256, overlap 64",
        lambda: _toy_split_rate(256, 64),
        "count the answers that no window of 256 tokens (stride 192) holds whole, out of 8",
    ),
    "5.2": Exercise(
        "chunks of hr-remote-work-2025 at size 64, overlap 0",
        lambda: _n_chunks("hr-remote-work-2025", 64, 0),
        "chunk_document(doc.id, doc.text, 64, 0) and count; every 64 words start a new chunk",
        tol=0,
    ),
    "5.3": Exercise(
        "the (size, overlap) with the best dev evidence recall for BM25 at the equal reading budget",
        lambda table: tuple(int(x) for x in table["ER@k bm25"].idxmax()),
        "table['ER@k bm25'].idxmax() gives the (size, overlap) pair of the highest value",
        tol=0,
        objects={"table": "the dev grid at the equal reading budget (ChunkGrid.table with k=budget_k)"},
    ),
}
