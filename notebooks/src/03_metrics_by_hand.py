# %% [markdown]
# # 03 · Metrics by hand
#
# **You will learn** to compute Precision@k, Recall@k, reciprocal rank, hit, DCG and nDCG from a list of grades,
# to see how a relevance threshold and the choice of ideal ranking change the numbers, and to pick the metric
# that matches the question your system answers.
#
# Source: sections 7.3, 7.5 and 7.6 of the chapter notes. We write every formula from scratch in a few lines,
# check it once against `labkit.measures.metrics`, and from then on use `labkit`. The same functions are cross-checked
# against `trec_eval` (through `pytrec_eval`) in the workbook's tests.

# %%
import math
from itertools import permutations

import pandas as pd

import labkit
from labkit.chapters import ch03
from labkit.exercises import check
from labkit.measures import metrics, stats
from labkit.ui import plots, widgets

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
from labkit.data.toys import RUNNING_GRADES, RUNNING_UNRETRIEVED

rels = RUNNING_GRADES  # grades of the documents at ranks 1..5
not_retrieved = RUNNING_UNRETRIEVED  # the relevant document the retriever ranked below the top 5
missing_rank = 8  # where it was ranked
all_grades = rels + not_retrieved  # every judged document of this query
print("top-5 grades:", rels, "| judged but not in the top 5:", not_retrieved, f"(at rank {missing_rank})")

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
#   `trec_eval` reports 0, which quietly multiplies the mean of every system by the same factor, the share of
#   queries that have a relevant document: every mean falls, a higher one by more, so differences shrink too.

# %%
print("P@10 of a 5-document ranking:", metrics.precision_at_k(rels, 10))
print("recall when nothing is relevant:", metrics.recall_at_k([0, 0, 0], 3, n_relevant_total=0))
answerable = {"system A": [1.0, 0.5, 1.0, 0.5], "system B": [0.5, 0.5, 0.5, 0.5]}  # 4 queries with a relevant document
for name, recalls in answerable.items():  # and 1 query without: labkit leaves it out, trec_eval adds a 0
    left_out, as_zero = sum(recalls) / len(recalls), sum(recalls) / (len(recalls) + 1)
    print(f"{name}: mean recall {left_out:.3f} left out, {as_zero:.3f} counted as 0 (x {as_zero / left_out:.2f}, "
          f"{left_out - as_zero:.3f} lower)")

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
# ### The source's example: grades 3, 1 and 0
#
# Take the request *"Summarise this year's salary trends in the data industry"*. A new salary survey is very
# relevant (grade 3), an overview of the labour market is somewhat relevant (grade 1), and a public-holiday
# notice is not relevant (grade 0). A yes/no label would have to call the overview either as good as the
# survey or as useless as the notice; grades keep the difference. Here is every order of the three documents,
# best first:

# %%
from labkit.data.toys import SALARY_GRADES

salary = SALARY_GRADES  # document -> grade (0-3)
rows = []
for order in permutations(salary):
    grades = [salary[doc] for doc in order]
    rows.append({"grades": grades, "rank 1": order[0], "rank 2": order[1], "rank 3": order[2],
                 "DCG@3": my_dcg(grades), "nDCG@3": metrics.ndcg_at_k(grades, 3)})
orders = pd.DataFrame(rows).sort_values("nDCG@3", ascending=False, ignore_index=True)
orders.round(4)

# %% [markdown]
# With the survey first, the order of the other two barely matters (the top two rows): ranks 2 and 3 are
# discounted, and the overview is worth only 1. Every order that pushes the survey down loses more, and the
# worst puts it last, behind both weaker documents. Even that order keeps more than half of the ideal DCG (the
# last row): with the book's ideal, a ranking of the right documents in a poor order is never punished much.

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
# ### Reading an nDCG value
#
# DCG on its own is hard to read: its size depends on how many relevant documents the query has and how good
# they are. Dividing by the ideal DCG puts every query on the same 0–1 scale. **nDCG = 1** means the best
# possible order; **nDCG = 0.5** means the ranking collected half of the discounted gain that the best order of
# the same judged documents would have collected. It does not mean that half the documents are relevant, nor
# that the system is right half of the time. The running example under trec_eval's ideal is close to that
# half:

# %%
ideal = my_dcg(sorted(all_grades, reverse=True)[:5])
print(f"DCG@5 = {my_dcg(rels):.4f} of an ideal {ideal:.4f}: nDCG@5 = {my_dcg(rels) / ideal:.4f}")

