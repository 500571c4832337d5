"""Benchmark: a folder of your own documents (chapter 10, ``labkit.data.folder``, ``python -m labkit report``).
Prints figures; asserts nothing.

Two folders, each built in a temporary folder:

- ``--html [DIR]`` (default ``DIR``: Debian's ``python3-doc``, ``/usr/share/doc/python3/html/library``): HTML
  manual pages copied from ``DIR`` in name order until they make ``--chunks`` chunks of 128/32 words (default
  1,850: a tool's manual of some 40 pages; the Python manual's markup is heavier, so the folder is larger in MB);
- ``--docs N``: ``N`` small documents (``--words`` words each), real passages of the bundled Python documentation
  cut from its pages in order, as HTML, Markdown or text in turn (10,000 for the large case).

and measures what the report does with a folder, cold (the vectors go to a temporary cache, so the run embeds
everything and leaves the user cache alone):

- reading: documents per second (``load_folder``), and what it skipped;
- chunking (128 words, overlap 32) and the BM25 index: seconds;
- embedding: chunks per second, and the cold total (reading + chunking + embedding) in seconds;
- a re-run on the unchanged folder, and one after editing one file: seconds, and how many chunks were embedded;
- peak memory of the process (resident set, from ``resource``) after each stage, and the resident set sampled
  every half second while embedding;
- query latency p50 / p95: BM25, dense and hybrid, one question at a time (the FAQ's questions).

``--batching`` says how a corpus in no cache is embedded: ``each`` (what labkit does: each text alone, stored per
document by content, see ``labkit.retrieval.embeddings``) or ``batch32`` (how it was embedded before: the whole
corpus in batches of 32 in order, padded to the longest, stored as one file), or ``both``: the two, each in its own
process (so each peak is its own), one after the other. Other processes share the CPU: the bench prints the load.

    .venv/bin/python bench/folder_bench.py --html --batching both     # the manual folder, today and before
    .venv/bin/python bench/folder_bench.py --docs 10000                # 10,000 small documents (long on 2 cores)
    .venv/bin/python bench/folder_bench.py --docs 500                  # a quick look
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
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


DOCS_HTML = Path("/usr/share/doc/python3/html/library")
"""Debian's python3-doc (``apt-get install python3-doc``): a real manual nobody here wrote."""


def copy_html(source: Path, root: Path, chunks: int) -> tuple[int, int]:
    """HTML pages of ``source`` in name order, copied into ``root`` until they make ``chunks`` chunks of 128/32 words
    (as the report chunks them): (pages, bytes). Pages the loader would skip are left out."""
    from labkit.data import folder
    from labkit.text.chunking import chunk_document

    root.mkdir(parents=True)
    pages, written, made = 0, 0, 0
    for page in sorted(source.rglob("*.html")):
        if made >= chunks:
            break
        try:
            doc = folder.read_document(page)
        except ValueError:
            continue
        target = root / page.relative_to(source)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(page, target)
        pages, written, made = (
            pages + 1,
            written + page.stat().st_size,
            made + len(chunk_document(doc.id, doc.text, 128, 32)),
        )
    return pages, written


def edit_one(root: Path) -> str:
    """Change one word of content in the first file of ``root`` (what a user does between two runs); its name."""
    first = sorted(p for p in root.rglob("*") if p.is_file())[0]
    text = first.read_text(encoding="utf-8")
    at = text.find("</h1>")  # inside the page's main content, which the loader keeps
    first.write_text(text[:at] + " edited" + text[at:] if at >= 0 else text + "\nEdited.\n", encoding="utf-8")
    return first.relative_to(root).as_posix()


def latency(search, texts: list[str]) -> tuple[float, float]:
    times = []
    for text in texts:
        t0 = time.perf_counter()
        search([text], 10)
        times.append((time.perf_counter() - t0) * 1000)
    times.sort()
    return statistics.median(times), times[int(0.95 * (len(times) - 1))]


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg()) + f" on {os.cpu_count()} CPUs"


