"""The report's figures: every measure of every run per question, their means, the declared comparisons, per kind,
the follow-ups both ways, judged@k, each question's top 3, and the answers' evaluation.

Used by :mod:`labkit.commands.report` on arguments :func:`labkit.commands.entry.check_args` checked.
"""

from __future__ import annotations

import dataclasses
import html
from collections import Counter
from types import SimpleNamespace

from labkit.commands import outside, reranker
from labkit.commands.entry import DEPTH, MIN_N
from labkit.core import args
from labkit.generation import llm
from labkit.generation import reader as rd
from labkit.measures import stats
from labkit.retrieval.retrievers import make_run
from labkit.studies import capstone

__all__ = ["measures", "answers"]

CHECKED = ("ks", "judged", "llm_mode", "answer_rows", "labels", "rerank")
"""What :func:`labkit.commands.entry.check_args` returns and these functions read."""


def _table(frame) -> str:
    return frame.to_html(classes="table", border=0, escape=True)


def _small(n: int) -> str:
    return f"fewer than {MIN_N} questions: a hint, not a finding" if n < MIN_N else ""


def _judged_at_k(s, ranked, k, asked) -> dict[str, float]:
    """:func:`labkit.studies.capstone.judged_at_k` on checked arguments (the report's path checks them once), each
    run over the questions it holds (the reranked run holds no dev question)."""
    out = {}
    for name, run in ranked.items():
        qs = [q for q in asked if q in run]
        out[name] = sum(sum(c in s.qrels.get(q, {}) for c in run[q][:k]) / k for q in qs) / len(qs)
    return out


def _per_query(s, k, ranked, asked):
    """:func:`labkit.studies.capstone.per_query` of every run, a run that holds only some questions (the reranked
    run, without the dev questions it was trained on) measured on those alone: NaN on the others, so every mean
    and paired comparison of it is over its own questions."""
    full = {n: r for n, r in ranked.items() if all(q in r for q in asked)}
    frame = capstone.per_query(s, k, full)
    for name, run in ranked.items():
        if name not in full:
            part = SimpleNamespace(**vars(s))
            part.queries = [q for q in s.queries if q.qid in run]
            frame = frame.join(capstone.per_query(part, k, {name: run}).drop(columns=["split", "kind"]))
    return frame


def _top_passages(s, ranked, outsiders, own_qrels, n=capstone.READER_K):
    """:func:`labkit.studies.capstone.top_passages` with the outside runs, on checked arguments."""
    import pandas as pd

    rows = []
    runs = [(name, run, s.texts, s.qrels) for name, run in ranked.items()]
    runs += [(o.name, o.ranked, o.texts, own_qrels[o.name]) for o in outsiders if o.own]
    for q in s.queries:
        for name, run, texts, qrels in runs:
            for rank, c in enumerate(run.get(q.qid, [])[:n], start=1):
                grade = qrels.get(q.qid, {}).get(c)
                rows.append({"qid": q.qid, "answerable": q.answerable, "retriever": name, "rank": rank, "chunk": c,
                             "judgement": "unjudged" if grade is None else str(grade),
                             "text": " ".join(texts[c].split()[:16]) + " ..."})  # fmt: skip
    return pd.DataFrame(rows)


def _group_means(frame, by: str, cols: list[str]):
    """:func:`labkit.measures.stats.group_means_ci` of every column over the rows where it is defined (ER@k is
    undefined for a question without a gold span of grade >= 2); ``n`` is the group's number of questions."""
    import pandas as pd

    out = frame.groupby(by).size().to_frame("n")
    for c in cols:
        sub = frame.dropna(subset=[c])
        if len(sub):
            out = out.join(stats.group_means_ci(sub, by, [c]).drop(columns="n"))
        else:
            out[[c, f"{c} low", f"{c} high"]] = float("nan")
    return out.astype({"n": int}).rename_axis(by) if len(out) else pd.DataFrame()


def _note(row, partial: list[str]) -> str:
    """A group's small-sample note: its own ``n``, then each partial run's ``n <run>`` that is small too."""
    small = {name: _small(int(row[f"n {name}"])) for name in partial}
    notes = [_small(int(row["n"])), *(f"{name}: {why}" for name, why in small.items() if why)]
    return "; ".join(x for x in notes if x)


