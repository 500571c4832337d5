# %% [markdown]
# # 04 · MRR, hit rate and "lost in the middle"
#
# **You will learn** the two query-set metrics that ask the simplest questions (how soon does the first useful
# chunk appear? did any useful chunk arrive at all?), and why the position of the evidence in the prompt still
# matters when the model reads everything.
#
# Source: section 7.4 of the chapter notes. Published figures are cited and plotted as published; everything
# else is measured here.

# %%
import labkit
from labkit import check, metrics, plots, widgets

labkit.setup()

# %% [markdown]
# ## From one query to a query set
#
# Chapter 03 defined the **reciprocal rank** of one ranking: 1 / the rank of the first relevant document, 0 if
# there is none in the top *k*. Averaged over queries it is **MRR@k**: it only asks *how soon does the first
# useful thing appear?*, which fits questions that one fact answers. **Hit rate@k** asks less: the share of
# queries with at least one relevant document in the top *k*. The book calls it the most pragmatic starting
# metric, because for many applications one right chunk is enough to answer.
#
# A toy query set, from scratch (grades of each query's top 5, threshold 1):

# %%
from labkit.toys import MRR_TOY

toy = MRR_TOY  # first relevant document: q1 at rank 3, q2 at rank 1, q3 none in the top 5, q4 at rank 2
for qid, grades in toy.items():
    print(qid, grades)


def my_mrr(rankings, k):
    rr = []
    for rels in rankings.values():
        first = next((i for i, r in enumerate(rels[:k], start=1) if r >= 1), None)
        rr.append(0.0 if first is None else 1 / first)
    return sum(rr) / len(rr)


def my_hit_rate(rankings, k):
    return sum(any(r >= 1 for r in rels[:k]) for rels in rankings.values()) / len(rankings)


for k in (1, 3, 5):
    print(f"k={k}: MRR@{k} = {my_mrr(toy, k):.4f}   hit rate@{k} = {my_hit_rate(toy, k):.2f}")

# %% [markdown]
# The same numbers from `labkit`'s per-query functions, averaged:

# %%
for k in (1, 3, 5):
    mrr = sum(metrics.reciprocal_rank(r, k) for r in toy.values()) / len(toy)
    hit = sum(metrics.hit_at_k(r, k) for r in toy.values()) / len(toy)
    assert abs(mrr - my_mrr(toy, k)) < 1e-12 and hit == my_hit_rate(toy, k)
print("labkit agrees")

# %% [markdown]
# ## On the handbook
#
# The chapter 01 setting: chunks of 128 words with 32 overlap, BM25, dense and their RRF fusion, each
# retriever's top 20 for every labelled query. MRR@k and hit rate@k per slice, at the *k* a reader would
# consume:

# %%
from labkit.chunking import chunk_corpus, spans_to_qrels
from labkit.data import load_corpus, load_queries, load_reference
from labkit.retrieval import BM25Retriever, DenseRetriever, HybridRetriever, make_run

corpus = load_corpus()
queries = load_queries()
chunks = chunk_corpus(corpus, 128, 32)
qrels = spans_to_qrels(queries, chunks)
bm25, dense = BM25Retriever(chunks), DenseRetriever(chunks)
retrievers = {"bm25": bm25, "dense": dense, "hybrid": HybridRetriever([bm25, dense])}
runs = {name: make_run(r, queries, 20) for name, r in retrievers.items()}
slice_of = {q.qid: q.slice for q in queries}
metrics.compare_runs(runs, qrels, slice_of, ("RR@3", "hit@3", "RR@10", "hit@10")).round(4)