# %% [markdown]
# Because of the normalisation, nDCG can be compared across queries and averaged over them; raw DCG cannot.
# Four rankings from four different queries (the last two made up for this comparison), each with trec_eval's
# ideal over all of its judged documents:

# %%
rankings = {  # query: (grades of the top 5, grades of every judged document of the query)
    "refund policy (running example)": (rels, all_grades),
    "salary trends, survey first": (sorted(salary.values(), reverse=True), list(salary.values())),
    "a synthesis question, badly ordered": ([0, 0, 3, 3, 2], [3, 3, 2]),
    "a one-fact question, answer first": ([3, 0, 0, 0, 0], [3]),
}
comparable = pd.DataFrame(
    {
        name: {
            "DCG@5": metrics.dcg(top[:5]),
            "IDCG@5": metrics.dcg(sorted(judged_grades, reverse=True)[:5]),
            "nDCG@5": metrics.ndcg_at_k(top, 5, all_grades=judged_grades),
        }
        for name, (top, judged_grades) in rankings.items()
    }
).T
comparable.round(4)

# %%
pair = comparable.loc[["a synthesis question, badly ordered", "a one-fact question, answer first"]]
for measure in ("DCG@5", "nDCG@5"):
    print(f"{measure:6s} ranks higher: {pair[measure].idxmax()!r}")

# %% [markdown]
# By raw DCG the badly ordered synthesis ranking beats a perfect answer to a one-fact question, only because
# its query has more relevant documents to collect. nDCG removes that: each query is scored against its own
# best case, and a mean nDCG over queries does not favour queries that happen to have many relevant documents.

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
from labkit.data.toys import TRAP_JUDGED, TRAP_X, TRAP_Y

X, Y, judged = TRAP_X, TRAP_Y, TRAP_JUDGED  # judged: every graded document of the query
print("X:", X, "| Y:", Y, "| judged grades:", judged)
print("book IDCG      X:", metrics.ndcg_at_k(X, 5), " Y:", round(metrics.ndcg_at_k(Y, 5), 4))
print("all-judged IDCG X:", round(metrics.ndcg_at_k(X, 5, all_grades=judged), 4),
      " Y:", round(metrics.ndcg_at_k(Y, 5, all_grades=judged), 4))

# %% [markdown]
# With the book's ideal, X scores a **perfect 1.0**: it ordered what it retrieved perfectly, and the ideal
# never learns that a grade-3 document existed. With every judged document in the ideal, X drops, but look at
# the order: **X still scores above Y** under both ideals, because Y's one good document sits at rank 4. The
# all-judged ideal fixes X's perfect score, not the ranking of the two systems.
#
# So which system is better? For a RAG system, **Y**. The query needs the document that states the answer, only
# Y retrieved it, and a reader given X's five documents has nothing to answer from. Whether a metric agrees
# depends on how much it pays for a grade-1 "related" document. Every binary metric of both systems, at each
# threshold:

# %%
from collections import Counter


def missed(top, judged_grades):
    """Grades of the judged documents that are not in the top list (recall's and the ideal's extra grades)."""
    return list((Counter(judged_grades) - Counter(g for g in top if g > 0)).elements())


trap = {}
for thr in (1, 2, 3):
    for name, top in (("X", X), ("Y", Y)):
        m = metrics.ranking_metrics(top, 5, thr=thr, unretrieved=missed(top, judged), idcg="all_judged")
        trap[(f"thr={thr}", name)] = {key: m[key] for key in ("P@k", "R@k", "RR@k", "hit@k")}
trap = pd.DataFrame(trap).rename(index=lambda key: key.replace("@k", "@5"))
for thr in (1, 2, 3):
    x, y = trap[(f"thr={thr}", "X")], trap[(f"thr={thr}", "Y")]
    trap[(f"thr={thr}", "higher")] = ["X" if a > b else "Y" if b > a else "tie" for a, b in zip(x, y)]
trap

# %% [markdown]
# At `thr = 1` the three related documents count as hits, so X wins on P@5, R@5 and RR@5 and hit@5 is a tie.
# From `thr = 2` on, grade 1 no longer counts, X has nothing relevant in its top 5, and every binary metric
# prefers Y. nDCG ignores the threshold, and with linear gain it prefers X at every cutoff: three discounted 1s
# add up to more than one 3 discounted at rank 4. Some libraries use the **exponential gain** `2**grade - 1`
# instead (Burges et al., *Learning to rank using gradient descent*, ICML 2005; common in learning-to-rank
# tools), which makes a grade-3 document worth seven related ones instead of three. That flips nDCG:

# %%
def my_dcg_exp(rels):
    return sum((2**r - 1) / math.log2(i + 1) for i, r in enumerate(rels, start=1))


print(f"discounted gain, linear:      X {my_dcg(X):.4f}  Y {my_dcg(Y):.4f}")
print(f"discounted gain, exponential: X {my_dcg_exp(X):.4f}  Y {my_dcg_exp(Y):.4f}")
ideal_exp = my_dcg_exp(sorted(judged, reverse=True)[:5])
print(f"nDCG@5 (all judged), linear gain:      X {metrics.ndcg_at_k(X, 5, all_grades=judged):.4f}"
      f"  Y {metrics.ndcg_at_k(Y, 5, all_grades=judged):.4f}")
print(f"nDCG@5 (all judged), exponential gain: X {my_dcg_exp(X) / ideal_exp:.4f}  Y {my_dcg_exp(Y) / ideal_exp:.4f}")
for k in range(1, 6):
    x_k, y_k = (metrics.ndcg_at_k(r, k, all_grades=judged) for r in (X, Y))
    print(f"linear gain, nDCG@{k}: X {x_k:.4f}  Y {y_k:.4f}")

# %% [markdown]
# Three lessons:
#
# 1. The book's nDCG answers "is what I retrieved well ordered?", not "did I retrieve the best documents?".
#    Pair it with recall, or use the all-judged ideal.
# 2. The threshold and the gain decide what "relevant" means, and they can reverse a comparison. Choose them
#    from what the reader needs: if only a document that states the answer helps, count grade ≥ 2 (or 3), or
#    give grade 3 far more weight than grade 1.
# 3. A perfect score on one metric is a prompt to look at the list, not a result.
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
# ### Choosing by MRR, or by recall: an experiment
#
# The source warns that MRR can rise while comparison questions stay wrong: MRR rewards the *first* useful chunk,
# and a comparison needs all of its evidence. A test of that warning on the handbook of chapter 00 (the real batch
# below uses it too). The candidates are eight retrieval configurations on the same chunks (128 words, overlap
# 32): BM25, dense, and their RRF fusion (chapter 01) with the dense run weighted 0.25, 0.5 or 0.75, at *c* = 10
# or 60. On the dev queries, one choice takes the best MRR@5 and the other the best R@5 (the prompt reads the top
# 5):

# %%
from labkit import data_dir
from labkit.data.corpus import load_corpus, load_queries
from labkit.measures.fusion import fuse_runs
from labkit.retrieval.grid import ChunkGrid, evidence_recall
from labkit.text.chunking import spans_to_qrels

handbook = load_corpus()


def configurations(grid, names=None):
    """The candidate runs on the 128/32 chunks, ``{name: run}`` (only ``names``, when given)."""
    runs = grid.runs(128, 32)
    out = {"bm25": runs["bm25"], "dense": runs["dense"]}
    for c in (10, 60):
        for w in (0.25, 0.5, 0.75):
            out[f"RRF c={c}, dense weight {w}"] = fuse_runs([runs["bm25"], runs["dense"]], c=c, weights=[1 - w, w],
                                                            top_n=100)  # fmt: skip
    return {name: run for name, run in out.items() if names is None or name in names}


def scored(grid, run, k=5):
    """Per query: RR@k and R@k (chunk level, a chunk holding part of a gold span counts), and ER@k, the share of
    its gold spans of grade >= 2 that one of the top k chunks holds whole (evidence recall, chapter 05)."""
    chunks = grid.chunks(128, 32)
    per_query = metrics.evaluate({q: r[:k] for q, r in run.items()}, spans_to_qrels(grid.queries, chunks),
                                 (f"RR@{k}", f"R@{k}")).per_query  # fmt: skip
    return per_query.assign(**{f"ER@{k}": pd.Series(evidence_recall(run, grid.queries, chunks, k))})


dev_grid = ChunkGrid(handbook, load_queries(split="dev"), ("bm25", "dense"))
dev_choice = pd.DataFrame({name: scored(dev_grid, run)[["RR@5", "R@5"]].mean()
                           for name, run in configurations(dev_grid).items()}).T  # fmt: skip
