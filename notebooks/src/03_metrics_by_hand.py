# %% [markdown]
# # 03 · Metrics by hand
#
# **You will learn** to compute Precision@k, Recall@k, reciprocal rank, hit, DCG and nDCG from a list of grades,
# to see how a relevance threshold and the choice of ideal ranking change the numbers, and to pick the metric
# that matches the question your system answers.
#
# Source: sections 7.3, 7.5 and 7.6 of the chapter notes. We write every formula from scratch in a few lines,
# check it once against `labkit.metrics`, and from then on use `labkit`. The same functions are cross-checked
# against `trec_eval` (through `pytrec_eval`) in the workbook's tests.

# %%
import math

import labkit
from labkit import check, metrics, plots, widgets

labkit.setup()

# %% [markdown]
# ## The running example
#
# A user asks *"What is the refund policy of the Pro plan?"* and the retriever returns five documents. Someone
# has graded every document for this query on a 0–3 scale (0 = not relevant, 1 = related, 2 = needed,
# 3 = states the answer). The query has **four** relevant documents in the whole corpus; one of them (grade 2)
# was pushed down to rank 8, outside the top 5. The grades are made up for teaching, as in the source chapter.
#
# We write the ranking as the list of grades, in rank order:

# %%
from labkit.toys import RUNNING_GRADES, RUNNING_UNRETRIEVED

rels = RUNNING_GRADES  # grades of the documents at ranks 1..5
not_retrieved = RUNNING_UNRETRIEVED  # the relevant document at rank 8
all_grades = rels + not_retrieved  # every judged document of this query
print("top-5 grades:", rels, "| judged but not in the top 5:", not_retrieved)

# %% [markdown]
# ## Precision@k and Recall@k
#
# Both look at the top *k*; they differ in the denominator.
#
# * **Precision@k** = relevant documents in the top *k* / *k* — *how much of what I show is useful?*
# * **Recall@k** = relevant documents in the top *k* / **all** relevant documents of the query — *how much of
#   what exists did I find?* A RAG reader can skim many chunks, so the first stage of a RAG pipeline is tuned
#   for recall: better to fetch too much than to miss the chunk with the answer.
#
# Both treat relevance as yes/no, so graded labels need a **threshold**: a document counts when
# `grade >= thr`. From scratch:

# %%
def my_precision(rels, k, thr=1):
    return sum(r >= thr for r in rels[:k]) / k


def my_recall(rels, k, n_relevant_total, thr=1):
    if n_relevant_total == 0:
        return None  # nothing to find: undefined, left out of averages
    return sum(r >= thr for r in rels[:k]) / n_relevant_total


print("P@5 =", my_precision(rels, 5))
print("R@5 =", my_recall(rels, 5, n_relevant_total=4))

# %% [markdown]
# Three of the five slots hold a relevant document (P@5 = 0.6), and three of the four relevant documents were
# found (R@5 = 0.75). The library gives the same numbers; from here on we use it.

# %%
assert my_precision(rels, 5) == metrics.precision_at_k(rels, 5)
assert my_recall(rels, 5, 4) == metrics.recall_at_k(rels, 5, n_relevant_total=4)
print("labkit agrees:", metrics.precision_at_k(rels, 5), metrics.recall_at_k(rels, 5, n_relevant_total=4))

# %% [markdown]
# Two details that decide real numbers:
#
# * `P@k` divides by *k* even when fewer than *k* documents came back (an empty slot is a miss, as in
#   `trec_eval`), so `P@k × k` is always the number of hits.
# * A query with no relevant document has **no** recall. `labkit` returns `None` and leaves it out of means;
#   `trec_eval` reports 0, which quietly lowers the mean of every system by the same amount.

# %%
print("P@10 of a 5-document ranking:", metrics.precision_at_k(rels, 10))
print("recall when nothing is relevant:", metrics.recall_at_k([0, 0, 0], 3, n_relevant_total=0))

