"""labkit — the helper package of the RAG Evaluation Workbook.

One module per idea, each naming the chapter that teaches it:

- ``metrics``     P@k, R@k, RR, hit, DCG, nDCG and a batch ``evaluate`` (03, 04)
- ``fusion``      Reciprocal Rank Fusion, CombSUM (01)
- ``text``        words with character offsets, Jaccard (02, 05)
- ``chunking``    windows, split rate, gold spans -> chunk judgements (05)
- ``grid``        chunk size x overlap grid search (05)
- ``embeddings``  all-MiniLM-L6-v2 on onnxruntime, cached vectors (01)
- ``retrieval``   BM25, dense and hybrid retrievers with one ``search(query, k)`` (01)
- ``positions``   the lost-in-the-middle harness and its control readers (04)
- ``position_study``  the same experiment with a language model: trials, prompts, accuracy by position (04, 09)
- ``correctness`` is an answer right? the reference's key number, or the claim judge against the gold (04, 07-09)
- ``cascade``     the small model first, the large one when its answer fails a check (09)
- ``llm``         replayed / live / recording language-model client (for 02, 06, 08)
- ``data``        paths to ``data/``, the handbook corpus and queries, TREC files, published tables
- ``check``       exercise self-checks
- ``plots``       figures (matplotlib)
- ``explorer`` / ``widgets``  the explorer skeleton and the chapters' explorers (ipywidgets)

``import labkit`` is cheap: heavy dependencies (pandas, matplotlib, bm25s,
onnxruntime, ipywidgets) are imported by the modules that need them, when
they need them.
"""

from __future__ import annotations

import os
from pathlib import Path

__version__ = "0.1.0"

ROOT = Path(__file__).resolve().parent.parent
"""The workbook's root folder (the clone), found from this file, not the cwd."""

SEED = 42


def data_dir() -> Path:
    """The ``data/`` folder, wherever the kernel was started.

    ``LABKIT_DATA`` overrides it (for practitioners pointing labkit at their
    own copy; a relative path is relative to the current directory); otherwise
    it is ``<clone>/data``, located from this file. ``LABKIT_DATA`` set to an
    empty (or blank) value is an error, not "unset": ``Path("")`` would
    silently mean the current directory, and an empty value is usually a
    variable that did not expand (``LABKIT_DATA=$MY_DATA`` with ``MY_DATA``
    unset). Unset it to use the workbook's own ``data/``.
    """
    env = os.environ.get("LABKIT_DATA")
    if env is not None and not env.strip():
        raise ValueError(
            "LABKIT_DATA is set but empty; unset it to use the workbook's data/ "
            "(`unset LABKIT_DATA`, or `del os.environ['LABKIT_DATA']` in a notebook), or set it to a folder"
        )
    path = Path(env) if env is not None else ROOT / "data"
    if not path.is_dir():
        raise FileNotFoundError(
            f"labkit cannot find its data folder at {path}; run from a clone of the workbook "
            "or set LABKIT_DATA to the folder that holds handbook/ and queries.jsonl"
        )
    return path


def setup(seed: int = SEED) -> None:
    """Make a notebook reproducible and tidy: the first code cell of every chapter.

    Seeds Python's and NumPy's global generators (labkit itself always passes
    explicit ``np.random.default_rng(seed)`` generators), fixes pandas display
    options so tables print the same everywhere, and sets a matplotlib style
    with a fixed figure size and SVG-free inline PNGs (nbval skips PNGs).
    """
    import random

    import numpy as np
    import pandas as pd

    random.seed(seed)
    np.random.seed(seed)  # noqa: NPY002 - for learners' own code that uses the legacy API
    pd.set_option("display.precision", 4)
    pd.set_option("display.width", 120)
    pd.set_option("display.max_columns", 20)
    pd.set_option("display.max_colwidth", 80)
    try:
        import matplotlib

        matplotlib.rcParams.update(
            {
                "figure.figsize": (7.0, 3.2),
                "figure.dpi": 90,
                "axes.spines.top": False,
                "axes.spines.right": False,
                "axes.grid": True,
                "grid.alpha": 0.3,
                "font.size": 10,
                "svg.hashsalt": "labkit",
            }
        )
    except ImportError:  # pragma: no cover - matplotlib is in requirements
        pass
