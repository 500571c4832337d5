# %% [markdown]
# # 04b · The second stage: reranking
#
# **You will learn** why a RAG pipeline retrieves wide and then reranks; how to measure each stage with the
# metric the source recommends for it (Recall@k1 for stage 1, nDCG@k2 for stage 2); why no reranker can lift
# stage 1's ceiling; and what two real rerankers buy on the handbook, per slice, with paired intervals: a learned
# reranker over cheap features, and the local language model reading the question and the passage together. You
# will also see what they cost, and whether a better nDCG@3 turns into more right answers.
#
# Source: sections 7.1 (the two-stage pipeline) and 7.6 ("Recall@k for stage 1, nDCG@k for the rerank stage").
# Terms used here and defined earlier: Recall@k, nDCG@k and the two IDCG conventions (03), reciprocal rank and
# hit rate (04: MRR@k is the mean RR@k, hit rate@k the share of queries with a relevant chunk in the top k), the
# hybrid retriever (01), paired bootstrap and Wilson intervals (03). A **relevant** (gold) chunk here is any
# chunk with a grade ≥ 1, as in 01–04.
#
# This chapter is numbered 04b so that the chapters after it keep their numbers: your working copy, the label
# files and every cross-reference stay valid.

# %%
import labkit
from labkit.chapters import ch04b
from labkit.exercises import check
from labkit.generation import llm
from labkit.measures import metrics, stats
from labkit.retrieval import rerank
from labkit.ui import plots, widgets

labkit.setup()
llm.reset_usage()

# %% [markdown]
# ## Two stages, and the metric for each
#
# Stage 1 is cheap and reads every chunk: BM25, embeddings, their fusion. It returns the top **k1** (tens to a
# hundred). Stage 2 is expensive and reads only those: it scores each (question, chunk) pair and keeps the best
# **k2** (three to ten) for the prompt. So stage 1 is judged by what it lets through, **Recall@k1**, and stage 2 by
# how well it orders what it keeps, **nDCG@k2** (graded: the best chunk first counts most). Without a reranker,
# "stage 2" is a cut: the first k2 of stage 1's order.
#
# A toy, from scratch. Stage 1 returned eight candidates; three are relevant (grades 2, 3 and 1); a reranker
# scored each:

# %%
import math

from labkit.data.toys import RERANK_CANDIDATES, RERANK_GRADES, RERANK_SCORES

for c, s in zip(RERANK_CANDIDATES, RERANK_SCORES, strict=True):
    print(f"{c}  grade {RERANK_GRADES.get(c, 0)}  reranker score {s}")


def my_rerank(candidates, scores, k2):
    order = sorted(range(len(candidates)), key=lambda i: (-scores[i], i))  # ties keep stage 1's order
    return [candidates[i] for i in order][:k2]


def my_ndcg(ranking, grades, k):
    dcg = sum(grades.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranking[:k]))
    ideal = sorted(grades.values(), reverse=True)[:k]  # IDCG over every judged chunk (trec_eval's)
    return dcg / sum(g / math.log2(i + 2) for i, g in enumerate(ideal))


cut = RERANK_CANDIDATES[:3]
reranked = my_rerank(RERANK_CANDIDATES, RERANK_SCORES, 3)
print("cut at 3:     ", cut, f"nDCG@3 = {my_ndcg(cut, RERANK_GRADES, 3):.4f}")
print("reranked, top 3:", reranked, f"nDCG@3 = {my_ndcg(reranked, RERANK_GRADES, 3):.4f}")

# %% [markdown]
# The reranker lifted D5 (grade 3) from rank 5 and D7 from rank 7: a perfect top 3. Now give stage 1 a budget of
# **k1 = 4**: D5 and D7 never reach the reranker, and reordering what is left cannot make up for it. That is the
# **ceiling**: stage 2's result can never beat what Recall@k1 let through.

# %%
k1 = 4
shallow = my_rerank(RERANK_CANDIDATES[:k1], RERANK_SCORES[:k1], 3)
print(f"k1 = {k1}, reranked top 3:", shallow, f"nDCG@3 = {my_ndcg(shallow, RERANK_GRADES, 3):.4f}")
recall = sum(1 for c in RERANK_CANDIDATES[:k1] if c in RERANK_GRADES) / len(RERANK_GRADES)
print(f"Recall@{k1} of stage 1 = {recall:.4f}: two of the three relevant chunks were never candidates")

# %% [markdown]
# `labkit.retrieval.rerank.rerank` does the same, and `labkit.measures.metrics` agrees on nDCG:

# %%
assert rerank.rerank(RERANK_CANDIDATES, RERANK_SCORES, k2=3) == reranked
assert rerank.rerank(RERANK_CANDIDATES[:k1], RERANK_SCORES[:k1], k2=3) == shallow
for ranking in (cut, reranked, shallow):
    ours = my_ndcg(ranking, RERANK_GRADES, 3)
    theirs = metrics.evaluate({"q": ranking}, {"q": RERANK_GRADES}, ("nDCG@3",)).mean["nDCG@3"]
    assert abs(ours - theirs) < 1e-12
