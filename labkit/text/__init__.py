"""Text — words, offsets, chunks.

The map of the whole package is ``labkit/__init__.py``'s docstring; this part's modules:

- ``words``: words with character offsets, numbers, Jaccard (02, 05)
- ``chunking``: windows, split rate, gold spans -> chunk judgements (05)
- ``structure``: chunks by Markdown section, table headers carried along, "title › section" prefixes (05)
"""
