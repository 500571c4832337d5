# %% [markdown]
# # 02 · Synthetic and hard questions: generate, make hard, filter
#
# **You will learn** to build a retrieval test set when no real users exist yet: ask a language model for a
# question from each chunk, see why those questions are too easy, make harder ones with look-alike
# "distractor" chunks, and filter out unrealistic ones with a few-shot rater that you first check against hand
# ratings. Every step is measured on the handbook, with intervals.
#
# Source: section 7.2 of the chapter notes. Every question below was written by a real local model
# (Qwen2.5-Coder 1.5B Instruct on llama.cpp), recorded once and replayed (`data/llm/`). The hand ratings in
# `data/synth/` were written by an AI assistant session against a written rubric, not by people: the file's
# README says so, and so does every agreement figure here.

# %%
import labkit
from labkit import check, llm, plots, stats, synth, toys
from labkit import handbook as hb
from labkit import synth_data as sd

labkit.setup()
llm.reset_usage()

# %% [markdown]
# ## Why generate questions at all
#
# To measure a retriever you need queries, each tied to the chunk that holds its answer (the **gold** chunk).
# Writing real questions by hand and mapping each to its gold is the most faithful way, and the most expensive.
# The book's recipe extends a small hand-made set with a language model in three steps: **generate**, **make
# hard**, **filter**.
#
# Chapter 01 already showed the danger. The handbook's hand-written slices differ sharply in difficulty: the
# *easy* questions were written while looking at one passage, the *real* ones imitate how employees ask. The
# same hybrid retriever, on each slice:

# %%
import pandas as pd

h = hb.handbook()
hand = sd.per_query([q for q in h.queries if q.slice in ("easy", "hard", "real")])
hand_table = stats.group_means_ci(hand[hand["retriever"] == "hybrid"], "set", ["R@10", "RR@10"])
stats.fmt_ci_table(hand_table)

# %% [markdown]
# A question written from one chunk tends to borrow that chunk's words, and a keyword retriever then finds it
# easily. A test set made only of such questions reports a recall that real users will not see. Generating
# questions with a model makes the same mistake faster, unless the recipe fights it.
#
# ## The source's toy, from scratch
#
# The source works on four short chunks of an HR/IT handbook, in Vietnamese. Its look-alike search is word
# Jaccard (shared words over all words), a stand-in for an embedding search:

# %%
def my_terms(text):
    return set(text.lower().replace(",", " ").replace(".", " ").split())


def my_similar_chunks(target_id, chunks, n=2):
    t = my_terms(chunks[target_id])
    scored = [(len(t & my_terms(c)) / len(t | my_terms(c)), cid) for cid, c in chunks.items() if cid != target_id]
    return [cid for _, cid in sorted(scored, reverse=True)[:n]]


for cid, text in toys.SYNTH_CHUNKS_VI.items():
    print(f"{cid}: {text}\n   ({toys.SYNTH_CHUNKS_EN[cid]})")
print()
print(my_similar_chunks("hr-12#3", toys.SYNTH_CHUNKS_VI))

# %% [markdown]
# The target `hr-12#3` (remote work: at most 2 days a week, registered in HRM before 17:00 the day before) is
# most like `hr-07#2` (annual leave, also "registered in HRM") and `hr-12#4` (remote work on probation). Those
# two do not hold the answer, but share its vocabulary: exactly what a hard question should borrow.
#
# The source then builds one hard row. It has no model to call, so it plugs in a **canned reply**: a fixed
# string standing in for the model, not a model's output. We do the same, and print the row as the source does:

# %%
import json
import random

HARD_PROMPT_VI = """Target chunk: <<<{target}>>>
Look-alike chunks (they do not contain the answer): <<<{distractors}>>>
Write ONE question an employee could really ask that ONLY the target answers, reusing some keywords of the
look-alikes. Do not copy sentences of the target. Reply with JSON: {{"question": "...", "answer": "..."}}"""


def my_build_hard_set(chunks, call_llm, n=10, seed=0):
    rng, rows = random.Random(seed), []
    for target_id in rng.sample(sorted(chunks), min(n, len(chunks))):
        d_ids = my_similar_chunks(target_id, chunks)
        prompt = HARD_PROMPT_VI.format(target=chunks[target_id], distractors="\n---\n".join(chunks[d] for d in d_ids))
        out = json.loads(call_llm(prompt))
        rows.append({**out, "gold": [target_id], "distractors": d_ids, "kind": "hard"})
    return rows


