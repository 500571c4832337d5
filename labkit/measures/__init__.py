"""Measures — pure computations on rankings, grades, verdicts and traces.

The map of the whole package is ``labkit/__init__.py``'s docstring; this part's modules:

- ``metrics``: P@k, R@k, RR, hit, DCG, nDCG and a batch ``evaluate`` (03, 04)
- ``stats``: bootstrap and Wilson intervals, judge reports, the Rogan–Gladen correction, kappa (01-09)
- ``fusion``: Reciprocal Rank Fusion, CombSUM (01)
- ``triage``: the 2x2 of retrieval vs generation failures (07, 08)
- ``router``: a model router evaluated as a retriever, the context-window filter (09)
"""
