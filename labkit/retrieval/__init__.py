"""Retrieval — indexes and searches.

The map of the whole package is ``labkit/__init__.py``'s docstring; this part's modules:

- ``embeddings``: all-MiniLM-L6-v2 on onnxruntime, cached vectors, token counts (01, 09)
- ``vector_files``: vector files in the user cache; a folder's stored per file by content (10)
- ``each_text``: a folder embedded one text at a time, one single-threaded session per core (10)
- ``retrievers``: BM25, dense and hybrid retrievers with one ``search(query, k)`` (01)
- ``rerank``: stage 2: reorder the top k1 by any reranker's scores; a learned reranker (04b)
- ``grid``: chunk size x overlap grid search, evidence recall (05)
"""