def canned_reply(prompt):  # the source's stand-in: always the same reply, whatever the prompt
    return json.dumps(toys.SYNTH_SOURCE_REPLY_VI, ensure_ascii=False)


for row in my_build_hard_set(toys.SYNTH_CHUNKS_VI, canned_reply, n=1, seed=3):
    print(row)

# %% [markdown]
# In English the canned question reads *"To work from home on Friday, what is the registration deadline?"*,
# answer *"17:00 Thursday, in HRM"*. It is a good hard question: it never says "remote" or "2 days", and
# "register … HRM" also appears in the leave chunk. The row keeps its distractors: when a retriever later fails
# on this question, the first thing to check is whether it returned one of them.
#
# `labkit.synth.similar_chunks` is the same search (it breaks ties by id instead of by reverse id), and it can
# also rank by embedding cosine:

# %%
assert synth.similar_chunks("hr-12#3", toys.SYNTH_CHUNKS_VI, 2) == toys.SYNTH_SOURCE_SIMILAR
print(synth.similar_chunks("hr-12#3", toys.SYNTH_CHUNKS_VI, 2))

# %% [markdown]
# ## Step 1 on the handbook: a question per chunk
#
# Now with the real model. We draw 150 target chunks (128 words, overlap 32: the chunking the retrievers index)
# across all seven departments, with a fixed seed, skipping chunks under 40 words (a document's tail). For each,
# the model is asked for one question, its short answer, and the sentence of the passage that holds the answer,
# copied word for word:

# %%
targets = sd.targets()
print(len(targets), "targets;", pd.Series([t.doc.split("-")[0] for t in targets]).value_counts().sort_index().to_dict())
print()
print(synth.generate_prompt("…the passage…"))

# %% [markdown]
# The evidence sentence is what makes a generated question a *labelled* one: we locate it in the document and
# store it as a **character span**, exactly like the gold of the hand-written queries. The search is exact
# first, then ignores case, runs of white space, curly quotes and Markdown emphasis; a quote that cannot be
# found is **dropped and counted**, never guessed. So are malformed replies, empty fields, quotes under four
# words (too short to be evidence) and quotes found outside the target chunk.

# %%
rows, dropped = sd.generated_with_drops()
gen = pd.DataFrame(rows)
drops = pd.DataFrame([{"set": kind, "target": d.target, "reason": d.reason, "reply": d.reply} for kind, d in dropped])
print("kept:", gen["set"].value_counts().to_dict(), "| dropped:", drops["set"].value_counts().to_dict())
drops.groupby(["set", "reason"]).size().rename("dropped").to_frame()

# %% [markdown]
# What kept easy rows look like (question, answer, and the located evidence):

# %%
easy = gen[gen["set"] == "easy"]
for _, r in easy.sample(4, random_state=labkit.SEED).iterrows():
    evidence = h.corpus[r["doc"]].text[r["start"] : r["end"]]
    print(f"[{r['target']}] Q: {r['question']}\n    A: {r['answer']}\n    evidence: {evidence!r}\n")

# %% [markdown]
# And what was dropped, with the model's own reply:

# %%
for _, r in drops.groupby("reason").head(1).iterrows():
    print(f"[{r['set']}, {r['target']}] {r['reason']}\n    reply: {r['reply'][:200]!r}\n")

# %% [markdown]
# ## Labels are offsets, so they survive re-chunking
#
# The source warns: change the chunking and the labels must be generated again or mapped again. Because our
# labels are character spans, the mapping is a function: `spans_to_qrels` finds, for any chunking, the chunks
# that hold each span whole (grade 3) or in part (grade 1). The generated sets are stored in the schema of
# `queries.jsonl` (`data/synth/synthetic-easy.jsonl`, `synthetic-hard.jsonl`, each row with its provenance),
# and load with the same validation:

# %%
from labkit.chunking import chunk_corpus, spans_to_qrels

synthetic = sd.load_sets()
print(len(synthetic), "generated queries;", pd.Series([q.slice for q in synthetic]).value_counts().to_dict())
print("provenance of the first:", synthetic[0].extra["provenance"])
for size, overlap in ((128, 32), (256, 64), (64, 16)):
    qrels = spans_to_qrels(synthetic, chunk_corpus(h.corpus, size, overlap))
    whole = sum(any(g == 3 for g in qrels[q.qid].values()) for q in synthetic)
    print(f"size {size:3d}, overlap {overlap:2d}: {whole} of {len(synthetic)} questions have a chunk holding "
          "their evidence whole")  # fmt: skip