# %% [markdown]
# ## Reciprocal rank and hit
#
# **Reciprocal rank (RR)** is 1 / the rank of the first relevant document, 0 if there is none in the top *k*.
# It only asks *how soon does the first useful thing appear?* **Hit@k** asks even less: *is there at least
# one?* Averaged over queries they become MRR@k and the hit rate (chapter 04).

# %%
def my_reciprocal_rank(rels, k, thr=1):
    for rank, r in enumerate(rels[:k], start=1):
        if r >= thr:
            return 1 / rank
    return 0.0


assert my_reciprocal_rank(rels, 5) == metrics.reciprocal_rank(rels, 5)
print("RR =", metrics.reciprocal_rank(rels, 5), "| hit@5 =", metrics.hit_at_k(rels, 5))

# %% [markdown]
# ## DCG and nDCG: graded relevance
#
# Precision, recall and RR ignore *how* relevant a document is. nDCG uses the grades and rests on two
# intuitions:
#
# 1. **More relevant is worth more**: a grade-3 document contributes three times what a grade-1 document does.
# 2. **Higher is worth more**: the contribution at rank *i* is divided by log₂(*i* + 1).
#
# $$\mathrm{DCG@k} = \sum_{i=1}^{k} \frac{\mathrm{rel}_i}{\log_2(i+1)} \qquad
#   \mathrm{nDCG@k} = \frac{\mathrm{DCG@k}}{\mathrm{IDCG@k}} \in [0, 1]$$
#
# where IDCG is the DCG of the best possible ordering. How much of its gain does each rank keep?

# %%
for rank in (1, 2, 3, 5, 10):
    print(f"rank {rank:2d} keeps {1 / math.log2(rank + 1):.0%} of its gain")

# %%
def my_dcg(rels):
    return sum(r / math.log2(i + 1) for i, r in enumerate(rels, start=1))


print("DCG  =", round(my_dcg(rels), 4), "| IDCG =", round(my_dcg([3, 2, 1, 0, 0]), 4))
assert math.isclose(my_dcg(rels), metrics.dcg(rels))

# %% [markdown]
# ### Two ways to define "ideal"
#
# Which documents may the ideal ordering use? The answer changes the number, and both answers are in use:
#
# * **The book's way** re-sorts the retrieved top *k*: ideal = [3, 2, 1, 0, 0]. It measures *ordering only*;
#   it cannot see the grade-2 document stuck at rank 8.
# * **trec_eval's way** sorts *every judged document* of the query: ideal = [3, 2, 2, 1, 0]. Missing a relevant
#   document now costs points too.
#
# `labkit` names both: `ndcg_at_k(rels, k)` is the book's, `ndcg_at_k(rels, k, all_grades=...)` is trec_eval's;
# the batch `evaluate(..., idcg="retrieved" | "all_judged")` does the same for a whole run.

# %%
def my_ndcg(rels, k, all_grades=None):
    pool = rels[:k] if all_grades is None else all_grades
    ideal = my_dcg(sorted(pool, reverse=True)[:k])
    return my_dcg(rels[:k]) / ideal if ideal > 0 else 0.0


print("nDCG@5, book (re-sort retrieved)  :", round(my_ndcg(rels, 5), 4))
print("nDCG@5, trec_eval (all judged)    :", round(my_ndcg(rels, 5, all_grades), 4))
assert math.isclose(my_ndcg(rels, 5), metrics.ndcg_at_k(rels, 5))
assert math.isclose(my_ndcg(rels, 5, all_grades), metrics.ndcg_at_k(rels, 5, all_grades=all_grades))

# %% [markdown]
# 0.6176 against 0.5166 for the same ranking. Neither is wrong; a report that says "nDCG@5 = 0.62" without
# saying which ideal it used cannot be compared with anyone else's. The bars below show where the gain goes:
# light bars are the grades, dark bars what is left after the discount, the outline is the ideal.

# %%
plots.plot_gain_discount(rels, 5)

