"""``python -m labkit report``: chapter 10's retrieval measurements for any folder, as one HTML page and TREC files.

    python -m labkit report DOCS --queries Q.jsonl --out DIR
    python -m labkit report --out DIR                      # the bundled Python documentation and its FAQ

``DOCS`` is a folder of Markdown, text and HTML (:func:`labkit.data.folder.load_folder`); ``Q.jsonl`` holds labelled
questions in the schema of ``data/queries.jsonl`` with ``doc`` a path relative to ``DOCS``
(:func:`labkit.studies.capstone.load_question_file`). ``DIR`` receives ``report.html`` (what was read and skipped,
each retriever's Recall, nDCG, hit and evidence recall at two cutoffs with 95 % intervals, every metric per
question kind, the comparisons declared before the numbers were read as one findings family, the follow-ups
measured as typed and as rewritten, a figure, and the conventions every number carries), ``qrels.txt`` and one
``run-<retriever>.txt`` per retriever in TREC format (for trec_eval or ranx), with each question's top 3 per
retriever and its judgement (or "unjudged") and judged@k. ``--format json`` writes ``report.json`` (the same
figures, unrounded) instead of the page, for scripts and CI. ``--size``, ``--overlap`` (words) choose the
chunking and ``--k`` the two cutoffs (default 3, the reader's k, and 10).

Gold offsets count in the text the tool extracts (:data:`labkit.data.quotes.GOLD_RULE`; ``python -m labkit text``
prints it), or gold is a ``quote`` found there; every question is checked before anything is embedded. Questions
marked ``"answerable": false`` (no gold) are left out of the retrieval means, said and counted, and kept for the
reader. ``--judgements FILE`` adds the judgements of ``python -m labkit judge`` (:mod:`labkit.commands.judge`) to the
gold: a passage judged relevant becomes gold for its question, one judged 0 is judged not relevant. Chunk ids TREC
cannot hold (whitespace in a file name) are percent-encoded in the TREC files and listed in ``ids.tsv``
(:mod:`labkit.data.trec_ids`). Means over fewer than :data:`MIN_N` questions carry a warning. The files are
written into a temporary folder beside ``DIR`` and moved in at the end: a failure leaves nothing partial in
``DIR``. Nothing is written anywhere but ``DIR`` and the user cache (embeddings).

Your own system (:mod:`labkit.commands.outside`): ``--run NAME=FILE`` (repeatable) measures an outside retriever
beside ours, from a TREC run over the report's chunk ids or from JSONL of ranked passages with their own text (then
relevance is the gold spans each passage holds whole); ``--answers FILE`` puts an outside RAG system's answers
through the reader evaluation below, with no model of ours.

``--rerank`` (:mod:`labkit.commands.reranker`) adds the run ``hybrid+rerank``: the hybrid's top 20 (04b's k1)
reordered by 04b's learned reranker, measured with the same metrics and compared with the hybrid in the same
findings family. It is trained on the questions marked ``"split": "dev"`` and then measured on the others only
(at least 10 dev questions with gold, or an error), or, when no question is marked dev, carried over from the
handbook (not trained on your questions); the report says which.

With ``--llm MODE`` (``replay``, ``local``, ``local-small`` or ``live``, as ``LABKIT_LLM`` names them; ``live`` is
any OpenAI-compatible endpoint named by ``LABKIT_LLM_BASE_URL``) the reader answers every question over the
hybrid's top 3 (:func:`labkit.studies.capstone.answers`; ``--source`` and ``--asker`` say in its prompt whose
documents they are and who asks), and ``DIR`` also receives ``answers.jsonl``, one row per answer. Label those
answers (``{"qid": ..., "label": "right" | "partly" | "wrong" | "declined"}`` per line, chapter 07's rubric) and pass
the file as ``--answer-labels`` to add chapter 07's 2x2 (retrieval against answer) with Wilson intervals.

    python -m labkit report DOCS --queries Q.jsonl --out DIR --llm local --source "the Acme manual" --asker "a user"
    python -m labkit report DOCS --queries Q.jsonl --out DIR --llm local --answer-labels DIR/labels.jsonl
    python -m labkit report DOCS --queries Q.jsonl --out DIR --run mine=mine.jsonl --answers mine-answers.jsonl

Every argument is checked once, where it enters (:func:`check_args`); the functions behind it trust those checks.
"""

from __future__ import annotations

import base64
import html
import json
import shutil
import tempfile
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

from labkit.commands import figures, reranker
from labkit.commands.entry import DEPTH, FORMATS, KS, MIN_N, build, check_args
from labkit.data import quotes, trec, trec_ids
from labkit.measures import stats
from labkit.studies import capstone
from labkit.text.chunking import DEFAULT_OVERLAP, DEFAULT_SIZE
from labkit.ui import plots

