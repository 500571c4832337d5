"""Data — what ``data/`` holds, and the source's toys.

The map of the whole package is ``labkit/__init__.py``'s docstring; this part's modules:

- ``corpus``: the handbook corpus and labelled queries, published tables
- ``trec``: TREC qrels and run files, read and written as trec_eval reads them (03)
- ``toys``: the source chapter's toy inputs, typed once
- ``labels``: the learner's own labels: a label set, an append-only store in the user cache (02, 06, 07)
- ``folder``: a folder of Markdown, text and HTML as a corpus; bad files skipped and said (capstone)
- ``class_folder``: a class folder (``LABKIT_CLASS_DIR``): each learner's opt-in, owner-only drop file (11)
- ``class_read``: a class folder read by its instructor: labels, self-checks, export; refusals said (11)
- ``quotes``: gold as quotes, found in the extracted text; the gold rule (10)
- ``trec_ids``: ids TREC files can hold for any file name, reversible; ids.tsv (10)
- ``judgements``: pooled relevance judgements: the file ``labkit judge`` appends to, read as gold (10)
"""