# %% [markdown]
# ## Step 2: hard questions with distractors
#
# For each target we find the two most similar chunks **from other documents** (chunks of the same document
# overlap the target and may hold the answer), by word Jaccard for the first 75 targets and by embedding cosine
# (the MiniLM vectors of chapter 01) for the other 75. The model sees all three and is asked for a question that
# only the target answers, in the look-alikes' vocabulary:

# %%
t0 = targets[0]
for method in ("jaccard", "embedding"):
    print(method, "->", [d.id for d in sd.distractors_for(t0, method)])
print()
print(synth.HARD_PROMPT.split("TARGET:")[0])

# %%
hard = gen[gen["set"] == "hard"]
for _, r in hard.sample(4, random_state=labkit.SEED).iterrows():
    look_alikes = [d["chunk"] for d in r["distractors"]]
    print(f"[{r['target']}, {r['method']}] Q: {r['question']}\n    A: {r['answer']}\n    distractors: {look_alikes}\n")

# %% [markdown]
# ## Are the generated questions harder?
#
# The measure is the one that matters: how well do the retrievers of chapter 01 find each question's gold chunk?
# Recall@10 and MRR@10 per set, with bootstrap 95% intervals, for the generated sets beside the hand-written
# slices. `borrowed` is the share of a question's words that occur in its gold chunk, and `overlap` their word
# Jaccard (the source's similarity; small for every set because a chunk has far more words than a question).

# %%
gen_q = sd.per_query(synthetic)
method_of = {q.qid: q.extra["provenance"]["method"] for q in synthetic}
gen_q["set"] = [
    s if s == "synthetic-easy" else f"synthetic-hard ({method_of[q]})"
    for s, q in zip(gen_q["set"], gen_q["qid"], strict=True)
]
allq = pd.concat([gen_q, hand[hand["set"].isin(["hard", "real"])]], ignore_index=True)
scores = stats.group_means_ci(allq, ["set", "retriever"], ["R@10", "RR@10"])
stats.fmt_ci_table(scores).unstack("retriever")

# %%
plots.plot_bars_ci(scores, "R@10", title="Recall@10 per set and retriever, bootstrap 95% intervals")

# %%
words = stats.group_means_ci(allq[allq["retriever"] == "bm25"], "set", ["borrowed", "overlap"])
stats.fmt_ci_table(words)

# %% [markdown]
# READ THE NUMBERS ABOVE AND WRITE WHAT THEY SAY (the draft is written before the recordings exist).
#
# ## Step 3: filter out unrealistic questions
#
# Generated questions are sometimes strange: exam-style ("According to the passage…"), off-domain, or with the
# answer inside. The book filters them the way it filters other generated data: rate a small set by hand, use
# it as few-shot examples for a model rater, keep the questions at or above a threshold.
#
# Our hand-rated set has 60 questions about the handbook, rated 1–5 for realism against the rubric in
# `data/synth/README.md` (written and rated by an AI assistant session for the maintainers, not yet by a
# person). 15 of them are the rater's examples; the other 45 are held out to measure the rater. The prompt:

# %%
shots = sd.realism_labels("fewshot")
heldout = pd.DataFrame(sd.realism_labels("heldout"))
print(synth.realism_prompt("<the question to rate>", shots[:2]))

# %% [markdown]
# First the rater against the 45 held-out hand ratings: exact agreement, agreement within one point, and the
# rank correlation (Spearman's ρ: does it order questions like the labels, even if its scale is shifted?).

# %%
from scipy.stats import spearmanr

rater = llm.from_env(llm.DEFAULT_MODEL)
heldout["model"] = synth.rate_realism(heldout["question"].tolist(), rater, shots)
rated = heldout.dropna(subset=["model"])
exact = (heldout["model"] == heldout["rating"]).mean()  # an unreadable reply counts as a disagreement
within1 = ((heldout["model"] - heldout["rating"]).abs() <= 1).mean()
rho = spearmanr(rated["rating"], rated["model"]).statistic
print(f"unreadable replies: {heldout['model'].isna().sum()} of {len(heldout)}")
print(f"exact agreement {exact:.2f}, within one point {within1:.2f}, Spearman rho {rho:.2f} (on readable replies)")
pd.crosstab(rated["rating"], rated["model"].astype(int), rownames=["hand"], colnames=["model"])

