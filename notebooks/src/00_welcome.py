# %% [markdown]
# # 00 · Welcome
#
# **You will learn** what this workbook measures and in which order, what the corpus looks like, and how the
# sliders and self-checks in every chapter work.
#
# This is a hands-on companion to the RAG chapter of *Evals for AI Engineers* (Shreya Shankar & Hamel Husain,
# O'Reilly). Its one idea: **measure retrieval first, then generation.** Every number you will see is computed
# by the code in front of you, on a real (small) corpus, with real BM25 and real sentence embeddings. No API
# key is needed.

# %%
import labkit
from labkit.exercises import check
from labkit.ui import plots

labkit.setup()

# %% [markdown]
# ## The two-stage pipeline
#
# A RAG system looks up passages in a knowledge base and puts them in the prompt, so that the model answers
# from evidence. Unlike a search page, the reader is a language model that can read many passages at once, so
# the first stage is tuned for **recall**: fetch wide, rather than miss the passage with the answer. But every
# extra passage costs context, tokens and attention, so a second stage **filters or reranks** down to the few
# the model will read. Each stage gets its own measurement:

# %%
plots.plot_pipeline()

# %% [markdown]
# When an answer is wrong, the first question is *which stage failed*: did the evidence never reach the prompt
# (a retrieval failure: no prompt change will fix it), or was it there and the model ignored or contradicted
# it (a generation failure)? Chapter 07 sorts real traces into those boxes. Everything before it builds the
# measurements that make the question answerable.
#
# ## The corpus: a company handbook
#
# The chapters share one corpus: the internal documentation of **Quillbridge Software**, a fictional company
# written for this workbook (HR, IT, security, finance, facilities, product and support). It is built to make
# retrieval interesting: exact error codes that keyword search finds and embeddings blur, paraphrase-heavy help
# text, tables whose header carries the meaning, and near-duplicate policies (a superseded 2024 version next to
# the current one) that make good distractors. `data/README.md` says how every file was made.

# %%
import pandas as pd

from labkit.data.corpus import load_corpus, load_queries

corpus = load_corpus()
docs = pd.DataFrame(
    [(d.department, d.id, d.title, d.n_words) for d in corpus.values()],
    columns=["department", "doc id", "title", "words"],
)
print(f"{len(docs)} documents, {docs['words'].sum():,} words")
docs.groupby("department").agg(documents=("doc id", "count"), words=("words", "sum"))

# %% [markdown]
# One document, opened at the top:

# %%
print(corpus["hr-remote-work-2025"].text[:700])

# %% [markdown]
# The labelled queries (all of them written for the workbook by an AI assistant session, with their gold spans
# and reference answers; not by a person, and not by the local model) come in three **slices**: `easy` (in the
# style of generated questions, phrased close to one passage),
# `hard` (built to confuse: look-alike passages, comparisons, two-document questions) and `real` (written the
# way employees type: short, vague, with typos and follow-ups). Their gold evidence is stored as **character
# spans** in the documents, so the labels survive any re-chunking (chapter 05).
#
# Each gold span carries a **relevance grade** on a 0–3 scale, the scale every chapter uses:
#
# | grade | meaning |
# |---|---|
# | 3 | the passage states the answer |
# | 2 | needed to compose the answer, but does not state it alone (say, the other half of a comparison) |
# | 1 | related: on the topic, useful background, not needed for the answer |
# | 0 | not relevant |
#
# Only grades 1–3 are written down: a passage that no label mentions counts as 0. Metrics that see relevance
# as yes or no (recall, hit rate) need a threshold on this scale; nDCG uses the grades themselves (chapter 03).

# %%
queries = load_queries()
pd.crosstab(pd.Series([q.slice for q in queries], name="slice"), pd.Series([q.kind for q in queries], name="kind"),
            margins=True)

# %%
q = next(q for q in queries if q.qid == "hr-h01")
print("question:", q.question)
print("answer:  ", q.answer)
for span in q.gold:
    print(f"gold (grade {span.grade}) in {span.doc}: {span.text(corpus)!r}")

# %% [markdown]
# The two grade-3 spans state the deadline outright; the grade-2 span is the general rule (register before 17:00
# on the previous working day) from which the answer follows, but it does not say which day that is for Friday.

