"""Judges — is a claim supported, is an answer right.

The map of the whole package is ``labkit/__init__.py``'s docstring; this part's modules:

- ``faithfulness``: claims, a per-claim judge (model or lexical), PASS/FAIL, relevance (06)
- ``correctness``: an answer against the reference: its key number, or the claim judge on the gold (04, 07-09)
- ``calibration``: judges run over labelled claims: the verdict table, the confusion table (06)
- ``pointwise``: a language model as a reranker: log P(yes) - log P(no) for a passage (04b)
- ``construction``: claims whose label is known by construction: a number, unit or row changed on purpose (06)
- ``domain``: is a question one the handbook's help bot is for? a yes/no model judge (02)
"""
