"""Data — what ``data/`` holds, and the source's toys.

The map of the whole package is ``labkit/__init__.py``'s docstring; this part's modules:

- ``corpus``: the handbook corpus and labelled queries, published tables
- ``trec``: TREC qrels and run files, read and written as trec_eval reads them (03)
- ``toys``: the source chapter's toy inputs, typed once
- ``labels``: the learner's own labels: a label set, an append-only store in the user cache (02, 06, 07)
- ``folder``: a folder of Markdown, text and HTML as a corpus; bad files skipped and said (capstone)
"""
