# %% [markdown]
# # 02 · Synthetic and hard questions: generate, make hard, filter
#
# **You will learn** to build a retrieval test set when no real users exist yet: ask a language model for a
# question from each chunk, see why those questions are too easy, make harder ones with look-alike
# "distractor" chunks, and filter out unrealistic ones with a few-shot rater that you first check against a
# rater's ratings. Every step is measured on the handbook, with intervals.
#
# Source: section 7.2 of the chapter notes. Every question below was written by a real local model
# (Qwen2.5-Coder 1.5B Instruct on llama.cpp), recorded once and replayed (`data/llm/`). The reference ratings in
# `data/synth/` were written by an AI assistant session against a written rubric, not by people: the file's
# README says so, and so does every agreement figure here.

# %%
import labkit
from labkit.chapters import ch02
from labkit.data import toys
from labkit.exercises import check
from labkit.generation import llm, synth
from labkit.measures import stats
from labkit.studies import handbook as hb
from labkit.studies import synth_data as sd
from labkit.ui import plots

labkit.setup()
llm.reset_usage()

# %% [markdown]
# ## Why generate questions at all
#
# To measure a retriever you need queries, each tied to the chunk that holds its answer (the **gold** chunk).
# Writing real questions by hand and mapping each to its gold is the most faithful way, and the most expensive.
# The book's recipe extends a small authored set with a language model in three steps: **generate**, **make
# hard**, **filter**.
#
# Chapter 01 already showed the danger. The handbook's authored slices differ sharply in difficulty: the *easy*
# questions were written while looking at one passage, the *real* ones imitate how employees ask. The same hybrid
# retriever, on each slice, with three measures read here and defined later: Recall@10 (chapter 01);
# **[RR@10](00_welcome.ipynb#RR-and-MRR)**, the reciprocal rank of the first relevant chunk in the top 10 (1/rank, 0
# if none), whose mean over the questions is **MRR@10** (chapter 04); and **hit@10 (thr 3)**, 1 when a chunk holding a
# grade-3 span whole is in the top 10. A mean of 0/1 values is a proportion and gets a **Wilson** interval (one that
# stays inside [0, 1] and does not collapse at 0/n or n/n; chapter 03), the other means a bootstrap interval (chapter
# 01):

# %%
import pandas as pd

h = hb.handbook()
authored = sd.per_query([q for q in h.queries if q.slice in ("easy", "hard", "real")])
authored_hybrid = authored[authored["retriever"] == "hybrid"]
authored_table = stats.group_means_ci(authored_hybrid, "set", ["R@10", "RR@10", "hit@10 (thr 3)"])
stats.fmt_ci_table(authored_table)

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
# `labkit.generation.synth.similar_chunks` is the same search (it breaks ties by id instead of by reverse id), and it
# can
# also rank by embedding cosine:

# %%
assert synth.similar_chunks("hr-12#3", toys.SYNTH_CHUNKS_VI, 2) == toys.SYNTH_SOURCE_SIMILAR
print(synth.similar_chunks("hr-12#3", toys.SYNTH_CHUNKS_VI, 2))

# %% [markdown]
# ## Step 1 on the handbook: a question per chunk
#
# Now with the real model. The targets are chunks of the chunking the retrievers index (128 words, overlap 32),
# spread across all seven departments, skipping chunks under 40 words (a document's tail). They come in three
# draws (`labkit.studies.synth_targets`), each from the chunks the earlier ones left: 150 with a fixed seed, 250
# more and then 40 more when the sets had to grow to 150 kept questions each (the hard prompt keeps few, as we
# will see). Easy questions were asked about the first 210 targets, hard ones about all 440. For each, the model is
# asked for one question, its short answer, and the sentence of the passage that holds the answer, copied word for
# word:

# %%
from labkit.studies import synth_targets as st

targets = sd.targets()
first_methods = pd.Series([st.method_of(i) for i in range(st.N_TARGETS)]).value_counts().to_dict()
print(f"draws of {st.N_TARGETS}, {st.N_EXTRA} and {st.N_THIRD} targets; easy questions for the first {st.N_EASY}; "
      f"the first draw's distractors by method: {first_methods}")
print(len(targets), "targets;", pd.Series([t.doc.split("-")[0] for t in targets]).value_counts().sort_index().to_dict())
print()
print(synth.generate_prompt("…the passage…"))

# %% [markdown]
# The evidence sentence is what makes a generated question a *labelled* one: we locate it in the document and
# store it as a **character span**, exactly like the gold of the authored queries. The search is exact
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
# Look closely and the kept rows are already uneven. The first two are sound, although each span holds only part
# of what the question asks (how bank details are confirmed, what a discounted refund is worth, are in the next
# sentences). The third calls a response header "the rate limit". The fourth asks about two error codes and
# answers with a rule that applies to a third. Every quote was found in the document, so every row passed. That
# shows the model copied *a* sentence. It does not show that the sentence answers the question, nor that the
# answer is right. We come back to this below.
#
# And what was dropped, with the model's own reply:

# %%
for _, r in drops.groupby("reason").head(1).iterrows():
    print(f"[{r['set']}, {r['target']}] {r['reason']}\n    reply: {r['reply'][:200]!r}\n")

# %% [markdown]
# More than a fifth of the easy replies (46 of 210) and almost two thirds of the hard ones (282 of 440) are
# dropped: that is why the hard prompt needed 440 targets to keep 158 questions. Almost all drops are quotes the
# model did not copy faithfully. The model was asked for a word-for-word sentence and
# produced a paraphrase or a blend of two sentences. Dropping them is the only safe choice: a guessed span
# would be a guessed label.
#
# ## Labels are offsets, so they survive re-chunking
#
# The source warns: change the chunking and the labels must be generated again or mapped again. Because our
# labels are character spans, the mapping is a function: `spans_to_qrels` finds, for any chunking, the chunks
# that hold each span whole (grade 3) or in part (grade 1). The generated sets are stored in the schema of
# `queries.jsonl` (`data/synth/synthetic-easy.jsonl`, `synthetic-hard.jsonl`, each row with its provenance),
# and load with the same validation:

# %%
from labkit.text.chunking import chunk_corpus, spans_to_qrels

synthetic = sd.load_sets()
print(len(synthetic), "generated queries;", pd.Series([q.slice for q in synthetic]).value_counts().to_dict())
print("provenance of the first:", synthetic[0].extra["provenance"])
for size, overlap in ((128, 32), (256, 64), (64, 16)):
    qrels = spans_to_qrels(synthetic, chunk_corpus(h.corpus, size, overlap))
    whole = sum(any(g == 3 for g in qrels[q.qid].values()) for q in synthetic)
    print(f"size {size:3d}, overlap {overlap:2d}: {whole} of {len(synthetic)} questions have a chunk holding "
          "their evidence whole")  # fmt: skip