print("labkit agrees; D4 and D8 tie at 0.3 and keep stage 1's order:", rerank.rerank(RERANK_CANDIDATES,
                                                                                       RERANK_SCORES)[3:5])  # fmt: skip

# %% [markdown]
# **Why a tie rule must be fixed in advance.** D4 and D8 both score 0.3. Scores that tie leave the order undefined
# until a rule picks one, and a metric can depend on it. Suppose D8 were the relevant one, and look at the top 4:

# %%
tied_grades = {"D5": 3, "D2": 2, "D7": 1, "D8": 1}
for fourth in ("D4", "D8"):
    top4 = ["D5", "D2", "D7", fourth]
    value = metrics.evaluate({"q": top4}, {"q": tied_grades}, ("nDCG@4",)).mean["nDCG@4"]
    print(f"tie broken for {fourth}: nDCG@4 = {value:.4f}")

# %% [markdown]
# Same scores, two values. `rerank` breaks ties by stage 1's order (so a reranker that cannot separate two chunks
# leaves them as stage 1 had them), and `metrics.evaluate` on a scored run uses trec_eval's rule (document id
# descending); either is fine as long as it is written down and the same in every run compared.
#
# A reranker is a function from pairs to numbers, and numbers go wrong. `rerank` refuses rather than reorder
# silently. Each line below is a deliberate mistake and the message it gets (labelled examples, not failures):

# %%
mistakes = {
    "k2 larger than k1": lambda: rerank.rerank(RERANK_CANDIDATES[:4], RERANK_SCORES[:4], k2=5),
    "a score missing": lambda: rerank.rerank(RERANK_CANDIDATES, RERANK_SCORES[:7]),
    "a NaN score": lambda: rerank.rerank(RERANK_CANDIDATES[:2], [0.4, float("nan")]),
    "no candidates": lambda: rerank.rerank([], []),
    "a chunk twice": lambda: rerank.rerank(["D1", "D1"], [0.2, 0.3]),
}
for what, mistake in mistakes.items():
    try:
        mistake()
    except ValueError as err:
        print(f"example, {what}: refused: {err}")

# %% [markdown]
# ## Stage 1's ceiling on the handbook
#
# Stage 1 is chapter 01's hybrid (BM25 + MiniLM, RRF with the constant *c* the next cell prints) over the handbook's
# chunks (their size printed beside it). Its Recall@k1 on the
# 172 test queries, per slice, with intervals chosen by kind (`stats.interval_for`, a graded mean: the
# bootstrap-t): the most any reranker of its top k1 could find.

# %%
from labkit.measures import fusion
from labkit.studies import handbook as hb
from labkit.studies import rerank_study as rs

print(f"RRF constant c = {fusion.DEFAULT_C}; chunks of {hb.DEFAULT_SIZE} words, {hb.DEFAULT_OVERLAP} overlapping")
rs.ceiling_intervals()

# %% [markdown]
# (`easy` at k1 = 100: every one of its 65 queries has all its gold in the top 100, so a bootstrap would have
# nothing to resample and would print a zero-width interval. That is "no query in this sample missed", not
# certainty: the interval printed is the rule bound, Wilson's bound for 65 of 65, its low end 0.944.)
#
# At k1 = 10 stage 1 already holds most of the evidence of the `easy` questions (0.931) but much less of the
# `hard` (0.630) and `real` ones (0.701). By k1 = 100 every slice is above 0.96. So a deeper stage 1 *could* lift
# the hard and real questions a lot, on one condition: that stage 2 finds the relevant chunks among the extra
# candidates.
#
# ## Two real rerankers
#
# **A learned reranker over cheap features** (`rerank.LambdaRanker`): LightGBM's *lambdarank* objective
# (LambdaMART: gradient-boosted trees trained to improve nDCG directly; Burges 2010) over ten numbers per (query,
# chunk) pair that stage 1 already has or that cost nothing: the BM25 and MiniLM scores and ranks, the fused RRF
# score and rank, the share of the question's terms found in the document's title, in the chunk's section heading
# and in the chunk, and the chunk's length. It is trained once on the **dev** queries' top 100 with their graded
# qrels and reported on the **test** queries; its settings (150 trees of 7 leaves) were fixed before looking at
# test. One query's features, its top 5:

# %%
import pandas as pd

rows, names = rs.feature_rows()
example = rs.model_questions()[0]
print(example.qid, "·", example.question)
pd.DataFrame(rows[example.qid][:5], columns=names, index=rs.candidates(5)[example.qid]).round(3)

# %% [markdown]
# What the trees lean on (LightGBM's total gain per feature, as a share):

# %%
booster = rs.learned().booster
gain = pd.Series(booster.feature_importance("gain"), index=booster.feature_name())
share = (gain / gain.sum()).sort_values(ascending=False).rename("share of the gain")
print(f"stage 1's hybrid rank and RRF score together: {share['hybrid_log_rank'] + share['rrf']:.0%} of the gain")
share.round(3)