def _partial_n(table, frame, by: str, partial: list[str]):
    """``table`` (a :func:`_group_means` table, formatted) with ``n <run>`` after its ``n`` for each run in
    ``partial`` (a run holding only some questions: the reranked run, without its dev questions): how many of the
    group's questions that run's means are over."""
    for i, name in enumerate(partial, start=1):
        counts = frame[f"nDCG@k {name}"].notna().groupby(frame[by]).sum()
        table.insert(i, f"n {name}", [int(counts.get(g, 0)) for g in table.index])
    return table


def _own_columns(frame, o, k, gold, qrels) -> None:
    """hit@k and ER@k of an outside run of its own passages, added to ``frame`` (one row per answerable
    question)."""
    frame[f"hit@k {o.name}"] = [float(any(qrels[q].get(p, 0) >= 1 for p in o.ranked[q][:k])) for q in frame.index]
    er = [outside.evidence([o.texts[p] for p in o.ranked[q][:k]], gold[q]) for q in frame.index]
    frame[f"ER@k {o.name}"] = [float("nan") if x is None else x for x in er]


def _members(names: list[str], outsiders) -> dict[str, tuple[str, str, str]]:
    """The comparisons of one cutoff, declared from the arguments alone: ``{member: (a, b, metric)}``."""
    out = {f"hybrid − {r} (nDCG@k)": ("hybrid", r, "nDCG@k") for r in ("bm25", "dense")}
    own = {o.name for o in outsiders if o.own}
    for name in names:
        if name not in capstone.RETRIEVERS:
            metric = "ER@k" if name in own else "nDCG@k"
            out[f"{name} − hybrid ({metric})"] = (name, "hybrid", metric)
    return out