by_mrr, by_recall = dev_choice["RR@5"].idxmax(), dev_choice["R@5"].idxmax()
print(f"{len(dev_grid.queries)} dev queries; chosen by MRR@5: {by_mrr}; chosen by R@5: {by_recall}")
dev_choice.rename(columns={"RR@5": "MRR@5"}).round(3)

# %% [markdown]
# Then the two choices meet on questions that chose nothing. The comparison, synthesis and multi-hop questions
# of the test split with two or more gold spans of grade ≥ 2, and the test half of the synthesis questions of
# `data/kinds/` (written for questions that need several pieces of evidence), are scored on what such a question
# needs: ER@5, the share of its evidence held whole by a chunk of the top 5 ([evidence
# recall](00_welcome.ipynb#Evidence-recall)), and *all evidence@5*, whether every piece is. Beside them, MRR@5 on
# all test queries (does the MRR choice keep its lead?). Three paired comparisons, declared as one family before
# the test questions are read:

# %%
choice_members = ["MRR@5, all test queries", "ER@5, several-evidence questions",
                  "all evidence@5, several-evidence questions"]  # fmt: skip
choice_family = stats.Family(f"chosen by MRR@5 ({by_mrr}) − chosen by R@5 ({by_recall}), test",
                             [f"{m}: MRR choice − R@5 choice" for m in choice_members])  # fmt: skip
print(f"declared: {choice_family.name}, {len(choice_family.members)} comparisons")

# %%
test_queries = load_queries(split="test")
synthesis = [q for q in load_queries(path=data_dir() / "kinds" / "synthesis.jsonl") if q.split == "test"]
held_grid = ChunkGrid(handbook, test_queries + synthesis, ("bm25", "dense"))
several = [q.qid for q in held_grid.queries
           if q.kind in ("comparison", "synthesis", "multihop") and sum(s.grade >= 2 for s in q.gold) >= 2]  # fmt: skip
everyone = [q.qid for q in test_queries]
print(f"{len(several)} several-evidence questions ({len(synthesis)} of them from data/kinds/); "
      f"{len(everyone)} test queries for MRR@5")  # fmt: skip
held_runs = configurations(held_grid, (by_mrr, by_recall))  # only the two chosen: the others are never scored here
mrr_side, recall_side = (scored(held_grid, held_runs[name]) for name in (by_mrr, by_recall))
choice_data = {
    choice_family.members[0]: (mrr_side.loc[everyone, "RR@5"].tolist(), recall_side.loc[everyone, "RR@5"].tolist()),
    choice_family.members[1]: (mrr_side.loc[several, "ER@5"].tolist(), recall_side.loc[several, "ER@5"].tolist()),
    choice_family.members[2]: ((mrr_side.loc[several, "ER@5"] == 1).astype(int).tolist(),
                               (recall_side.loc[several, "ER@5"] == 1).astype(int).tolist()),
}  # fmt: skip
choice_kinds = dict(zip(choice_family.members, ("paired graded", "paired graded", "paired 0/1"), strict=True))
choice_found = choice_family.findings(choice_data, kind=choice_kinds)
for found in choice_found.values():
    print(found.sentence)
print("means (MRR choice, R@5 choice): " + "; ".join(f"{m.split(':')[0]} {sum(a) / len(a):.3f}, {sum(b) / len(b):.3f}"
                                                     for m, (a, b) in choice_data.items()))  # fmt: skip
stats.findings_table(choice_found)[["estimate", "low", "high", "p", "verdict"]].round(3)

# %% [markdown]
# Read the three sentences above, not the means. On dev the two metrics pick different configurations, here two
# fusions that differ only in RRF's *c*: MRR@5 rewards the one that lifts the first useful chunk a little, R@5 the
# one that brings a little more of the evidence into the top 5. On held-out questions the source's worry is what
# the second and third lines test: does the configuration chosen by MRR find less of what a several-evidence
# question needs? Where a line says not shown, these questions do not tell the two choices apart, and its
# interval bounds the difference: its lower end is the largest loss of the MRR choice that they leave open, its
# upper end the largest gain. The first line checks the premise itself, that the MRR choice keeps a higher MRR on
# queries it was not chosen on. The lesson is in the design as much as in the outcome: a choice by MRR is never
# tested against what comparison questions need, so choose by the measure of that need (recall of all the
# evidence, at the *k* the prompt reads) and check the choice on questions of that kind that chose nothing.
#
# ## Playground
#
# The widget wraps exactly the functions below: `metrics.ranking_metrics`, and for the chart
# `plots.svg_gain_discount`, the bars of `plots.plot_gain_discount` drawn as SVG (a few milliseconds, far less
# than a matplotlib image takes, so the chart keeps up with the slider). Called once with plain arguments:

# %%
metrics.ranking_metrics(rels, k=5, thr=1, unretrieved=not_retrieved, idcg="retrieved")

# %%
plots.svg_gain_discount(rels, 5, not_retrieved, idcg="retrieved")

# %% [markdown]
# Now the same function behind controls. Type grades (comma-separated), move *k* and the threshold, flip the
# IDCG convention, or pick a rank and move its document up or down to watch nDCG move. Recall counts the
# "judged, not retrieved" grades in its denominator.

# %%
# NBVAL_IGNORE_OUTPUT
playground = widgets.metrics_playground(**ch03.playground_inputs())  # the running example, k = 5, relevant from grade 1
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

from labkit.data.corpus import load_corpus, load_queries
from labkit.data.trec import read_qrels, read_run, write_qrels, write_run

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
# `evaluate` returns one row per judged query and the mean. R@10 is close to 1, yet P@5 is low. That is not a
# weak retriever: count the relevant documents of each query.

# %%
n_relevant = pd.Series({qid: sum(g >= 1 for g in docs.values()) for qid, docs in qrels_back.items()})
print(n_relevant.value_counts().sort_index().rename_axis("relevant documents").rename("queries").to_frame())
ceiling = (n_relevant.clip(upper=5) / 5).mean()
print(f"\n{(n_relevant == 1).sum()} of {len(n_relevant)} queries have exactly one relevant document, so their P@5 "
      "can be at most 1/5.")
print(f"A perfect ranking would score P@5 = {ceiling:.4f} on average; BM25 scores {result.mean['P@5']:.4f}.")

# %% [markdown]
# With one relevant document, four of the five slots are empty even for a perfect retriever. Read P@k against
# its ceiling, or report a measure that does not divide by *k* (R@k, RR, hit) when queries have one answer.
#
# ### What the labels cost
#
# Writing realistic questions by hand and marking the passage that answers each one is the most trustworthy
# way to build an evaluation set, and the most expensive: someone must know the documents, write the question,
# then find and grade the evidence. The source's answer is to extend an authored core with questions an LLM
# generates, makes hard and filters (chapter 02), and to keep the authored slice to check the generated ones
# against. Every labelled query here was authored: written for the workbook, with its gold spans, by an AI
# assistant session (not by a person, not by the local model; see `data/README.md`), and even so the labels
# take a shortcut: the authors marked the passages that answer, not every document the retriever returns.

# %%
retrieved = sum(len(docs) for docs in run_back.values())
judged_retrieved = sum(doc in qrels_back.get(qid, {}) for qid, docs in run_back.items() for doc in docs)
n_judged = sum(map(len, qrels_back.values()))
print(f"the run returns {retrieved} (query, document) pairs; {judged_retrieved} of them are judged, and the other "
      f"{retrieved - judged_retrieved} count as grade 0 without anyone reading them")
print(f"judging every returned pair would take {retrieved} decisions, {retrieved / n_judged:.1f} times the "
      f"{n_judged} judgements the labels hold")

# %% [markdown]
# Judging every returned document would multiply the labelling work (the ratio printed above), and again for
# every new system that returns new documents. The price of not doing it: an unjudged document that does
# answer the question counts as a miss. Pooling (judging the union of several systems' top results) and a
# hand-checked sample of the "misses" are the usual middle ground.
#
# ### Per slice, with intervals
#
# Each slice holds well under 100 dev queries, so each mean gets a 95 % interval
# (`labkit.measures.stats.group_means_ci`).
# Two kinds, chosen by what is averaged:
#
# * a **proportion** (hit@5 is 0 or 1 per query, so its mean is a share of queries) gets the **Wilson**
#   interval, which stays honest at 0/n and n/n;
# * any other mean (RR, nDCG, R@10, P@5) gets a **bootstrap** interval: the slice's queries resampled with
#   replacement 2,000 times (seeded), the mean recomputed each time, and the middle 95 % of those means kept,
#   except where almost every query scores the same (R@10 of 1 on all but a few): resampling would pin an end
#   there, so such a slice gets the **sparse bound** (the shares above and below that score at Wilson's bound,
#   each differing query allowed anywhere in [0, 1]); a slice where every query scores the same gets the
#   **rule bound** described below.