# %% [markdown]
# Stage 1's own signals carry the model: the hybrid's rank and RRF score hold the share printed above, BM25's rank
# a further 14 %, and no other feature more than 3 %; the title, heading and coverage features add little. A learned
# reranker built on stage 1's scores mostly re-learns stage 1's order and adjusts it at the margin, which is what the
# numbers below show.
#
# **A model that reads the question and the passage together** (`labkit.judges.pointwise`). That is what a
# *cross-encoder* does, and the usual stage 2. No PyPI package ships cross-encoder weights that run without
# PyTorch (the search is recorded in `data/llm/README.md`), so the reranker is the workbook's local 1.5B used as
# a *pointwise* reranker: one request per (question, passage), the question first, asking for one word, yes or
# no, and keeping the log-probabilities of the first token instead of the word. The score is
# log P(yes) − log P(no), every spelling of each word summed (Nogueira et al. 2020, monoT5; Zhuang et al. 2023,
# "Beyond Yes and No"). It is recorded (plan `04b-rerank`) on the top 10 of 30 test questions (10 per slice, the
# first by id of the reader sample's), 300 requests; the replay reads the cassette. One request and its answer:

# %%
from labkit.judges import pointwise
from labkit.studies import handbook as hb

h = hb.handbook()
first = rs.candidates(rs.MODEL_K1)[example.qid][0]
print(pointwise.prompt(example.search_text, h.texts[first]))
print()
response = llm.Replay(llm.DEFAULT_MODEL).complete(pointwise.prompt(example.search_text, h.texts[first]),
                                                  max_tokens=1, top_logprobs=pointwise.TOP_LOGPROBS).text
print("recorded:", response[:160], "…")
scored = pointwise.yes_no_score(response)
print(f"score = log P(yes) - log P(no) = {scored.score:.3f}; P(yes | yes or no) = {scored.p_yes:.3f}")

# %%
model_scores = rs.model_scored()
flat = [s for scores in model_scores.values() for s in scores]
bounded = sum(s.bounded for s in flat)
print(f"{len(flat)} pairs scored; {bounded} with yes or no missing from the top 20 tokens (a bounded score)")
print(f"P(yes | yes or no) above 0.5 (more of the two words' probability on yes) for "
      f"{sum(s.p_yes > 0.5 for s in flat)} of {len(flat)} pairs")

# %% [markdown]
# The model put more probability on "yes" than on "no" for 277 of the 300 pairs (P(yes | yes or no) above 0.5),
# and both words were always among its 20 most likely first
# tokens (no score is a bound). A reranker that calls nearly everything relevant orders the candidates by small
# differences in its confidence; whether those differences follow relevance is what the next sections measure.
#
# ## What stage 2 buys
#
# The same 30 questions, the same stage 1 (k1 = 10), three stage 2s: the cut, the learned reranker and the model.
# Two tables follow with many comparisons in them. Before reading them, the three comparisons this section is
# about are declared as one family, to be tested after the tables: each reranker against the cut, and the two
# rerankers against each other, nDCG@3 over all 30 questions (declared in this cell, tested below).
#
# The tables themselves are a scan: for each slice and k2, the metric of each and the **paired** difference
# (reranked − cut) with its uncorrected 95 % interval, chosen by kind (`rs.gains_by_kind`): the bootstrap-t of
# the per-question differences for nDCG@k2 and RR@k2, Newcombe's paired score interval for hit@k2 (0/1 per
# question; it stays honest when no question changed). Where only a few of ten questions changed, a bootstrap's
# ends would sit on 0 by construction (every resample that misses them gives 0): those rows get the sparse bound
# instead, the share of questions that changed at Wilson's bound with each change anywhere in the metric's range,
# wide by design, and the `method` column says how many changed. Read every row as a lead.

# %%
key_family = stats.Family("stage 2 against the cut and each other, nDCG@3, 30 questions",
                          [f"{rs.LTR} − cut", f"{rs.MODEL} − cut", f"{rs.MODEL} − {rs.LTR}"])  # fmt: skip
gain_model, gain_ltr = rs.gains_by_kind(rs.MODEL_K1, rs.MODEL), rs.gains_by_kind(rs.MODEL_K1, rs.LTR)
both = pd.concat({"stage 1": gain_model[["n", "cut at k2"]],
                  rs.MODEL: gain_model[[rs.MODEL, "difference", "low", "high", "method"]].rename(
                      columns={rs.MODEL: "reranked"}),
                  rs.LTR: gain_ltr[[rs.LTR, "difference", "low", "high", "method"]].rename(
                      columns={rs.LTR: "reranked"})},
                 axis=1)  # fmt: skip
both.xs(3, level="k2").round(3)

# %% [markdown]
# And over all 30 questions at each k2 (the explorer shows every slice at every k2):

# %%
both.xs("all", level="slice").round(3)