def measures(a: SimpleNamespace, s: SimpleNamespace, ranked: dict, outsiders: list) -> dict:
    """Every figure of the report, as frames (HTML) and plain numbers (JSON), for the checked arguments ``a`` and
    what :func:`labkit.commands.entry.build` made of them."""
    import pandas as pd

    args.attributes("a", a, CHECKED, "labkit.commands.entry.check_args(...)")
    asked = [q.qid for q in s.queries if q.answerable]
    if not asked:
        raise ValueError("every question is marked unanswerable: retrieval needs questions with gold to measure")
    gold = outside.gold_texts(s.queries, s.corpus)
    own_qrels = {o.name: outside.passage_qrels(o, gold, a.judged) for o in outsiders if o.own}
    names = [*ranked, *own_qrels]
    at = {}
    for k in a.ks:
        frame = _per_query(s, k, ranked, asked)
        for o in outsiders:
            if o.own:
                _own_columns(frame, o, k, gold, own_qrels[o.name])
        at[k] = frame
    metric_cols = lambda f: [c for c in f.columns if c not in ("split", "kind")]  # noqa: E731
    raw = {k: _group_means(f.assign(all="all"), "all", metric_cols(f)) for k, f in at.items()}
    means = pd.concat({k: stats.fmt_ci_table(g) for k, g in raw.items()}, names=["k"]).droplevel(1).T
    n_rerank = None if a.rerank is None else a.rerank.n_measured
    if n_rerank is not None:  # its own questions: the dev ones trained it
        means.loc[f"n {reranker.NAME}"] = n_rerank
    members = _members(names, outsiders)
    found_rows, found_json = [], []
    for k, f in at.items():
        family = stats.Family(f"report comparisons at k={k}", list(members))  # declared before reading numbers
        data = {}
        for member, (x, y, metric) in members.items():
            pair = f[[f"{metric} {x}", f"{metric} {y}"]].dropna()
            data[member] = (pair.iloc[:, 0], pair.iloc[:, 1])
        found = family.findings(data, kind="paired graded")
        table = stats.findings_table(found)
        found_rows.append(table.assign(k=k).set_index("k", append=True).swaplevel())
        found_json += [{"k": k, **row} for row in table.reset_index().to_dict("records")]
    paired = pd.concat(found_rows)
    partial = [name for name, run in ranked.items() if any(q not in run for q in asked)]  # the reranked run
    by_kind, kinds_json = {}, {}
    for k, f in at.items():
        kinds = _group_means(f, "kind", metric_cols(f))
        table = _partial_n(stats.fmt_ci_table(kinds), f, "kind", partial)
        table["note"] = [_note(row, partial) for _, row in table.iterrows()]
        by_kind[k] = table
        kinds_json[str(k)] = {kind: {c: (None if pd.isna(v) else float(v)) for c, v in row.items()}
                              | {f"n {name}": int(table.loc[kind, f"n {name}"]) for name in partial}
                              for kind, row in kinds.iterrows()}  # fmt: skip
    judged = pd.DataFrame({f"judged@{k}": _judged_at_k(s, ranked, k, asked) for k in a.ks})
    for o in outsiders:
        if o.own:
            judged.loc[o.name] = [sum(sum(p in own_qrels[o.name][q] for p in o.ranked[q][:k]) / k for q in asked)
                                  / len(asked) for k in a.ks]  # fmt: skip
    judged = judged.round(3)
    n_asked = len(asked)
    warnings = [f"only {n_asked} answerable question(s): {_small(n_asked)}"] if n_asked < MIN_N else []
    warnings += [f"kind {kind}: {n} question(s): {_small(n)}"
                 for kind, n in sorted(Counter(at[a.ks[0]]["kind"]).items()) if n < MIN_N]  # fmt: skip
    if n_rerank is not None and n_rerank < MIN_N:
        warnings.append(f"{reranker.NAME} is measured on {n_rerank} question(s): {_small(n_rerank)}")
    typed, typed_json = _follow_ups(a, s, at, partial)
    as_json = {
        "means": {
            str(k): {c: (None if pd.isna(v) else float(v)) for c, v in g.iloc[0].items()}
            | ({} if n_rerank is None else {f"n {reranker.NAME}": n_rerank})
            for k, g in raw.items()
        },
        "paired": found_json,
        "by_kind": kinds_json,
        "follow_ups": typed_json,
        "judged": {c: {r: float(v) for r, v in col.items()} for c, col in judged.items()},
        "warnings": warnings,
        "rerank": None if a.rerank is None else {
            "run": reranker.NAME, "k1": reranker.K1, "trained on": a.rerank.mode,
            "dev questions": [q.qid for q in a.rerank.train], "measured on": n_rerank,
            "said": reranker.describe(a.rerank)},
    }  # fmt: skip
    tops = _top_passages(s, ranked, outsiders, own_qrels)
    return {"tops": tops, "at": at, "means": means, "paired": paired, "by_kind": by_kind, "judged": judged,
            "typed": typed, "warnings": warnings, "json": as_json, "own_qrels": own_qrels, "names": names}  # fmt: skip


def _follow_ups(a, s, at, partial):
    """The follow-ups (questions with ``rewritten``) measured both ways by the built-in retrievers and, with
    ``--rerank``, the reranked run (the same model, on the follow-ups it is measured on: ``n <run>``): as typed (the
    question alone) and as rewritten (what the retrievers are given everywhere else in the report)."""
    import pandas as pd

    follow = [q for q in s.queries if q.answerable and q.rewritten]
    if not follow:
        return None, None
    typed_q = [dataclasses.replace(q, rewritten=None) for q in follow]
    st = SimpleNamespace(**vars(s))
    st.queries = typed_q
    ranked = {name: make_run(getattr(s, name), typed_q, DEPTH) for name in capstone.RETRIEVERS}
    if a.rerank is not None:
        ranked[reranker.NAME] = reranker.run(a.rerank, st, ranked["hybrid"])
    qids = [q.qid for q in follow]
    cols = [f"{m} {r}" for r in ranked for m in ("R@k", "nDCG@k", "hit@k", "ER@k")]
    frames, js = {}, {}
    for k in a.ks:
        both = pd.concat([at[k].loc[qids, cols].assign(searched="as rewritten (the report's rows)"),
                          _per_query(st, k, ranked, qids)[cols].assign(searched="as typed")])  # fmt: skip
        g = _group_means(both, "searched", cols)
        frames[k] = _partial_n(stats.fmt_ci_table(g), both, "searched", partial)
        js[str(k)] = {w: {c: (None if pd.isna(v) else float(v)) for c, v in row.items()}
                      | {f"n {name}": int(frames[k].loc[w, f"n {name}"]) for name in partial}
                      for w, row in g.iterrows()}  # fmt: skip
    return pd.concat(frames, names=["k"]), js