# %%
slice_of = {q.qid: q.slice for q in queries}
per_query = result.per_query.assign(slice=lambda df: df.index.map(slice_of), relevant=n_relevant)
by_slice = stats.group_means_ci(per_query, "slice", ["P@5", "R@10", "RR@10", "hit@5", "nDCG@10"], n=2000)
shown = stats.fmt_ci_table(by_slice)
# a count of judged documents, not a score in [0, 1]: described, not bounded
shown.insert(1, "relevant (mean count)", per_query.groupby("slice")["relevant"].mean().round(3))
shown

# %%
plots.plot_bars_ci(by_slice, "nDCG@10", "BM25 on whole documents: nDCG@10 per slice, 95 % bootstrap intervals")

# %% [markdown]
# Why not the textbook interval for a proportion, *p* ± 1.96·√(*p*(1 − *p*)/*n*)? At 0/*n* or *n*/*n* it has no
# width at all, and near them it leaves [0, 1]; the percentile bootstrap collapses the same way, because
# resampling a slice where every query hits gives only 1s. Easy's hit@5 is exactly that case:

# %%
def collapsed(estimate, low, high):
    """An interval shown on purpose as the failure it is: its ends in words, never as a silent [x, x]."""
    width = "zero width: the failure this cell shows" if low == high else f"width {high - low:.3f}"
    return f"{estimate:.3f}, from {low:.3f} to {high:.3f} ({width})"


n_easy = int(by_slice.loc["easy", "n"])
hits_easy = int(round(by_slice.loc["easy", "hit@5"] * n_easy))
print(f"easy hit@5 = {hits_easy}/{n_easy}")
print("  normal interval:   ", collapsed(*stats.normal_interval(hits_easy, n_easy)))
print("  bootstrap interval:", collapsed(*stats.bootstrap_ci([1.0] * hits_easy + [0.0] * (n_easy - hits_easy))))
print("  Wilson interval:   ", stats.fmt_ci(*stats.wilson(hits_easy, n_easy)), " (what the table prints)")
print("  normal at 1/20:    ", stats.fmt_ci(*stats.normal_interval(1, 20)), " (below 0)")

# %% [markdown]
# The first two lines are the failure, printed as one on purpose: both intervals have no width at *n*/*n*. Every
# hit in the sample does not make a rate of 1: the Wilson interval says how low the true rate could still be with
# this many queries, and it is what the table prints for hit@5. Easy's R@10 and P@5 would collapse the same way
# under the bootstrap: every easy query scores the same (R@10 = 1, P@5 = 0.2, with one relevant document each), so
# resampling cannot move the mean. So `group_means_ci` gives them the **rule bound** (as `stats.interval_for`
# does): at most Wilson's bound for "none of *n* differ" could differ, anywhere in [0, 1]. Read
# such a cell as "no query in this sample differed", and its bound as how far the queries not yet seen could move
# the mean.
#
# ### Comparing slices: the interval of the difference
#
# Is *hard* harder than *easy*? The tempting check is to look whether the two intervals overlap. That check is
# wrong, in one direction only: intervals that do **not** overlap do show a difference, but two 95 % intervals
# can overlap while the difference between the means is clearly not zero (each interval carries the full
# uncertainty of its own mean; the difference's uncertainty is smaller than their sum). The test is the
# **interval of the difference**. The slices hold different queries, so each slice is resampled on its own
# (`stats.diff_ci(..., paired=False)`; for two systems on the *same* queries, `paired=True`).
#
# The next cells scan six comparisons (three pairs of slices × two metrics). With six looks, one of them falls
# below 0.05 by chance far more often than one time in twenty, so the six are declared first, as one **family**
# (`stats.Family`, chapter 01), and each is decided by the family's rule: a simultaneous interval, an adjusted p
# and a verdict that agree by construction. The family is named before any difference is computed:

# %%
slice_pairs = [(a, b, m) for a, b in (("easy", "hard"), ("easy", "real"), ("hard", "real"))
               for m in ("RR@10", "nDCG@10")]  # fmt: skip
slice_family = stats.Family("BM25 on whole documents: slice against slice",
                            [f"{m} {a} − {b}" for a, b, m in slice_pairs])  # fmt: skip
print(slice_family, *slice_family.members, sep="\n  ")