# %% [markdown]
# Read as leads: the learned reranker moves little on these 30 questions (its nDCG@3 row over all 30 is near 0
# with an interval on both sides); the model reranker's `all` rows lie below the cut's for nDCG@3 and RR@3, and
# its hit@3 interval just holds 0. The damage sits in `easy`, questions whose relevant chunk stage 1 had already
# put first and the model pushed down (listed further on). On `hard` and `real` its intervals hold 0 and reach
# far both ways: 10 questions a slice say little. At k2 = 5 and 10 the model reranker's loss shrinks (a deeper
# cut keeps more of stage 1's good chunks).
#
# Those two tables scan many comparisons (the next cell counts the distinct ones), so one interval in twenty could
# miss by chance, and none of their rows is a finding. The three declared above, tested now in one family (the
# max-|t| bootstrap: simultaneous intervals and adjusted p that agree by construction):

# %%
shown = {i for i in gain_model.index if i[1] == 3 or i[0] == "all"}  # the k2 = 3 table and the "all" table
distinct = len(shown) * len(rs.RERANKERS)
print(f"the two tables scan {distinct} differences (two rerankers × every slice, k2 and metric)")
qs30 = rs.model_questions()
r10 = rs.runs(rs.MODEL_K1, qs30)
pq = {name: rs.per_query(run) for name, run in r10.items()}
key = {f"{name} - cut, nDCG@3": (pq[name]["nDCG@3"].tolist(), pq["cut at k"]["nDCG@3"].tolist())
       for name in rs.RERANKERS}  # fmt: skip
key[f"{rs.MODEL} - {rs.LTR}, nDCG@3"] = (pq[rs.MODEL]["nDCG@3"].tolist(), pq[rs.LTR]["nDCG@3"].tolist())
found = key_family.findings({f"{rs.LTR} − cut": key[f"{rs.LTR} - cut, nDCG@3"],
                              f"{rs.MODEL} − cut": key[f"{rs.MODEL} - cut, nDCG@3"],
                              f"{rs.MODEL} − {rs.LTR}": key[f"{rs.MODEL} - {rs.LTR}, nDCG@3"]},
                             kind="paired graded")  # fmt: skip
for f in found.values():
    print(f.sentence)
stats.findings_table(found)[["estimate", "low", "high", "p", "verdict"]].round(3)

# %% [markdown]
# The sentences are the verdicts, corrected for the three: where the model reranker's rows are resolved, it is
# behind that comparison's other side on these 30 questions, with its simultaneous interval below 0 and an
# adjusted p below 0.05 (the two agree by construction). The learned reranker against the cut is not shown: 30
# questions cannot tell it from the cut, and its interval bounds how large a gain or a loss they leave open.
#
# ## Can each scorer tell a relevant candidate from the others?
#
# A reranker only helps if, within one question, it scores the relevant candidates above the rest. The share of
# (relevant, other) pairs of a question it orders right (the within-question AUC: 0.5 is a coin, 1 is perfect),
# averaged over the questions that have both, for stage 1's own fused score and the two rerankers. Each reranker
# is compared with stage 1 on the same questions, a family of two declared before the table:

# %%
order_family = stats.Family("pairs ordered right within a question, each reranker − stage 1, the same questions",
                            [f"{rs.MODEL} − stage 1", f"{rs.LTR} − stage 1"])  # fmt: skip
sep, split = rs.separation()
sep

# %%
plots.plot_score_split(split, "the top 10 of the 30 questions: scores of relevant (grade >= 1) and other chunks")

# %%
per_question, stage_1 = sep.attrs["per question"], "stage 1 (RRF score)"
order_found = order_family.findings({f"{name} − stage 1": (per_question[name], per_question[stage_1])
                                     for name in (rs.MODEL, rs.LTR)}, kind="paired graded")  # fmt: skip
for f in order_found.values():
    print(f.sentence)

# %% [markdown]
# Stage 1's fused score already orders a relevant candidate above another in 0.828 [0.756, 0.896] of a question's
# pairs; the learned reranker, which starts from that score, in 0.881 [0.834, 0.927]; the model in 0.645
# [0.563, 0.719]. Whether a reranker orders better or worse than stage 1 is read from the paired lines just
# printed (the same questions, per-question differences), not from whether the table's intervals overlap. The
# table is the within-question measure; the picture pools every question's candidates, so it cannot show the
# order *within* a question. What it shows is the range: the model's scores for relevant and other chunks pile
# up in the same place, so its order within a question rests on small differences, and the first printed line
# says how far those differences fall short of stage 1's. This is the lesson of a small model used as a reranker
# without checking: it reads the question and the passage together, as a cross-encoder does, but a 1.5B coder
# model asked "yes or no" is not a trained relevance model.
# (Zhuang et al. 2023 find that asking for graded labels instead of yes/no helps such zero-shot rankers; that is
# an experiment for your own model, `LABKIT_LLM=local` or an endpoint, measured the same way.)
#
# The learned reranker needs no model, so it can be measured on every test query (172) and at every k1. Its gain
# at k1 = 20 per slice, at k2 = 3: four groups (three slices and all) × three metrics. Those comparisons are one
# family, declared here before the numbers are read (`rs.scan_members` names them), and tested together in the
# next cell: the max-|t| bootstrap for nDCG and RR, paired Newcombe at the Bonferroni share for hit (0/1).

