"""Commands — ``python -m labkit ...``.

The map of the whole package is ``labkit/__init__.py``'s docstring; this part's modules:

- ``report``: 10's retrieval measurements on any folder: one HTML page, TREC qrels and runs
- ``entry``: the report's and judge's arguments, checked once where they enter; the setting
- ``figures``: the report's figures: means, declared comparisons, per kind, follow-ups, answers
- ``judge``: ``labkit judge``: the pooled top passages judged in the terminal, resumable
- ``outside``: your own system's run (TREC or JSONL passages) and answers, for the report
- ``reranker``: ``--rerank``: 04b's learned reranker over the hybrid's top 20, trained on your dev questions or
  carried over from the handbook
"""
