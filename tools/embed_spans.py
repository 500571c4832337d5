"""Write the committed vectors of the dev split's gold spans (grade >= 2), which chapter 05's dilution cell reads.

    python tools/embed_spans.py            # data/embeddings/all-MiniLM-L6-v2-onnx-int8-<hash>.npy

Named like a chunking's cache (:func:`labkit.retrieval.embeddings.cache_name` of the span ids and texts), so
:func:`labkit.retrieval.dilution.span_vectors` finds it through ``cached_embeddings``. Committed for the reason the
chunk vectors are: embedding the 287 spans takes about 10 s on 2 cores, and the int8 model's last digits differ
between CPUs. A changed query set gets a new name; remove the old file (``tests/test_embeddings_cache.py`` lists
the committed files it expects).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from labkit.data.corpus import load_corpus, load_queries  # noqa: E402
from labkit.retrieval import dilution, embeddings  # noqa: E402


def main() -> int:
    corpus = load_corpus()
    spans = dilution.span_texts(load_queries(split="dev"), corpus)
    texts = [corpus[s.doc].text[s.start : s.end] for _, s in spans.values()]
    path = embeddings.committed_dir() / embeddings.cache_name(list(spans), texts)
    vectors = embeddings.default_model().encode(texts)
    np.save(path, vectors, allow_pickle=False)
    print(f"{path}: {len(texts)} gold spans, {path.stat().st_size:,} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