__all__ = ["write_report", "KS", "MIN_N", "FORMATS", "DEPTH"]

GRADED = "; IDCG over every judged chunk (trec_eval's)"
"""What the report adds to a graded metric's definition: capstone.per_query uses evaluate's default IDCG."""


def _conventions(ks: tuple[int, int], rerank=None) -> list[tuple[str, str]]:
    """The conventions table: every term the report's numbers carry (``rerank``: the checked ``--rerank`` plan)."""
    split = "all questions, dev and test together (nothing is trained or chosen here)"
    if rerank is not None and rerank.mode == "dev":
        split = (f'every retriever on all questions, except {reranker.NAME}: trained on the questions marked "dev", '
                 "measured on the others only")  # fmt: skip
    elif rerank is not None:
        split = (f"all questions, dev and test together ({reranker.NAME}'s model was trained on the handbook, not "
                 "on these questions)")  # fmt: skip
    return [
        ("k", f"{ks[0]} and {ks[1]} (the reader reads the hybrid's top {capstone.READER_K})"),
        (
            "document",
            "a chunk of the folder's documents: what the retrievers rank and the questions' gold is remapped to",
        ),  # fmt: skip
        (
            "relevant",
            "a chunk with grade >= 1: it holds a gold span, or a piece of one (grade 1 after remapping), "
            "or you judged it relevant (python -m labkit judge)",
        ),  # fmt: skip
        *((m.name, m.definition + (GRADED if m.family == "graded" else "")) for m in capstone.METRICS),
        ("ER@k", "share of the question's gold spans of grade >= 2 held whole by a chunk (or passage) of the top k"),
        ("gold", quotes.GOLD_RULE),
        (
            "judgements",
            "a passage judged with python -m labkit judge, matched by its question and its text "
            "(whitespace-normalised): grade >= 1 is gold, 0 judged not relevant",
        ),  # fmt: skip
        (
            "outside runs",
            "a TREC run over this report's chunks is measured as ours are; JSONL passages of their "
            "own chunking are relevant when they hold a gold span whole (or were judged), and only "
            "hit@k and ER@k, which do not depend on the chunking, are given for them",
        ),  # fmt: skip
        (
            "unanswerable questions",
            'marked "answerable": false with no gold: left out of every retrieval mean '
            "(their count is said), kept for the reader, who should decline them",
        ),  # fmt: skip
        (
            "follow-ups",
            "a question with rewritten text is searched by its rewritten text (what a chat system's "
            "rewriter gives the retriever); the follow-ups are also measured as typed, in their own "
            "table",
        ),  # fmt: skip
        (
            "judged@k",
            "share of the top k that is judged (touches a gold span, or was judged); the rest count as "
            "not relevant though nobody looked at them",
        ),  # fmt: skip
        ("small samples", f"a mean over fewer than {MIN_N} questions is flagged: a hint, not a finding"),
        ("ties", "score descending, then chunk id descending (trec_eval's rule)"),
        ("split", split),
        *(
            [(reranker.NAME, reranker.describe(rerank) + f"; the hybrid's ranks after {reranker.K1} follow unchanged")]
            if rerank is not None
            else []
        ),
        (
            "intervals",
            "means: 95 %, percentile bootstrap (2,000 resamples, seeded), Wilson for 0/1; comparisons: "
            "one findings family per k, declared before the numbers are read, simultaneous 95 % "
            "(labkit.measures.stats.findings)",
        ),  # fmt: skip
    ]


CONVENTIONS = _conventions(KS)


def _table(frame) -> str:
    return frame.to_html(classes="table", border=0, escape=True)


def _figure(fig) -> str:
    data = base64.b64encode(plots.figure_png(fig)).decode()
    return f'<img alt="figure" src="data:image/png;base64,{data}">'


# ---------------------------------------------------------------- the report


def write_report(
    out: str | Path,
    documents: str | None = None,
    questions: str | None = None,
    llm_mode: str | None = None,
    source: str | None = None,
    asker: str | None = None,
    answer_labels: str | None = None,
    fmt: str = "html",
    size: int = DEFAULT_SIZE,
    overlap: int = DEFAULT_OVERLAP,
    ks: tuple[int, int] = KS,
    judgements: str | None = None,
    runs: tuple[str, ...] = (),
    answers: str | None = None,
    rerank: bool = False,
) -> dict[str, Path]:
    """Measure ``documents`` against ``questions`` (default: the bundled corpus) and write the report into ``out``
    (created if missing; files of the same names are replaced). ``size``/``overlap`` chunk the documents, ``ks``
    are the two cutoffs; ``judgements`` is a file of ``python -m labkit judge``; ``runs`` are ``NAME=FILE`` outside
    runs and ``answers`` an outside system's answers (:mod:`labkit.commands.outside`). ``llm_mode`` (a mode of
    :data:`labkit.generation.llm.MODES`) adds our reader's answers instead, ``answer_labels`` the 2x2 of either;
    ``fmt`` is one of :data:`FORMATS`; ``rerank`` adds the learned reranker's run (:mod:`labkit.commands.reranker`).
    Everything that can be checked is checked before anything is embedded (:func:`check_args`); the files are
    written into a temporary folder beside ``out`` and moved in at the end, so a failure leaves nothing partial in
    ``out``. Prints a summary; returns ``{name: path}`` written."""
    a = check_args(out, documents, questions, llm_mode, source, asker, answer_labels, fmt, size, overlap, ks,
                   judgements, runs, answers, rerank, writes=True)  # fmt: skip
    return _write(a)


