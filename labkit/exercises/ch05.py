"""Exercises of chapter 05 the chunk grid: expected values from the toys or the chapter's own objects."""

from __future__ import annotations

from labkit.data import toys
from labkit.data.corpus import load_corpus
from labkit.exercises._base import Exercise
from labkit.text.chunking import chunk_document, split_stats


def _toy_split_rate(size: int, overlap: int) -> float:

    return split_stats(toys.SPLIT_GOLD, size, overlap).split_rate


def _n_chunks(doc_id: str, size: int, overlap: int) -> int:

    doc = load_corpus()[doc_id]
    return len(chunk_document(doc.id, doc.text, size, overlap))


def _row_with_header(size: int, overlap: int = 0) -> bool:
    """Whether the chunk holding the Tokyo row of the travel per-diem table also holds the table's header row."""

    doc = load_corpus()["fin-travel-policy-2025"]
    start = doc.text.index("| Tokyo")
    chunk = next(c for c in chunk_document(doc.id, doc.text, size, overlap) if c.start_char <= start < c.end_char)
    return "| City | Lodging cap" in chunk.text


def _same_winner(table, double) -> bool:
    """Whether the best (size, overlap) for dense evidence recall is the same at both reading budgets."""
    return tuple(int(x) for x in table["ER@k dense"].idxmax()) == tuple(int(x) for x in double["ER@k dense"].idxmax())


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
    "5.4": Exercise(
        "predict: at size 160, no overlap, is the per-diem header row in the Tokyo row's chunk (True/False)?",
        lambda: _row_with_header(160),
        "a bigger chunk does not promise the header: where the boundary falls decides, and a boundary can land "
        "between the header and the row at any size",
    ),
    "5.5": Exercise(
        "predict: at double the reading budget, does the same (size, overlap) win dense evidence recall (True/False)?",
        _same_winner,
        "compare table['ER@k dense'].idxmax() with double['ER@k dense'].idxmax(); the top few configurations are "
        "within a couple of points of each other",
        objects={
            "table": "the dev grid at the equal reading budget (ChunkGrid.table with k=budget_k)",
            "double": "the same grid at double the budget (k=double_k)",
        },
    ),
}
