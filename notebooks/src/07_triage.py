# %% [markdown]
# # 07 · Triage: retrieval failure or generation failure?
#
# **You will learn** the most useful diagnostic of the chapter: for every trace, ask separately whether the
# evidence reached the generator and whether the answer passed, count the four cells, and let the counts say
# which stage to fix first.
#
# Source: section 7.9 of the chapter notes (and the pitfalls of 7.11).

# %%
import labkit
from labkit import check, plots, triage, widgets

labkit.setup()

# %% [markdown]
# ## The 2×2
#
# Two independent questions per trace: *did retrieval put a gold chunk in the top k the generator read?* and
# *did the final answer pass* (a human label, or a judge calibrated against humans, chapter 06)?
#
# | | answer passes | answer fails |
# |---|---|---|
# | **gold retrieved** | `OK` | `GEN_FAIL`: the evidence was there, the generator missed it |
# | **gold not retrieved** | `LUCKY`: right without evidence | `RET_FAIL`: no prompt change can fix this |
#
# The source chapter's four toy traces, from scratch:

# %%
from collections import Counter

from labkit.toys import TRIAGE_TRACES

rows = TRIAGE_TRACES
for row in rows:
    print(row)


def my_quadrant(row, k=5):
    retrieved_ok = any(g in row["retrieved"][:k] for g in row["gold"])
    return {(True, True): "OK", (True, False): "GEN_FAIL",
            (False, True): "LUCKY", (False, False): "RET_FAIL"}[(retrieved_ok, row["answer_pass"])]  # fmt: skip


counts = Counter(my_quadrant(r) for r in rows)
for q in ["OK", "GEN_FAIL", "LUCKY", "RET_FAIL"]:
    print(f"{q:9} {counts[q]:4d}  {counts[q] / len(rows):6.1%}")
assert dict(counts) == {q: n for q, n in triage.triage(rows).items() if n}
print("fix first:", triage.priority(triage.triage(rows)))

# %% [markdown]
# One trace in each cell, so the wrong answers split evenly between the stages: a tie, and the honest advice
# is to read the traces. The toy's third trace is the instructive one: a **LUCKY** answer passed without its
# evidence. It is right today, but nothing grounds it; when the model does not know, it will invent (chapter 06).
#
# ## Traces from a real pipeline on the handbook
#
# A trace is what you log from your system: the question, the chunks the generator read, the answer, and a
# pass/fail label. This workbook calls no language model, so the generator here is a **deterministic extractive
# stand-in**: it answers with the passage that shares the most words with the question (`LexicalReader` from
# chapter 04, a word-overlap score), and the answer passes when it contains the gold evidence verbatim. A real
# system's traces have the same shape, with a model's answer and a judge's label; the triage code does not
# change. What the counts say about *generation*, though, is a statement about this stand-in, not about a
# language model.
#
# **What "gold" means in these traces.** A trace's `gold` is the chunks that hold a **grade-3 span whole**: the
# passage that states the answer (the 0–3 grades of chapter 00). A chunk holding only part of that span
# (grade 1 after remapping, chapter 05) or a grade-2 span (needed, but not the answer alone) is *not* gold. So
# "gold retrieved at *k*" is hit@*k* with threshold 3, stricter than the hit@*k* of chapter 04 (threshold 1).
# The reason: only a chunk that holds the answer can make an answer pass, so a trace that read a mere piece
# of it belongs with the retrieval failures, not with the generator's.

# %%
import functools

import pandas as pd

from labkit import metrics
from labkit.chunking import chunk_corpus, spans_to_qrels
from labkit.data import load_corpus, load_queries
from labkit.positions import LexicalReader
from labkit.retrieval import BM25Retriever, DenseRetriever, HybridRetriever, make_run

corpus = load_corpus()
queries = load_queries()
chunks = chunk_corpus(corpus, 128, 32)
texts = {c.id: c.text for c in chunks}
qrels = spans_to_qrels(queries, chunks)
run = make_run(HybridRetriever([BM25Retriever(chunks), DenseRetriever(chunks)]), queries, 20)
corpus_texts = {d: doc.text for d, doc in corpus.items()}
slice_of = {q.qid: q.slice for q in queries}


@functools.cache  # each k once: the sweep, the picture and the widget below share them
def traces_at(k):
    return triage.extractive_traces(queries, run, texts, qrels, LexicalReader(), corpus_texts, k)