# %%
test_qs = rs.test_questions()
ltr_family = stats.Family(f"{rs.LTR} − cut at k1 = 20, k2 = 3, {len(test_qs)} test queries", rs.scan_members(3))
print(f"declared: {ltr_family.name}, {len(rs.scan_members(3))} comparisons")

# %%
kinds = {name: "paired 0/1" if "hit@" in name else "paired graded" for name in rs.scan_members(3)}
ltr_found = ltr_family.findings(rs.paired_scores(20, rs.LTR, test_qs, k2=3), kind=kinds)
for f in ltr_found.values():
    print(f.sentence)
stats.findings_table(ltr_found)[["estimate", "low", "high", "p", "verdict"]].round(3)

# %% [markdown]
# The sentences are the verdicts, corrected for the twelve. The overall nDCG@3 row is the one that answers "does
# it help", and it was planned first: it is not shown, so the 172 queries do not show that the learned reranker
# helps; its interval bounds how large a gain or a loss they leave open. No slice is resolved either, `real`
# included, whose nDCG@3 gain is the largest: among twelve comparisons one interval in twenty read alone would
# exclude 0 by chance, which is why the family is corrected before any row is called a finding.
#
# **Why the paired interval is narrower.** Each query has its own difficulty: an easy query scores high under
# both stage 2s, a hard one low under both. The per-query *difference* cancels that shared part, so it varies far
# less than either system's scores, and its interval is narrower than the one that resamples the two systems as
# if they were different queries:

# %%
run20 = rs.runs(20, test_qs, (rs.LTR,))
a20, b20 = rs.per_query(run20[rs.LTR])["nDCG@3"].tolist(), rs.per_query(run20["cut at k"])["nDCG@3"].tolist()
for paired in (True, False):
    d = stats.diff_ci(a20, b20, paired=paired)
    sd = f"sd of the per-query differences {d['sd']:.3f}" if paired else (
        f"sd of each system's scores {d['sd'][0]:.3f} and {d['sd'][1]:.3f}")  # fmt: skip
    print(f"{'paired  ' if paired else 'unpaired'} lambdarank - cut, nDCG@3: "
          f"{stats.fmt_ci(d['difference'], d['low'], d['high'])} (width {d['high'] - d['low']:.3f}); {sd}")

# %% [markdown]
# ## Does a deeper stage 1 pay?
#
# Stage 1's Recall@k1 rises with k1, so a reranker *could* find more. Does it? The learned reranker's nDCG@3 on
# the 172 test queries at each k1, beside the ceiling:

# %%
depth = {}
for k1 in rs.K1S:
    run = rs.runs(k1, test_qs, (rs.LTR,))
    depth[k1] = {"R@k1 (ceiling)": rs.per_query(run["cut at k"], (), k1)[f"R@{k1}"].mean(),
                 "nDCG@3 cut": rs.per_query(run["cut at k"])["nDCG@3"].mean(),
                 "nDCG@3 lambdarank": rs.per_query(run[rs.LTR])["nDCG@3"].mean()}  # fmt: skip
depth = pd.DataFrame(depth).T.rename_axis("k1")
depth.round(4)

# %%
top3 = {k1: {qid: r[:3] for qid, r in rs.runs(k1, test_qs, (rs.LTR,))[rs.LTR].items()} for k1 in (20, 100)}
changed = sum(top3[20][qid] != top3[100][qid] for qid in top3[20])
stage1 = rs.candidates(100)
deepest = max(stage1[qid].index(c) + 1 for qid, top in top3[100].items() for c in top)
print(f"queries whose reranked top 3 differs between k1 = 20 and k1 = 100: {changed} of {len(test_qs)}")
print(f"the deepest stage-1 rank the learned reranker lifted into a top 3 at k1 = 100: {deepest}")

# %% [markdown]
# The ceiling rises from 0.860 at k1 = 20 to 0.982 at k1 = 100, and the learned reranker's nDCG@3 does not move
# (0.580 at every k1 from 20 on): going from 20 to 100 candidates changed the top 3 of no query in 172, and the
# deepest stage-1 rank it ever lifted into a top 3 is the one printed above. It weighs stage 1's rank so heavily
# that the deep candidates never win. For this reranker the knee is at k1 = 10 to 20: a deeper stage 1 only pays
# with a stage 2 that can recognise a relevant chunk wherever stage 1 put it, and the one model here that reads
# every candidate (the 1.5B) cannot.
#
# ## What it costs
#
# The model reranker makes one request per candidate: its cost grows with k1. Measured from the recordings at
# k1 = 10 (tokens are exact; seconds were measured while recording, two threads on this 2-core machine, with other
# work running), and beyond 10 *estimated* as k1 times the measured mean (not run):

# %%
rs.model_cost().round(1)