# %% [markdown]
# Read it as two questions. *Did anything useful arrive?* Hit rate@10 is high on every slice for the fused
# retriever. *Did it arrive first?* MRR@10 is much lower: on `hard` and `real` questions the first useful chunk
# is often at rank 2–5. If the prompt takes only the top 3, hit rate@3 is the number users feel.
#
# **Which one to watch.** For single-fact questions (most of the `easy` slice), MRR: one chunk answers, and
# earlier is better. For comparison and two-document questions, neither is enough: the answer needs *several*
# chunks, so measure Recall@k (chapter 03). Per kind of question, the fused retriever:

# %%
kind_of = {q.qid: q.kind for q in queries}
metrics.evaluate_by_group(runs["hybrid"], qrels, kind_of, ("RR@10", "hit@10", "R@10")).round(4)

# %% [markdown]
# ## Why position matters: "lost in the middle"
#
# A tempting argument: *the model reads all ten chunks, so rank 1 or rank 7 makes no difference.* Liu et al.
# tested it (*Lost in the Middle: How Language Models Use Long Contexts*, TACL 2024): multi-document question
# answering on NaturalQuestions-Open, one passage with the answer among 19 distractors (the retriever's top
# results without the answer), the answer passage moved from position 1 to 20. Accuracy follows a **U**:
# highest when the answer is first or last, up to about 20 points lower in the middle. For GPT-3.5-Turbo the middle
# positions fall *below its closed-book accuracy* (dotted), i.e. below answering with no documents at all.
# Their published numbers, plotted as published:

# %%
liu = load_reference("lost_in_the_middle_liu2024")
liu[(liu.n_docs == 20) & (liu.model == "GPT-3.5-Turbo (0613)")][["position", "accuracy", "closed_book", "oracle"]]

# %%
plots.plot_positions(liu, n_docs=20)

# %% [markdown]
# How big is the dip? The study notes this chapter follows say "more than 30 points"; the published tables we
# have show less. From the best position to the worst, per model and context size:

# %%
drop = liu.groupby(["model", "n_docs"], sort=False).accuracy.agg(best="max", worst="min")
drop.assign(drop=drop.best - drop.worst).round(1)

# %% [markdown]
# The dip is about 22 points for GPT-3.5-Turbo and only about 4 for Claude-1.3: how much a model loses in the
# middle depends on the model, which is exactly why you measure your own.

# %% [markdown]
# So retrieving the evidence is not enough; *where* it lands in the prompt matters, which is why MRR (and nDCG)
# stay useful even when several chunks are relevant, and why rerankers put the best chunk first.
#
# ## The same experiment on our corpus: a harness
#
# `labkit.positions` rebuilds the experiment on the handbook. For each labelled query it takes the chunk holding
# the grade-3 gold span and 19 distractors: the fused retriever's best-ranked chunks that hold no gold evidence,
# in rank order, as in the paper. A **reader** gets the 20 passages with the gold one at position *p* and answers;
# the answer is right when it contains the gold span.

# %%
from labkit.positions import LexicalReader, TruncatingReader, build_contexts, position_accuracy

deep = make_run(retrievers["hybrid"], queries, 60)
contexts = build_contexts(queries, chunks, qrels, deep, n_docs=20)
print(f"{len(contexts)} of {len(queries)} queries have a grade-3 chunk and 19 distractors")
ctx = contexts[0]
print("question:", ctx["question"])
print("gold passage starts:", ctx["gold"][:80].replace("\n", " "))

# %% [markdown]
# **We have no language model here** (the workbook runs offline, with no API key), so this notebook does not
# produce a lost-in-the-middle curve of its own. What it does is check the harness with two deterministic
# **control readers**, whose curves are known in advance:
#
# * a *position-blind* reader answers with the passage sharing the most words with the question: its curve must
#   be flat, or the harness is broken;
# * a *truncating* reader does the same but only sees the first 1,000 words of the context, like a model whose
#   window cuts the prompt: a cliff where the gold passage falls outside the window, not a U.

# %%
texts = {doc_id: doc.text for doc_id, doc in corpus.items()}
positions = [1, 5, 10, 15, 20]
ours = {
    reader.name: position_accuracy(contexts, reader, positions, texts)
    for reader in (LexicalReader(), TruncatingReader(window_words=1000))
}
import pandas as pd