# %% [markdown]
# ## Thresholds: turning grades into yes/no
#
# Precision and recall need a cut: is grade 1 ("related") relevant? With `thr=2` only grades 2 and 3 count,
# the query has three relevant documents instead of four, and both numbers move. Report the threshold next to
# the number, always.

# %%
print("thr=2: P@5 =", metrics.precision_at_k(rels, 5, thr=2),
      "| R@5 =", round(metrics.recall_at_k(rels, 5, n_relevant_total=3, thr=2), 4))

# %%
import pandas as pd

rows = []
for thr in (1, 2, 3):
    n_rel = sum(g >= thr for g in all_grades)
    rows.append({"threshold (grade >=)": thr, "relevant in corpus": n_rel,
                 "P@5": metrics.precision_at_k(rels, 5, thr=thr),
                 "R@5": metrics.recall_at_k(rels, 5, n_rel, thr=thr),
                 "RR@5": metrics.reciprocal_rank(rels, 5, thr=thr)})
pd.DataFrame(rows).set_index("threshold (grade >=)").round(4)

# %% [markdown]
# ## The X/Y trap
#
# Two systems answer the same query. System X returns three mildly related documents at the top; system Y
# buries the one document that actually answers the question at rank 4. Which is better?

# %%
from labkit.toys import TRAP_JUDGED, TRAP_X, TRAP_Y

X, Y, judged = TRAP_X, TRAP_Y, TRAP_JUDGED  # judged: every graded document of the query
print("X:", X, "| Y:", Y, "| judged grades:", judged)
print("book IDCG      X:", metrics.ndcg_at_k(X, 5), " Y:", round(metrics.ndcg_at_k(Y, 5), 4))
print("all-judged IDCG X:", round(metrics.ndcg_at_k(X, 5, all_grades=judged), 4),
      " Y:", round(metrics.ndcg_at_k(Y, 5, all_grades=judged), 4))

# %% [markdown]
# With the book's ideal, X scores a **perfect 1.0**: it ordered what it retrieved perfectly, and the ideal
# never learns that a grade-3 document existed. With every judged document in the ideal, X drops to 0.4671.
# Y is still lower under both (0.4307 and 0.2832) because its one good document sits at rank 4. Two lessons:
#
# 1. The book's nDCG answers "is what I retrieved well ordered?", not "did I retrieve the best documents?".
#    Pair it with recall, or use the all-judged ideal.
# 2. A perfect score on one metric is a prompt to look at the list, not a result.
#
# ## Which metric when?
#
# The book's safe defaults are **Recall@k for the first stage** (did the evidence reach the candidate set?),
# **nDCG@k for the rerank stage** (is the best evidence at the top?), **hit rate@k as the pragmatic
# starting point**, and **MRR when one fact is enough**. The guide below is our summary:

# %%
guide = pd.DataFrame(
    [
        ("Stage 1: wide retrieval (top 50-100)", "Recall@k", "missing evidence cannot be fixed later"),
        ("Stage 2: rerank into the prompt (top 3-10)", "nDCG@k", "graded labels, order matters, lost in the middle"),
        ("Single-fact lookups", "MRR@k, hit@k", "one good chunk is enough; sooner is better"),
        ("Synthesis / comparison questions", "Recall@k, nDCG@k", "the answer needs several chunks"),
        ("A first dashboard for a new system", "hit rate@k", "easy to explain: did any useful chunk arrive?"),
        ("Precision-sensitive prompts (small context)", "P@k", "every irrelevant chunk costs tokens and attention"),
    ],
    columns=["situation", "measure first", "why"],
).set_index("situation")
guide

# %% [markdown]
# Whatever you pick, measure **at the k that the next stage consumes**: Recall@10 is flattering when the prompt
# only takes the top 3. For facts, a small *k* (1–2) matches the need; for synthesis questions, *k* = 5–10.
#
# ## Playground
#
# The widget wraps exactly the function below: `metrics.ranking_metrics` (and `plots.plot_gain_discount` for
# the chart). Called once with plain arguments:

# %%
metrics.ranking_metrics(rels, k=5, thr=1, unretrieved=not_retrieved, idcg="retrieved")

# %% [markdown]
# Now the same function behind controls. Type grades (comma-separated), move *k* and the threshold, flip the
# IDCG convention, or pick a rank and move its document up or down to watch nDCG move. Recall counts the
# "judged, not retrieved" grades in its denominator.

# %%
# NBVAL_IGNORE_OUTPUT
playground = widgets.metrics_playground(rels, k=5, thr=1, unretrieved=not_retrieved)
playground

# %% [markdown]
# The values the playground shows right now (this cell is what `nbval` compares; it cannot see inside widgets):

# %%
{name: None if v is None else round(v, 4) for name, v in playground.result.items()}

# %% [markdown]
# ## The same metrics on a real batch
#
# One query is a toy. Here is a whole run on the workbook's corpus: the fictional company handbook (chapter 00)
# and its labelled dev queries. For this chapter we retrieve **whole documents** with BM25 (chapter 01 does it
# properly, on chunks) and judge a document by the best grade of the gold spans it contains. The run and the
# judgements go through TREC files, the format every IR tool reads.

# %%
import tempfile
from pathlib import Path

import bm25s
import Stemmer

from labkit.data import load_corpus, load_queries, read_qrels, read_run, write_qrels, write_run

corpus = load_corpus()
queries = load_queries(split="dev")
doc_ids = list(corpus)
stemmer = Stemmer.Stemmer("english")
bm25 = bm25s.BM25(method="robertson")
bm25.index(bm25s.tokenize([corpus[d].text for d in doc_ids], stopwords="en", stemmer=stemmer,
                          show_progress=False), show_progress=False)
hits, scores = bm25.retrieve(bm25s.tokenize([q.search_text for q in queries], stopwords="en", stemmer=stemmer,
                                            show_progress=False), k=10, show_progress=False)

run = {q.qid: {doc_ids[j]: float(s) for j, s in zip(row, srow)} for q, row, srow in zip(queries, hits, scores)}
qrels = {}
for q in queries:
    for span in q.gold:
        qrels.setdefault(q.qid, {})[span.doc] = max(span.grade, qrels.get(q.qid, {}).get(span.doc, 0))
print(f"{len(corpus)} documents, {len(queries)} dev queries, {sum(map(len, qrels.values()))} judged pairs")

# %%
with tempfile.TemporaryDirectory() as tmp:
    write_run(run, Path(tmp) / "bm25.run", tag="bm25-docs")
    write_qrels(qrels, Path(tmp) / "dev.qrels")
    print("bm25.run, first lines:\n" + "".join((Path(tmp) / "bm25.run").open().readlines()[:3]))
    print("dev.qrels, first lines:\n" + "".join((Path(tmp) / "dev.qrels").open().readlines()[:3]))
    run_back, qrels_back = read_run(Path(tmp) / "bm25.run"), read_qrels(Path(tmp) / "dev.qrels")

result = metrics.evaluate(run_back, qrels_back, metrics=("P@5", "R@10", "RR@10", "hit@5", "nDCG@10"))
result

# %% [markdown]
# `evaluate` returns one row per judged query and the mean. Per slice, the same run tells three different stories:

# %%
slice_of = {q.qid: q.slice for q in queries}
per_query = result.per_query.assign(slice=lambda df: df.index.map(slice_of))
per_query.groupby("slice").mean().round(4)

# %% [markdown]
# The same numbers from `trec_eval`'s own code (through `pytrec_eval`), as a last check. The workbook's tests
# run this comparison on thousands of random rankings with ties, negative grades and short runs.

# %%
import pytrec_eval