# %% [markdown]
# On this 2-core machine the model reranker costs about 90 seconds and 2,700 prompt tokens a question at k1 = 10
# (recorded with two threads, beside other work; `bench/llm_bench.py` measures the models on an idle machine). At
# k1 = 100 that would be about 27,000 tokens and a quarter of an hour a question: no chatbot can wait for that on
# a CPU, and on a hosted model the tokens are paid for (the usage table at the end prices them). The learned
# reranker makes no model call: its features come from stage 1's scores and its trees score a question's
# candidates in milliseconds (`bench/rerank_bench.py` prints the figures). So at equal cost it is not a contest
# here; what the model would buy with a better relevance judge is the gap between stage 1's ceiling and its
# order.
#
# ## Does a better nDCG@3 give more right answers?
#
# The reader of chapters 06–09 (the local 1.5B, the lenient prompt) answered each of the 30 questions from the top
# 3 of each ranker (plan `04b-answers`; the learned reranker's top 3 of k1 = 20, the model's of k1 = 10). An answer
# identical to the hybrid top 3's answer keeps chapter 07's rater label; a new answer was labelled by a rater
# against the same rubric (`data/correctness/reranked.jsonl`, an AI assistant, without seeing which ranker
# produced it). Right-answer rates with Wilson intervals, then each reranker against the cut on the same
# questions: paired 0/1 outcomes (paired Newcombe, the exact McNemar p in its method), two comparisons declared as
# one family before the table:

# %%
from labkit.studies import rerank_answers as ra

answer_family = stats.Family("right answers, reranked − cut, the same 30 questions",
                             [f"{name} − cut" for name in rs.RERANKERS])  # fmt: skip

answers = ra.reader_table()
summary = {}
for name, group in answers.groupby("ranker", sort=False):
    p, lo, hi = stats.wilson(int(group["right"].sum()), len(group))
    summary[name] = {"nDCG@3": group["nDCG@3"].mean(), "right": int(group["right"].sum()), "of": len(group),
                     "right rate": stats.fmt_ci(p, lo, hi),
                     "answers changed": int((~group["same answer as the cut"]).sum())}  # fmt: skip
pd.DataFrame(summary).T

# %%
right = {name: group.set_index("qid")["right"].astype(int) for name, group in answers.groupby("ranker", sort=False)}
answer_found = answer_family.findings({f"{name} − cut": (right[name], right["cut at k"]) for name in rs.RERANKERS},
                                      kind="paired 0/1")  # fmt: skip
for name in rs.RERANKERS:
    gained = int(((right[name] == 1) & (right["cut at k"] == 0)).sum())
    lost = int(((right[name] == 0) & (right["cut at k"] == 1)).sum())
    print(f"{name}: became right {gained}, became wrong {lost}")
    print("  " + answer_found[f"{name} − cut"].sentence)

# %% [markdown]
# Read it with the nDCG@3 column beside it. Under the model reranker's worse top 3 (nDCG@3 0.306 against 0.561)
# the reader gets 6 of 30 answers right instead of 17: 13 answers that were right became wrong and 2 went the
# other way, and its printed line, corrected for the two comparisons, is the verdict on that loss. The learned
# reranker at k1 = 20 left nDCG@3 about where it was on these questions (0.545 against 0.561) and still changed
# 19 of the 30 answers: reordering three chunks changes the prompt, and a small model's answer with it. Its line
# (1 gained, 5 lost) bounds the change in the right-answer rate on both sides, and that range is wide: 30
# questions cannot settle a small change. A large change in nDCG@3 is where the answers moved with it here; a
# small one needs many more labelled answers to see.
#
# **One rater for every answer.** The cut's answers were labelled by chapter 07's raters and the changed ones by
# another session, so a difference could be a difference between raters. A third AI assistant session labelled
# every distinct answer of the 30 questions, over all three rankings (shuffled, blind to the ranking and to the
# other labels; `data/correctness/reranked_check.jsonl`). Its right-answer rates,
# the same paired differences within its labels, and its agreement with the labels above (right or not):

# %%
third_family = stats.Family("right answers by the third rater, reranked − cut, the same 30 questions",
                            [f"{name} − cut" for name in rs.RERANKERS])  # fmt: skip
check_table = ra.check_labels()
check_right = {name: (check_table[name] == "right").astype(int) for name in (*rs.RERANKERS, ra.CUT)}
third_found = third_family.findings({f"{name} − cut": (check_right[name], check_right[ra.CUT])
                                     for name in rs.RERANKERS}, kind="paired 0/1")  # fmt: skip
for name in rs.RERANKERS:
    print(f"third rater: {name} {check_right[name].sum()}/30 right, the cut {check_right[ra.CUT].sum()}/30")
    print("  " + third_found[f"{name} − cut"].sentence)
distinct = answers.assign(check=[check_table.loc[q, r] for q, r in zip(answers["qid"], answers["ranker"])])
distinct = distinct.drop_duplicates(["qid", "answer"])  # an answer two rankings share is one item
said, labelled = (distinct["check"] == "right").tolist(), (distinct["label"] == "right").tolist()
rep = stats.kappa_report(said, labelled)
kappa = stats.interval_for("kappa", (said, labelled))  # one-sided when resamples pin its top at 1
kappa_text = (f"{kappa.estimate:.2f}, at least {kappa.low:.2f} (one-sided)" if kappa.one_sided
              else stats.fmt_ci(kappa.estimate, kappa.low, kappa.high, 2))  # fmt: skip
