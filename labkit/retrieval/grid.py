"""Chunking as a variable to tune: re-index the corpus for each (size, overlap) and measure.

Taught in ``05_chunk_grid``.

For every configuration the corpus is chunked again, the retriever is rebuilt on those chunks, and the gold labels
are *remapped* from the queries' character spans (:func:`labkit.text.chunking.spans_to_qrels`), so no query is ever
relabelled by a rater. Next to Recall@k and nDCG@k per slice, each configuration reports what it costs: chunks,
words indexed relative to the corpus (overlap indexes some words twice), words the reader must read for ``k``
chunks, and the split rate on the real gold spans. :meth:`ChunkGrid.per_query` keeps the values per query, for
bootstrap intervals per slice and paired comparisons of two chunkings; :meth:`ChunkGrid.by_slice` lays one of them
out as a size x overlap grid per slice; :func:`budget_k` picks k per size for an equal reading budget.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any

from labkit.core import args
from labkit.measures import metrics
from labkit.measures.fusion import fuse_runs
from labkit.retrieval.embeddings import query_vectors
from labkit.retrieval.retrievers import BM25Retriever, DenseRetriever, make_run
from labkit.text.chunking import Chunk, check_size_overlap, chunk_corpus, chunks_by_doc, spans_to_qrels

__all__ = ["ChunkGrid", "budget_k", "gold_split_rate", "evidence_recall"]

DEPTH = 100
"""How many chunks the grid retrieves per query and chunking; ``k`` can be at most this."""
MEASURED = (metrics.metric("R@k"), metrics.metric("nDCG@k"))
"""The registered metrics the grid reports for every chunking, beside evidence recall (ER@k, EC@k)."""


def budget_k(size: int, budget: int) -> int:
    """Chunks of ``size`` words read for a budget of ``budget`` words: ``max(1, budget // size)``, so that every size
    reads about the same words (05: ``budget_k(size, 1280)`` is 20, 10, 5 for 64, 128, 256), not one shared k."""
    size = args.whole_number("size", size, hint="a chunk size in words, e.g. 128")
    return max(1, args.whole_number("budget", budget, hint="a reading budget in words, e.g. 1280") // size)


def gold_split_rate(queries: Iterable[Any], chunks: Sequence[Chunk], min_grade: int = 3) -> float:
    """Share of gold spans (grade >= ``min_grade``) that no single chunk holds whole.

    ``chunks`` must chunk every document that holds a gold span (a span in a document with no chunk is
    an error, not a "split").
    """
    min_grade = args.whole_number("min_grade", min_grade, minimum=1, maximum=3)
    queries = args.queries("queries", queries, example="labkit.data.corpus.load_queries()", gold=True)
    by_doc = chunks_by_doc(chunks)
    spans = [s for q in queries for s in q.gold if s.grade >= min_grade]
    if not spans:
        raise ValueError(f"no gold span has grade >= {min_grade}")
    for s in spans:
        if s.doc not in by_doc:
            raise ValueError(f"a gold span is in doc {s.doc!r}, which has no chunks: chunk the whole corpus")
    split = sum(not any(c.start_char <= s.start and s.end <= c.end_char for c in by_doc.get(s.doc, ())) for s in spans)
    return split / len(spans)


HELD = ("whole", "union")


def _covered(start: int, end: int, pieces: Sequence[tuple[int, int]]) -> bool:
    """Is every character of ``[start, end)`` inside one of the ``pieces`` (character ranges)?"""
    reach = start
    for a, b in sorted(pieces):
        if a > reach:
            break
        reach = max(reach, b)
        if reach >= end:
            return True
    return reach >= end


def evidence_recall(
    run: Mapping[str, Sequence[str]],
    queries: Iterable[Any],
    chunks: Sequence[Chunk],
    k: int,
    min_grade: int = 2,
    held: str = "whole",
) -> dict[str, float]:
    """Per query: the share of its gold spans (grade >= ``min_grade``) that the top ``k`` chunks hold.

    ``held="whole"`` (evidence recall, ER@k): one retrieved chunk holds the span whole. ``held="union"``
    (evidence coverage, EC@k): every character of the span is in *some* retrieved chunk, so a span cut in two
    counts when both pieces were retrieved. Whole containment is stricter and penalises small chunks (they
    split more spans); union coverage credits a reader with pieces it must put back together. Report both when
    chunk sizes are compared.

    Unlike chunk-level Recall@k, both are comparable across chunkings: the unit is the evidence, not the chunk.
    With overlap, one span can sit whole in two chunks, which doubles the relevant chunks in R@k's
    denominator; with big chunks, ten chunks cover far more text. Evidence recall counts neither.

    Every query with such spans needs a ranking in ``run`` (possibly empty): a query missing from the run
    is an error, not a 0. Queries without such spans are left out of the result.
    """
    k = args.whole_number("k", k)
    min_grade = args.whole_number("min_grade", min_grade, minimum=1, maximum=3)
    if held not in HELD:
        raise ValueError(f"held must be one of {HELD} ('whole': one chunk holds the span), got {held!r}")
    run = args.by_id("run", run, example="make_run(retriever, queries, 10)")
    queries = args.queries("queries", queries, example="labkit.data.corpus.load_queries()", gold=True)
    by_id = {c.id: c for doc_chunks in chunks_by_doc(chunks).values() for c in doc_chunks}
    out = {}
    for q in queries:
        spans = [s for s in q.gold if s.grade >= min_grade]
        if not spans:
            continue
        ranked = args.top_k(run, q.qid, k)
        unknown = [d for d in ranked if d not in by_id]
        if unknown:
            raise ValueError(f"run[{q.qid!r}] ranks chunk {unknown[0]!r}, which is not in chunks: same chunking?")
        top = [by_id[d] for d in ranked]
        if held == "whole":
            found = [
                any(c.doc == s.doc and c.start_char <= s.start and s.end <= c.end_char for c in top) for s in spans
            ]
        else:
            found = [
                _covered(s.start, s.end, [(c.start_char, c.end_char) for c in top if c.doc == s.doc]) for s in spans
            ]
        out[q.qid] = sum(found) / len(spans)
    return out


def _first_found(run: Mapping[str, Sequence[str]], queries: Sequence[Any], chunks: Sequence[Chunk], held: str,
                 min_grade: int = 2) -> dict[str, list[int | None]]:  # fmt: skip
    """Per query with gold spans of grade >= ``min_grade``: for each span, the first rank k at which the top k of
    ``run`` hold it (``held`` as :func:`evidence_recall`), or None. Then ER@k (or EC@k) of a query is the share of
    its spans found by k, for every k at once. ``run`` ``queries`` and ``chunks`` are trusted (a ChunkGrid's)."""
    by_id = {c.id: c for c in chunks}
    out = {}
    for q in queries:
        spans = [s for s in q.gold if s.grade >= min_grade]
        if not spans:
            continue
        top = [by_id[d] for d in run[q.qid]]
        firsts: list[int | None] = []
        for s in spans:
            if s.start >= s.end:
                raise ValueError(f"query {q.qid!r} has an empty gold span {s!r:.80}: a span needs start < end")
            first = None
            for rank, c in enumerate(top, 1):
                if c.doc != s.doc or c.end_char <= s.start or c.start_char >= s.end:
                    continue  # a chunk that does not touch the span changes neither test
                if held == "whole":
                    found = c.start_char <= s.start and s.end <= c.end_char
                else:
                    found = _covered(s.start, s.end, [(t.start_char, t.end_char) for t in top[:rank] if t.doc == s.doc])
                if found:
                    first = rank
                    break
            firsts.append(first)
        out[q.qid] = firsts
    return out


class ChunkGrid:
    """Evaluate retrievers on the same queries under many chunkings; each chunking is built once.

    ``retrievers``: names among ``"bm25"``, ``"dense"``, ``"hybrid"`` (RRF of the two).
    Query embeddings are computed once and reused for every chunking. ``chunker(corpus, size, overlap)`` makes
    the chunks (default :func:`labkit.text.chunking.chunk_corpus`, word windows; 05 also passes the structure-aware
    chunkers of :mod:`labkit.text.structure`).
    """

    def __init__(
        self,
        corpus: Mapping[str, Any],
        queries: Sequence[Any],
        retrievers: Sequence[str] = ("bm25", "dense"),
        chunker: Any = None,
    ):
        retrievers = args.strings("retrievers", retrievers, example='("bm25", "dense")')
        unknown = set(retrievers) - {"bm25", "dense", "hybrid"}
        if unknown:
            raise ValueError(f"unknown retriever(s) {sorted(unknown)}: use 'bm25', 'dense' or 'hybrid'")
        if not retrievers:
            raise ValueError('retrievers is empty: give e.g. ("bm25", "dense")')
        retrievers = list(dict.fromkeys(retrievers))
        queries = args.queries("queries", queries, example="labkit.data.corpus.load_queries()", gold=True)
        if not queries:
            raise ValueError("queries is empty: load them with labkit.data.corpus.load_queries()")
        qids = [q.qid for q in queries]
        if len(set(qids)) != len(qids):
            dup = next(q for q in qids if qids.count(q) > 1)
            raise ValueError(f"queries holds qid {dup!r} twice: each query may appear once")
        args.mapping("corpus", corpus, example="load_corpus()")
        if not corpus:
            raise ValueError("corpus is empty: load it with labkit.data.corpus.load_corpus()")
        if chunker is not None and not callable(chunker):
            raise ValueError(
                "chunker must be a function (corpus, size, overlap) -> chunks, e.g. "
                f"functools.partial(labkit.text.structure.chunk_corpus, table_header=True), got {chunker!r:.60}"
            )
        self.chunker = chunker or chunk_corpus
        self.corpus, self.queries, self.retrievers = corpus, list(queries), tuple(retrievers)
        self.groups = {q.qid: q.slice for q in self.queries}
        self._qvecs = None
        self._built = lru_cache(maxsize=16)(self._build)
        self._firsts = lru_cache(maxsize=96)(self._first_found)

    def _query_vectors(self):
        if self._qvecs is None:
            self._qvecs = query_vectors([q.search_text for q in self.queries])
        return self._qvecs

    def _build(self, size: int, overlap: int, depth: int = DEPTH):

        chunks = self.chunker(self.corpus, size, overlap)
        qids = [q.qid for q in self.queries]
        runs = {}
        if {"bm25", "hybrid"} & set(self.retrievers):
            runs["bm25"] = make_run(BM25Retriever(chunks), self.queries, depth)
        if {"dense", "hybrid"} & set(self.retrievers):
            hits = DenseRetriever(chunks).search_vectors(self._query_vectors(), depth)
            runs["dense"] = {qid: [d for d, _ in h] for qid, h in zip(qids, hits, strict=True)}
        if "hybrid" in self.retrievers:
            runs["hybrid"] = fuse_runs([runs["bm25"], runs["dense"]], top_n=depth)
        return chunks, spans_to_qrels(self.queries, chunks), {r: runs[r] for r in self.retrievers}

    def _first_found(self, size: int, overlap: int, retriever: str, held: str) -> dict[str, list[int | None]]:
        chunks, _, runs = self._get(size, overlap)
        return _first_found(runs[retriever], self.queries, chunks, held)

    def _get(self, size: int, overlap: int):
        size, overlap = check_size_overlap(size, overlap)
        return self._built(size, overlap)

    def _check_k(self, k: Any) -> int:
        return args.whole_number("k", k, maximum=DEPTH, hint=f"the grid retrieves the top {DEPTH} chunks per query")

    def chunks(self, size: int, overlap: int) -> list[Chunk]:
        return self._get(size, overlap)[0]

    def runs(self, size: int, overlap: int) -> dict[str, dict[str, list[str]]]:
        """``{retriever: {qid: [chunk id, ...]}}`` on one chunking, the top :data:`DEPTH` per query (copies)."""
        return {name: {q: list(r) for q, r in run.items()} for name, run in self._get(size, overlap)[2].items()}

    def evaluate(self, size: int, overlap: int, k: int = 10, evidence: bool = False) -> Any:
        """Per-slice :data:`MEASURED` (R@k and nDCG@k) of every retriever for one chunking (rows: slices + ``all``).

        ``evidence=True`` adds ``ER@k`` and ``EC@k``, :func:`evidence_recall` held whole and by union, averaged
        per slice.
        """
        import pandas as pd

        k = self._check_k(k)
        chunks, qrels, runs = self._get(size, overlap)
        names = tuple(m.column(k) for m in MEASURED)
        cut = {name: {q: r[:k] for q, r in run.items()} for name, run in runs.items()}
        table = metrics.compare_runs(cut, qrels, self.groups, names)
        if evidence:  # the same per-query values as evidence_recall's, from each span's first rank found (kept per
            # chunking), then one groupby and one concat: 05's explorer computes a table per move
            per_query = pd.DataFrame({(f"{metric}@{k}", name): {
                qid: sum(r is not None and r <= k for r in firsts) / len(firsts)
                for qid, firsts in self._firsts(size, overlap, name, held).items()}
                for metric, held in (("ER", "whole"), ("EC", "union")) for name in runs})  # fmt: skip
            by_slice = per_query.groupby(per_query.index.map(self.groups)).mean()
            by_slice.loc["all"] = per_query.mean()
            table = pd.concat([table, by_slice.reindex(table.index)], axis=1)
        return table

    def evidence_curve(self, size: int, overlap: int, retriever: str, max_k: int = 20) -> list[float]:
        """Mean ER@k (:func:`evidence_recall`, held whole) of one retriever for k = 1..``max_k``, in one pass: each
        gold span's first rank whose chunk holds it whole, then the share of spans found by each k. The same
        numbers as ``evidence_recall(run, queries, chunks, k)`` averaged, for every k at once (05's heatmap)."""
        max_k = self._check_k(max_k)
        runs = self._get(size, overlap)[2]
        if retriever not in runs:
            raise ValueError(f"retriever must be one of {list(runs)}, got {retriever!r}")
        found_by = [0.0] * (max_k + 1)  # found_by[k]: the sum over queries of the share of spans found by rank k
        firsts_by_query = self._firsts(size, overlap, retriever, "whole")
        for firsts in firsts_by_query.values():
            for first in firsts:
                if first is not None and first <= max_k:
                    for k in range(first, max_k + 1):
                        found_by[k] += 1 / len(firsts)
        n = len(firsts_by_query)
        return [found_by[k] / n if n else float("nan") for k in range(1, max_k + 1)]

    def costs(self, size: int, overlap: int, k: int = 10) -> dict[str, float]:
        """What the chunking costs: chunks, indexed words / corpus words, words read for k chunks, split rate."""
        k = self._check_k(k)
        chunks = self.chunks(size, overlap)
        corpus_words = sum(len(d.text.split()) for d in self.corpus.values())
        indexed = sum(c.n_words for c in chunks)
        return {
            "chunks": len(chunks),
            "cost x": indexed / corpus_words,
            "words read at k": k * indexed / len(chunks),
            "split rate": gold_split_rate(self.queries, chunks),
        }

    def per_query(self, size: int, overlap: int, k: int = 10) -> Any:
        """One row per query for one chunking: its slice, then R@k, nDCG@k and ER@k of every retriever.

        These are the values :meth:`evaluate` averages, kept per query, so that a slice's mean can get a
        bootstrap interval (:func:`labkit.measures.stats.group_means_ci`) and two chunkings can be compared query by
        query (a paired difference). Columns are ``slice``, then ``"R@k bm25"``, ``"R@k dense"``,
        ``"nDCG@k bm25"``, ... (named ``@k`` whatever ``k`` is, so that tables at different ``k`` line up).
        ER@k and EC@k (:func:`evidence_recall`, whole and union) are NaN for a query without a gold span of
        grade >= 2.
        """
        import pandas as pd

        k = self._check_k(k)
        chunks, qrels, runs = self._get(size, overlap)
        qids = pd.Index([q.qid for q in self.queries], name="qid")
        values: dict[str, Any] = {}
        for name, run in runs.items():
            cut = {q: r[:k] for q, r in run.items()}
            scores = metrics.evaluate(cut, qrels, tuple(m.column(k) for m in MEASURED)).per_query.reindex(qids)
            values.update({f"{m.name} {name}": scores[m.column(k)] for m in MEASURED})
            for metric, held in (("ER@k", "whole"), ("EC@k", "union")):
                found = evidence_recall(run, self.queries, chunks, k, held=held)
                values[f"{metric} {name}"] = pd.Series(found).reindex(qids)
        columns = [f"{m} {name}" for m in (*(m.name for m in MEASURED), "ER@k", "EC@k") for name in runs]
        frame = pd.DataFrame(values, index=qids)[columns]
        frame.insert(0, "slice", [self.groups[q] for q in qids])
        return frame

    def by_slice(
        self,
        sizes: Sequence[int],
        overlap_shares: Sequence[float],
        column: str = "ER@k dense",
        k: int | Mapping[int, int] = 10,
    ):
        """One row per (size, overlap), one column per slice: the slice's mean of one :meth:`per_query` column.

        The grid of :meth:`table` for every slice at once (``plots.plot_grid`` draws it as one heatmap per
        slice). ``k`` as in :meth:`table`.
        """
        import pandas as pd

        rows = {}
        for size, overlap, kk in self._configs(sizes, overlap_shares, k):
            frame = self.per_query(size, overlap, kk)
            if column == "slice" or column not in frame.columns:
                have = [c for c in frame.columns if c != "slice"]
                raise ValueError(f"column must be one of the per-query columns {have}, got {column!r}")
            rows[(size, overlap)] = frame.groupby("slice")[column].mean()
        out = pd.DataFrame(rows).T
        out.index.names = ["size", "overlap"]
        out.columns.name = column
        return out

    def _configs(
        self, sizes: Sequence[int], overlap_shares: Sequence[float], k: int | Mapping[int, int]
    ) -> list[tuple[int, int, int]]:
        """``(size, overlap, k)`` for every size x overlap fraction, with the arguments checked."""
        sizes = [args.whole_number(f"sizes[{i}]", v) for i, v in enumerate(args.sequence("sizes", sizes))]
        fracs = args.sequence("overlap_shares", overlap_shares, example="(0.0, 0.25, 0.5)")
        fracs = [args.finite_number(f"overlap_shares[{i}]", v, minimum=0) for i, v in enumerate(fracs)]
        for i, f in enumerate(fracs):
            if f >= 1:
                raise ValueError(f"overlap_shares[{i}] must be < 1 (a share of the size), got {f:g}")
        if not sizes or not fracs:
            raise ValueError("sizes and overlap_shares must each hold at least one value, e.g. (64, 128), (0.0, 0.25)")
        if isinstance(k, Mapping):
            missing = [size for size in sizes if size not in k]
            if missing:
                raise ValueError(f"k has no entry for size {missing[0]}: give {{size: k}} for every size")
            ks = {size: self._check_k(k[size]) for size in sizes}
        else:
            ks = dict.fromkeys(sizes, self._check_k(k))
        return [(size, int(size * frac), ks[size]) for size in sizes for frac in fracs]

    def table(
        self,
        sizes: Sequence[int],
        overlap_shares: Sequence[float],
        k: int | Mapping[int, int] = 10,
        slice: str = "all",
    ):
        """One row per (size, overlap): costs and each retriever's metrics on one slice.

        ``k`` may be a ``{size: k}`` mapping to compare chunkings at an equal reading budget
        (e.g. ``{64: 20, 128: 10, 256: 5}``: about 1,280 words for the reader each); metric
        columns are then named with ``@k`` rather than a number.
        """
        import pandas as pd

        rows = []
        for size, overlap, kk in self._configs(sizes, overlap_shares, k):
            table = self.evaluate(size, overlap, kk, evidence=True)
            if slice not in table.index:
                raise ValueError(f"slice must be one of {list(table.index)}, got {slice!r}")
            res = table.loc[slice]
            if isinstance(k, Mapping):
                res.index = pd.MultiIndex.from_tuples([(m.split("@")[0] + "@k", r) for m, r in res.index])
            row = {"size": size, "overlap": overlap, **({"k": kk} if isinstance(k, Mapping) else {})}
            row.update(self.costs(size, overlap, kk))
            row.update({f"{m} {r}": v for (m, r), v in res.items()})
            rows.append(row)
        return pd.DataFrame(rows).set_index(["size", "overlap"])