# %% [markdown]
# With 64-word chunks, 24 evidence sentences no longer fit whole in any chunk. Those questions still get
# grade-1 chunks (partial evidence), and the mapping says so instead of pretending.
#
# ## Are the labels right? An audit
#
# A located quote proves that the model copied text from the document. It does not prove that the text answers
# the question, nor that the model's answer is right. So every one of the 322 kept rows was audited by a rater:
# does the evidence span answer the question (*yes*, *partly*, *no*)? Is the model's answer right by the document
# (*right*, *wrong*, *unclear*)? The audit follows the rules in `data/synth/README.md`. Like the other labels in
# this folder, it was done by AI assistant sessions for the maintainers, not by a person: one audited the 174 rows
# of the first draw, two more the 148 rows the later draws added, each without seeing another's audit. A second
# session audited a seeded random 70 of the first 174 without seeing the first audit (below).

# %%
audit = pd.DataFrame(sd.audit_labels())
audit["set"] = audit["qid"].str.split("-").str[1]
first_ids = {t.id for t in st.first_draw()}
target_of = {q.qid: q.extra["provenance"]["target"] for q in synthetic}
from_first = int(audit["qid"].map(lambda qid: target_of[qid] in first_ids).sum())
print(f"audited rows: {from_first} from the first draw, {len(audit) - from_first} from the later draws")
print(pd.crosstab(audit["set"], audit["evidence"], margins=True))
print()
print(pd.crosstab(audit["set"], audit["answer"], margins=True))
good = (audit["evidence"] == "yes") & (audit["answer"] == "right")
usable = stats.fmt_ci(*stats.wilson(int(good.sum()), len(audit)))
print(f"\nspan answers the question and answer is right: {int(good.sum())} of {len(audit)}, {usable}")
for _, r in audit[audit["evidence"] == "no"].head(3).iterrows():
    print(f"- {r['qid']}: {r['why']}")

# %% [markdown]
# How far two raters agree on the audit, with chance removed ([Cohen's κ](00_welcome.ipynb#Kappa): 1 is perfect, 0 is
# what chance alone gives; `stats.kappa_report`, with a bootstrap interval over the rows) and raw (with a Wilson
# interval, chapter 03 explains it), on the 70 rows both audited:

# %%
second_audit = pd.DataFrame(sd.audit_second_rater()).set_index("qid")
first_audit = audit.set_index("qid").loc[second_audit.index]
audit_agreement = {}
for field in ("evidence", "answer"):
    rep = stats.kappa_report(first_audit[field].tolist(), second_audit[field].tolist())
    audit_agreement[field] = {"n": rep["n"], "agree": rep["agree"],
                              "raw (Wilson 95%)": stats.fmt_ci(rep["raw"], *rep["raw_ci"]),
                              "kappa (bootstrap 95%)": stats.fmt_ci(rep["kappa"], *rep["kappa_ci"])}  # fmt: skip
differ = second_audit[(first_audit["evidence"] != second_audit["evidence"])
                      | (first_audit["answer"] != second_audit["answer"])]  # fmt: skip
print(f"rows where the two audits differ: {len(differ)} of {len(second_audit)}; the first three:")
for qid, r in differ.head(3).iterrows():
    print(f"- {qid}: first {first_audit.loc[qid, 'evidence']}/{first_audit.loc[qid, 'answer']}, "
          f"second {r['evidence']}/{r['answer']} ({r['why']})")  # fmt: skip
pd.DataFrame(audit_agreement).T

# %% [markdown]
# The two audits agree substantially (κ about 0.8 on both questions), not perfectly: whether a span "partly"
# answers or does "not" answer is the rubric's grey zone (the answer sits just outside the span), and so is a
# right answer that skips part of what the question asks. The disagreements were not adjudicated; the first
# audit stays the one every figure below uses.

# %% [markdown]
# Only about three rows in ten are fully usable as they stand. In a third of the rows, the span, which is the
# retrieval label, does not answer the question. Often the answer sits next to it in the same chunk, after a table
# header or an introductory line the model quoted. In the rest the span is about something else. More than a third
# of the answers are wrong: another office's figure, a minimum read as a maximum, an unrelated sentence.
#
# Does it matter for retrieval? Recall of the hybrid retriever, split by the audit's evidence verdict:

# %%
audited = sd.per_query(synthetic).merge(audit[["qid", "evidence"]], on="qid")
stats.fmt_ci_table(stats.group_means_ci(audited[audited["retriever"] == "hybrid"], "evidence", ["R@10", "RR@10"]))

# %% [markdown]
# Even questions whose label does not answer them are "found" more than eight times in ten. The question was written
# from the same chunk, so it shares that chunk's words, and the retriever returns the chunk whether or not it
# answers anything. A generated set can reward a retriever for finding the wrong passage. The cheap check is the
# one we just did: read a sample of rows before trusting the set, and report how many were wrong.
#
# ### Fact first, then the question
#
# The source's remedy for spans that do not answer their question is to generate in the other order: first copy
# ONE self-contained fact (a sentence of the passage that states a fact on its own), then write a question that
# only this fact answers (`labkit.generation.fact_first`; the reply's JSON lists the fact first, so the model
# writes it first). It was recorded on the first targets of the seeded order (the rule: the first ones; each also
# has a question from the prompt above; plan `02-fact-first`), with the same 1.5B, temperature 0 and seed, and its
# rows kept or dropped by the same quote rules. Both prompts' kept rows for these targets were then audited together
# by one rater (an AI assistant session working for the maintainers, rater `fact-first-audit`, not a person) with
# the evidence rubric above, under opaque ids in a seeded shuffle, so it could not tell which prompt wrote a row
# (`fact_first_data.audit_sheet`). Both prompts wrote for the same targets, so the main comparison is paired by
# target: does the prompt give a kept row whose span answers its question (a dropped row counts as no)? The rate
# among kept rows is compared as well. Both are declared before the audit is read:

# %%
from labkit.generation import fact_first
from labkit.studies import fact_first_data as ffd

question_first, fact_first_name = ffd.PROMPTS
ff_per_target = "targets with a kept row whose span answers (yes): fact first − question first"
ff_per_kept = "kept rows whose span answers (yes): fact first − question first"
ff_family = stats.Family("fact first against question first, the same targets", [ff_per_target, ff_per_kept])
print(f"targets: the first {fact_first.N_FACT_FIRST} of chapter 02's seeded order")
ff_family