print(f"agreement with the labels above on the {rep['n']} distinct answers, right or not: {rep['agree']} agree, "
      f"raw {stats.fmt_ci(rep['raw'], *rep['raw_ci'])}, Cohen's kappa {kappa_text}")

# %% [markdown]
# The third rater agrees with the labels above on 69 of the 71 distinct answers (κ and its one-sided bound
# printed above), and within its own labels the counts read alike: the model reranker 5 right against the cut's
# 17, the learned reranker 13 against 17. Its two lines, a family of their own, are the check: where they give
# the same verdicts as the first labels' lines, the model reranker's loss does not rest on a change of rater.
# (The learned reranker's answers to 4 questions were labelled by one more blind session, `04b-c`, whose prompts
# differed from those the third session saw.)
#
# ## Where the reranker hurts
#
# A reranker can also demote: stage 1's top 3 held a relevant chunk and the reranked top 3 does not. Every such
# question among the 30, for each reranker, with the first relevant chunk's rank before and after:

# %%
hurt_by = {name: rs.demoted(rs.MODEL_K1, 3, name) for name in rs.RERANKERS}
for name, hurt in hurt_by.items():
    print(f"{name} at k1 = {rs.MODEL_K1}: {len(hurt)} of {len(qs30)} questions lose their relevant chunk from the "
          "top 3")
    for row in hurt:
        print(f"   {row['qid']} ({row['slice']}): rank {row['first relevant before']} -> {row['after']}  "
              f"{row['question'][:90]}")

# %% [markdown]
# One of them as a trace: the model's probability of "yes" for each of the question's candidates, the relevant
# ones marked:

# %%
hurt = hurt_by[rs.MODEL]
if hurt:
    qid = hurt[0]["qid"]
    q = h.by_qid[qid]
    print(qid, "·", q.question)
    for c, s in sorted(zip(rs.candidates(rs.MODEL_K1)[qid], model_scores[qid], strict=True),
                       key=lambda cs: -cs[1].score):  # fmt: skip
        grade = h.qrels.get(qid, {}).get(c, 0)
        print(f"  P(yes) {s.p_yes:.3f}  {'gold, grade ' + str(grade) if grade else 'not gold':14} {c:28} "
              f"{' '.join(h.texts[c].split()[:12])} …")
    for name in (ra.CUT, rs.MODEL):
        row = answers[(answers["qid"] == qid) & (answers["ranker"] == name)].iloc[0]
        print(f"the reader over the {'hybrid' if name == ra.CUT else 'model-reranked'} top 3 ({row['label']}): "
              f"{row['answer'][:150]}")

# %% [markdown]
# The relevant chunk, the one that names the form, gets P(yes) 0.642: sixth of ten. The chunks above it are about
# badges and the visitor system, and every chunk on the topic scores between about 0.6 and 0.75: the model judges
# whether a passage is *about* the question, not whether it *answers* it, so among ten on-topic chunks its order
# follows relevance only weakly (the within-question comparison above). Over the hybrid's top 3 the reader named
# the form; over the model's top 3 it could not.
#
# ## Explorer
#
# The explorer wraps `rerank_study.explorer_data()` (computed once, above's functions on the 30 questions) and
# `widgets.rerank_view`. With plain arguments, the model reranker at k1 = 10, k2 = 3, the first question:

# %%
data = rs.explorer_data()
state = widgets.rerank_view(data, 10, 3, rs.MODEL, qs30[0].qid)
pd.DataFrame(state["table"]).round(3)

# %% [markdown]
# Move k1 (stage 1's depth; the model reranker offers only the 10 it was recorded at), k2, the reranker and the
# question; the picture is nDCG@k2 of every ranker against k1, with the ceiling:

# %%
# NBVAL_IGNORE_OUTPUT
explorer = widgets.RerankExplorer(**ch04b.rerank_inputs(data))  # data, k1 = 10, k2 = 3, the model reranker
explorer

# %%
explorer.result["table"]