pd.DataFrame(ours).rename_axis("position").round(4)

# %%
plots.plot_positions(liu, ours, n_docs=20)

# %% [markdown]
# The flat line proves the harness itself introduces no position effect; the cliff shows the one effect that is
# pure arithmetic (what does not fit is not read). A U-shape, if your model produces one, comes from the model.
# To measure yours, pass any callable `reader(question, passages) -> answer` that prompts it with the numbered
# passages; the workbook's recorded-or-live LLM client arrives with the chapters that need one (02, 06, 08).
#
# Two practical consequences for a RAG pipeline: put the best chunk first (rank quality matters, so watch MRR and
# nDCG, not only recall), and keep the context short enough that the evidence is not buried (measure at the *k*
# the prompt really takes).
#
# ## What can go wrong
#
# * **Measuring hit rate at a *k* the prompt does not take.** Hit rate@10 of the fused retriever is far above its
#   hit rate@3; if the prompt takes three chunks, report @3.
# * **Duplicates in a fused list** count one chunk twice and can push a hit rate computed by hand above its true
#   value (a known bug class). `labkit` refuses such a run:

# %%
try:
    metrics.evaluate({"q1": ["hr-sick-leave#0", "hr-sick-leave#0"]}, {"q1": {"hr-sick-leave#0": 3}}, ("hit@2",))
except ValueError as err:
    print("ValueError:", err)

# %% [markdown]
# * **Averaging MRR over queries that need several chunks** rewards finding one of them early and says nothing
#   about the rest; pair it with Recall@k for comparison and multi-hop questions.
#
# ## Playground
#
# The widget wraps `metrics.compare_runs` on the three runs cut at *k*. With plain arguments, *k* = 1:

# %%
metrics.compare_runs({n: {q: r[:1] for q, r in run.items()} for n, run in runs.items()}, qrels, slice_of,
                     ("RR@1", "hit@1")).round(4)  # fmt: skip

# %% [markdown]
# Move *k* and watch MRR@k and hit rate@k per slice and retriever (MRR can only grow with *k*, and so can hit
# rate; the gap between @3 and @10 is the cost of a small prompt):

# %%
# NBVAL_IGNORE_OUTPUT
explorer = widgets.CutoffExplorer(runs, qrels, slice_of, k=5)
explorer

# %%
explorer.result

# %% [markdown]
# ## Summary
#
# * MRR@k = mean reciprocal rank of the first relevant chunk; hit rate@k = share of queries with one in the top *k*.
# * Hit rate is the pragmatic first dashboard; MRR when one fact answers; Recall@k when several chunks are needed.
# * Position matters: Liu et al. measured a U-curve (up to ~23 points lost in the middle). A harness with
#   position-blind and truncating controls is ready for your model.
#
# ## Exercises
#
# **4.1** What is MRR@5 of the toy query set above?

# %% tags=["solution"]
answer_4_1 = my_mrr(toy, 5)

# %%
check.exercise("4.1", answer_4_1)

# %% [markdown]
# **4.2** What is the toy set's hit rate@1?

# %% tags=["solution"]
answer_4_2 = my_hit_rate(toy, 1)

# %%
check.exercise("4.2", answer_4_2)

# %% [markdown]
# **4.3** In Liu et al.'s 20-document table, how many accuracy points does GPT-3.5-Turbo (0613) lose between the
# gold passage at position 1 and at position 10?

# %% tags=["solution"]
gpt = liu[(liu.n_docs == 20) & (liu.model == "GPT-3.5-Turbo (0613)")].set_index("position")
answer_4_3 = round(gpt.loc[1, "accuracy"] - gpt.loc[10, "accuracy"], 1)

# %%
check.exercise("4.3", answer_4_3)