# %% [markdown]
# ## How the chapters work
#
# Each chapter opens with the smallest example from the source chapter, written from scratch in a few lines,
# checks it once against `labkit` (the workbook's helper package), and then runs the same idea on the handbook.
#
# **Self-checks.** Exercises end every chapter, and a few sit next to the cell they ask about. Put your answer
# in place of `None` and run the check: it says *not answered yet*, *correct*, or *not yet* with a hint. The
# expected value is computed by `labkit` when you check, so it cannot drift from the code. The rules are the
# same in every chapter:
#
# * a **number** counts when it is close enough to the expected value: within the default tolerance printed
#   below, unless the exercise says otherwise (counts, like the number of documents, must be exact). With that
#   tolerance two decimals are enough, so `0.33` answers 1/3;
# * a number may be written as a fraction or a percentage: `0.33`, `"1/3"` and `"33%"` are the same answer;
# * a **word** ignores case, spaces and a trailing `@k`: `"MRR@k"`, `"mrr"` and `"MRR@3"` are the same answer;
# * a *not yet* line says how close a number must be, then gives a hint.

# %%
from labkit.exercises import Exercise

print(f"default tolerance: ±{Exercise.tol:g}; exercise 0.1 (a count): ±{check.EXERCISES['0.1'].tol:g}")

# %% [markdown]
# Try it: how many documents does the handbook hold?

# %% tags=["solution"]
answer_0_1 = len(corpus)

# %%
check.exercise("0.1", answer_0_1)

# %% [markdown]
# **Sliders.** Every widget wraps a plain function that the chapter calls first, so you always know what the
# widget computes. Here is the smallest one: how much of a document's gain survives at each rank under nDCG's
# discount, `1 / log2(rank + 1)` (chapter 03 derives it).

# %%
import math


def kept_share(rank):
    """Share of a document's gain that nDCG keeps at this rank."""
    return round(1 / math.log2(rank + 1), 4)


kept_share(3)

# %% [markdown]
# **Predict, then run.** Some exercises ask you to commit to a guess *before* you move a slider or run a cell,
# because a number you predicted and got wrong teaches more than one you only read. Two to try on the slider
# below; write both predictions first, then move the slider and run the check:
#
# * **0.2** What share of its gain does a document keep at rank 15 (two decimals)?
# * **0.3** What is the first rank at which a document keeps *less than half* of its gain?

# %% tags=["solution"]
prediction_0_2 = 0.25
prediction_0_3 = 4

# %%
# NBVAL_IGNORE_OUTPUT
import ipywidgets

demo = ipywidgets.interactive(
    kept_share, {"auto_display": True}, rank=ipywidgets.IntSlider(value=3, min=1, max=20, description="rank")
)
demo

# %% [markdown]
# Move the slider: the number is `kept_share(rank)`. The cell below prints the widget's current value; the
# workbook's automated checks compare such cells, because they cannot look inside a widget.

# %%
demo.result

# %%
check.exercise("0.2", prediction_0_2)
check.exercise("0.3", prediction_0_3)

# %% [markdown]
# The discount falls fast at first and slowly later: most of the loss happens in the first few ranks, which is
# why moving a relevant passage from rank 2 to rank 1 matters far more to nDCG than moving it from rank 15 to 14:

# %%
print(f"from rank 2 to rank 1 a document gains {kept_share(1) - kept_share(2):.4f} of its gain; "
      f"from rank 15 to rank 14, {kept_share(14) - kept_share(15):.4f}")

# %% [markdown]
# **Language models.** Some chapters need a language model: to write questions (02), to answer from the passages
# and to judge claims (06). The workbook's model is real and runs on your own machine: **Qwen2.5-Coder-1.5B-Instruct**
# (and its 0.5B sibling), 4-bit GGUF weights run by llama.cpp. `labkit.generation.llm` gives every chapter one
# interface,
# `llm(prompt) -> text`, in modes chosen by the environment variable `LABKIT_LLM`:
#
# | `LABKIT_LLM` | what answers | needs |
# |---|---|---|
# | `replay` (default) | responses recorded from the local model, in `data/llm/` with their provenance | nothing |
# | `local`, `local-small` | the 1.5B / 0.5B model, in this kernel | `make llm` once (compiles llama.cpp, minutes) |
# | `live` | an OpenAI-compatible endpoint: `LABKIT_LLM_BASE_URL`, `_MODEL`, `_API_KEY` | the endpoint |
# | `record` | the local model (or the endpoint), saving each new response for replay | `make llm` |
#
# In replay a chapter runs offline and prints the same numbers every time; a prompt that was never recorded is an
# error that names the command to record it, never a made-up answer. Here is the switch, and one real answer:

# %%
import re

from labkit.data.toys import WELCOME_PROMPT
from labkit.generation import llm

model = llm.from_env()
print(f"mode: {model.mode}, model: {model.model}")
print(WELCOME_PROMPT)
answer = model(WELCOME_PROMPT, max_tokens=80)
print("->", answer)
sentences = re.findall(r"[.!?](?:\s|$)", answer)
print(f"({len(sentences)} sentences)")

# %% [markdown]
# (Asked for two sentences, it wrote more, as the count under the answer shows: a small model follows instructions
# loosely, which later chapters measure rather than hide.) Every recorded response carries its provenance: which
# weights (by sha256), which runtime and version, the generation settings, the tokens in and out and the seconds it
# took on the recording machine. The usage table adds those up, so you can see what running a chapter live would
# cost, here and at a hosted model's prices:

# %%
record = llm.Replay(model.model).rows[llm.prompt_key(model.model, WELCOME_PROMPT, max_tokens=80)]
fields = ("runtime", "runtime_version", "weights", "prompt_tokens", "completion_tokens")
print({k: record["provenance"][k] for k in fields})
llm.usage_table()

# %% [markdown]
# ## Chapters
#
# Run them in order; each one uses what the previous ones built.

# %% [markdown] tags=["chapter-list"]
# (generated by tools/build_notebooks.py)

# %% [markdown]
# **Running the workbook.** From a fresh clone, `make lab` creates the virtual environment and opens this
# notebook in JupyterLab; `make test` runs every test, including a re-execution of every notebook that must
# reproduce the stored outputs exactly.

