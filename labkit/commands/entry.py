"""The report's arguments, checked once where they enter, and the setting they describe.

Used by ``python -m labkit report`` (:mod:`labkit.commands.report`) and ``python -m labkit judge``
(:mod:`labkit.commands.judge`). :func:`check_args` checks every argument before anything is embedded (the folder
and its questions' gold, the options, every file named); :func:`build` makes the setting, the runs and the
outside runs from what it returned. The functions behind them trust those checks: one path through the report
checks each argument once.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from labkit.commands import outside, reranker
from labkit.core import args
from labkit.core.files import check_file, path_arg, write_roots
from labkit.data.judgements import read_judgements
from labkit.data.quotes import normalise_space
from labkit.generation import llm
from labkit.judges import correctness
from labkit.studies import capstone
from labkit.text.chunking import DEFAULT_OVERLAP, DEFAULT_SIZE, check_size_overlap

__all__ = ["check_args", "build", "whole", "KS", "MIN_N", "FORMATS", "DEPTH"]

KS = (3, 10)
"""The default cutoffs: the reader's k (chapters 06-09 read the top 3) and a deeper look (``--k`` changes them)."""
DEPTH = capstone.DEPTH
"""How deep every retriever ranks; a cutoff can be at most this."""
MIN_N = 10
"""Under this many questions a mean (overall, or per kind) is printed with a warning: its interval is too wide to
compare retrievers on, read it as a hint."""
FORMATS = ("html", "json")
"""``html``: report.html for a reader; ``json``: report.json for a script or CI (the same figures, unrounded)."""


def whole(name: str, value, minimum: int = 1, maximum: int | None = None) -> int:
    """``value`` as a whole number in range, or an error naming the option."""
    return args.whole_number(name, value, minimum=minimum, maximum=maximum)


def _check_out(out: str | Path) -> Path:
    """``out`` resolved, refused before anything slow when it is a file or outside the folders labkit writes to."""
    out = Path(path_arg("out", out)).expanduser()
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {out} is a file: give a folder for the report")
    if not any(out.resolve().is_relative_to(r) for r in write_roots()):
        raise ValueError(f"--out {out} is outside the folders labkit writes to ({', '.join(map(str, write_roots()))})"
                         ": write inside your workbook folder, or add the folder to LABKIT_WRITE_DIRS")  # fmt: skip
    return out


