"""``python -m labkit report``: chapter 10's retrieval measurements for any folder, as one HTML page and TREC files.

    python -m labkit report DOCS --queries Q.jsonl --out DIR
    python -m labkit report --out DIR                      # the bundled Python documentation and its FAQ

``DOCS`` is a folder of Markdown, text and HTML (:func:`labkit.data.folder.load_folder`); ``Q.jsonl`` holds labelled
questions in the schema of ``data/queries.jsonl`` with ``doc`` a path relative to ``DOCS``
(:func:`labkit.studies.capstone.load_question_file`). ``DIR`` receives ``report.html`` (what was read and skipped,
each retriever's Recall, nDCG, hit and evidence recall at the reader's k and at 10 with 95 % intervals, the
hybrid against each retriever as paired differences, evidence recall per question kind, a figure, and the
conventions every number carries), ``qrels.txt`` and one ``run-<retriever>.txt`` per retriever in TREC format
(for trec_eval or ranx). Nothing is written anywhere but ``DIR`` and the user cache (embeddings).

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
from pathlib import Path

from labkit.core.files import path_arg
from labkit.data import trec
from labkit.generation import llm
from labkit.generation import reader as rd
from labkit.judges import correctness
from labkit.measures import stats
from labkit.studies import capstone
from labkit.ui import plots

__all__ = ["write_report", "KS"]

KS = (3, 10)
"""The reader's k (chapters 06-09 read the top 3) and a deeper look."""

GRADED = "; IDCG over every judged chunk (trec_eval's)"
"""What the report adds to a graded metric's definition: capstone.per_query uses evaluate's default IDCG."""

CONVENTIONS = [
    ("k", "3 (what the reader reads) and 10"),
    ("document", "a chunk of the folder's documents: what the retrievers rank and the questions' gold is remapped to"),
    ("relevant", "a chunk with grade >= 1: it holds a gold span, or a piece of one (grade 1 after remapping)"),
    *((m.name, m.definition + (GRADED if m.family == "graded" else "")) for m in capstone.METRICS),
    ("ER@k", "share of the question's gold spans of grade >= 2 held whole by a chunk of the top k"),
    ("questions with nothing relevant", "refused when loaded: every question has a gold span"),
    ("ties", "score descending, then chunk id descending (trec_eval's rule)"),
    ("split", "all questions, dev and test together (nothing is trained or chosen here)"),
    ("intervals", "95 %: percentile bootstrap (2,000 resamples, seeded), Wilson for 0/1; differences paired"),
]


def _table(frame) -> str:
    return frame.to_html(classes="table", border=0, escape=True)


def _figure(fig) -> str:
    data = base64.b64encode(plots.figure_png(fig)).decode()
    return f'<img alt="figure" src="data:image/png;base64,{data}">'


def _answers_section(s, ranked, mode, source, asker, documents, labels_path):
    """(HTML, rows for answers.jsonl): the reader's answers, what share declined and whether the evidence was read;
    with labels, chapter 07's 2x2."""
    import pandas as pd

    client = llm.client(mode, what="--llm")
    default = capstone.ABOUT if documents is None else capstone.FOLDER
    about = capstone.About(source or default.source, asker or default.asker)
    table = capstone.answers(s, client, about, ranked=ranked)
    table["declined"] = table["answer"].map(rd.says_dont_know)
    n = len(table)
    counts = {
        "top 3 holds a grade-3 span": int(table["retrieved"].sum()),
        "the reader declined": int(table["declined"].sum()),
    }
    shares = pd.DataFrame({what: {"answers": f"{c} of {n}", "share": stats.fmt_ci(*stats.wilson(c, n))}
                           for what, c in counts.items()}).T  # fmt: skip
    part = (f"<h2>The reader's answers (top 3, {html.escape(mode)})</h2><p>Prompt: {html.escape(about.head)}</p>"
            f"{_table(shares)}{_table(pd.crosstab(table['retrieved'], table['declined']))}")  # fmt: skip
    if labels_path is not None:
        labels = correctness.read_answer_labels(labels_path, set(table["qid"]))
        grid = capstone.two_by_two(table, {q: r["label"] for q, r in labels.items()})
        cells = [stats.fmt_ci(*r) for r in grid[["share", "low", "high"]].itertuples(index=False)]
        grid = pd.DataFrame({"answers": grid["answers"].astype(int), "share": cells}, index=grid.index)
        part += "<h3>Retrieval against answer (chapter 07's 2x2; only <i>right</i> passes)</h3>" + _table(grid)
    rows = table.to_dict("records")
    return part, rows