# %%
ff_kept, ff_dropped = ffd.rows()
ff = pd.DataFrame(ffd.audit())
print(f"audited rows: {len(ff)}, rater(s): {sorted(set(ff['rater']))}")
ff_targets = range(fact_first.N_FACT_FIRST)


def answered(audited):
    """Per prompt, from one rater's audit: for each target, 1 if it kept a row whose span answers (yes); and for
    each kept row, 1 if its span answers."""
    by_target, of_kept = {}, {}
    for name in ffd.PROMPTS:
        part = audited[audited["prompt"] == name]
        good = set(part.loc[part["evidence"] == "yes", "i"])
        by_target[name] = [int(i in good) for i in ff_targets]
        of_kept[name] = (part["evidence"] == "yes").astype(int).tolist()
    return by_target, of_kept


def ff_compare(family, audited):
    """The two declared comparisons of ``family``, on one rater's audit."""
    by_target, of_kept = answered(audited)
    return family.findings(
        {ff_per_target: (by_target[fact_first_name], by_target[question_first]),
         ff_per_kept: (of_kept[fact_first_name], of_kept[question_first])},
        kind={ff_per_target: "paired 0/1", ff_per_kept: "two independent proportions"})  # fmt: skip


yes_by_target, yes_of = answered(ff)
for name in ffd.PROMPTS:
    n_kept, n_yes, n_good = len(yes_of[name]), sum(yes_of[name]), sum(yes_by_target[name])
    n_drop = sum(p == name for p, _ in ff_dropped)
    print(f"{name}: kept {n_kept}, dropped {n_drop}; span answers (yes) {n_yes} of {n_kept} kept "
          f"{stats.fmt_ci(*stats.wilson(n_yes, n_kept))}, {n_good} of {len(ff_targets)} targets "
          f"{stats.fmt_ci(*stats.wilson(n_good, len(ff_targets)))}")  # fmt: skip
print(pd.crosstab(ff["prompt"], ff["evidence"], margins=True))
ff_drops = pd.DataFrame([(p, d.reason) for p, d in ff_dropped], columns=["prompt", "why dropped"])
print(pd.crosstab(ff_drops["why dropped"], ff_drops["prompt"]))
ff_found = ff_compare(ff_family, ff)
for f in ff_found.values():
    print(f.sentence)

# %%
qf = ff[ff["prompt"] == question_first].assign(qid=lambda d: d["i"].map(lambda i: f"syn-easy-{i + 1:03d}"))
first_call = qf["qid"].map(audit.set_index("qid")["evidence"])
print(f"check: on the question-first rows this blind audit and chapter 02's audit make the same call on "
      f"{int((first_call == qf['evidence']).sum())} of {len(qf)}")  # fmt: skip
print("\nthe fact-first rows of the first 5 targets that kept one (target order):")
for _, r in ff[ff["prompt"] == fact_first_name].sort_values("i").head(5).iterrows():
    print(f"- [{r['evidence']}] {r['question']}\n      fact: {r['quote'][:140]}")

# %% [markdown]
# Putting the fact first gave no more usable rows on these targets. It lost most of its rows before the audit:
# the model seldom copied its fact word for word, so 25 of its 40 rows were dropped, most because the quote is not
# in the document, against 14 for the question-first prompt. Among the rows it kept, the share whose span answers
# is 0.333 against 0.269, and per target it gives 5 answered rows against 7; the two sentences above state the
# verdicts. With 40 targets the intervals are wide: the per-target one rules out a gain of more than 0.126, not a
# small gain or a small loss. The misses look like the old ones: a "fact" that is only a link title, a table cell
# or an introduction, and questions that ask for more than the fact says (a purpose, a process). The field order
# makes the model write a sentence first; it does not make it pick one that stands alone. The blind audit makes
# the same call as chapter 02's audit on 22 of the 26 question-first rows, so the rubric was applied much as
# before.
#
# That audit is one AI assistant session's. A second session rated all 41 rows of the same sheet, blind to the
# first rater's labels and, like it, to which prompt wrote a row (rater `fact-first-second`,
# `data/synth/fact_first_second_rater.jsonl`). How far the two agree, on the three calls and on the one the
# comparisons use (answers or not), and the same two comparisons by the second rater's labels, declared as a family
# of their own before they are read:

# %%
ff2 = pd.DataFrame(ffd.second_audit()).set_index("id").loc[ff["id"]].reset_index()  # the same rows, the same order
print(f"rater(s): {sorted(set(ff2['rater']))}, {len(ff2)} rows")
for what, (a, b) in {"yes / partly / no": (ff["evidence"].tolist(), ff2["evidence"].tolist()),
                     "answers (yes) or not": ((ff["evidence"] == "yes").tolist(),
                                              (ff2["evidence"] == "yes").tolist())}.items():  # fmt: skip
    rep = stats.kappa_report(a, b)
    print(f"{what}: the same call on {rep['agree']} of {rep['n']} {stats.fmt_ci(rep['raw'], *rep['raw_ci'])}; "
          f"kappa {stats.fmt_interval(stats.interval_for('kappa', (a, b)))}")  # fmt: skip
print(pd.crosstab(ff["evidence"], ff2["evidence"], rownames=["first rater"], colnames=["second rater"]))
ff_family_second = stats.Family("fact first against question first, the same targets, the second rater's labels",
                                [ff_per_target, ff_per_kept])  # fmt: skip
for f in ff_compare(ff_family_second, ff2).values():
    print(f.sentence)

# %% [markdown]
# The two raters' calls agree far beyond chance (κ's lower bound above), and the table shows the rows where they
# differ: none crosses from "yes" to "no". So the comparison does not rest on one rater's quirks, with one caveat:
# both raters are AI assistant sessions, which may share the same leanings, and agreement between them is not
# agreement with people (chapter 11 re-checks the judges against a class of learners). By the second rater's
# labels the two comparisons give the verdicts printed last.
#
# ### The distractors column at work
#
# The authored `hard` slice keeps its look-alikes too: most of its questions list **distractor** spans, passages
# that share the question's vocabulary but do not answer it (a superseded policy, a neighbouring limit). That is
# what the column is for: when retrieval fails, check whether a distractor took the place of the evidence. The
# hybrid retriever's top 3 (what the reader of chapters 06–09 reads) for every hard question that has distractors,
# a distractor chunk being one that overlaps a distractor span and holds no gold:

