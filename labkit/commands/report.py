"""``python -m labkit report``: chapter 10's retrieval measurements for any folder, as one HTML page and TREC files.

    python -m labkit report DOCS --queries Q.jsonl --out DIR
    python -m labkit report --out DIR                      # the bundled Python documentation and its FAQ

``DOCS`` is a folder of Markdown, text and HTML (:func:`labkit.data.folder.load_folder`); ``Q.jsonl`` holds labelled
questions in the schema of ``data/queries.jsonl`` with ``doc`` a path relative to ``DOCS``
(:func:`labkit.studies.capstone.load_question_file`). ``DIR`` receives ``report.html`` (what was read and skipped,
each retriever's Recall, nDCG, hit and evidence recall at the reader's k and at 10 with 95 % intervals, the
hybrid against each retriever as paired differences, evidence recall per question kind, a figure, and the
conventions every number carries), ``qrels.txt`` and one ``run-<retriever>.txt`` per retriever in TREC format
(for trec_eval or ranx), with each question's top 3 per retriever and its judgement (or "unjudged") and judged@k.
``--format json`` writes ``report.json`` (the same figures, unrounded) instead of the page, for scripts and CI.

Gold offsets count in the text the tool extracts (:data:`labkit.data.quotes.GOLD_RULE`; ``python -m labkit text``
prints it), or gold is a ``quote`` found there; every question is checked before anything is embedded. Questions
marked ``"answerable": false`` (no gold) are left out of the retrieval means, said and counted, and kept for the
reader. Chunk ids TREC cannot hold (whitespace in a file name) are percent-encoded in the TREC files and listed in
``ids.tsv`` (:mod:`labkit.data.trec_ids`). Means over fewer than :data:`MIN_N` questions carry a warning. The files
are written into a temporary folder beside ``DIR`` and moved in at the end: a failure leaves nothing partial in
``DIR``. Nothing is written anywhere but ``DIR`` and the user cache (embeddings).

With ``--llm MODE`` (``replay``, ``local``, ``local-small`` or ``live``, as ``LABKIT_LLM`` names them; ``live`` is
any OpenAI-compatible endpoint named by ``LABKIT_LLM_BASE_URL``) the reader answers every question over the
hybrid's top 3 (:func:`labkit.studies.capstone.answers`; ``--source`` and ``--asker`` say in its prompt whose
documents they are and who asks), and ``DIR`` also receives ``answers.jsonl``, one row per answer. Label those
answers (``{"qid": ..., "label": "right" | "partly" | "wrong" | "declined"}`` per line, chapter 07's rubric) and pass
the file as ``--answer-labels`` to add chapter 07's 2x2 (retrieval against answer) with Wilson intervals.

    python -m labkit report DOCS --queries Q.jsonl --out DIR --llm local --source "the Acme manual" --asker "a user"
    python -m labkit report DOCS --queries Q.jsonl --out DIR --llm local --answer-labels DIR/labels.jsonl
"""

from __future__ import annotations

import base64
import html
import json
import shutil
import tempfile
from pathlib import Path

from labkit.core.files import path_arg, write_roots
from labkit.data import quotes, trec, trec_ids
from labkit.generation import llm
from labkit.generation import reader as rd
from labkit.judges import correctness
from labkit.measures import stats
from labkit.studies import capstone
from labkit.ui import plots

__all__ = ["write_report", "KS", "MIN_N", "FORMATS"]

KS = (3, 10)
"""The reader's k (chapters 06-09 read the top 3) and a deeper look."""

MIN_N = 10
"""Under this many questions a mean (overall, or per kind) is printed with a warning: its interval is too wide to
compare retrievers on, read it as a hint."""
FORMATS = ("html", "json")
"""``html``: report.html for a reader; ``json``: report.json for a script or CI (the same figures, unrounded)."""

GRADED = "; IDCG over every judged chunk (trec_eval's)"
"""What the report adds to a graded metric's definition: capstone.per_query uses evaluate's default IDCG."""