# ---------------------------------------------------------------- the reader's answers


def answers(a: SimpleNamespace, s: SimpleNamespace, ranked: dict) -> tuple:
    """(HTML, rows for answers.jsonl, JSON figures) of the answers to evaluate (``("", None, None)`` without):
    our reader's over the hybrid's top 3 (``--llm``) or an outside system's (``--answers``)."""
    args.attributes("a", a, CHECKED, "labkit.commands.entry.check_args(...)")
    table, title, head = _answers_table(a, s, ranked)
    return ("", None, None) if table is None else _answers_section(table, title, head, a.labels)


def _answers_table(a, s, ranked):
    """The answers to evaluate: our reader's over the hybrid's top 3 (``--llm``) or an outside system's
    (``--answers``); None without either."""
    import pandas as pd

    if a.answer_rows is not None:
        return pd.DataFrame(a.answer_rows), f"your system's answers ({a.answers_path.name})", ""
    if a.llm_mode is None:
        return None, "", ""
    client = llm.client(a.llm_mode, what="--llm")
    default = capstone.ABOUT if a.documents is None else capstone.FOLDER
    about = capstone.About(a.source or default.source, a.asker or default.asker)
    table = capstone.answers(s, client, about, ranked=ranked)
    reader = f"{client.model} ({a.llm_mode})"  # each answer says which model wrote it, and how it was reached
    table["reader"] = reader
    return table, f"the reader's answers (top 3, {reader})", f"<p>Prompt: {html.escape(about.head)}</p>"


def _answers_section(table, title, head, labels):
    """(HTML, rows for answers.jsonl, JSON figures): the answers, what share declined and whether the evidence
    was read; the unanswerable questions' declined share (they should be declined); with labels, chapter 07's 2x2
    over the answerable questions."""
    import pandas as pd

    table = table.copy()
    table["declined"] = table["answer"].map(rd.says_dont_know)
    asked, unanswerable = table[table["answerable"]], table[~table["answerable"]]
    counts = {
        "the passages read hold a grade-3 span": (int(asked["retrieved"].sum()), len(asked)),
        "the reader declined": (int(asked["declined"].sum()), len(asked)),
    }
    if len(unanswerable):
        counts["unanswerable: declined, as it should"] = (int(unanswerable["declined"].sum()), len(unanswerable))
    shares = pd.DataFrame({what: {"answers": f"{c} of {n}", "share": stats.fmt_ci(*stats.wilson(c, n))}
                           for what, (c, n) in counts.items() if n}).T  # fmt: skip
    part = (f"<h2>{html.escape(title[:1].upper() + title[1:])}</h2>{head}"
            f"{_table(shares)}{_table(pd.crosstab(asked['retrieved'], asked['declined']))}")  # fmt: skip
    figures = {"of": title, **{what: {"count": c, "of": n} for what, (c, n) in counts.items()}}
    if labels is not None:
        grid = capstone.two_by_two(asked, {q: r["label"] for q, r in labels.items()})
        figures["2x2"] = {cell: int(n) for cell, n in grid["answers"].items()}
        cells = [stats.fmt_ci(*r) for r in grid[["share", "low", "high"]].itertuples(index=False)]
        grid = pd.DataFrame({"answers": grid["answers"].astype(int), "share": cells}, index=grid.index)
        part += ("<h3>Retrieval against answer (chapter 07's 2x2 over the answerable questions; only <i>right</i> "
                 "passes)</h3>" + _table(grid))  # fmt: skip
    return part, table.to_dict("records"), figures