traces = traces_at(5)
print({key: traces[0][key] for key in ("qid", "question", "gold", "gold_spans", "answer_pass")})
print("read:", traces[0]["retrieved"])

# %% [markdown]
# How much the definition matters, counted: for each *k*, the queries that chapter 04's hit@*k* counts as a
# hit, those with a gold chunk in the top *k* (hit@*k* at threshold 3), and the queries on which the two
# disagree.


# %%
def retrieved_by_definition(k):
    """One row per query: hit@k at threshold 1 (chapter 04), at threshold 3, and triage's 'gold retrieved'."""
    top = {qid: ranking[:k] for qid, ranking in run.items()}
    gold_read = {t["qid"]: float(triage.quadrant(t, k) in ("OK", "GEN_FAIL")) for t in traces_at(k)}
    return pd.DataFrame(
        {
            "hit@k, thr 1": metrics.evaluate(top, qrels, f"hit@{k}", thr=1).per_query[f"hit@{k}"],
            "hit@k, thr 3": metrics.evaluate(top, qrels, f"hit@{k}", thr=3).per_query[f"hit@{k}"],
            "gold retrieved": pd.Series(gold_read),
        }
    )


definitions = pd.DataFrame(
    {k: retrieved_by_definition(k).sum().astype(int) for k in (1, 3, 5, 10, 20)}
).T.rename_axis("k")
definitions["disagree"] = definitions["hit@k, thr 1"] - definitions["gold retrieved"]
assert (definitions["hit@k, thr 3"] == definitions["gold retrieved"]).all()  # the same definition, two routes
for q in queries:
    if not qrels[q.qid] or max(qrels[q.qid].values()) < 3:  # no chunk holds a grade-3 span whole
        grades = sorted(s.grade for s in q.gold)
        why = "no grade-3 span at all" if max(grades) < 3 else "every grade-3 span is cut by a chunk boundary"
        print(f"no gold chunk for {q.qid} ({q.kind}, span grades {grades}): {why}")
definitions

# %% [markdown]
# Triage's "gold retrieved" is exactly hit@*k* at threshold 3 (the `assert` checks it), and the `disagree`
# column counts the queries that chapter 04 would call a hit and triage calls a retrieval failure. A query
# with no gold chunk at all (printed above, with the reason) is a retrieval failure at every *k*: no chunk can
# answer it alone. One of the queries on which the definitions disagree, read closely:

# %%
at_5 = retrieved_by_definition(5)
differs = at_5.index[at_5["hit@k, thr 1"] > at_5["gold retrieved"]]
query = next(q for q in queries if q.qid == differs[0])
print(f"{query.qid} ({query.slice}, {query.kind}): {query.search_text}")
for rank, chunk_id in enumerate(run[query.qid][:5], 1):
    print(f"  read at rank {rank}: {chunk_id:32} grade {qrels[query.qid].get(chunk_id, 0)}")
for span in query.gold:
    print(f"  gold span, grade {span.grade}, in {span.doc}: {corpus_texts[span.doc][span.start : span.end]!r}")
print("  chunks holding a grade-3 span whole:", [c for c, g in qrels[query.qid].items() if g == 3])

# %% [markdown]
# ## The 2×2 on the handbook
#
# At *k* = 5, overall and per slice:

# %%
cells = pd.DataFrame([{"slice": t["slice"], "cell": triage.quadrant(t, 5)} for t in traces])
cell_type = pd.CategoricalDtype(triage.QUADRANTS)  # keep empty cells as 0 columns
pd.crosstab(cells["slice"], cells["cell"].astype(cell_type), margins=True, dropna=False)

# %% [markdown]
# `LUCKY` is empty, and must be: an extractive reader can only return what it was given, so it cannot be right
# without the evidence. A language model can, which is why a `LUCKY` count above zero is a grounding alarm.
#
# Which stage to fix first is decided by comparing `GEN_FAIL` with `RET_FAIL`. On a slice of a hundred-odd
# traces that comparison is itself uncertain, so `triage.stage_gap` adds the **gap**, (`GEN_FAIL` − `RET_FAIL`)
# / traces, with a bootstrap 95 % interval (resampling traces; `labkit.stats.bootstrap_ci`). A positive gap
# points at generation, a negative one at retrieval; `clear` says whether the interval excludes zero.