def check_args(out=None, documents=None, questions=None, llm_mode=None, source=None, asker=None,
               answer_labels=None, fmt="html", size=DEFAULT_SIZE, overlap=DEFAULT_OVERLAP, ks=KS, judgements=None,
               run_specs=(), answers=None, rerank=False, *, writes=False) -> SimpleNamespace:  # fmt: skip
    """Every argument of the report (and of ``python -m labkit judge``) checked once, before anything is embedded:
    the folder and its questions' gold, the options, every file named; ``out`` when ``writes`` (the report; judge
    writes none). Returns them checked, with ``loaded``, ``queries``, ``judged``, ``specs`` (``[(name, path)]``)
    and ``rerank`` (None, or :func:`labkit.commands.reranker.plan`: which reranker ``--rerank`` gives)."""
    if documents is not None and questions is None:
        raise ValueError("questions is missing: give --queries Q.jsonl for your folder (see python -m labkit -h)")
    if answer_labels is not None and llm_mode is None and answers is None:
        raise ValueError("--answer-labels needs answers to label: --llm MODE (replay, local, local-small or live) "
                         "or --answers FILE")  # fmt: skip
    if llm_mode is None and (source is not None or asker is not None):
        raise ValueError("--source and --asker need --llm MODE (replay, local, local-small or live)")
    if llm_mode is not None and answers is not None:
        raise ValueError("give --llm MODE (our reader answers) or --answers FILE (your system's), not both")
    if llm_mode is not None and llm_mode not in llm.MODES:
        raise ValueError(f"--llm must be one of {', '.join(llm.MODES)}; got {llm_mode!r}")
    if not isinstance(rerank, bool):
        raise ValueError(f"--rerank is a switch (True or False), got {rerank!r}")
    if fmt not in FORMATS:
        raise ValueError(f"--format must be one of {FORMATS}, got {fmt!r}")
    size, overlap = check_size_overlap(size, overlap)
    ks = tuple(args.sequence("--k", ks, allow_empty=False, example="(3, 10)"))
    if len(ks) != 2:
        raise ValueError(f"--k takes two cutoffs (e.g. --k 3 10), got {list(ks)}")
    ks = tuple(whole(f"--k {which}", k, maximum=DEPTH) for which, k in zip(("first", "second"), ks, strict=True))
    if ks[0] >= ks[1]:
        raise ValueError(f"--k takes two cutoffs, the smaller first (e.g. --k 3 10), got {list(ks)}")
    out = _check_out(out) if writes else None
    loaded, queries = capstone.documents_and_questions(documents, questions)  # gold checked: nothing embedded yet
    qids = {q.qid for q in queries}
    plan = reranker.plan(list(queries)) if rerank else None  # too few dev questions: refused before embedding
    labels = None if answer_labels is None else correctness.read_answer_labels(answer_labels, qids)
    judged = {}
    if judgements is not None:
        judged = read_judgements(check_file(Path(judgements), "judgements", "written by labkit judge"), queries)
    specs = []
    for spec in args.sequence("--run", list(run_specs or ()), example='["mine=mine.jsonl"]'):
        specs.append(outside.parse_spec(spec, {*capstone.RETRIEVERS, *(n for n, _ in specs)}))
    answers_path = None if answers is None else check_file(Path(answers), "answers", "--answers FILE: JSONL")
    answer_rows = None if answers_path is None else outside.read_answers(answers_path, list(queries), loaded.corpus)
    return SimpleNamespace(out=out, documents=documents, questions=questions, llm_mode=llm_mode, source=source,
                           asker=asker, labels=labels, fmt=fmt, size=size, overlap=overlap, ks=ks, judged=judged,
                           specs=specs, answers_path=answers_path, answer_rows=answer_rows, loaded=loaded,
                           queries=list(queries), rerank=plan)  # fmt: skip


# ---------------------------------------------------------------- the setting, the runs, the judgements


def build(a: SimpleNamespace) -> tuple:
    """``(s, ranked, outsiders)`` for checked arguments ``a``: the setting with the judgements added to its qrels
    (a copy: the cached setting is not changed), every run over the chunks (the built-in retrievers and the
    outside TREC runs, every question present; with ``--rerank`` also :data:`labkit.commands.reranker.NAME`, which
    holds only the questions it is measured on), and the outside runs as read."""
    base = capstone.setting(a.documents, a.questions, a.size, a.overlap)
    s = SimpleNamespace(**vars(base))
    s.qrels = {q: dict(j) for q, j in base.qrels.items()}
    s.n_judged = s.n_judged_relevant = 0
    if a.judged:
        by_text: dict[str, list[str]] = {}
        for c in s.chunks:
            by_text.setdefault(normalise_space(c.text), []).append(c.id)
        for (q, text), grade in a.judged.items():
            for c in by_text.get(text, []):
                s.qrels.setdefault(q, {})[c] = max(grade, s.qrels.get(q, {}).get(c, 0))
    ranked = capstone.runs(s)
    if a.rerank is not None:  # after the judgements joined the qrels: a dev question's judgements train it too
        ranked[reranker.NAME] = reranker.run(a.rerank, s, ranked["hybrid"])
    qids = [q.qid for q in s.queries]
    outsiders = [outside.read_run(name, path, qids, s.texts) for name, path in a.specs]
    texts = {normalise_space(t) for t in s.texts.values()} | {
        normalise_space(t) for o in outsiders for t in o.texts.values()
    }
    used = {key: g for key, g in a.judged.items() if key[1] in texts}
    s.n_judged, s.n_judged_relevant = len(used), sum(g >= 1 for g in used.values())
    s.n_judged_unmatched = len(a.judged) - len(used)
    for o in outsiders:
        if not o.own:
            ranked[o.name] = o.ranked
    return s, ranked, outsiders