def _kinds_line(queries) -> str:
    counts = Counter(q.kind for q in queries if q.answerable)
    return ", ".join(f"{n} {kind}" for kind, n in sorted(counts.items()))


def _write(a: SimpleNamespace) -> dict[str, Path]:
    import pandas as pd

    loaded, queries = a.loaded, a.queries
    n_out = sum(not q.answerable for q in queries)
    print(f"documents: {loaded.summary()}")
    for x in loaded.skipped:
        print(f"  skipped {x.path}: {x.reason}")
    print(f"questions: {len(queries)} ({len(queries) - n_out} answerable, {n_out} marked unanswerable); "
          f"answerable by kind: {_kinds_line(queries)}")  # fmt: skip
    s, ranked, outsiders = build(a)
    print(f"chunks: {len(s.chunks):,} of {s.size} words (overlap {s.overlap})")
    for o in outsiders:
        print(f"run {o.name}: {o.path.name}, {o.kind}; {sum(map(len, o.ranked.values())):,} ranked passages")
    gold_words = "gold from your spans" + (f" + {s.n_judged} pooled judgements ({s.n_judged_relevant} relevant)"
                                          if a.judged else "")  # fmt: skip
    print(gold_words)
    if s.n_judged_unmatched:
        print(f"warning: {s.n_judged_unmatched} judgement(s) match no passage of this report (judged with another "
              "--size/--overlap, or another run?): they are not used")  # fmt: skip
    all_ids = [c.id for c in s.chunks] + [p for o in outsiders if o.own for p in o.texts]
    mapping = trec_ids.id_map(all_ids)
    m = figures.measures(a, s, ranked, outsiders)
    tops = m["tops"]
    answers_part, answer_rows, answer_json = figures.answers(a, s, ranked)
    files: dict[str, str] = {"qrels": "qrels.txt", **{f"run-{r}": f"run-{r}.txt" for r in ranked}}
    for o in outsiders:
        if o.own:
            files[f"qrels-{o.name}"] = f"qrels-{o.name}.txt"
            files[f"run-{o.name}"] = f"run-{o.name}.txt"
    notes = [f"{n_out} question(s) marked unanswerable are left out of the retrieval means"] if n_out else []
    if a.rerank is not None:
        notes.append(reranker.describe(a.rerank))
    if s.n_judged_unmatched:
        notes.append(f"{s.n_judged_unmatched} judgement(s) match no passage of this report and are not used")
    if mapping:
        files["ids"] = "ids.tsv"
        notes.append(f"{len(mapping)} chunk or passage ids hold whitespace or %: written percent-encoded in the "
                     "TREC files, listed in ids.tsv")  # fmt: skip
    if m["typed"] is not None:
        notes.append("follow-ups are searched by their rewritten text; they are also measured as typed, in their "
                     "own table")  # fmt: skip
    summary = (f"{loaded.summary()}. {len(s.chunks):,} chunks of {s.size} words (overlap {s.overlap}). "
               f"{len(queries)} labelled questions, {len(queries) - n_out} answerable; {gold_words}.")  # fmt: skip
    if a.fmt == "json":
        files["report"] = "report.json"
        report_text = json.dumps({"documents": summary, "skipped": [[x.path, x.reason] for x in loaded.skipped],
                                  "chunks": len(s.chunks), "size": s.size, "overlap": s.overlap, "k": list(a.ks),
                                  "questions": len(queries), "unanswerable": n_out,
                                  "judgements": {"read": s.n_judged, "relevant": s.n_judged_relevant},
                                  "runs": {o.name: o.kind for o in outsiders},
                                  "notes": notes, **m["json"], "answers": answer_json,
                                  "top3": tops.to_dict("records")}, ensure_ascii=False, indent=1)  # fmt: skip
    else:
        files["report"] = "report.html"
        report_text = _page(a, s, m, tops, summary, notes, answers_part, files)
    if answer_rows is not None:
        files["answers"] = "answers.jsonl"
    for line in notes + [f"warning: {w}" for w in m["warnings"]]:
        print(line)
    print(pd.DataFrame(m["json"]["judged"]).round(3).to_string())
    out = a.out
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent))
    safe_run = lambda run: {q: [mapping.get(c, c) for c in r] for q, r in run.items()}  # noqa: E731
    safe_qrels = lambda qrels: {q: {mapping.get(c, c): g for c, g in j.items()} for q, j in qrels.items()}  # noqa: E731
    try:
        (tmp / files["report"]).write_text(report_text, encoding="utf-8")
        trec.write_qrels(safe_qrels(s.qrels), tmp / files["qrels"])
        for name, run in ranked.items():
            trec.write_run(safe_run(run), tmp / files[f"run-{name}"], tag=name)
        for o in outsiders:
            if o.own:
                trec.write_qrels(safe_qrels(m["own_qrels"][o.name]), tmp / files[f"qrels-{o.name}"])
                trec.write_run(safe_run(o.ranked), tmp / files[f"run-{o.name}"], tag=o.name)
        if mapping:
            (tmp / files["ids"]).write_text(trec_ids.id_map_text(mapping), encoding="utf-8")
        if answer_rows is not None:
            (tmp / files["answers"]).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in answer_rows),
                                                encoding="utf-8")  # fmt: skip
        out.mkdir(exist_ok=True)
        for name in files.values():
            (tmp / name).replace(out / name)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return {key: out / name for key, name in files.items()}