# %%
from labkit.stats import fmt_ci

gap_5 = triage.stage_gap(traces, 5)
gap_5.assign(**{"gap [95% interval]": [fmt_ci(*r) for r in gap_5[["gap", "gap low", "gap high"]].to_numpy()]})[
    ["n", "OK", "GEN_FAIL", "RET_FAIL", "gap [95% interval]", "fix first", "clear"]
]

# %%
for name, row in gap_5.iterrows():
    verdict = "settled" if row["clear"] else "not settled: the gap's interval includes 0"
    print(f"{name:5} GEN_FAIL {row.GEN_FAIL:3d} vs RET_FAIL {row.RET_FAIL:3d}: fix {row['fix first']} first, {verdict}")

# %% [markdown]
# ## The cells move with k
#
# More chunks make retrieval succeed more often and give the generator more to get wrong. Measured on this
# pipeline, every *k* from 1 to 20:

# %%
sweep_all = pd.DataFrame({k: triage.triage(traces_at(k), k) for k in range(1, 21)}).T.rename_axis("k")
plots.plot_triage_by_k(sweep_all, "Triage cells against k (extractive word-overlap reader, hybrid retrieval)")

# %% [markdown]
# The same counts for five values of *k*, with the advice at each:

# %%
sweep = sweep_all.loc[[1, 3, 5, 10, 20]]
first = [triage.priority(row) for _, row in sweep.iterrows()]
sweep.assign(**{"answers right": sweep.OK + sweep.LUCKY, "fix first": first})

# %%
right = sweep_all.OK + sweep_all.LUCKY
read = sweep_all.OK + sweep_all.GEN_FAIL
ahead = sweep_all.GEN_FAIL > sweep_all.RET_FAIL
crossover = min(k for k in sweep_all.index if ahead.loc[k:].all())
print(f"k = 1: GEN_FAIL {sweep_all.loc[1, 'GEN_FAIL']}: with one passage the reader cannot pick the wrong one.")
print(f"From k = {crossover} on, GEN_FAIL outnumbers RET_FAIL.")
print(f"Traces with a gold chunk read: {read[1]} at k = 1 -> {read[20]} at k = 20.")
print(f"Answers right:                 {right[1]} at k = 1 -> {right[20]} at k = 20 (largest {right.max()}, at k = "
      f"{right.idxmax()}); never higher at a larger k: {right.is_monotonic_decreasing}.")  # fmt: skip

# %% [markdown]
# With one chunk, every failure is a retrieval failure. As *k* grows, retrieval succeeds on more and more
# queries, yet the number of right answers *falls*: the extra recall is eaten by a generator that cannot pick
# the right passage among more look-alikes.
#
# That last sentence is about **this** generator: the word-overlap stand-in returns one passage, chosen by
# shared words, so every extra look-alike chunk is one more chance to choose wrong. For this pipeline, raising
# *k* would make the product worse. A language model reads all *k* chunks at once and can combine them; it has
# its own trouble with long contexts (lost in the middle, chapter 04), but how its right answers move with *k*
# must be measured on its own traces, judged by a calibrated judge (chapter 06). What carries over to any
# generator is the method: a team that only watched Recall@*k* would raise *k* without seeing what happened to
# the answers. Measure each stage, at the *k* the generator really reads.
#
# ## Drill down
#
# Counts say where; traces say why. `triage.drill_down` lays one trace out for reading: its cell, where each
# gold chunk sat among the chunks read, the gold span the labels point at, and the answer. The first
# `GEN_FAIL` at *k* = 5:

# %%
def show(trace, k):
    d = triage.drill_down(trace, k)
    where = ", ".join(f"{g} at rank {r}" if r else f"{g} not read" for g, r in d["gold_ranks"].items())
    print(f"{d['qid']} · {d['cell']} at k = {k}: {d['question']}")
    print("gold chunk:", where or "none in this chunking")
    for span in d["gold_spans"]:
        print("gold span: ", repr(span))
    print("answer:    ", repr(d["answer"][:200]), "..." if len(d["answer"]) > 200 else "")
    print("the answer holds a gold span:", d["answer_has_span"])


show(next(t for t in traces if triage.quadrant(t, 5) == "GEN_FAIL"), 5)