CONVENTIONS = [
    ("k", "3 (what the reader reads) and 10"),
    ("document", "a chunk of the folder's documents: what the retrievers rank and the questions' gold is remapped to"),
    ("relevant", "a chunk with grade >= 1: it holds a gold span, or a piece of one (grade 1 after remapping)"),
    *((m.name, m.definition + (GRADED if m.family == "graded" else "")) for m in capstone.METRICS),
    ("ER@k", "share of the question's gold spans of grade >= 2 held whole by a chunk of the top k"),
    ("gold", quotes.GOLD_RULE),
    (
        "unanswerable questions",
        'marked "answerable": false with no gold: left out of every retrieval mean (their '
        "count is said), kept for the reader, who should decline them",
    ),
    (
        "judged@k",
        "share of the top k that is judged (touches a gold span); the rest count as not relevant though "
        "nobody looked at them",
    ),
    ("small samples", f"a mean over fewer than {MIN_N} questions is flagged: a hint, not a finding"),
    ("ties", "score descending, then chunk id descending (trec_eval's rule)"),
    ("split", "all questions, dev and test together (nothing is trained or chosen here)"),
    ("intervals", "95 %: percentile bootstrap (2,000 resamples, seeded), Wilson for 0/1; differences paired"),
]


def _table(frame) -> str:
    return frame.to_html(classes="table", border=0, escape=True)


def _figure(fig) -> str:
    data = base64.b64encode(plots.figure_png(fig)).decode()
    return f'<img alt="figure" src="data:image/png;base64,{data}">'


def _answers_section(s, ranked, mode, source, asker, documents, labels):
    """(HTML, rows for answers.jsonl, JSON figures): the reader's answers, what share declined and whether the
    evidence was read; the unanswerable questions' declined share (they should be declined); with labels, chapter
    07's 2x2 over the answerable questions."""
    import pandas as pd

    client = llm.client(mode, what="--llm")
    default = capstone.ABOUT if documents is None else capstone.FOLDER
    about = capstone.About(source or default.source, asker or default.asker)
    table = capstone.answers(s, client, about, ranked=ranked)
    table["declined"] = table["answer"].map(rd.says_dont_know)
    asked, unanswerable = table[table["answerable"]], table[~table["answerable"]]
    counts = {
        "top 3 holds a grade-3 span": (int(asked["retrieved"].sum()), len(asked)),
        "the reader declined": (int(asked["declined"].sum()), len(asked)),
    }
    if len(unanswerable):
        counts["unanswerable: declined, as it should"] = (int(unanswerable["declined"].sum()), len(unanswerable))
    shares = pd.DataFrame({what: {"answers": f"{c} of {n}", "share": stats.fmt_ci(*stats.wilson(c, n))}
                           for what, (c, n) in counts.items() if n}).T  # fmt: skip
    part = (f"<h2>The reader's answers (top 3, {html.escape(mode)})</h2><p>Prompt: {html.escape(about.head)}</p>"
            f"{_table(shares)}{_table(pd.crosstab(asked['retrieved'], asked['declined']))}")  # fmt: skip
    figures = {what: {"count": c, "of": n} for what, (c, n) in counts.items()}
    if labels is not None:
        grid = capstone.two_by_two(asked, {q: r["label"] for q, r in labels.items()})
        figures["2x2"] = {cell: int(n) for cell, n in grid["answers"].items()}
        cells = [stats.fmt_ci(*r) for r in grid[["share", "low", "high"]].itertuples(index=False)]
        grid = pd.DataFrame({"answers": grid["answers"].astype(int), "share": cells}, index=grid.index)
        part += ("<h3>Retrieval against answer (chapter 07's 2x2 over the answerable questions; only <i>right</i> "
                 "passes)</h3>" + _table(grid))  # fmt: skip
    return part, table.to_dict("records"), figures


def _check_out(out: str | Path) -> Path:
    """``out`` resolved, refused before anything slow when it is a file or outside the folders labkit writes to."""
    out = Path(path_arg("out", out)).expanduser()
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {out} is a file: give a folder for the report")
    if not any(out.resolve().is_relative_to(r) for r in write_roots()):
        raise ValueError(f"--out {out} is outside the folders labkit writes to ({', '.join(map(str, write_roots()))})"
                         ": write inside your workbook folder, or add the folder to LABKIT_WRITE_DIRS")  # fmt: skip
    return out


def _small(n: int) -> str:
    return f"fewer than {MIN_N} questions: a hint, not a finding" if n < MIN_N else ""