reference = pytrec_eval.RelevanceEvaluator(qrels_back, {"P_5", "recall_10", "ndcg_cut_10"}).evaluate(run_back)
worst = max(abs(reference[qid]["ndcg_cut_10"] - result.per_query.loc[qid, "nDCG@10"]) for qid in reference)
print(f"largest nDCG@10 difference from trec_eval over {len(reference)} queries: {worst:.1e}")

# %% [markdown]
# ## What can go wrong
#
# * **Duplicates in a ranking.** A fused list that contains the same chunk twice counts it twice: hit rate and
#   recall can exceed their true values. `labkit` refuses such a ranking instead of returning a wrong number:

# %%
try:
    metrics.evaluate({"q1": ["doc-a", "doc-b", "doc-a"]}, {"q1": {"doc-a": 1}}, metrics=("hit@3",))
except ValueError as err:
    print("ValueError:", err)

# %% [markdown]
# * **A cutoff below 1, or a threshold that is not a number**, gets a clear error too, never a silent 0:

# %%
for call in (lambda: metrics.precision_at_k(rels, 0), lambda: metrics.recall_at_k(rels, 5, 4, thr="high")):
    try:
        call()
    except ValueError as err:
        print("ValueError:", err)

# %% [markdown]
# * **Unreported conventions.** Threshold, IDCG convention, *k*, and whether queries without relevant documents
#   count as 0 or are left out: each one moves the number. Write them next to it.
# * **Measuring at the wrong *k*.** Recall@10 when the prompt takes the top 3 looks better than the user's
#   experience.
#
# ## Summary
#
# * Precision@k divides by *k*; Recall@k divides by every relevant document; both need a threshold on graded
#   labels.
# * RR and hit only care about the first relevant document; averaged they are MRR and hit rate.
# * nDCG rewards relevant documents near the top; its ideal is either the re-sorted top *k* (book) or all judged
#   documents (trec_eval), and the two differ (0.6176 vs 0.5166 on the running example).
# * Pick the metric that matches the stage and the question type, at the *k* the next stage consumes.
#
# ## Exercises
#
# Replace `None` with your answer and run the cell; the check prints *correct* or a hint.
#
# **3.1** What is P@3 of the running example `[0, 2, 0, 3, 1]` (threshold 1)?

# %% tags=["solution"]
answer_3_1 = metrics.precision_at_k(rels, 3)

# %%
check.exercise("3.1", answer_3_1)

# %% [markdown]
# **3.2** With `thr=3`, only the grade-3 document is relevant, and the query has exactly one. What is R@5?

# %% tags=["solution"]
answer_3_2 = 1.0

# %%
check.exercise("3.2", answer_3_2)

# %% [markdown]
# **3.3** Compute nDCG@3 (book convention) of the ranking `[1, 0, 3]` by hand, as a number.

# %% tags=["solution"]
answer_3_3 = (1 / math.log2(2) + 3 / math.log2(4)) / (3 / math.log2(2) + 1 / math.log2(3))

# %%
check.exercise("3.3", answer_3_3)

# %% [markdown]
# **3.4** Reorder the running example so that nDCG@5 is exactly 1. Give the list of grades.

# %% tags=["solution"]
answer_3_4 = [3, 2, 1, 0, 0]

# %%
check.exercise("3.4", answer_3_4)

# %% [markdown]
# **3.5** A help-desk bot answers single-fact questions from the top 3 chunks. Which metric do you watch first:
# `"recall@k"`, `"ndcg@k"`, `"mrr"` or `"hit@k"`? (Several are defensible; the check wants the one that also
# rewards putting the fact first.)

# %% tags=["solution"]
answer_3_5 = "mrr"

# %%
check.exercise("3.5", answer_3_5)

# %% [markdown]
# **3.6** nDCG@5 of `Y = [0, 0, 0, 3, 0]` with trec_eval's ideal, when the judged grades are `[3, 1, 1, 1]`?

# %% tags=["solution"]
answer_3_6 = metrics.ndcg_at_k(Y, 5, all_grades=judged)

# %%
check.exercise("3.6", answer_3_6)
