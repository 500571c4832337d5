"""Generation — language models and what they read.

The map of the whole package is ``labkit/__init__.py``'s docstring; this part's modules:

- ``llm``: replayed / local / live / recording language-model client (00, 02, 04, 06-09)
- ``reader``: the RAG generator: prompts, an LLM reader, "I don't know" (04, 06-09)
- ``synth``: generate -> make hard -> filter, with a model (02)
- ``positions``: the lost-in-the-middle harness and its control readers (04)
- ``rewriter``: a model as the query-rewriting step of a conversation (08)
- ``fact_first``: fact-first question generation: one self-contained fact, then its question (02)
"""