# %% [markdown]
# The span was in the prompt, and the reader answered from another passage, one its word-overlap score put at
# least as high. A `RET_FAIL` reads differently: the span never reached the generator, and no prompt could fix that.

# %%
show(next(t for t in traces if triage.quadrant(t, 5) == "RET_FAIL"), 5)

# %% [markdown]
# ## What can go wrong
#
# * **Only an end-to-end score.** A single "share correct" cannot say which stage failed. Symptom: three rounds
#   of prompt changes and no movement, because the gold chunk never reached the prompt (`RET_FAIL`).
# * **A loose definition of gold.** Counting a chunk that holds a piece of the answer as "retrieved" moves
#   traces from `RET_FAIL` to `GEN_FAIL` and sends the team to the prompt. Say which grades count as gold.
# * **Counting `LUCKY` as success.** It passes today and has no evidence behind it.
# * **Triaging at a different *k* than the generator reads.** A gold chunk at rank 8 is a retrieval success at
#   *k* = 10 and a retrieval failure for a prompt of five chunks.
# * **Deciding on a gap the traces cannot resolve.** When the gap's interval includes zero, a few traces more
#   or fewer could flip the advice; read traces before investing.
# * **An uncalibrated judge** moves traces between the answer columns; calibrate it first (chapter 06).
#
# ## Playground
#
# The widget wraps `triage.triage`, `triage.priority` and `triage.drill_down` over `traces_at(k)`. With plain
# arguments, *k* = 3:

# %%
counts_3 = triage.triage(traces_at(3), 3)
counts_3, triage.priority(counts_3)

# %% [markdown]
# Move *k*, then pick a cell to see example traces from it, each with its gold span and the answer:

# %%
# NBVAL_IGNORE_OUTPUT
explorer = widgets.TriageExplorer(traces_at, k=5)
explorer

# %%
explorer.result

# %% [markdown]
# ## Summary
#
# * Split every trace by two questions: evidence retrieved? answer passed? The four counts say where to invest.
# * Say what "gold" means. Here it is a chunk holding a grade-3 span whole, so "retrieved" is hit@*k* at
#   threshold 3, not chapter 04's hit@*k*.
# * `RET_FAIL` needs retrieval work, `GEN_FAIL` prompt or model work, `LUCKY` grounding work; check that the
#   gap between them is larger than its interval.
# * The cells move with *k*: for the extractive stand-in, more recall meant fewer right answers. Triage at the
#   *k* the generator reads, with the generator you ship.
#
# ## Exercises
#
# **7.1** What does `triage.priority` say for the source chapter's four toy traces? (Give the string.)

# %% tags=["solution"]
answer_7_1 = triage.priority(triage.triage(rows))

# %%
check.exercise("7.1", answer_7_1)

# %% [markdown]
# **7.2** How many `GEN_FAIL` traces does the handbook pipeline have at *k* = 10?

# %% tags=["solution"]
answer_7_2 = triage.triage(traces_at(10), 10)["GEN_FAIL"]

# %%
check.exercise("7.2", answer_7_2, sweep=sweep)

# %% [markdown]
# **7.3 Predict, then run.** The toy traces were triaged at *k* = 5. Suppose the generator read only the top
# chunk (*k* = 1). How many of the four toy traces would change cell? Write your prediction first, then run the
# cell below it.

# %% tags=["solution"]
prediction_7_3 = 0

# %%
pd.DataFrame({k: [triage.quadrant(r, k) for r in rows] for k in (5, 1)}).rename_axis("toy trace").add_prefix("k=")

# %%
check.exercise("7.3", prediction_7_3)

# %% [markdown]
# **7.4 Predict, then run.** At *k* = 5, some queries are a hit by chapter 04's definition (any graded chunk)
# and a retrieval failure by triage's (no chunk holding the answer whole). In which slice are there most of them:
# `"easy"`, `"hard"` or `"real"`? Think about what the `hard` questions are (look-alikes, comparisons, two
# documents) before you run the cell.

# %% tags=["solution"]
prediction_7_4 = "hard"

# %%
definition_gap = (at_5["hit@k, thr 1"] > at_5["gold retrieved"]).groupby(slice_of).sum().rename("queries")
definition_gap

# %%
check.exercise("7.4", prediction_7_4, definition_gap=definition_gap)
