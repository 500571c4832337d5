"""Benchmark: a large folder of your own documents (chapter 10, ``labkit.data.folder``). Prints figures; asserts
nothing.

Builds a temporary folder of ``--docs`` documents (default 10,000), each a real passage of the bundled Python
documentation (``--words`` words, cut from its pages in order, as HTML, Markdown or text in turn), then measures
what chapter 10 does with a folder:

- reading: documents per second (``load_folder``, with its progress bar), and what it skipped;
- chunking (128 words, overlap 32) and the BM25 index: seconds;
- embedding: chunks per second (all-MiniLM-L6-v2 on onnxruntime; the vectors go to a temporary cache, so the
  run embeds everything and leaves the user cache alone);
- peak memory of the process (resident set, from ``resource``), after each stage, and the resident set sampled
  every half second while embedding: flat from the first batch on means the embedding's memory does not grow with
  the folder (onnxruntime's arena is a fixed cost; the vectors, 1.5 kB a chunk, are what grows);
- query latency p50 / p95 at that size: BM25, dense and hybrid, one question at a time (the FAQ's questions).

    .venv/bin/python bench/folder_bench.py                 # 10,000 documents of 120 words (~20 min on 2 cores)
    .venv/bin/python bench/folder_bench.py --docs 500      # a quick look
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import tempfile
import time
from pathlib import Path


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kilobytes on Linux


def rss_mb() -> float:
    """The resident set now (Linux: /proc/self/statm, in pages)."""
    return int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


class Sampler:
    """The resident set every ``every`` seconds, in a thread, while a ``with`` block runs."""

    def __init__(self, every: float = 0.5):
        import threading

        self.every, self.samples, self.stop = every, [], threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self.stop.wait(self.every):
            self.samples.append(rss_mb())

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.thread.join()

    def line(self) -> str:
        if not self.samples:
            return "too short to sample"
        at = lambda f: self.samples[min(len(self.samples) - 1, int(f * len(self.samples)))]  # noqa: E731
        return (f"resident set at 10 % of the time {at(0.1):.0f} MB, 50 % {at(0.5):.0f} MB, 90 % {at(0.9):.0f} MB, "
                f"end {self.samples[-1]:.0f} MB")  # fmt: skip


def make_folder(root: Path, n_docs: int, words: int) -> int:
    """``n_docs`` documents of ``words`` words each, cut in order from the bundled corpus's text; bytes written."""
    from labkit.studies import pydocs

    stream = " ".join(doc.text for doc in pydocs.corpus().values()).split()
    written = 0
    for i in range(n_docs):
        start = (i * words) % max(1, len(stream) - words)
        body = " ".join(stream[start : start + words])
        kind = i % 3
        folder = root / f"part-{i // 1000:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        if kind == 0:
            path, text = (
                folder / f"doc-{i:05d}.html",
                f"<html><body><main><h1>Doc {i}</h1><p>{body}</p></main></body></html>",
            )
        elif kind == 1:
            path, text = folder / f"doc-{i:05d}.md", f"# Doc {i}\n\n{body}\n"
        else:
            path, text = folder / f"doc-{i:05d}.txt", body + "\n"
        path.write_text(text, encoding="utf-8")
        written += len(text.encode())
    return written


def latency(search, texts: list[str]) -> tuple[float, float]:
    times = []
    for text in texts:
        t0 = time.perf_counter()
        search([text], 10)
        times.append((time.perf_counter() - t0) * 1000)
    times.sort()
    return statistics.median(times), times[int(0.95 * (len(times) - 1))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=10_000)
    parser.add_argument("--words", type=int, default=120)
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["LABKIT_CACHE"] = str(Path(tmp) / "cache")  # embed everything; leave the user cache alone
        from labkit.data import folder
        from labkit.retrieval.retrievers import BM25Retriever, DenseRetriever, HybridRetriever
        from labkit.studies import pydocs
        from labkit.text.chunking import chunk_corpus

        root = Path(tmp) / "docs"
        size = make_folder(root, opts.docs, opts.words)
        print(f"folder: {opts.docs:,} documents of {opts.words} words, {size / 1e6:.1f} MB; peak {peak_mb():.0f} MB")
        t0 = time.perf_counter()
        loaded = folder.load_folder(root, progress=True)
        took = time.perf_counter() - t0
        print(f"read: {loaded.summary()}; {opts.docs / took:,.0f} documents/s; peak {peak_mb():.0f} MB")
        t0 = time.perf_counter()
        chunks = chunk_corpus(loaded.corpus, 128, 32)
        bm25 = BM25Retriever(chunks)
        print(f"chunked and BM25-indexed: {len(chunks):,} chunks in {time.perf_counter() - t0:.1f} s; "
              f"peak {peak_mb():.0f} MB")  # fmt: skip
        t0 = time.perf_counter()
        with Sampler() as sampled:
            dense = DenseRetriever(chunks)
        took = time.perf_counter() - t0
        print(f"embedded: {len(chunks) / took:,.1f} chunks/s ({took:.0f} s); peak {peak_mb():.0f} MB")
        print(f"while embedding: {sampled.line()}")
        hybrid = HybridRetriever([bm25, dense])
        questions = [q["question"] for q in pydocs.faq_questions()]
        for name, retriever in (("bm25", bm25), ("dense", dense), ("hybrid", hybrid)):
            p50, p95 = latency(retriever.search_many, questions)
            print(f"query latency {name:6s}: p50 {p50:.1f} ms, p95 {p95:.1f} ms ({len(questions)} questions)")
        print(f"peak memory at the end: {peak_mb():.0f} MB")


if __name__ == "__main__":
    main()
