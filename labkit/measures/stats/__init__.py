"""How far a number can be trusted, and what two numbers' difference says: one namespace, its modules.

Taught in 03_metrics_by_hand (intervals, comparisons, the rules they come with) and 06_faithfulness (judges);
used by every chapter that reports a figure per slice or compares two systems.

- :mod:`labkit.measures.stats.intervals` — one number: a bootstrap interval for a mean, a Wilson interval for a
  proportion, a table of them formatted.
- :mod:`labkit.measures.stats.slices` — per-slice means with intervals (``group_means_ci``, ``mean_ci``): Wilson,
  bootstrap, or the findings helper's sparse and rule bounds where resampling would pin an end.
- :mod:`labkit.measures.stats.compare` — two numbers: the interval of a difference (paired or two-sample), Newcombe for
  two proportions, a permutation p, Holm's adjustment and simultaneous intervals for a scan, the interaction
  test for "A suffers more than B".
- :mod:`labkit.measures.stats.judges` — a judge against reference labels (TPR, TNR, J with intervals) and the pass
  rate corrected for its errors (Rogan–Gladen).
- :mod:`labkit.measures.stats.agreement` — raters against each other: Cohen's kappa (weighted for ordered labels) with
  intervals, Fleiss' kappa and the majority labels of a class.
- :mod:`labkit.measures.stats.multirater` — a class of raters with missing ratings: Fleiss' kappa and
  Krippendorff's alpha (nominal, ordinal), each with a seeded bootstrap interval over items, or a sentence saying
  why there is no figure.
- :mod:`labkit.measures.stats.findings` — a number's finding, decided by one rule: ``Family`` (comparisons declared
  before the data are read), ``finding`` (a lead, uncorrected), ``derived_finding`` (a ratio or a J, its inputs
  resampled together); the interval follows the number's kind (``interval_for``: :mod:`.kinds`, :mod:`.kindbase`,
  :mod:`.resampled`, :mod:`.score`), the means of a family share one max-|t| bootstrap (:mod:`.maxt`), and the
  verdict, the interval, the adjusted p and the sentence agree by construction.
- :mod:`labkit.measures.stats.output_check` — a notebook's stored outputs scanned for zero-width intervals and
  verdicts that contradict the interval on their line (``scan_notebook_intervals``; not in the facade).
- :mod:`labkit.measures.stats.raters` — the class item by item (majority, ties) and rater by rater (against the
  others' majority and the reference), and simulated raters for the instructor's notebook.

Every function is ``stats.<name>``.
"""

from __future__ import annotations

from labkit.measures.stats.agreement import *  # noqa: F403 - the facade: every function is ``stats.<name>``
from labkit.measures.stats.compare import *  # noqa: F403
from labkit.measures.stats.findings import *  # noqa: F403
from labkit.measures.stats.intervals import *  # noqa: F403
from labkit.measures.stats.judges import *  # noqa: F403
from labkit.measures.stats.maxt import *  # noqa: F403
from labkit.measures.stats.multirater import *  # noqa: F403
from labkit.measures.stats.raters import *  # noqa: F403
from labkit.measures.stats.slices import *  # noqa: F403