# %% [markdown]
# READ AND WRITE: where the rater disagrees (too generous? compressed to the middle?).
#
# A 1–5 scale is fine here because the rating is only used to **rank and cull**: we throw away the weakest
# questions, and a shifted or compressed scale still ranks them roughly in order. It would not be fine for
# measuring an error *rate* of a system ("what share of answers is wrong?"): for that, a scale invites the rater
# to hedge in the middle, and a threshold on it has no meaning a reader can check. Rates need binary pass/fail
# labels with the judge's TPR and TNR measured, as chapter 06 does.
#
# Now the rater on every generated question, and what a threshold keeps:

# %%
gen["realism"] = synth.rate_realism(gen["question"].tolist(), rater, shots)
print(gen.groupby("set")["realism"].value_counts(dropna=False).unstack(fill_value=0))
kept, cut = synth.filter_realistic(gen.to_dict("records"), threshold=4)
print(f"threshold 4 keeps {len(kept)} and drops {len(cut)} of {len(gen)} generated questions")

# %%
for title, part in (("kept (rating >= 4)", kept), ("dropped (rating < 4)", cut)):
    print(f"--- {title}")
    for r in pd.DataFrame(part).sample(4, random_state=labkit.SEED).itertuples():
        print(f"[{r.set}, {r.realism}] {r.question}")

# %% [markdown]
# ## Playground
#
# The widget wraps `synth_data.filter_view`: given the per-query results, the ratings, a threshold, a distractor
# method and a retriever, it returns the kept and dropped counts, Recall@10 per set with intervals, and example
# questions. With plain arguments first:

# %%
frame = sd.with_ratings(gen_q, synthetic, gen)
view = sd.filter_view(frame, threshold=4, method="both", retriever="hybrid")
print(view.counts)
stats.fmt_ci_table(view.table)

# %%
# NBVAL_IGNORE_OUTPUT
from labkit import widgets

explorer = widgets.SynthExplorer(frame)
explorer

# %% [markdown]
# ## What can go wrong
#
# * **Questions copied from the chunk.** A generated set reports the recall of keyword search on its own
#   wording. Measure the word overlap of your set before trusting its recall.
# * **Labels tied to one chunking.** Store the evidence as character spans; derive chunk labels for each
#   chunking (`spans_to_qrels`).
# * **Guessed spans.** A quote that cannot be found is dropped and counted, never mapped to the nearest text.
# * **An unmeasured filter.** Check the rater against held-out hand ratings before letting it cull.
# * **A 1–5 scale for error rates.** Fine for ranking and culling; use binary labels to measure a rate.
# * **Throwing away the distractors.** Keep them with each row: they explain the retriever's failures.
#
# ## Summary
#
# * Generate: one question, answer and evidence quote per chunk; locate the quote as a span.
# * Make hard: show the model look-alike chunks and ask for a question only the target answers.
# * Filter: a few-shot rater, measured against held-out hand ratings, culls unrealistic questions.
# * Measure each set with the retrievers, with intervals, beside hand-written and real questions.
#
# ## Exercises
#
# **2.1** The source's toy: which two chunks does the Jaccard search return for `hr-12#3`? (A list of ids.)

# %% tags=["solution"]
answer_2_1 = synth.similar_chunks("hr-12#3", toys.SYNTH_CHUNKS_VI, 2)

# %%
check.exercise("2.1", answer_2_1)

# %% [markdown]
# **2.2** Predict, then run: before looking at the table of scores, write down which you expect to have the
# higher BM25 Recall@10, the generated easy questions or the hand-written real ones. Then read it off `scores`.

# %% tags=["solution"]
answer_2_2 = scores.xs("bm25", level="retriever")["R@10"].loc[["synthetic-easy", "real"]].idxmax()

# %%
check.exercise("2.2", answer_2_2, scores=scores)

# %% [markdown]
# **2.3** What share of the 45 held-out questions did the model rate exactly as the hand rating (an unreadable
# reply counts as a disagreement)?

# %% tags=["solution"]
answer_2_3 = round(float((heldout["model"] == heldout["rating"]).mean()), 3)

# %%
check.exercise("2.3", answer_2_3, heldout=heldout)

# %% [markdown]
# **2.4** Predict, then move the slider: how many generated hard questions survive a threshold of 5? Write your
# guess first (the rating counts printed above are a hint), then set the slider to 5.

# %% tags=["solution"]
answer_2_4 = int(sd.filter_view(frame, threshold=5).counts.loc["synthetic-hard", "kept"])

# %%
check.exercise("2.4", answer_2_4, frame=frame)

# %% [markdown]
# ## What this chapter cost
#
# Every model call above was replayed from the recording; the table adds up what they took when recorded:

# %%
llm.usage_table()
