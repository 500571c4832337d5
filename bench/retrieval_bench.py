"""Benchmark: retrieval on the handbook (chapter 01). Prints figures; asserts nothing.

- index build: BM25 (bm25s), dense with the committed embedding cache, dense without it
- chunks embedded per second (all-MiniLM-L6-v2, int8 ONNX, onnxruntime on CPU)
- query latency p50 / p95 over the labelled queries, one query at a time, per retriever
- embedding one query and a batch with onnxruntime's worker threads spinning or not: wall and CPU time
- one slider update of chapter 01's FusionExplorer: re-fuse + re-evaluate every labelled query

Targets on a 2-core machine: BM25 index < 1 s, BM25 query p50 < 5 ms, dense query p50 < 30 ms,
slider update < 100 ms.

    .venv/bin/python bench/retrieval_bench.py            # embeds the whole corpus once without cache
    .venv/bin/python bench/retrieval_bench.py --quick    # embeds only 64 chunks for the no-cache figure
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from labkit.data.corpus import load_corpus, load_queries
from labkit.measures import fusion
from labkit.retrieval import embeddings
from labkit.retrieval.retrievers import BM25Retriever, DenseRetriever, HybridRetriever, make_run
from labkit.text.chunking import chunk_corpus, spans_to_qrels


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def latency(retriever, texts):
    times = []
    for text in texts:
        t0 = time.perf_counter()
        retriever.search(text, 10)
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times), float(np.percentile(times, 95))


def spinning(texts, passages) -> None:
    """One query at a time and one batch of passages, with onnxruntime's worker threads spinning after each run
    (its default) and not (labkit's): wall and CPU time. What spinning costs is not seen here but beside another
    process (the browser and the Jupyter server, while a learner types): see labkit.retrieval.embeddings.MiniLM."""
    for spin in (True, False):
        model = embeddings.MiniLM(spin=spin)
        model.encode(["warm up"])
        wall, cpu = time.perf_counter(), time.process_time()
        for text in texts:
            model.encode([text])
        wall, cpu = (time.perf_counter() - wall) * 1000 / len(texts), (time.process_time() - cpu) * 1000 / len(texts)
        _, batch = timed(lambda m=model: m.encode(passages))
        print(f"{f'embed one query, spin={spin}':34s} {wall:6.2f} ms wall  {cpu:6.2f} ms CPU;  "
              f"{len(passages)} passages {batch:5.2f} s")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="embed only 64 chunks for the no-cache figure")
    args = parser.parse_args()

    queries = load_queries()
    chunks = chunk_corpus(load_corpus(), 128, 32)
    texts = [q.search_text for q in queries]
    print(f"{len(chunks)} chunks (128 words, overlap 32), {len(queries)} labelled queries")

    embeddings.default_model()  # load the model once, outside the timings
    bm25, t_bm25 = timed(lambda: BM25Retriever(chunks))
    dense, t_cached = timed(lambda: DenseRetriever(chunks))
    sample = chunks if not args.quick else chunks[:64]
    with tempfile.TemporaryDirectory() as tmp:
        original = embeddings.cache_dir, embeddings.committed_dir
        embeddings.cache_dir = lambda: Path(tmp)
        embeddings.committed_dir = lambda: Path(tmp) / "none"  # neither cache: a cold start
        try:
            _, t_cold = timed(lambda: DenseRetriever(sample))
        finally:
            embeddings.cache_dir, embeddings.committed_dir = original
    print(f"{'BM25 index build':34s} {t_bm25 * 1000:8.1f} ms   target < 1000 ms")
    print(f"{'dense index, cached vectors':34s} {t_cached * 1000:8.1f} ms")
    print(f"{'dense index, no cache':34s} {t_cold:8.1f} s    ({len(sample)} chunks)")
    print(f"{'chunks embedded per second':34s} {len(sample) / t_cold:8.1f}")

    hybrid = HybridRetriever([bm25, dense])
    for name, r, target in (("bm25", bm25, 5), ("dense", dense, 30), ("hybrid", hybrid, None)):
        p50, p95 = latency(r, texts)
        note = f"   target p50 < {target} ms" if target else ""
        print(f"{'query latency ' + name:34s} p50 {p50:6.1f} ms  p95 {p95:6.1f} ms{note}")

    spinning(texts, [c.text for c in sample[:128]])

    qrels = spans_to_qrels(queries, chunks)
    runs = {"bm25": make_run(bm25, queries, 100), "dense": make_run(dense, queries, 100)}
    groups = {q.qid: q.slice for q in queries}
    times = [timed(lambda c=c: fusion.hybrid_table(runs, qrels, groups, c=c, k=10))[1] * 1000 for c in range(40, 61)]
    print(
        f"{'slider update (re-fuse+evaluate)':34s} p50 {statistics.median(times):6.1f} ms  "
        f"max {max(times):6.1f} ms   target < 100 ms"
    )


if __name__ == "__main__":
    main()
