# Draft (issue 12, item 1): the section chapter 04 gains once `04-positions` is recorded. It goes after "The same
# experiment on our corpus: a harness" and replaces the paragraph that says the readers are stand-ins. Every
# sentence with a figure is written after the cells have run; the bracketed notes say what to read off.

# %% [markdown]
# ## Lost in the middle with the local 1.5B
#
# The harness with a language model in it: the local Qwen2.5-Coder-1.5B-Instruct reads the gold passage among
# n − 1 hard distractors (the hybrid's best non-relevant chunks), n = 5 and n = 10, with the gold at the ends and
# in the middle, for 80 questions chosen so the reference-number rule can judge them (`position_study`). Two
# baselines per question: closed book (no passages) and oracle (the gold passage alone). Passages are 64 words
# (the handbook rechunked at 64/16), shorter than Liu et al.'s ~100-word Wikipedia passages; `data/llm/README.md`
# says why.

# %%
from labkit import correctness, llm
from labkit import handbook as hb
from labkit import position_study as ps
from labkit import reader as rd

study = ps.study_contexts()
trials = ps.study_trials(study)
counts = pd.Series([t.condition for t in trials]).value_counts()
print(f"{len(study)} questions, {len(trials)} trials: {counts.to_dict()}")

model_15 = rd.llm_reader(llm.from_env(llm.DEFAULT_MODEL))
table = ps.run_study(trials, model_15, model="1.5B")
by_qid = hb.handbook().by_qid
table = ps.add_check(table, correctness.reference_rule("first"), by_qid)
accuracy = ps.accuracy_by_position(table)
accuracy.round(3)

# %% [markdown]
# [Read: oracle vs closed book (the passages' worth); the no-gold floor (answers that state the number without
# the gold: copied from a distractor or guessed); accuracy at positions 1/3/5 and 1/5/10 with Wilson intervals.]

# %%
u_test = {n: ps.ends_vs_middle(table, n) for n in ps.N_DOCS}
pd.DataFrame(u_test).T.round(3)

# %% [markdown]
# [Read: is ends − middle above 0 with an interval that excludes 0? State plainly whether a U appears at this
# scale, and what the intervals allow.]

# %%
reorder = ps.reorder_effect(table, study, 5)
reorder

# %% [markdown]
# [Read: "best passages at both ends" against the retrieved order, paired; the discordant pairs; how many
# questions keep the gold where it was.]

# %%
ours = {
    f"1.5B, {n} passages": accuracy.xs(("position", n), level=("condition", "n_docs"))["accuracy"].to_dict()
    for n in ps.N_DOCS
}
plots.plot_positions(liu, ours, n_docs=10)

# %% [markdown]
# The control readers through the same trials (sanity checks: flat, and a cliff for the truncating one):

# %%
read = [t for t in trials if t.passages]  # a control reader needs passages: no closed-book trial
controls = {
    reader.name: ps.add_check(ps.run_study(read, reader), correctness.reference_rule("first"), by_qid)
    for reader in (LexicalReader(), TruncatingReader(window_words=200))
}
# Smoke-run in session 4 (no model): the position-blind control is flat (0.500 at each position of 5, 0.488 of
# 10), its no-gold floor 0.212 (a number copied from a distractor), the 200-word truncating one falls from 0.538
# at position 1 to 0.288 past its window; ends_vs_middle and reorder_effect give exactly 0 for the flat control.
pd.concat({name: ps.accuracy_by_position(t)["accuracy"] for name, t in controls.items()}, axis=1).round(3)