def _measures(s, ranked) -> dict:
    """Every figure of the report, as frames (HTML) and plain numbers (JSON)."""
    import pandas as pd

    at = {k: capstone.per_query(s, k, ranked) for k in KS}
    metric_cols = lambda f: [c for c in f.columns if c not in ("split", "kind")]  # noqa: E731
    raw = {k: stats.group_means_ci(f.assign(all="all"), "all", metric_cols(f)) for k, f in at.items()}
    means = pd.concat({k: stats.fmt_ci_table(g) for k, g in raw.items()}, names=["k"]).droplevel(1).T
    rows, paired_json = [], []
    for k, f in at.items():
        for other in ("bm25", "dense"):
            d = stats.diff_ci(f["nDCG@k hybrid"], f[f"nDCG@k {other}"], paired=True)
            rows.append({"k": k, "hybrid minus": other, "nDCG@k difference": stats.fmt_ci(d["difference"], d["low"],
                                                                                           d["high"])})  # fmt: skip
            paired_json.append(
                {"k": k, "hybrid minus": other, **{x: float(d[x]) for x in ("difference", "low", "high")}}
            )
    kinds = stats.group_means_ci(at[10], "kind", [f"ER@k {r}" for r in capstone.RETRIEVERS])
    by_kind = stats.fmt_ci_table(kinds)
    by_kind["note"] = [_small(int(n)) for n in kinds["n"]]
    judged = pd.DataFrame({f"judged@{k}": capstone.judged_at_k(s, ranked, k) for k in KS}).round(3)
    n_asked = len(at[3])
    warnings = [f"only {n_asked} answerable question(s): {_small(n_asked)}"] if n_asked < MIN_N else []
    warnings += [f"kind {kind}: {int(n)} question(s): {_small(int(n))}" for kind, n in kinds["n"].items() if n < MIN_N]
    as_json = {
        "means": {
            str(k): {c: (None if pd.isna(v) else float(v)) for c, v in g.iloc[0].items()} for k, g in raw.items()
        },
        "paired": paired_json,
        "by_kind": {kind: {c: float(v) for c, v in row.items()} for kind, row in kinds.iterrows()},
        "judged": {c: {r: float(v) for r, v in col.items()} for c, col in judged.items()},
        "warnings": warnings,
    }
    return {"at": at, "means": means, "paired": pd.DataFrame(rows).set_index(["k", "hybrid minus"]),
            "by_kind": by_kind, "judged": judged, "warnings": warnings, "json": as_json}  # fmt: skip


def write_report(
    out: str | Path,
    documents: str | None = None,
    questions: str | None = None,
    llm_mode: str | None = None,
    source: str | None = None,
    asker: str | None = None,
    answer_labels: str | None = None,
    fmt: str = "html",
) -> dict[str, Path]:
    """Measure ``documents`` against ``questions`` (default: the bundled corpus) and write the report into ``out``
    (created if missing; files of the same names are replaced). ``llm_mode`` (a mode of
    :data:`labkit.generation.llm.MODES`) adds the reader's answers, ``answer_labels`` their 2x2; ``fmt`` is one of
    :data:`FORMATS`. Everything that can be checked is checked before anything is embedded (the questions' gold,
    the labels file, ``out``); the files are written into a temporary folder beside ``out`` and moved in at the
    end, so a failure leaves nothing partial in ``out``. Prints a summary; returns ``{name: path}`` written."""
    import pandas as pd

    if documents is not None and questions is None:
        raise ValueError("questions is missing: give --queries Q.jsonl for your folder (see python -m labkit -h)")
    if llm_mode is None and (answer_labels is not None or source is not None or asker is not None):
        raise ValueError("--answer-labels, --source and --asker need --llm MODE (replay, local, local-small or live)")
    if fmt not in FORMATS:
        raise ValueError(f"--format must be one of {FORMATS}, got {fmt!r}")
    out = _check_out(out)
    loaded, queries = capstone.documents_and_questions(documents, questions)  # gold checked: nothing embedded yet
    labels = None
    if answer_labels is not None:
        labels = correctness.read_answer_labels(answer_labels, {q.qid for q in queries})
    n_out = sum(not q.answerable for q in queries)
    print(f"documents: {loaded.summary()}")
    for x in loaded.skipped:
        print(f"  skipped {x.path}: {x.reason}")
    print(f"questions: {len(queries)} ({len(queries) - n_out} answerable, {n_out} marked unanswerable)")
    s = capstone.setting(documents, questions)
    ranked = capstone.runs(s)
    mapping = trec_ids.id_map([c.id for c in s.chunks])
    m = _measures(s, ranked)
    tops = capstone.top_passages(s, ranked)
    answers_part, answer_rows, answer_json = ("", None, None) if llm_mode is None else _answers_section(
        s, ranked, llm_mode, source, asker, documents, labels)  # fmt: skip
    files: dict[str, str] = {"qrels": "qrels.txt", **{f"run-{r}": f"run-{r}.txt" for r in ranked}}
    notes = [f"{n_out} question(s) marked unanswerable are left out of the retrieval means"] if n_out else []
    if mapping:
        files["ids"] = "ids.tsv"
        notes.append(f"{len(mapping)} chunk ids hold whitespace or %: written percent-encoded in the TREC files, "
                     "listed in ids.tsv")  # fmt: skip
    summary = (f"{loaded.summary()}. {len(s.chunks):,} chunks of {s.size} words (overlap {s.overlap}). "
               f"{len(queries)} labelled questions, {len(queries) - n_out} answerable.")  # fmt: skip
    if fmt == "json":
        files["report"] = "report.json"
        report_text = json.dumps({"documents": summary, "skipped": [[x.path, x.reason] for x in loaded.skipped],
                                  "chunks": len(s.chunks), "questions": len(queries), "unanswerable": n_out,
                                  "notes": notes, **m["json"], "answers": answer_json,
                                  "top3": tops.to_dict("records")}, ensure_ascii=False, indent=1)  # fmt: skip
    else:
        files["report"] = "report.html"
        report_text = _page(s, m, tops, summary, notes, answers_part, files)
    if answer_rows is not None:
        files["answers"] = "answers.jsonl"
    for line in notes + [f"warning: {w}" for w in m["warnings"]]:
        print(line)
    print(pd.DataFrame(m["json"]["judged"]).round(3).to_string())
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent))
    try:
        (tmp / files["report"]).write_text(report_text, encoding="utf-8")
        trec.write_qrels(trec_ids.safe_qrels(s.qrels, mapping), tmp / files["qrels"])
        for name, run in ranked.items():
            trec.write_run(trec_ids.safe_run(run, mapping), tmp / files[f"run-{name}"], tag=name)
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