# %% [markdown]
# ## Glossary
#
# Every chapter links here the first time it uses one of these terms. *k* is always the number of ranked items
# read (chunks, or models in chapter 09); a **query** is one labelled question.
#
# #### Gold
#
# A chunk that holds labelled evidence for a query. Evidence is stored as character spans with a grade (3 states
# the answer, 2 is needed to compose it, 1 is related), and a chunk's grade is derived from the spans it holds
# (`chunking.spans_to_qrels`: a whole span gives its grade, part of one gives 1). In chapters 01–05 and 04b a
# chunk is gold (relevant) when its grade is at least the **threshold** (1 unless a cell says otherwise); chapter
# 07's triage asks for more, a chunk holding a grade-3 span whole (hit@k at threshold 3), and says so.
#
# #### Recall
#
# Recall@k: the share of a query's gold chunks that are in its top *k*. A query with no gold chunk has no recall
# (left out of the mean). trec_eval counts it as 0, which multiplies every system's mean recall by the same factor,
# the share of queries that have a gold chunk: each mean falls, the higher ones by more. Chapter 03 computes it by
# hand.
#
# #### Hit rate
#
# hit@k: 1 if the top *k* holds at least one gold chunk, else 0; **hit rate@k** is its mean over queries, a
# proportion. Chapter 04.
#
# #### RR and MRR
#
# RR@k, the reciprocal rank: 1 / the rank of the first gold chunk in the top *k*, 0 if none. **MRR@k** is the mean
# of RR@k over queries. A table column `RR@10` holding a mean is MRR@10. Chapters 03 and 04.
#
# #### nDCG and IDCG
#
# DCG@k adds each ranked chunk's grade divided by log2(rank + 1); nDCG@k divides it by the ideal DCG (IDCG), so it
# lies in [0, 1]. Two conventions for the ideal: **trec_eval's** (the best order of *every* judged chunk; the
# workbook's default, `idcg="all_judged"`) and **the book's** (the retrieved chunks re-sorted, `idcg="retrieved"`).
# Chapter 03 shows both and when they differ.
#
# #### Evidence recall
#
# ER@k: the share of a query's gold spans (grade ≥ 2) that one of its top *k* chunks holds whole. Unlike Recall@k,
# whose denominator (the gold *chunks*) changes with the chunking, it can be compared across chunkings, at an equal
# number of words read. Chapter 05.
#
# #### Evidence coverage
#
# EC@k: the share of a query's gold spans (grade ≥ 2) whose every character lies in some chunk of its top *k*: held
# whole, or in pieces by neighbouring chunks. It credits what ER@k misses when a chunk boundary cuts a span; the two
# agree wherever overlap keeps every span whole, and part where chunks cut spans. Chapter 05.
#
# #### Bootstrap interval
#
# A 95 % interval for a mean: resample the queries with replacement thousands of times (seeded), recompute the mean,
# keep the middle 95 %. For means of graded or continuous values (RR, nDCG, Recall). When every query scores the same it
# collapses to zero width, which is not certainty: the workbook's findings then print a rule bound (how far the queries
# not yet seen could pull the mean) instead, and proportions get Wilson. Chapter 03.
#
# #### Wilson interval
#
# A 95 % interval for a proportion (hit rate, a share of right answers, TPR): it stays inside [0, 1] and keeps a
# width at 0/n and n/n, where the textbook p ± 1.96·√(p(1−p)/n) collapses or leaves [0, 1]. Chapter 03.
#
# #### Paired interval
#
# Two systems on the **same** queries are compared by the interval of their per-query difference (a bootstrap of
# the differences; for 0/1 outcomes Newcombe's paired score interval): each query's difficulty cancels in its own
# difference, so it is narrower than either system's interval. Never compare two systems by whether their own
# intervals overlap. Different queries (two slices): an unpaired interval. Chapters 03 and 04b.
#
# #### Holm
#
# Holm's step-down correction (1979) for a scan of *m* p values: sort them, multiply the smallest by *m*, the next by
# *m* − 1, and so on, stopping at the first that fails. It keeps the chance of any false "resolved" in the scan at
# 5 % and passes at least as much as Bonferroni (every p times *m*), but no interval matches its verdicts, so the
# workbook decides its scans with one rule that has intervals (below). A **permutation p** asks how often flipping
# the signs of the per-query differences (the two systems swapped on a query) gives a mean as far from 0 as the one
# seen. Chapter 01 works both by hand.
#
# #### Simultaneous interval
#
# **Simultaneous 95 % intervals** cover a whole family of comparisons: in all but 5 % of samples they hold *all* their
# true values at once, so any one of them may be read after looking at the others. The workbook builds them with
# `stats.Family`'s **max-|t| bootstrap**: resample the queries, keep the largest |t| of the family in each resample, and
# use its 95th percentile *c* for every member: interval `mean ± c·se`, adjusted p the share of resamples whose largest
# |t| reaches the member's own. The verdict **resolved** (the interval clear of 0, and so the adjusted p within the 5 %)
# and the interval come from one count, so they cannot disagree. Chapter 01.
#
# #### Family and lead
#
# A **family** is the set of comparisons a cell will scan, named and counted (`stats.Family`) before any of them is
# computed; each member's finding is corrected for the family's size and states its verdict: *resolved*, or *not
# shown* with what its interval rules out (never "no effect"). A **lead** is a difference noticed outside a declared
# family, picked after looking (`stats.finding` says so): worth testing on new queries, not a finding. Chapter 01.
#
# #### TPR and TNR
#
# A judge (or a cheap check) against labels: **TPR** is the share of truly passing items it passes, **TNR** the
# share of truly failing items it fails. Youden's J = TPR + TNR − 1 (0 is a coin). Chapter 06, which also uses
# them to correct a judge's pass rate (Rogan–Gladen).
#
# #### Kappa
#
# Cohen's κ: how much two raters agree beyond the agreement their label frequencies alone would produce (1
# perfect, 0 chance). It can be near 0 while raw agreement is high, when one label dominates (the prevalence
# trap, chapter 02). Fleiss' κ for more than two raters (a class, chapter 06). Chapters 02, 06, 07.
#
# ### What every reported number carries
#
# A figure without these cannot be compared with anyone else's, so the chapters print them beside it:
#
# * the **metric and its k** (nDCG@10, not "nDCG"), and for stage 2 both depths (k1, k2);
# * the **threshold** that makes a chunk relevant, and for nDCG the **IDCG convention**;
# * what happened to **queries with nothing relevant** (left out of recall's mean, or counted as 0);
# * the **tie rule** (trec_eval's: score descending, then document id descending; a reranker's: stage 1's order);
# * the **split** (dev to choose, test to report) and the **slice**, with *n*;
# * the **interval** and which kind (bootstrap, Wilson, paired), and how many comparisons a table scans.
