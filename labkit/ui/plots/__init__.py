"""Figures: with the ``widgets`` package, the UI part of labkit, the only modules that import matplotlib.

Every function takes plain arguments, draws one figure and returns it, so a notebook can call it directly
before a widget wraps it. One namespace, five modules:

- :mod:`labkit.ui.plots.figures` — retrieval and answers per slice, k and position (chapters 00 to 05, 07);
- :mod:`labkit.ui.plots.verdicts` — judges against labels, rerankers against relevance, what a strategy costs
  (06, 04b, 09);
- :mod:`labkit.ui.plots.svg` — small charts drawn as SVG text in about a millisecond (03's gains and discounts);
- :mod:`labkit.ui.plots.pictures` — the explorers' pictures made of them (01, 05, 07, 09);
- :mod:`labkit.ui.plots.classroom` — a class's raters per item and its self-checks' progress (11, for instructors).

Every function is ``plots.<name>``.
"""

from __future__ import annotations

from labkit.ui.plots.classroom import *  # noqa: F403 - the facade: every function is ``plots.<name>``
from labkit.ui.plots.figures import *  # noqa: F403
from labkit.ui.plots.pictures import *  # noqa: F403
from labkit.ui.plots.svg import *  # noqa: F403
from labkit.ui.plots.verdicts import *  # noqa: F403