def run(opts) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["LABKIT_CACHE"] = str(Path(tmp) / "cache")  # embed everything; leave the user cache alone
        from labkit.data import folder
        from labkit.retrieval import embeddings
        from labkit.retrieval.retrievers import BM25Retriever, DenseRetriever, HybridRetriever
        from labkit.studies import pydocs
        from labkit.text.chunking import chunk_corpus

        class Counted(embeddings.MiniLM):
            """The model, counting the texts it embeds."""

            embedded = 0

            def encode(self, texts, progress=False):
                self.embedded += len(texts)
                return super().encode(texts, progress)

            def encode_each(self, texts, progress=False):
                self.embedded += len(texts)
                return super().encode_each(texts, progress)

        if opts.batching == "batch32":  # as before: the whole corpus, batches of 32 in order, one cache file
            embeddings._by_content = lambda ids, texts, model, folder: model.encode(texts, progress=True)
        root = Path(tmp) / "docs"
        if opts.html:
            pages, size = copy_html(opts.html, root, opts.chunks)
            what = f"{pages} HTML pages of {opts.html}, {size / 1e6:.1f} MB"
        else:
            size = make_folder(root, opts.docs, opts.words)
            what = f"{opts.docs:,} documents of {opts.words} words, {size / 1e6:.1f} MB"
        print(f"[{opts.batching}] folder: {what}; {load()}; peak {peak_mb():.0f} MB")
        model = Counted()
        model.encode(["warm up"])

        def index(stages: bool):
            t0 = time.perf_counter()
            loaded = folder.load_folder(root, progress=False)
            t_read = time.perf_counter() - t0
            if stages:
                print(f"read: {loaded.summary()}; {len(loaded.corpus) / t_read:,.0f} documents/s; "
                      f"peak {peak_mb():.0f} MB")  # fmt: skip
            chunks = chunk_corpus(loaded.corpus, 128, 32)
            bm25 = BM25Retriever(chunks)
            if stages:
                print(f"chunked and BM25-indexed: {len(chunks):,} chunks in {time.perf_counter() - t0 - t_read:.1f} s; "
                      f"peak {peak_mb():.0f} MB")  # fmt: skip
            before, t1 = model.embedded, time.perf_counter()
            with Sampler() as sampled:
                dense = DenseRetriever(chunks, model=model)
            took, n = time.perf_counter() - t1, model.embedded - before
            if stages:
                print(f"embedded: {n:,} chunks, {n / took:,.1f} chunks/s ({took:.0f} s); peak {peak_mb():.0f} MB")
                print(f"while embedding: {sampled.line()}")
            return bm25, dense, time.perf_counter() - t0, n

        bm25, dense, total, n = index(True)
        print(f"cold total (read, chunk, index, embed): {total:.1f} s; {load()}")
        _, _, total, n = index(False)
        print(f"re-run, folder unchanged: {total:.1f} s, {n} chunks embedded")
        name = edit_one(root)
        if opts.batching == "batch32":  # measured once: minutes for nothing new
            print(f"re-run after editing {name}: not run (one cache file keyed by every chunk: all are re-embedded)")
        else:
            _, _, total, n = index(False)
            print(f"re-run after editing {name}: {total:.1f} s, {n} chunks embedded")
        hybrid = HybridRetriever([bm25, dense])
        questions = [q["question"] for q in pydocs.faq_questions()]
        for label, retriever in (("bm25", bm25), ("dense", dense), ("hybrid", hybrid)):
            p50, p95 = latency(retriever.search_many, questions)
            print(f"query latency {label:6s}: p50 {p50:.1f} ms, p95 {p95:.1f} ms ({len(questions)} questions)")
        print(f"[{opts.batching}] peak memory at the end: {peak_mb():.0f} MB; {load()}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=10_000)
    parser.add_argument("--words", type=int, default=120)
    parser.add_argument("--html", nargs="?", type=Path, const=DOCS_HTML, default=None, metavar="DIR")
    parser.add_argument("--chunks", type=int, default=1850, help="with --html: copy pages until this many chunks")
    parser.add_argument("--batching", choices=("each", "batch32", "both"), default="each")
    opts = parser.parse_args()
    if opts.html is not None and not opts.html.is_dir():
        parser.error(
            f"--html {opts.html} is not a folder: give a folder of HTML pages, or `apt-get install python3-doc`"
        )
    if opts.docs < 1 or opts.chunks < 1:
        parser.error("--docs and --chunks must be positive")
    if opts.batching != "both":
        run(opts)
        return
    what = ["--html", str(opts.html), "--chunks", str(opts.chunks)] if opts.html else ["--docs", str(opts.docs)]
    for batching in ("batch32", "each"):
        argv = [*what, "--words", str(opts.words), "--batching", batching]
        subprocess.run([sys.executable, __file__, *argv], check=True)


if __name__ == "__main__":
    main()