def _page(a, s, m, tops, summary, notes, answers_part, files) -> str:
    """report.html."""
    import pandas as pd

    k0 = a.ks[0]
    names = [n for n in m["names"] if f"nDCG@k {n}" in m["at"][k0]]
    long = m["at"][k0].melt(value_vars=[f"nDCG@k {r}" for r in names], var_name="retriever",
                            value_name=f"nDCG@{k0}")  # fmt: skip
    long["retriever"] = long["retriever"].str.removeprefix("nDCG@k ")
    long = long.dropna()  # the reranked run has no figure on the dev questions it was trained on
    figure = plots.plot_bars_ci(stats.group_means_ci(long, "retriever", f"nDCG@{k0}"), f"nDCG@{k0}",
                                f"nDCG@{k0} per retriever, 95 % intervals")  # fmt: skip
    skipped = "".join(f"<li>{html.escape(x.path)}: {html.escape(x.reason)}</li>" for x in s.loaded.skipped)
    conv = "".join(f"<tr><th>{html.escape(x)}</th><td>{html.escape(y)}</td></tr>"
                   for x, y in _conventions(a.ks, a.rerank))  # fmt: skip
    said = "".join(f"<p>{html.escape(x)}.</p>" for x in notes)
    said += "".join(f"<p><b>Warning</b>: {html.escape(w)}.</p>" for w in m["warnings"])
    top = tops.pivot_table(index=["qid", "rank"], columns="retriever", values=["chunk", "judgement"], aggfunc="first")
    top.columns = [f"{r} {what}" for what, r in top.columns]
    top = top.reindex(columns=[f"{r} {w}" for r in m["names"] for w in ("chunk", "judgement")])
    kinds = "".join(f"<h3>k = {k}</h3>{_table(t)}" for k, t in m["by_kind"].items())
    typed = "" if m["typed"] is None else (
        "<h2>Follow-ups: as typed and as rewritten</h2><p>The report's other tables search a follow-up by its "
        "rewritten text; here the same questions are also searched as typed.</p>" + _table(m["typed"]))  # fmt: skip
    paired = m["paired"][["estimate", "low", "high", "verdict", "among", "sentence"]].round(3)
    trec_files = ", ".join(v for k, v in files.items() if k != "report")
    return f"""<!DOCTYPE html><html><head><meta charset="utf-8"><title>Retrieval report</title>
<style>body{{font-family:sans-serif;max-width:60em;margin:2em auto}}table{{border-collapse:collapse}}
td,th{{padding:2px 8px;text-align:left;border-bottom:1px solid #ddd}}</style></head><body>
<h1>Retrieval report</h1>
<p>Documents: {html.escape(str(s.loaded.folder))}: {html.escape(summary)}</p>{said}
{f"<p>Skipped:</p><ul>{skipped}</ul>" if skipped else ""}
<h2>Retrieval at k = {a.ks[0]} and k = {a.ks[1]}</h2>{_table(m["means"])}
<h2>Comparisons (paired, same questions; one family per k, declared before the numbers were read)</h2>
{_table(paired)}
<h2>Every metric per question kind</h2>{kinds}
{typed}
<h2>Judged share of each top k (judged@k)</h2>{_table(m["judged"])}
<h2>Figure</h2>{_figure(figure)}
{answers_part}
<h2>Each question's top 3 with its judgement</h2>{_table(pd.DataFrame(top))}
<h2>Conventions</h2><table>{conv}</table>
<p>Files beside this page: {html.escape(trec_files)}.</p>
</body></html>
"""