# %% [markdown]
# ## What can go wrong
#
# * **Reporting stage 2 at a k1 its ceiling cannot support.** A reranker's nDCG@3 is bounded by Recall@k1; a low
#   k1 caps every reranker, and a high one only helps a reranker that can tell the deep candidates apart (the
#   learned one here could not).
# * **Training a learned reranker on the queries you report.** It is trained on dev and measured on test; the dev
#   figure flatters it (exercise 4b.4).
# * **Comparing rerankers by overlapping intervals.** Two rerankers on the same questions are compared by the
#   interval of their paired difference (the table above), never by whether their own intervals overlap.
# * **A better nDCG that buys nothing downstream.** Measure the reader too: a reordered top 3 changes the prompt
#   and can change answers either way.
# * **Scores that are not numbers.** A model reranker whose reply is not log-probabilities, or an endpoint that
#   does not return them, is refused when recording, never stored; a NaN score is refused before reordering.
#
# ## Summary
#
# * Two stages, two metrics: stage 1 is judged by **Recall@k1** (what it lets through: its ceiling), stage 2 by
#   **nDCG@k2** (how it orders what it keeps). No reranker of the top k1 can beat stage 1's Recall@k1.
# * On the handbook's test queries the hybrid's Recall rises from 0.760 at k1 = 10 to 0.982 at k1 = 100: the room
#   is there, mostly on `hard` and `real`.
# * A **learned reranker** (LightGBM lambdarank over ten cheap features, trained on dev) changes nDCG@3 by +0.030
#   on the 172 test queries, at no model cost; its sentence in the family of twelve is the verdict and bounds the
#   gain at about +0.08. It leans on stage 1's own rank, so a deeper stage 1 changes nothing for it (no query's
#   top 3 changed from k1 = 20 to 100). On dev, where it was trained, its gain looks larger (exercise 4b.4 prints
#   it): report on test.
# * The **local 1.5B as a yes/no reranker** reads question and passage together, like a cross-encoder, but puts
#   more probability on "yes" than on "no" for 277 of 300 pairs and orders a relevant chunk above another in only
#   0.645 of pairs (stage 1: 0.828). It changes nDCG@3 by −0.255 [−0.473, −0.037] on 30 questions (its sentence
#   among three, above, is the verdict) and the reader's right answers from 17 to 6 (each rater's line printed),
#   at about 90 s and 2,700 tokens a question. Measure a reranker before you deploy it; a model that reads both
#   is not a relevance model until its order is checked against labels.
# * Compare stage 2s on the same queries with paired intervals; count the comparisons a table scans; a gain that
#   30 questions cannot resolve is bounded, not zero.
#
# What the recordings cost (replayed here in no time):

# %%
llm.usage_table()

# %% [markdown]
# ## Exercises
#
# **4b.1** In the toy, what is nDCG@3 of the reranked top 3 when stage 1 passes only k1 = 4 candidates?

# %% tags=["solution"]
answer_4b_1 = my_ndcg(shallow, RERANK_GRADES, 3)

# %%
check.exercise("4b.1", answer_4b_1)

# %% [markdown]
# **4b.2 Predict, then run.** On the 172 test queries, will the learned reranker's nDCG@3 at k1 = 100 be
# `"higher"`, `"lower"` or `"same"` (to three decimals) as at k1 = 20? Write your prediction in `prediction_4b_2`
# before you look at the `depth` table, then run the check.

# %% tags=["solution"]
prediction_4b_2 = "same"  # the deep candidates are rarely scored above the top 20's

# %%
check.exercise("4b.2", prediction_4b_2, depth=depth)

# %% [markdown]
# **4b.3** How many of the 30 questions does the model reranker demote (a relevant chunk in stage 1's top 3, none
# in its own top 3)?

# %% tags=["solution"]
answer_4b_3 = len(hurt_by[rs.MODEL])

# %%
check.exercise("4b.3", answer_4b_3, hurt_by=hurt_by)

# %% [markdown]
# **4b.4** The learned reranker was trained on the dev queries. What is its nDCG@3 gain over the cut on the *dev*
# queries at k1 = 20 (all slices, k2 = 3; the next cells compute `dev_gains` and print its nDCG@3 rows beside
# the test queries')? Compare it with the test figure: which is larger, and why does that make dev the wrong
# place to report it?
#
# The dev rows are the queries the reranker was fitted on: they are printed as the figures a choice would be made
# from, not tested. The test rows, one per slice, are declared as a family before they are read:

# %%
test_family = stats.Family(f"{rs.LTR} − cut, nDCG@3, k1 = 20, test queries, per slice",
                           [f"test {group}" for group in ("easy", "hard", "real", "all")])  # fmt: skip
test_family

# %%
dev_gains = rs.gains(20, rs.LTR, [q for q in h.queries if q.split == "dev"])
print("dev (trained on; the figures a choice is made from, not findings), nDCG@3 of "
      f"{rs.LTR} minus the cut, k1 = 20:")
for group in ("easy", "hard", "real", "all"):
    row = dev_gains.loc[(group, 3, "nDCG")]
    print(f"  dev {group:4s}: {row['difference']:+.3f} over {int(row['n'])} queries")
test_runs = rs.runs(20, test_qs, (rs.LTR,))
test_cut, test_new = rs.per_query(test_runs["cut at k"]), rs.per_query(test_runs[rs.LTR])
test_pairs = {}
for group in ("easy", "hard", "real", "all"):
    keep = test_cut.index if group == "all" else test_cut.index[test_cut["slice"] == group]
    test_pairs[f"test {group}"] = (test_new.loc[keep, "nDCG@3"].tolist(), test_cut.loc[keep, "nDCG@3"].tolist())
test_found = test_family.findings(test_pairs, kind="paired graded")
for f in test_found.values():
    print(f.sentence)
stats.findings_table(test_found)[["estimate", "low", "high", "p", "verdict"]].round(3)

# %% tags=["solution"]
answer_4b_4 = dev_gains.loc[("all", 3, "nDCG"), "difference"]

# %%
check.exercise("4b.4", answer_4b_4, dev_gains=dev_gains)
