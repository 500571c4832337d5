# %% [markdown]
# # 09 · Router evaluation
#
# **You will learn** to evaluate a model router with the retrieval metrics of this workbook (it *is* a
# retriever: the corpus is the list of models, the query is the request, the relevant documents are the models
# whose answer passes), and to measure the context-window filter that RAG requests put in front of it.
#
# Source: section 7.13 of the chapter notes. The router example, its models and prices are made up, as in the
# source; the prompts and their token counts are measured on the handbook.

# %%
import labkit
from labkit import check, router, widgets

labkit.setup()

# %% [markdown]
# ## A router is a retriever
#
# A router sends each request to a model, balancing quality, cost and latency. Give it a ranking (call the
# first model; if it fails, fall back to the next) and offline labels saying which models pass each request
# (judged by a calibrated judge), and every metric of chapters 03–04 applies. Grades: **3** = the cheapest
# passing model, **2** = passes but costs more, **0** = fails. The source chapter's made-up example:

# %%
import pandas as pd

from labkit.toys import ROUTER_COST, ROUTER_PASS, ROUTER_RANKING

COST = ROUTER_COST  # $ per 1M tokens (made up)
PASS = ROUTER_PASS  # which models pass each request (offline labels, made up)
ROUTER = ROUTER_RANKING  # the router's ranking per request: call #1 first, fall back on failure
print("cost per 1M tokens:", COST)
pd.DataFrame(
    {
        "passing models": {req: ", ".join(m for m in COST if m in PASS[req]) for req in ROUTER},
        "router ranking": {req: " > ".join(ROUTER[req]) for req in ROUTER},
    }
)

# %% [markdown]
# One request by hand: grades in the router's order, the reciprocal rank of the first passing model, nDCG@3
# against the ideal order of *all* models, and the **cascade regret**: what the try-in-order cascade spends
# (every failed call is paid) beyond the cheapest passing model.

# %%
import math


def my_grade(model, passing):
    if model not in passing:
        return 0
    return 3 if COST[model] == min(COST[m] for m in passing) else 2


def my_dcg(grades):
    return sum(g / math.log2(i + 2) for i, g in enumerate(grades))


req = "r2 SQL 3-table join"
g = [my_grade(m, PASS[req]) for m in ROUTER[req]]
ideal = sorted((my_grade(m, PASS[req]) for m in COST), reverse=True)
first_ok = next(i for i, m in enumerate(ROUTER[req], 1) if m in PASS[req])
spent = sum(COST[m] for m in ROUTER[req][:first_ok])
print(req, "grades", g, f"RR={1 / first_ok:.2f}", f"NDCG@3={my_dcg(g[:3]) / my_dcg(ideal[:3]):.2f}",
      f"regret=${spent - min(COST[m] for m in PASS[req]):+.1f}")  # fmt: skip

# %% [markdown]
# The whole table with `labkit.router.evaluate_router`, which uses `labkit.metrics` underneath (the source
# chapter's printout, reproduced):

# %%
table = router.evaluate_router(ROUTER, PASS, COST, k=3)
for name, row in table.iterrows():
    print(f"{name:26} grades={row.grades} RR={row.RR:.2f} NDCG@3={row['nDCG@3']:.2f} regret=${row.regret:+.1f}")
mean = table.attrs["mean"]
print(f"MRR={mean.RR:.3f}  Hit@1={mean['hit@1']:.2f}  NDCG@3={mean['nDCG@3']:.3f}  "
      f"mean cascade regret=${mean.regret:.2f}/1M tok")  # fmt: skip

# %% [markdown]
# Reading it like a retrieval report:
#
# * **Hit@1 = 0.75**: three requests in four succeed on the first call. **MRR = 0.875**: the fourth succeeds on
#   the second.
# * **nDCG@3** punishes r1 and r3 a little although their first call passes: the router tried an expensive
#   passing model (grade 2) before the cheapest (grade 3). Quality metrics alone would call those perfect.
# * **Regret** is dominated by one request: r3 sent to `xl` when `large` passes costs $10 per million tokens.
#   A mean regret hides that; look at the per-request column.
#
# ## RAG requests: the context-window filter is stage 1
#
# A RAG prompt is the question plus *k* chunks, so its length depends on *k* and the chunk size. Before ranking,
# the router must drop every model whose context window is smaller than the prompt: a **hard filter**, the
# router's first stage. Its "recall" is the share of requests for which the cheapest model that really fits
# survives the filter. Filtering on a rough estimate (characters / 4) instead of a real token count can keep a
# model that will cut the prompt (**overflow**) or drop one that fits and pay for a bigger one (**overpay**).
#
# We build the real prompts of all labelled queries on the handbook (fused retriever, chunks of 128 words) and
# count their tokens with a real tokenizer: the WordPiece tokenizer we ship for the embedding model. A chat
# model's tokenizer gives somewhat different counts; the method is the same. The model line-up is **made up**,
# with windows scaled to our short prompts:

# %%
from labkit.toys import ROUTER_WINDOW

WINDOW = ROUTER_WINDOW  # tokens (made up)
print("context windows:", WINDOW)

from labkit.chunking import chunk_corpus
from labkit.data import load_corpus, load_queries
from labkit.embeddings import count_tokens
from labkit.retrieval import BM25Retriever, DenseRetriever, HybridRetriever, make_run