# %%
from labkit.text.chunking import chunks_by_doc

pieces = chunks_by_doc(h.chunks)
hard_q = [q for q in h.queries if q.slice == "hard" and q.distractors]
top3 = dict(zip((q.qid for q in hard_q), h.hybrid.search_many([q.search_text for q in hard_q], k=3), strict=True))
outcome = []
for q in hard_q:
    gold = {c for c, g in h.qrels[q.qid].items() if g >= 1}
    look_alikes = {c.id for s in q.distractors for c in pieces[s.doc] if c.start_char < s.end and s.start < c.end_char}
    ids = [c for c, _ in top3[q.qid]]
    outcome.append({"failed": not gold & set(ids), "distractor in top 3": bool((look_alikes - gold) & set(ids))})
outcome = pd.DataFrame(outcome)
for failed, group in outcome.groupby("failed"):
    k = int(group["distractor in top 3"].sum())
    print(f"{'no relevant chunk in the top 3' if failed else 'a relevant chunk in the top 3'}: {len(group)} "
          f"questions; a distractor in the top 3 for {k}: {stats.fmt_ci(*stats.wilson(k, len(group)))}")
fails, wins = outcome[outcome["failed"]], outcome[~outcome["failed"]]
d = stats.newcombe(int(fails["distractor in top 3"].sum()), len(fails), int(wins["distractor in top 3"].sum()),
                   len(wins))  # fmt: skip
print(f"failures minus successes (two groups of questions, Newcombe): {stats.fmt_ci(*d)}")
print(f"failures with no labelled distractor in the top 3: {int((~fails['distractor in top 3']).sum())}")

# %% [markdown]
# Of the 25 hard questions whose top 3 holds no relevant chunk, 6 have a labelled distractor there (0.240
# [0.115, 0.434]); among the 72 that succeed, 15 do too (0.208). The difference, +0.032 [−0.133, +0.241], holds 0:
# the labelled look-alikes are not what the retriever mostly fails on. Six failures are explained by their
# distractor, and those are the ones to read first; the other 19 lost their evidence to chunks nobody marked. The
# column starts an error analysis, it does not finish one: add the chunks that did win to each failed row's
# distractors, and the next round of fixes (a reranker, chapter 04b; a chunking, chapter 05) can be checked
# against them.
#
# ## Step 2: hard questions with distractors
#
# For each target we find the two most similar chunks **from other documents** (chunks of the same document
# overlap the target and may hold the answer), by word Jaccard or by embedding cosine (the MiniLM vectors of chapter
# 01): Jaccard for the first draw's first 75 targets and embedding for its other 75, then the two alternating in
# pairs, so that each method has about half of every draw. The model sees all three and is asked for a question that
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
# Two of these four answers are wrong by the audit: the second answers only the wellness half of its question, and
# the last is about another error code than the one it asks for (its span is a neighbouring table cell). The
# first is right, but no employee asks for "the correct row to use in the table": the question points at the
# document. None of these questions borrows the look-alikes' vocabulary; all of them reuse the target's.
#
# ## Are the generated questions harder?
#
# The measure is the one that matters: how well do the retrievers of chapter 01 find each question's gold chunk?
# Recall@10 and MRR@10 (the mean of RR@10) per set, with bootstrap 95% intervals, for the generated sets beside the
# authored slices, and hit@10 (thr 3) with Wilson intervals: 1 when a chunk holding a grade-3 span whole is in
# the top 10. Recall@10 divides by every chunk that touches a gold span, and a generated question has one target
# where an authored one often has several; hit@10 (thr 3) counts each question's evidence once, so it compares
# like with like (chapter 01 has the counts). `borrowed` is the share of a question's words that occur in its gold
# chunk, and `overlap` their word Jaccard (the source's similarity; small for every set because a chunk has far more
# words than a question).

# %%
gen_q = sd.per_query(synthetic)
method_of = {q.qid: q.extra["provenance"]["method"] for q in synthetic}
by_method = gen_q.assign(
    set=[s if s == "synthetic-easy" else f"synthetic-hard ({method_of[q]})" for s, q in zip(gen_q["set"], gen_q["qid"])]
)
allq = pd.concat([by_method, authored[authored["set"].isin(["hard", "real"])]], ignore_index=True)
scores = stats.group_means_ci(allq, ["set", "retriever"], ["R@10", "RR@10", "hit@10 (thr 3)"])
stats.fmt_ci_table(scores).unstack("retriever")

# %%
plots.plot_bars_ci(scores, "R@10", title="Recall@10 per set and retriever, bootstrap 95% intervals")

# %%
words = stats.group_means_ci(allq[allq["retriever"] == "bm25"], "set", ["borrowed", "overlap"])
stats.fmt_ci_table(words)

# %% [markdown]
# Two sets of different questions are compared by the interval of their difference, not by whether their two
# intervals overlap (chapter 03). The questions differ, so nothing is paired: each set is resampled on its own
# (unpaired). The interval follows what is averaged: R@10 and `borrowed` are graded means (a bootstrap of each
# set); hit@10 (thr 3) is a proportion, so the difference of two is **Newcombe's** interval, built from the two
# Wilson intervals (chapter 03). The prose below reads two gaps, for every retriever and measure: 14 comparisons,
# declared first as one family (`stats.Family`, chapter 01), so each interval is simultaneous among the 14 and a
# verdict is corrected for them:

# %%
HARD_GEN = ["synthetic-hard (embedding)", "synthetic-hard (jaccard)"]
GAPS = {"generated easy - real": (["synthetic-easy"], ["real"]),
        "generated hard - generated easy": (HARD_GEN, ["synthetic-easy"])}  # fmt: skip
gap_members = {f"{gap} · {retriever} · {column}": (gap, retriever, column) for gap in GAPS
               for retriever, column in [(r, c) for r in sd.RETRIEVERS for c in ("R@10", "hit@10 (thr 3)")]
               + [("(any)", "borrowed")]}  # fmt: skip
gap_family = stats.Family("generated against real, hard against easy", list(gap_members), n=20_000)
print(gap_family, "declared before any gap is computed")

# %%
def set_gap(gap, retriever, column):
    """``column`` over the gap's first sets and over its second (different questions, each resampled alone)."""
    a_sets, b_sets = GAPS[gap]
    pick = allq[allq["retriever"] == ("bm25" if retriever == "(any)" else retriever)]  # borrowed: the same for all
    return pick[pick["set"].isin(a_sets)][column].tolist(), pick[pick["set"].isin(b_sets)][column].tolist()