def _page(s, m, tops, summary, notes, answers_part, files) -> str:
    """report.html."""
    import pandas as pd

    long = m["at"][3].melt(value_vars=[f"nDCG@k {r}" for r in capstone.RETRIEVERS], var_name="retriever",
                           value_name="nDCG@3")  # fmt: skip
    long["retriever"] = long["retriever"].str.removeprefix("nDCG@k ")
    figure = plots.plot_bars_ci(stats.group_means_ci(long, "retriever", "nDCG@3"), "nDCG@3",
                                "nDCG@3 per retriever, 95 % intervals")  # fmt: skip
    skipped = "".join(f"<li>{html.escape(x.path)}: {html.escape(x.reason)}</li>" for x in s.loaded.skipped)
    conventions = "".join(f"<tr><th>{html.escape(a)}</th><td>{html.escape(b)}</td></tr>" for a, b in CONVENTIONS)
    said = "".join(f"<p>{html.escape(x)}.</p>" for x in notes)
    said += "".join(f"<p><b>Warning</b>: {html.escape(w)}.</p>" for w in m["warnings"])
    top = tops.pivot_table(index=["qid", "rank"], columns="retriever", values=["chunk", "judgement"], aggfunc="first")
    top.columns = [f"{r} {what}" for what, r in top.columns]
    top = top.reindex(columns=[f"{r} {w}" for r in capstone.RETRIEVERS for w in ("chunk", "judgement")])
    trec_files = ", ".join(v for k, v in files.items() if k != "report")
    return f"""<!DOCTYPE html><html><head><meta charset="utf-8"><title>Retrieval report</title>
<style>body{{font-family:sans-serif;max-width:60em;margin:2em auto}}table{{border-collapse:collapse}}
td,th{{padding:2px 8px;text-align:left;border-bottom:1px solid #ddd}}</style></head><body>
<h1>Retrieval report</h1>
<p>Documents: {html.escape(str(s.loaded.folder))}: {html.escape(summary)}</p>{said}
{f"<p>Skipped:</p><ul>{skipped}</ul>" if skipped else ""}
<h2>Retrieval at the reader's k and at 10</h2>{_table(m["means"])}
<h2>Hybrid against each retriever (paired, same questions)</h2>{_table(m["paired"])}
<h2>Evidence recall at 10 per question kind</h2>{_table(m["by_kind"])}
<h2>Judged share of each top k (judged@k)</h2>{_table(m["judged"])}
<h2>Figure</h2>{_figure(figure)}
{answers_part}
<h2>Each question's top 3 with its judgement</h2>{_table(pd.DataFrame(top))}
<h2>Conventions</h2><table>{conventions}</table>
<p>Files beside this page: {html.escape(trec_files)}.</p>
</body></html>
"""
