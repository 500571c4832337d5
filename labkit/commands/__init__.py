"""Commands — ``python -m labkit ...``.

The map of the whole package is ``labkit/__init__.py``'s docstring; this part's modules:

- ``report``: 10's retrieval measurements on any folder: one HTML page, TREC qrels and runs
"""