queries = load_queries()
chunks = chunk_corpus(load_corpus(), 128, 32)
texts = {c.id: c.text for c in chunks}
run = make_run(HybridRetriever([BM25Retriever(chunks), DenseRetriever(chunks)]), queries, 20)

prompts = router.rag_prompts(queries, run, texts, k=5)
print(prompts[0][:400])

# %%
true_tokens = count_tokens(prompts)
estimate = [router.chars_over_4(p) for p in prompts]
ratio = pd.Series([e / t for e, t in zip(estimate, true_tokens)])
print(f"k=5: {len(prompts)} prompts, real tokens median {pd.Series(true_tokens).median():.0f}; "
      f"chars/4 over real: median {ratio.median():.3f}, 5th-95th percentile {ratio.quantile(0.05):.3f}-"
      f"{ratio.quantile(0.95):.3f}")  # fmt: skip

# %% [markdown]
# On average the estimate is close, but an estimate that is right on average is still wrong near every window
# boundary. The routing of all requests at several *k*:

# %%
def stats(k):
    p = router.rag_prompts(queries, run, texts, k)
    return router.routing_at_k(count_tokens(p), [router.chars_over_4(x) for x in p], WINDOW, COST)


by_k = pd.DataFrame({k: stats(k) for k in (1, 3, 5, 10, 20)}).T.rename_axis("k")
by_k.round(3)

# %% [markdown]
# Three things the table shows, all measured:
#
# * **Router and retriever interact.** Going from *k* = 5 to 10 doubles the prompt and moves almost every request
#   from `nano` to `mini`: the price per request rises far more than twofold. When you tune *k* or the chunk size
#   (chapter 05), report the routing cost it drags along, not only Recall@k.
# * **The estimate misroutes near the boundaries.** At *k* = 5 the median prompt sits just under `nano`'s window,
#   and chars/4 sends a share of requests to a model that would cut their prompt (overflow) while sending others
#   to a pricier model than needed (overpay).
# * **Measure the filter's recall with real token counts**, on your real prompts, at the *k* you deploy.
#
# ## Lost in the middle depends on the model
#
# Chapter 04 showed a U-shaped accuracy curve whose depth varies by model. For a router that means slicing the
# evaluation set by prompt length and by the gold chunk's position, and measuring each model's pass rate in each
# cell, so the router can learn "long prompt, evidence in the middle: needs the big model". The slicing is easy
# to build from our prompts; the pass rates need a model, which this offline workbook does not call yet (the
# recorded-or-live client of `labkit.llm` is ready for it). Our requests by length bucket and position of the
# first gold chunk, at *k* = 10:

# %%
from labkit.chunking import spans_to_qrels

qrels = spans_to_qrels(queries, chunks)
tokens_10 = count_tokens(router.rag_prompts(queries, run, texts, k=10))
rows = []  # the first chunk of grade >= 2 in the prompt
for q, n in zip(queries, tokens_10):
    pos = next((i for i, c in enumerate(run[q.qid][:10], 1) if qrels[q.qid].get(c, 0) >= 2), None)
    if pos is None:
        where = "not in top 10"
    else:
        where = "first (1-3)" if pos <= 3 else "middle (4-7)" if pos <= 7 else "last (8-10)"
    rows.append({"length": "<= 1,800 tokens" if n <= 1800 else "> 1,800 tokens", "gold chunk": where})
pd.crosstab(pd.DataFrame(rows)["length"], pd.DataFrame(rows)["gold chunk"], margins=True)

# %% [markdown]
# ## Playground
#
# The widget wraps `stats(k)` above (built on `router.routing_at_k`). With a plain argument:

# %%
{name: round(v, 4) for name, v in stats(8).items()}

# %% [markdown]
# Move *k* and watch the prompt size, where the filter sends the requests, the price per thousand requests and
# the estimate's errors (each *k* takes a second the first time):

# %%
# NBVAL_IGNORE_OUTPUT
explorer = widgets.RoutingExplorer(stats, k=5)
explorer

# %%
{name: round(v, 4) for name, v in explorer.result.items()}

# %% [markdown]
# ## Summary
#
# * A router is a retriever over models: grade the models per request, then MRR, Hit@1 and nDCG@k apply, and
#   cascade regret adds the money.
# * For RAG requests the context-window filter is stage 1; measure it with real token counts at the deployed *k*.
# * *k* and chunk size change prompt length, hence routing cost: tune them together.
#
# ## Exercises
#
# **9.1** What is nDCG@3 of request r2 (to 2 decimals)?

# %% tags=["solution"]
answer_9_1 = round(table.loc["r2 SQL 3-table join", "nDCG@3"], 2)

# %%
check.exercise("9.1", answer_9_1)

# %% [markdown]
# **9.2** If the router ranked `large` before `xl` for r3, what would the mean cascade regret become (in $)?

# %% tags=["solution"]
fixed = dict(ROUTER, **{"r3 RAG 80k-token context": ["large", "xl", "mid", "mini", "nano"]})
answer_9_2 = round(router.evaluate_router(fixed, PASS, COST).attrs["mean"]["regret"], 3)

# %%
check.exercise("9.2", answer_9_2)

# %% [markdown]
# **9.3** At *k* = 10, what share of requests does the real-token filter send to `mini`?

# %% tags=["solution"]
answer_9_3 = round(stats(10)["share to mini"], 3)

# %%
check.exercise("9.3", answer_9_3, by_k=by_k)