# %%
comparisons = {f"{m} {a} − {b}": (per_query.loc[per_query.slice == a, m], per_query.loc[per_query.slice == b, m])
               for a, b, m in slice_pairs}  # fmt: skip
found = slice_family.findings(comparisons, kind="two graded groups")  # different queries: each slice resampled alone
print(*[f.sentence for f in found.values()], sep="\n")
scan = stats.findings_table(found).rename(columns={"estimate": "difference"})[["difference", "low", "high", "p",
                                                                                "verdict"]]  # fmt: skip
overlap = {}
for name in comparisons:
    m, a, _, b = name.split()
    lo_a, hi_a, lo_b, hi_b = (by_slice.loc[s, f"{m} {end}"] for s in (a, b) for end in ("low", "high"))
    overlap[name] = "no" if lo_a > hi_b or lo_b > hi_a else "yes"
scan.insert(0, "the two intervals overlap", pd.Series(overlap))
scan.round(3)

# %%
overlapping_but_resolved = [n for n in scan.index if scan.loc[n, "the two intervals overlap"] == "yes"
                            and scan.loc[n, "verdict"] == "resolved"]  # fmt: skip
print("the two slices' own intervals overlap, and the difference is resolved all the same:",
      *[found[n].sentence for n in overlapping_but_resolved] or ["none in this family"], sep="\n  ")

# %% [markdown]
# The slices tell three stories:
#
# * **easy**: every query has one relevant document (the `relevant` column) and BM25 returns it in the top 5
#   for every query (hit@5 is 1; the Wilson interval says how far below 1 the true rate could be with this many
#   queries). The questions are phrased close to their passage, so word overlap finds it.
# * **hard**: BM25 still finds nearly every relevant document in the top 10, but ranks it lower: nDCG@10 is
#   resolved below easy's (the scan above), and RR@10's difference is not shown (its interval reaches just past
#   0, so it bounds the gap rather than showing it). These questions borrow the vocabulary of look-alike
#   passages, which compete for the top ranks.
# * **real**: against hard, the interval of the difference holds 0 on both metrics. That does **not** show the
#   two are equally hard: it bounds the difference to the interval's ends, and with the number of queries in
#   the table's `n` column those ends are far apart. Read the scan's rows for what is and is not resolved.
#
# Four rules, used in every later chapter:
#
# 1. **Overlapping intervals ≠ no difference.** Compare two numbers by the interval of their difference
#    (paired when the queries are the same), never by whether their own intervals overlap.
# 2. **Absence of evidence is not evidence of absence.** An interval that holds 0 bounds the effect by its
#    ends; say how large an effect it rules out, never "there is none".
# 3. **Select on dev, report on test.** A configuration chosen because it scored best on some queries scores
#    too well on those queries; its honest figure comes from queries that played no part in choosing it.
# 4. **Count your looks.** A cell that scans *m* comparisons declares them first, as a family of *m*, and calls a
#    difference resolved only by the family's rule: its simultaneous interval clear of 0, which is the same count
#    as its adjusted p within 0.05 (chapter 01 works the rule by hand).

# %% [markdown]
# The same numbers from `trec_eval`'s own code (through `pytrec_eval`), as a last check. The workbook's tests
# run this comparison on seeded random runs, at several k and thresholds, with ties, negative grades and short
# rankings.

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
    print("refused, as it should be. ValueError:", err)

# %% [markdown]
# * **A cutoff below 1, or a threshold that is not a number**, gets a clear error too, never a silent 0:

# %%
for call in (lambda: metrics.precision_at_k(rels, 0), lambda: metrics.recall_at_k(rels, 5, 4, thr="high")):
    try:
        call()
    except ValueError as err:
        print("refused, as it should be. ValueError:", err)

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
#   documents (trec_eval), and the two give different numbers for the same ranking. Dividing by the ideal is what
#   makes nDCG comparable across queries; 0.5 means half of the best possible discounted gain.
# * The threshold and the gain decide what counts: the X/Y trap reverses between `thr = 1` and `thr = 2`, and
#   between linear and exponential gain.
# * P@k has a ceiling of (relevant documents) / *k*; with one relevant document per query, P@5 cannot pass 0.2.
# * Per-slice means from a few dozen queries need intervals before they are compared: Wilson for a proportion,
#   the bootstrap for other means, and the interval of the *difference* (not an overlap) to compare two.
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
# **3.3** Compute nDCG@3 (book convention) of the ranking `[2, 0, 3]` by hand, as a number.