def write_report(
    out: str | Path,
    documents: str | None = None,
    questions: str | None = None,
    llm_mode: str | None = None,
    source: str | None = None,
    asker: str | None = None,
    answer_labels: str | None = None,
) -> dict[str, Path]:
    """Measure ``documents`` against ``questions`` (default: the bundled corpus) and write the report into ``out``
    (created if missing; files of the same names are replaced). ``llm_mode`` (a mode of
    :data:`labkit.generation.llm.MODES`) adds
    the reader's answers, ``answer_labels`` their 2x2. Returns ``{name: path}`` of what was written."""
    import pandas as pd

    if documents is not None and questions is None:
        raise ValueError("questions is missing: give --queries Q.jsonl for your folder (see python -m labkit -h)")
    if llm_mode is None and (answer_labels is not None or source is not None or asker is not None):
        raise ValueError("--answer-labels, --source and --asker need --llm MODE (replay, local, local-small or live)")
    out = Path(path_arg("out", out)).expanduser()
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {out} is a file: give a folder for the report")
    s = capstone.setting(documents, questions)
    ranked = capstone.runs(s)
    at = {k: capstone.per_query(s, k, ranked) for k in KS}
    metric_cols = lambda f: [c for c in f.columns if c not in ("split", "kind")]  # noqa: E731
    means = pd.concat({k: stats.fmt_ci_table(stats.group_means_ci(f.assign(all="all"), "all", metric_cols(f)))
                       for k, f in at.items()}, names=["k"]).droplevel(1).T  # fmt: skip
    rows = []
    for k, f in at.items():
        for other in ("bm25", "dense"):
            d = stats.diff_ci(f["nDCG@k hybrid"], f[f"nDCG@k {other}"], paired=True)
            rows.append({"k": k, "hybrid minus": other, "nDCG@k difference": stats.fmt_ci(d["difference"], d["low"],
                                                                                           d["high"])})  # fmt: skip
    paired = pd.DataFrame(rows).set_index(["k", "hybrid minus"])
    by_kind = stats.fmt_ci_table(stats.group_means_ci(at[10], "kind", [f"ER@k {r}" for r in capstone.RETRIEVERS]))
    long = at[3].melt(value_vars=[f"nDCG@k {r}" for r in capstone.RETRIEVERS], var_name="retriever",
                      value_name="nDCG@3")  # fmt: skip
    long["retriever"] = long["retriever"].str.removeprefix("nDCG@k ")
    figure = plots.plot_bars_ci(stats.group_means_ci(long, "retriever", "nDCG@3"), "nDCG@3",
                                "nDCG@3 per retriever, 95 % intervals")  # fmt: skip
    answers_part, answer_rows = ("", None) if llm_mode is None else _answers_section(s, ranked, llm_mode, source, asker,
                                                                                documents, answer_labels)  # fmt: skip
    skipped = "".join(f"<li>{html.escape(x.path)}: {html.escape(x.reason)}</li>" for x in s.loaded.skipped)
    conventions = "".join(f"<tr><th>{html.escape(a)}</th><td>{html.escape(b)}</td></tr>" for a, b in CONVENTIONS)
    page = f"""<!DOCTYPE html><html><head><meta charset="utf-8"><title>Retrieval report</title>
<style>body{{font-family:sans-serif;max-width:60em;margin:2em auto}}table{{border-collapse:collapse}}
td,th{{padding:2px 8px;text-align:left;border-bottom:1px solid #ddd}}</style></head><body>
<h1>Retrieval report</h1>
<p>Documents: {html.escape(str(s.loaded.folder))}: {html.escape(s.loaded.summary())}. {len(s.chunks):,} chunks of 128
words (overlap 32). {len(s.queries)} labelled questions.</p>
{f"<p>Skipped:</p><ul>{skipped}</ul>" if skipped else ""}
<h2>Retrieval at the reader's k and at 10</h2>{_table(means)}
<h2>Hybrid against each retriever (paired, same questions)</h2>{_table(paired)}
<h2>Evidence recall at 10 per question kind</h2>{_table(by_kind)}
<h2>Figure</h2>{_figure(figure)}
{answers_part}
<h2>Conventions</h2><table>{conventions}</table>
<p>TREC files beside this page: qrels.txt, {", ".join(f"run-{r}.txt" for r in capstone.RETRIEVERS)}.</p>
</body></html>
"""
    out.mkdir(parents=True, exist_ok=True)
    written = {"report": out / "report.html", "qrels": out / "qrels.txt"}
    written["report"].write_text(page, encoding="utf-8")
    trec.write_qrels(s.qrels, written["qrels"])
    for name, run in ranked.items():
        path = out / f"run-{name}.txt"
        trec.write_run(run, path, tag=name)
        written[f"run-{name}"] = path
    if answer_rows is not None:
        written["answers"] = out / "answers.jsonl"
        written["answers"].write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in answer_rows),
                                      encoding="utf-8")  # fmt: skip
    return written
