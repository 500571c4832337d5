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
from labkit import check, triage, widgets

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
# baseline**: it answers with the passage that shares the most words with the question (`LexicalReader` from
# chapter 04), and the answer passes when it contains the gold evidence verbatim. A real system's traces have
# the same shape, with a model's answer and a judge's label; the triage code does not change.

# %%
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


def traces_at(k):
    return triage.extractive_traces(queries, run, texts, qrels, LexicalReader(), corpus_texts, k)


traces = traces_at(5)
print({key: traces[0][key] for key in ("qid", "question", "gold", "answer_pass")})
print("read:", traces[0]["retrieved"])

# %% [markdown]
# The 2×2 at *k* = 5, overall and per slice:

# %%
import pandas as pd

cells = pd.DataFrame([{"slice": t["slice"], "cell": triage.quadrant(t, 5)} for t in traces])
cell_type = pd.CategoricalDtype(triage.QUADRANTS)  # keep empty cells as 0 columns
pd.crosstab(cells["slice"], cells["cell"].astype(cell_type), margins=True, dropna=False)

# %%
print("fix first:", triage.priority(triage.triage(traces, 5)))

# %% [markdown]
# At *k* = 5 this pipeline loses more answers in generation than in retrieval: the gold chunk was among the five
# passages, and the reader picked another. `LUCKY` is empty, and must be: an extractive reader can only return
# what it was given, so it cannot be right without the evidence. A language model can, which is why a `LUCKY`
# count above zero is a grounding alarm.
#
# ## The cells move with k
#
# More chunks make retrieval succeed more often and give the generator more to get wrong. Measured on this
# pipeline:

# %%
sweep = pd.DataFrame({k: triage.triage(traces_at(k), k) for k in (1, 3, 5, 10, 20)}).T.rename_axis("k")
first = [triage.priority(row) for _, row in sweep.iterrows()]
sweep.assign(**{"answers right": sweep.OK + sweep.LUCKY, "fix first": first})

# %% [markdown]
# With one chunk, every failure is a retrieval failure (the reader cannot miss the only passage). From three
# chunks on, generation failures outnumber retrieval failures, and the number of right answers *falls* as *k*
# grows: the extra recall is eaten by a generator that cannot pick the right passage among more look-alikes. A
# team that only watched Recall@k would raise *k* and make the product worse. This is the chapter's pitfall in
# one table:
# measure each stage, at the *k* the generator really reads.
#
# ## Drill down
#
# Counts say where; traces say why. One `GEN_FAIL` at *k* = 5: the gold chunk was read, and the reader chose
# another passage.

# %%
example = next(t for t in traces if triage.quadrant(t, 5) == "GEN_FAIL")
print("question:", example["question"])
print("gold chunk:", example["gold"], "| read:", example["retrieved"][:5])
print("answered from:", example["answer"][:160].replace("\n", " "), "...")

# %% [markdown]
# ## What can go wrong
#
# * **Only an end-to-end score.** "62 % correct" cannot say which stage failed. Symptom: three rounds of prompt
#   changes and no movement, because the gold chunk never reached the prompt (`RET_FAIL`).
# * **Counting `LUCKY` as success.** It passes today and has no evidence behind it.
# * **Triaging at a different *k* than the generator reads.** A gold chunk at rank 8 is a retrieval success at
#   *k* = 10 and a retrieval failure for a prompt of five chunks.
# * **An uncalibrated judge** moves traces between the answer columns; calibrate it first (chapter 06).
#
# ## Playground
#
# The widget wraps `triage.triage` and `triage.priority` over `traces_at(k)`. With plain arguments, *k* = 3:

# %%
counts_3 = triage.triage(traces_at(3), 3)
counts_3, triage.priority(counts_3)

# %% [markdown]
# Move *k*, then pick a cell to see example traces from it:

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
# * `RET_FAIL` needs retrieval work, `GEN_FAIL` prompt or model work, `LUCKY` grounding work.
# * The cells move with *k*: more recall can mean fewer right answers. Triage at the *k* the generator reads.
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