gap_data = {name: set_gap(*where) for name, where in gap_members.items()}
gap_kinds = {name: "two independent proportions" if column.startswith("hit@") else "two graded groups"
             for name, (_, _, column) in gap_members.items()}  # fmt: skip
gap_found = gap_family.findings(gap_data, kind=gap_kinds)
gap_table = stats.findings_table(gap_found).rename(columns={"estimate": "difference"})
gap_table.index = pd.MultiIndex.from_tuples([gap_members[n] for n in gap_table.index],
                                            names=["gap", "retriever", "measure"])  # fmt: skip
gap_table.insert(0, "n", [f"{len(a)} vs {len(b)}" for a, b in gap_data.values()])
gap_table.insert(5, "interval", [gap_kinds[n].replace("two independent proportions", "Newcombe")
                                 .replace("two graded groups", "bootstrap") for n in gap_found])  # fmt: skip
harder = gap_table.xs("generated hard - generated easy")
print(f"hard minus easy: {int((harder['verdict'] == 'resolved').sum())} of {len(harder)} resolved; the largest drop "
      f"the intervals allow (how much harder the hard set could be): {-harder['low'].min():.3f}")
gap_table[["n", "difference", "low", "high", "p", "verdict", "interval"]].round(3)

# %% [markdown]
# Two results, one expected and one not.
#
# * **Questions written from one chunk are too easy.** The generated easy set scores R@10 0.88 with BM25 and
#   with the hybrid retriever; the authored real slice scores 0.66 and 0.72. By R@10 the gap is resolved with
#   BM25 and with the hybrid, among the family's 14 (the table's first rows): a team that measured only on
#   generated questions would report a recall clearly higher than its users get. With dense the gap is not
#   shown; its interval still allows a large one. Part of the gap is the metric (a generated question has one
#   target chunk to find, a real one often several); by hit@10 (thr 3), which counts each question's evidence
#   once, it is smaller, resolved with BM25 only. The `borrowed` row says why: a generated question reuses 70% of
#   its words from its gold chunk, a real one 46%, a resolved gap.
# * **The "make hard" step did not work with this model.** The generated hard questions are found as often as the
#   easy ones: no hard-minus-easy difference is resolved (the line above the table). That does not prove them
#   equally easy; it bounds how much harder they can be: by none of these measures more than the drop printed
#   there, while "hard" was meant to mean clearly lower recall. Per method
#   (77 Jaccard, 81 embedding questions) the intervals are wider still and no difference between the methods is
#   shown. Nor is one in the target's wording they reuse (0.720 and 0.740 for the two hard methods, 0.701 for
#   easy; the `borrowed` line of the hard-minus-easy table bounds how much less the hard ones could borrow). The
#   1.5B model read "do not copy sentences of the target" and copied the target's words anyway. The look-alike
#   passages did not pull its wording toward theirs.
#
# The quote check makes this worse. Among the hard replies, the dropped ones borrowed less from their target than
# the kept ones. Two comparisons (kept minus dropped, for the easy and for the hard replies), declared as one
# family before the numbers; kept and dropped are different questions, so each is an unpaired difference:

# %%
borrow_family = stats.Family("borrowed share, kept − dropped replies, per set", ["easy", "hard"])
borrow_family

# %%
from labkit.text.words import containment

chunk_text = {c.id: c.text for c in h.chunks}
parsed = []
for kind, d in dropped:
    try:
        parsed.append({"set": kind, "fate": "dropped", "borrowed": containment(json.loads(d.reply)["question"],
                                                                               chunk_text[d.target])})  # fmt: skip
    except (ValueError, KeyError, TypeError):
        pass  # a malformed reply has no question to measure
parsed += [{"set": r["set"], "fate": "kept", "borrowed": containment(r["question"], chunk_text[r["target"]])}
           for r in rows]  # fmt: skip
parsed = pd.DataFrame(parsed)
print(stats.fmt_ci_table(stats.group_means_ci(parsed, ["set", "fate"], ["borrowed"])))
borrow_groups = {kind: (parsed[(parsed["set"] == kind) & (parsed["fate"] == "kept")]["borrowed"].tolist(),
                        parsed[(parsed["set"] == kind) & (parsed["fate"] == "dropped")]["borrowed"].tolist())
                 for kind in ("easy", "hard")}  # fmt: skip
for f in borrow_family.findings(borrow_groups, kind="two graded groups").values():
    print(f.sentence)

# %% [markdown]
# The two sentences are the verdicts, corrected for the two: among the hard replies the kept questions borrow more
# of the target's words than the dropped ones; among the easy replies the difference is not shown. A question that
# moves away from the target's wording tends to come with a paraphrased, unfindable quote, so the filter that
# protects the labels also removes the hard questions. At this model size, the honest conclusion is
# that step 2 needs a stronger generator, or a check that rejects any "hard" question whose `borrowed` share is
# as high as an easy one's. How far that reaches: this is one model with one prompt. It shows that *this* prompt
# does not make the 1.5B write hard questions; it cannot say whether the recipe works with a stronger generator,
# another prompt or more look-alike passages. That needs the same measurement with them.
#
# ### What a generated set leaves out
#
# Recall is not the only gap. Every generated question was written from one chunk, so every one is a single
# fact; the real-style slice asks other kinds of question too. The kind of each question, per set:

# %%
kind_mix = pd.crosstab(pd.Series([q.slice for q in [*synthetic, *h.queries]], name="set"),
                       pd.Series([q.kind for q in [*synthetic, *h.queries]], name="kind"))  # fmt: skip
print("real slice per split:", pd.Series([q.split for q in h.queries if q.slice == "real"]).value_counts().to_dict())
kind_mix.assign(**{"share fact": (kind_mix["fact"] / kind_mix.sum(axis=1)).round(3)})

# %% [markdown]
# A set of generated questions cannot measure conversational follow-ups (the `real` slice's 32), comparisons or
# two-document questions (the `hard` slice's), however many it holds: it has none. This is the source's trigger
# for adding real questions: **when recall on the generated set looks good and users still complain**, the
# users are asking what the set does not hold. The workbook's version of the complaint is the table above it:
# the generated easy set's R@10 of 0.88 against the real-style slice's 0.66–0.72. The remedy the source gives is
# small: 20–30 real questions, labelled like the rest and kept as their own slice (the `real` slice here has 78,
# 39 in each split). Read their gap to the generated set with the interval of the difference (chapter 03): a few
# dozen questions make a wide one.
#
# ## Step 3: filter out unrealistic questions
#
# Generated questions are sometimes strange: exam-style ("According to the passage…"), off-domain, or with the
# answer inside. The book filters them the way it filters other generated data: have people rate a small set,
# use it as few-shot examples for a model rater, keep the questions at or above a threshold.
#
# Our rated set has 60 questions about the handbook, rated 1–5 for realism against the rubric in
# `data/synth/README.md`, written and rated by an AI assistant session for the maintainers (not by a person).
# 15 of them are the model rater's examples; the other 45 are held out to measure it. A second AI assistant
# session rated all 60 again without seeing the first ratings:

# %%
first_r = {r["id"]: r["rating"] for r in sd.realism_labels()}
second_r = pd.DataFrame(sd.realism_second_rater())
rep = stats.kappa_report([first_r[i] for i in second_r["id"]], second_r["rating"].tolist(), labels=sd.RATINGS)
print(f"same rating on {rep['agree']} of {rep['n']} ({stats.fmt_ci(rep['raw'], *rep['raw_ci'])}); "
      f"kappa {stats.fmt_ci(rep['kappa'], *rep['kappa_ci'])}"
      + (" (no interval: with no disagreement to resample, the bootstrap has none to give)"
         if rep["kappa_ci"][0] is None else ""))  # fmt: skip

# %% [markdown]
# Perfect agreement (the Wilson interval of the raw agreement says 60 of 60 is compatible with a true agreement
# as low as 0.94), and it says less than it seems. These 60 questions were *written* to be examples of each
# level (12 per level), by the same session that rated them, and the rubric describes each level by exactly the
# features they were written with (two of them are quoted in it). A second rater recognising the intended level is
# a check that the levels are distinguishable, not that raters agree on what a model really writes. That needs
# questions nobody wrote for the rubric; the generated ones below get it. The prompt of the model rater:

# %%
shots = sd.realism_labels("fewshot")
heldout = pd.DataFrame(sd.realism_labels("heldout"))
print(synth.realism_prompt("<the question to rate>", shots[:2]))

# %% [markdown]
# First the model rater against the 45 held-out ratings of the rater set: exact agreement, agreement within one
# point, and the rank correlation (Spearman's ρ: does it order questions like the labels, even if its scale is
# shifted?).

# %%
import numpy as np
from scipy.stats import bootstrap, spearmanr

rater = llm.from_env(llm.DEFAULT_MODEL)
heldout["model"] = synth.rate_realism(heldout["question"].tolist(), rater, shots)
rated = heldout.dropna(subset=["model"])
exact = (heldout["model"] == heldout["rating"]).mean()  # an unreadable reply counts as a disagreement
within1 = ((heldout["model"] - heldout["rating"]).abs() <= 1).mean()
rho = spearmanr(rated["rating"], rated["model"]).statistic
rho_ci = bootstrap((rated["rating"], rated["model"]), lambda a, b: spearmanr(a, b).statistic, paired=True,
                   vectorized=False, n_resamples=2000, method="percentile", rng=np.random.default_rng(labkit.SEED))
print(f"unreadable replies: {heldout['model'].isna().sum()} of {len(heldout)}")
print(f"exact agreement {exact:.2f}, within one point {within1:.2f} (an unreadable reply counts as a miss)")
print(f"Spearman rho on the {len(rated)} readable replies: "
      f"{stats.fmt_ci(rho, *rho_ci.confidence_interval, digits=2)} (bootstrap over questions)")  # fmt: skip
pd.crosstab(rated["rating"], rated["model"].astype(int), rownames=["rater set"], colnames=["model"])

# %% [markdown]
# The rater does not rate; it answers 4. It gave 4 to 32 of the 45 held-out questions, including 8 of the 9 that
# the labels call unusable (answer inside the question, "the passage", several questions at once). Its rank
# correlation with the labels is 0.00, and the interval says how little 45 questions pin that down: the truth
# could be a weak negative or a weak positive ordering, but a rater that orders questions the way the labels do
# (ρ above the interval's upper end, about 0.35) is unlikely. Agreement "within one point" looks respectable
# (0.62) only because 4 sits within one point of 3, 4 and 5.
#
# What a threshold of 4 would do, measured on the held-out questions: the share of truly realistic ones (label 4
# or 5) among those the rater keeps against the share among those it drops (two separate groups of questions,
# so their difference gets Newcombe's interval for two proportions). The comparison is declared, a family of
# one, before its numbers are computed, and the helper states the verdict:

# %%
cut_family = stats.Family("the rater's cut at 4, held-out questions", ["realistic share: kept − dropped"])
keeps = heldout["model"] >= 4
realistic = heldout["rating"] >= 4
n_keep, n_drop = int(keeps.sum()), int((~keeps).sum())
r_keep, r_drop = int((realistic & keeps).sum()), int((realistic & ~keeps).sum())
print(f"held out: {len(heldout)}; the rater keeps {n_keep} and drops {n_drop}")
print(f"realistic among kept:    {r_keep}/{n_keep}  {stats.fmt_ci(*stats.wilson(r_keep, n_keep))}")
print(f"realistic among dropped: {r_drop}/{n_drop}  {stats.fmt_ci(*stats.wilson(r_drop, n_drop))}")
cut_groups = (realistic[keeps].astype(int).tolist(), realistic[~keeps].astype(int).tolist())
keep_vs_drop = cut_family.findings({"realistic share: kept − dropped": cut_groups}, kind="two independent proportions")
print(keep_vs_drop["realistic share: kept − dropped"].sentence)
as_judge = pd.DataFrame({"rater keeps (>= 4)": keeps, "realistic (label >= 4)": realistic})
stats.judge_report(as_judge, ["rater keeps (>= 4)"], truth="realistic (label >= 4)").round(3)

# %% [markdown]
# A filter that works keeps a clearly more realistic share than it drops. This one keeps 0.42 against 0.33; the
# sentence above gives the verdict on that difference, and its interval reaches far on both sides: on 45
# questions its cut cannot be told from a random one. Read as a judge against the labels (chapter 06's report),
# it keeps most realistic questions ([TPR](00_welcome.ipynb#TPR-and-TNR)) only because it keeps most questions:
# it drops few of the
# unrealistic ones (TNR), and its J is close to 0. With a rater that ranked, a 1–5 scale
# would be fine here, because the rating only serves to **rank and cull**: a shifted or compressed scale still
# puts the weakest questions at the bottom. A scale would not be fine for measuring an error *rate* of a system
# ("what share of answers is wrong?"). There a scale invites the rater to hedge in the middle, and a threshold on
# it has no meaning a reader can check. Rates need binary pass/fail labels with the judge's TPR and TNR measured,
# as chapter 06 does.
#
# The book's recipe has the right order: measure the rater on held-out labels *before* letting it cull. Here the
# measurement says do not use it. We run it on the generated questions anyway, to see what an unmeasured filter
# would have done:

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
# The kept and dropped samples read alike. Both hold plain paraphrase-style questions and oddities. With a rater
# that cannot rank, the cut is close to random, and the threshold of 4 keeps most of the set anyway.