# %% tags=["solution"]
answer_3_3 = (2 / math.log2(2) + 3 / math.log2(4)) / (3 / math.log2(2) + 2 / math.log2(3))

# %%
check.exercise("3.3", answer_3_3)

# %% [markdown]
# **3.4** Reorder the running example so that nDCG@5 is exactly 1. Give the list of grades.

# %% tags=["solution"]
answer_3_4 = [3, 2, 1, 0, 0]

# %%
check.exercise("3.4", answer_3_4)

# %% [markdown]
# **3.5** A help-desk bot answers single-fact questions from the top 3 chunks: one chunk holding the fact is all
# it needs. Which of `"recall@k"`, `"ndcg@k"`, `"mrr"` or `"hit@k"` depends only on *where the first relevant
# chunk is*, rewarding it more the higher it sits and ignoring every chunk after it? (nDCG also rewards putting the
# fact first, but it also counts every other relevant chunk and its grade, which a single fact does not need.)

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

# %% [markdown]
# ### Predict, then run
#
# In the next three exercises, write your prediction **before** you run the cell that shows the answer (or
# move the slider). The check compares your prediction with what the cell computes.
#
# **3.7** System Y's grade-3 document sits at rank 4. Moved up, from which rank on does Y beat X on nDCG@5 with
# trec_eval's ideal (linear gain)? Give the deepest rank that still wins, as a number (1 = only at the top).

# %% tags=["solution"]
prediction_3_7 = 1

# %%
x_score = metrics.ndcg_at_k(X, 5, all_grades=judged)
for rank in range(1, 6):
    y_moved = [0] * 5
    y_moved[rank - 1] = max(Y)
    y_score = metrics.ndcg_at_k(y_moved, 5, all_grades=judged)
    print(f"Y's answer at rank {rank}: nDCG@5 {y_score:.4f} vs X {x_score:.4f} -> {'Y' if y_score > x_score else 'X'}")

# %%
check.exercise("3.7", prediction_3_7)

# %% [markdown]
# **3.8** Go back to the real batch and count only grade-3 documents as relevant (`thr=3`). Does the run's mean
# R@10 go `"up"`, `"down"` or stay the `"same"`? Predict, then run the cell.

# %% tags=["solution"]
prediction_3_8 = "up"

# %%
by_thr = pd.DataFrame(
    {thr: metrics.evaluate(run_back, qrels_back, metrics=("R@10", "RR@10", "hit@5"), thr=thr).mean for thr in (1, 3)}
).T.rename_axis("thr")
by_thr.round(4)

# %%
check.exercise("3.8", prediction_3_8, by_thr=by_thr)

# %% [markdown]
# Why R@10 rises while RR@10 and hit@5 fall: RR and hit are means over *every* query, and a stricter threshold
# can only take hits away (a grade-1 or grade-2 document stops counting). Recall divides by how many relevant
# documents a query has, and is a mean over the queries that have one. A query with no grade-3 document would
# leave that mean; how many do here, and how far the denominator shrinks:

# %%
for thr in (1, 3):
    per_q = metrics.evaluate(run_back, qrels_back, metrics=("R@10",), thr=thr).per_query["R@10"]
    n_rel = [sum(g >= thr for g in qrels_back[q].values()) for q in per_q.index]
    print(f"thr={thr}: R@10 is defined for {per_q.notna().sum()} of {len(per_q)} queries, "
          f"{sum(n_rel) / max(1, sum(n > 0 for n in n_rel)):.2f} relevant documents per such query")

# %% [markdown]
# Every query keeps a grade-3 document, so none leaves the mean: the rise comes from the denominator alone. The
# grade-1 and grade-2 documents that stop counting were found less often than the grade-3 ones (that is what the
# rise means), so dropping them from numerator and denominator lifts the share found.

# %% [markdown]
# **3.9** In the playground, the running example is shown with threshold 1. If you move the threshold slider to 3,
# does nDCG@5 go `"up"`, `"down"` or stay the `"same"`? Predict, then move the slider (or run the next cell).

# %% tags=["solution"]
prediction_3_9 = "same"

# %%
for thr in (1, 3):
    shown = metrics.ranking_metrics(rels, k=5, thr=thr, unretrieved=not_retrieved)
    print(f"thr={thr}:", {name: round(v, 4) for name, v in shown.items()})

# %%
check.exercise("3.9", prediction_3_9)
