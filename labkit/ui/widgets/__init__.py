"""The chapters' explorers: with ``plots``, the UI part of labkit, the only modules that import ipywidgets or
matplotlib.

Each wraps a pure function that the notebook calls first with plain arguments, on the skeleton of
:class:`labkit.ui.widgets.explorer.Explorer` (controls -> pure function -> HTML, errors shown in place), and exposes
``.result``: the value it currently shows, so the next notebook cell can print it (nbval compares that
printout; it cannot see inside widgets). Value cells carry ``data-*`` keys, which the browser tests read;
``.html_for(**state)`` and the renderers (``metrics_html``, ``table_html``, ``triage_html``, ...) give the
HTML of any state without a browser.

- :mod:`labkit.ui.widgets.rankings`: rankings and their metrics (01 fusion and question box, 03 playground,
  04 cutoff);
- :mod:`labkit.ui.widgets.rerank`: 04b's reranking explorer (k1, k2, a reranker);
- :mod:`labkit.ui.widgets.chunks`: 05's chunk grid explorer;
- :mod:`labkit.ui.widgets.answers`: generated questions, judged claims and what answers cost (02 synthetic sets,
  06 faithfulness, 09 routing and cascade);
- :mod:`labkit.ui.widgets.traces`: a reader's answers trace by trace (04 position study, 07 triage, 08 triage per
  slice);
- :mod:`labkit.ui.widgets.labelling`: the learner labels items with the keyboard (02 realism, 06 claims, 07 answers,
  10 passages);
- :mod:`labkit.ui.widgets.ahead`: how a move is drawn without waiting for the kernel (every explorer keeps the states
  it has computed, computes the ones a move reaches while the learner looks, and sends them to the page).
"""

from __future__ import annotations

from labkit.ui.widgets import answers, chunks, labelling, rankings, rerank, traces
from labkit.ui.widgets.answers import *  # noqa: F403 - the facade: every explorer is ``widgets.<Name>``
from labkit.ui.widgets.chunks import *  # noqa: F403
from labkit.ui.widgets.labelling import *  # noqa: F403
from labkit.ui.widgets.rankings import *  # noqa: F403
from labkit.ui.widgets.rerank import *  # noqa: F403
from labkit.ui.widgets.traces import *  # noqa: F403

__all__ = [*rankings.__all__, *rerank.__all__, *chunks.__all__, *answers.__all__, *traces.__all__, *labelling.__all__]