# %% [markdown]
# Two more AI assistant sessions rated a seeded random 60 of the generated questions, independently, against
# the same rubric, without seeing each other's ratings or the model's. How they agree, on the five levels
# (κ, and weighted κ, which counts a disagreement by one level as less bad than by four) and on the filter's
# question, kept (4 or 5) or not:

# %%
gen_ratings = pd.DataFrame(sd.realism_generated_ratings()).pivot(index="id", columns="rater", values="rating")
ra, rb = gen_ratings["genrealism-a"].tolist(), gen_ratings["genrealism-b"].tolist()
views = {"five levels": stats.kappa_report(ra, rb, labels=sd.RATINGS),
         "five levels, weighted (quadratic)": stats.kappa_report(ra, rb, labels=sd.RATINGS, weights="quadratic"),
         "kept (>= 4) or not": stats.kappa_report([x >= 4 for x in ra], [x >= 4 for x in rb])}  # fmt: skip
print(pd.crosstab(gen_ratings["genrealism-a"], gen_ratings["genrealism-b"]))
kept_kappa = stats.interval_for("kappa", ([x >= 4 for x in ra], [x >= 4 for x in rb]))  # the interval by its kind


def kappa_cell(view, r):
    """κ with its bootstrap interval; for kept-or-not, the interval its kind gives, or why there is none."""
    if view != "kept (>= 4) or not":
        return stats.fmt_ci(r["kappa"], *r["kappa_ci"])
    if kept_kappa.low is None:
        return f"{kept_kappa.estimate:.3f}, no interval: {kept_kappa.method}"
    return stats.fmt_ci(kept_kappa.estimate, kept_kappa.low, kept_kappa.high)


pd.DataFrame({v: {"agree": f"{r['agree']} of {r['n']}", "raw (Wilson 95%)": stats.fmt_ci(r["raw"], *r["raw_ci"]),
                  "kappa (bootstrap 95%)": kappa_cell(v, r)} for v, r in views.items()}).T  # fmt: skip

# %% [markdown]
# Both raters call almost every generated question a 3 ("What is the X for Y?", built from the document's
# headings), and neither finds a single 5. On the filter's question they agree on all but one question, yet
# κ is 0, and no interval can be given: one rater keeps no question at all, so every resample of the rows gives
# the same κ and nothing bounds it (the table says so). When one label is nearly everything, agreement by chance
# is nearly everything too, and kappa has nothing left to measure. That is the **prevalence** trap of κ: read it
# beside raw agreement and the table, never alone. What the raters agree on is the finding that matters: by the rubric,
# about none of these questions is realistic, while the model rater keeps most of them. On the same 60:

# %%
question_of = {q.qid: q.question for q in sd.load_sets()}
rating_of = gen.drop_duplicates("question").set_index("question")["realism"]  # one question, one recorded reply
model_r = pd.Series([rating_of[question_of[i]] for i in gen_ratings.index], index=gen_ratings.index)
kept_by = pd.DataFrame({"model rater keeps (>= 4)": (model_r >= 4).to_numpy(),
                        "rater A keeps": (gen_ratings["genrealism-a"] >= 4).to_numpy(),
                        "rater B keeps": (gen_ratings["genrealism-b"] >= 4).to_numpy()})  # fmt: skip
for name, col in kept_by.items():
    print(f"{name:26} {int(col.sum()):3d} of {len(col)}  {stats.fmt_ci(*stats.wilson(int(col.sum()), len(col)))}")

# %% [markdown]
# ### Your ratings
#
# Rate the 45 held-out questions yourself (or 20 to 30 of them) with the rubric in `data/synth/README.md`: keys
# **1** to **5**, **z** undo, **n** skip, **b** back. Your ratings stay in your user cache.

# %%
from labkit.studies import labelling

realism_set, realism_items, realism_reference = labelling.realism_set()
scale = "1 unusable · 2 unnatural · 3 paraphrase of the document · 4 natural but polished · 5 a real message"
print(realism_set.title, f"({len(realism_set.items)} questions)")

# %%
# NBVAL_IGNORE_OUTPUT
from labkit.ui import widgets

realism_labeller = widgets.Labeller.at(
    realism_set, lambda i: widgets.question_html(realism_items[i]["question"], scale),
    labelling.store_path(realism_set.id), target=labelling.TARGET,
)  # fmt: skip
realism_labeller

# %% [markdown]
# Then this cell compares your ratings with the rater set's (weighted κ) and measures the model rater against
# *yours*: with at least 10 ratings of yours it uses them, otherwise the rater set's, and says which.

# %%
mine = labelling.labels_for(realism_set, realism_reference)
print("ratings used:", mine.source)
rated_ids = [i for i in realism_set.items if i in mine.labels]
your_rating = pd.Series({i: int(mine.labels[i]) for i in rated_ids})
print(labelling.agreement_line(mine, realism_reference, labels=realism_set.labels, weights="quadratic"))
model_on = heldout.set_index("id").loc[rated_ids, "model"]
both_rated = model_on.notna()
rho_you = spearmanr(your_rating[both_rated], model_on[both_rated]).statistic
print(f"the model rater against these ratings on {int(both_rated.sum())} questions: Spearman rho {rho_you:.2f}; "
      f"kept by the model at >= 4: {int((model_on >= 4).sum())}, realistic (>= 4) by these ratings: "
      f"{int((your_rating >= 4).sum())}")  # fmt: skip

# %% [markdown]
# ### A criterion the rubric lacks: staying in the domain
#
# The realism rubric above asks how an employee would phrase a question, not whether the question is one the
# handbook's help bot is for: a fluent question about Python's garbage collector could pass it. The source lists
# staying in the domain as a rating criterion of its own. It is rated here alone, as a yes/no judge
# (`labkit.judges.domain`, the 1.5B, plan `02-domain`), on a seeded sample whose labels are known by
# construction: questions written for the handbook (authored ones, and the generated ones of this chapter, each
# written from a handbook passage) are in the domain; the questions of the Python documentation's FAQ (chapter 10's
# corpus) are not. The question is declared before the table is read: is the judge's J above a coin's?

# %%
from labkit.judges import domain
from labkit.studies import faithfulness_data as fdata  # chapter 06's difference of J, resampled within each class
from labkit.studies.domain_data import domain_sample

domain_family = stats.Family("the domain judge against construction labels", ["in domain (1.5B) − always in"])
print(domain_family)

# %%
dom = pd.DataFrame(domain_sample())
dom["in domain (1.5B)"] = [domain.judge_domain(q, rater) for q in dom["question"]]
dom["always in"] = True
said = dom["in domain (1.5B)"].map({True: "says in", False: "says out"}).fillna("unreadable")
print(pd.crosstab(dom["source"], said))
print(stats.judge_report(dom, ["in domain (1.5B)", "always in"], truth="in_domain", passes=True).round(3).to_string())
dom_found = fdata.judge_differences(dom, [("in domain (1.5B)", "always in")], truth="in_domain", passes=True,
                                    family=domain_family)  # fmt: skip
for f in dom_found.attrs["findings"].values():
    print(f.sentence)
print("\nits mistakes, every one:")
for _, r in dom[dom["in domain (1.5B)"] != dom["in_domain"]].iterrows():
    print(f"- [{r['source']}; says {r['in domain (1.5B)']}] {r['question']}")

# %% [markdown]
# Against labels known by construction the judge is weak on the side that matters. It keeps most handbook
# questions in the domain (TPR 0.825 [0.68, 0.91]) but passes half of the Python FAQ's questions as well (TNR 0.5
# [0.30, 0.70], 10 of 20): "What's a negative index?" is a help-bot question to it. The sentence above tests its
# J (0.325) against a coin's, and its interval says how little 60 questions pin that down. Part of the failure may
# be the construction: Quillbridge is a software company and the prompt names IT systems and the company's
# tools, so a programming question is not absurd there. The labels say which corpus a question was written for,
# not whether the bot should refuse it. Its misses on the handbook side are plain handbook questions (a VPN
# gateway, a chargeback, a webhook). The criterion belongs in a realism rubric; this 1.5B is not the rater to
# apply it, and as a filter it would drop in-domain questions and keep programming ones.

# %% [markdown]
# ## Playground
#
# The widget wraps `synth_data.filter_view`: given the per-query results, the ratings, a threshold, a distractor
# method and a retriever, it returns the kept and dropped counts, Recall@10 per set with intervals, and example
# questions. With plain arguments first (both distractor methods, the hybrid retriever). Kept against dropped, per
# set, is a family of two, declared before the numbers:

# %%
cull_family = stats.Family("hybrid R@10, kept − dropped by the realism rater (>= 4), per set",
                           ["synthetic-easy", "synthetic-hard"])
cull_family

# %%
synth_in = ch02.synth_inputs(gen_q, synthetic, gen)  # the explorer's inputs, built as its manifest names them
frame = synth_in["frame"]  # = sd.with_ratings(gen_q, synthetic, gen)
view = sd.filter_view(frame, threshold=4, method="both", retriever="hybrid")
print(view.counts)
print(stats.fmt_ci_table(view.table))
hybrid = frame[frame["retriever"] == "hybrid"]
cull_groups = {}
for name, part in hybrid.groupby("set"):  # kept and dropped are different questions: an unpaired difference
    kept, dropped = part[part["realism"] >= 4]["R@10"], part[~(part["realism"] >= 4)]["R@10"]
    cull_groups[name] = (kept.tolist(), dropped.tolist())
for f in cull_family.findings(cull_groups, kind="two graded groups").values():
    print(f.sentence)

# %% [markdown]
# Culling by this rater barely moves a set's recall (0.878 to 0.860 on the easy set, 0.925 to 0.924 on the hard
# one). Kept against dropped, the two sentences in the cell: neither set's difference is shown. On the easy set
# the estimate points the unexpected way (the questions the rater keeps found slightly *less* often than those it
# drops), but its simultaneous interval reaches 0; on the hard set the interval is centred near 0. Each sentence
# says how large a difference its interval still leaves open. Move the threshold and the method and see whether
# any setting separates the sets:

# %%
# NBVAL_IGNORE_OUTPUT
explorer = widgets.SynthExplorer(**synth_in)
explorer

# %% [markdown]
# ## What can go wrong
#
# * **Questions copied from the chunk.** A generated set reports the recall of keyword search on its own
#   wording. Measure the word overlap of your set before trusting its recall.
# * **Labels tied to one chunking.** Store the evidence as character spans; derive chunk labels for each
#   chunking (`spans_to_qrels`).
# * **Guessed spans.** A quote that cannot be found is dropped and counted, never mapped to the nearest text.
# * **An unmeasured filter.** Check the rater against held-out reference ratings before letting it cull.
# * **A 1–5 scale for error rates.** Fine for ranking and culling; use binary labels to measure a rate.
# * **Throwing away the distractors.** Keep them with each row: they explain the retriever's failures.
# * **Trusting a located quote.** It proves the text exists, not that it answers the question. Audit a sample
#   of rows (a person, or a rater checked against one) and report the share that is wrong; here a third of the
#   spans did not answer their question.
# * **A generator too small for the recipe.** Measure whether "hard" questions are harder (recall and borrowed
#   words) before calling them hard; here they were not.
#
# ## Summary
#
# * Generate: one question, answer and evidence quote per chunk; locate the quote as a span; audit a sample.
#   Generated questions are too easy, as the source warns: their R@10 gap to the real-style questions is resolved
#   with BM25 and with the hybrid retriever and not shown with dense (the family of 14 gaps), and they borrow far
#   more of their gold chunk's words.
# * Make hard: show the model look-alike chunks and ask for a question only the target answers. With a 1.5B
#   generator the "hard" questions were no harder; measure it, do not assume it.
# * Filter: a few-shot rater, measured against held-out reference ratings, culls unrealistic questions. The 1.5B
#   rater answered 4 to almost everything (rank correlation 0.00), so the measurement says not to use it.
# * Measure each set with the retrievers, with intervals, beside authored and real-style questions.
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
# higher BM25 Recall@10, the generated easy questions or the authored real ones. Then read it off `scores`.

# %% tags=["solution"]
answer_2_2 = scores.xs("bm25", level="retriever")["R@10"].loc[["synthetic-easy", "real"]].idxmax()

# %%
check.exercise("2.2", answer_2_2, scores=scores)

# %% [markdown]
# **2.3** What share of the 45 held-out questions did the model rate exactly as the reference rating (an unreadable
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
