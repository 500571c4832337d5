# %% [markdown]
# # 06 · Faithfulness and relevance: judging the answer, and judging the judge
#
# **You will learn** to check a generated answer claim by claim against the context it was given, to report
# faithfulness as a PASS/FAIL rate, to measure an LLM judge against hand labels *before* trusting its numbers,
# to correct a rate for the judge's errors, and to use context swapping to see whether answers come from the
# passages or from the model's own memory.
#
# Source: section 7.8 of the chapter notes. Every model output here is a real response of a local model
# (Qwen2.5-Coder Instruct, 1.5B and 0.5B, on llama.cpp), recorded once and replayed (`data/llm/`); the hand
# labels are in `data/faithfulness/` with the rubric they follow.

# %%
import labkit
from labkit import calibration, check, faithfulness, llm, stats, toys
from labkit import faithfulness_data as fdata

labkit.setup()
llm.reset_usage()

# %% [markdown]
# ## Two questions about an answer
#
# Perfect retrieval does not guarantee a good answer: the generator can still get it wrong. The book measures
# generation along two axes:
#
# * **Faithfulness** (groundedness): is every claim of the answer backed by the context the model was given?
#   An answer can be *true in the world* and still unfaithful, when the model added something the passages
#   do not say. It is unfaithfulness that turns into confident invention the day the model does not know.
# * **Relevance**: does the answer address the question that was asked?
#
# Faithfulness is judged per **claim**, because one invented sentence in an otherwise grounded answer is exactly
# the failure we are after. The judge is usually a language model, built with the techniques of the book's
# Chapter 5: a narrow question, a rubric, a structured reply, and, above all, validation against human labels.
#
# ## The source's example, from scratch
#
# The source chapter's judge checks one claim at a time, returns a continuous score (the share of supported
# claims, for debugging) and a binary label (PASS only if *every* claim is supported, for reporting a failure
# rate). Its context and answer are in Vietnamese; here they are, with the source's offline stand-in judge
# reproduced as written (it calls a claim supported when the claim's last four words occur in the context — a
# canned function, not a model):

# %%
import re


def my_split_claims(answer):
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+", answer) if s.strip()]


def source_stand_in_judge(context, claim):  # the source's offline stand-in, not a model
    key = " ".join(claim.split()[-4:]).rstrip(".")
    return "supported" if key in context else "unsupported"


def my_faithfulness(answer, context, judge):
    verdicts = [(claim, judge(context, claim)) for claim in my_split_claims(answer)]
    score = sum(v == "supported" for _, v in verdicts) / len(verdicts)
    return score, verdicts


def my_mentions_entity(answer, required_terms):
    return all(t.lower() in answer.lower() for t in required_terms)


score, verdicts = my_faithfulness(toys.FAITH_ANSWER_VI, toys.FAITH_CONTEXT_VI, source_stand_in_judge)
for claim, v in verdicts:
    print(f"[{v:11}] {claim}")
print("faithfulness =", round(score, 2), "| PASS" if score == 1 else "| FAIL")
term_vi = toys.FAITH_RELEVANCE_TERM_VI
print(f"relevance(mentions '{term_vi}'):", my_mentions_entity(toys.FAITH_ANSWER_VI, [term_vi]))

# %% [markdown]
# In English: the context says *full-time employees have 15 days of annual leave; unused leave carries over to
# the first quarter of the next year*. The answer repeats both facts and adds a third, *if you leave the
# company, remaining leave is paid out in cash*, which the context never mentions. Two of three claims are
# supported: 0.67, and the answer **fails**, because one unsupported claim is one too many. The cheap relevance
# check passes: the answer is about leave (*phép*).
#
# `labkit.faithfulness` does the same, with the verdicts as a small dataclass; fed the source's verdicts, it
# agrees:

# %%
given = dict(zip(my_split_claims(toys.FAITH_ANSWER_VI), toys.FAITH_SOURCE_VERDICTS, strict=True))
result = faithfulness.faithfulness(
    toys.FAITH_ANSWER_VI, toys.FAITH_CONTEXT_VI, lambda ctx, claim: faithfulness.Verdict(claim, given[claim])
)
assert round(result.score, 2) == round(score, 2) and result.status == "FAIL"
assert faithfulness.mentions_entity(toys.FAITH_ANSWER_VI, [toys.FAITH_RELEVANCE_TERM_VI])
print(f"labkit: score {result.score:.2f}, {result.status}")

# %% [markdown]
# ## The same example with real judges
#
# Now the English version goes to real models: the 1.5B and the 0.5B Qwen2.5-Coder Instruct, each asked the
# judge prompt below with a JSON schema for the reply (so the reply is always parseable JSON with a verdict from
# the list). We add a fourth claim that changes the number: *You have 20 days of annual leave.*

# %%
print(faithfulness.judge_prompt(toys.FAITH_CONTEXT_EN, toys.FAITH_ALTERED_EN))

# %%
import pandas as pd

judge_15 = faithfulness.model_judge(llm.from_env(llm.DEFAULT_MODEL))
judge_05 = faithfulness.model_judge(llm.from_env(llm.SMALL_MODEL))
truth = ["supported", "supported", "unsupported", "contradicted"]
pd.DataFrame(
    {
        "claim": toys.toy_claims(),
        "should be": truth,
        "1.5B says": [judge_15(toys.FAITH_CONTEXT_EN, c).verdict for c in toys.toy_claims()],
        "0.5B says": [judge_05(toys.FAITH_CONTEXT_EN, c).verdict for c in toys.toy_claims()],
        "lexical says": [faithfulness.lexical_judge(toys.FAITH_CONTEXT_EN, c).verdict for c in toys.toy_claims()],
    }
)

# %% [markdown]
# Four claims cannot tell us how good a judge is; they can only show what kind of mistakes to look for. To know
# a judge's error rates we need many claims labelled by people. The rest of the chapter builds exactly that on
# the handbook.
#
# ## Answers from a real reader
#
# The reader is the 1.5B model with a plain prompt ("answer using the passages below, in one to three short
# sentences"). It reads the top 3 chunks of the hybrid retriever of chapter 01 (chunks of 128 words, overlap 32)
# for 120 handbook questions: 20 from each of the easy, hard and real slices, in the dev and the test split,
# drawn with a fixed seed.

# %%
from labkit import reader

print(reader.PROMPTS["lenient"].format(passages="[1] …\n\n[2] …\n\n[3] …", question="…"))
answers = pd.DataFrame(fdata.answered())
answers["claims"] = answers["answer"].map(faithfulness.split_claims)
print(f"{len(answers)} answers; claims per answer:", answers["claims"].map(len).value_counts().sort_index().to_dict())
answers[["qid", "slice", "question", "answer"]].head(6)

# %% [markdown]
# Most answers are one or two sentences, so most answers are one or two claims. **Sentence claims are a crude
# split**: a sentence can hold several facts ("5 working days after the completed form; the number has the
# format SUP- plus five digits"). Production systems ask a model for *atomic* claims. We asked the 1.5B model to
# split 30 of the dev answers into atomic claims too; compare the counts and one example:

# %%
model_15 = llm.from_env(llm.DEFAULT_MODEL)
dev_answers = answers[answers["split"] == "dev"].head(fdata.N_EXTRA).copy()  # the recording budget: 30
dev_answers["atomic"] = [faithfulness.atomic_claims(a, model_15) for a in dev_answers["answer"]]
n_bad = int(dev_answers["atomic"].isna().sum())
counts = pd.DataFrame(
    {
        "sentence claims": dev_answers["claims"].map(len),
        "atomic claims": dev_answers["atomic"].map(lambda c: len(c or [])),
    }
)
print(f"dev answers: {len(dev_answers)}; unreadable atomic-claim replies: {n_bad}")
print(counts.describe().loc[["mean", "max"]].round(2))
example = dev_answers.loc[(counts["atomic claims"] > counts["sentence claims"]).idxmax()]
print("\nanswer:", example["answer"])
print("sentence claims:", example["claims"])
print("atomic claims:  ", example["atomic"])

# %% [markdown]
# Atomic claims make one verdict mean one fact, at the price of one more model call per answer and a splitter
# that can itself drop or invent content. The rest of this chapter keeps the source's sentence claims, because
# that is what the hand labels were written against.
#
# ## Hand labels
#
# A judge's verdicts mean nothing until they are compared with a careful human's. `data/faithfulness/labels.jsonl`
# holds the claims of all recorded answers, labelled *supported / unsupported / contradicted* against the context
# the reader saw, following the rubric in `data/faithfulness/README.md`, plus hand-written claims that imitate
# how readers go wrong (a changed number, a wrong entity, last year's policy, an added detail) and some faithful
# paraphrases. The altered ones exist because a good reader is mostly faithful: without them there would be too
# few failures to measure a judge's TNR.

# %%
labels = pd.DataFrame(fdata.labelled_claims())
print(f"{len(labels)} labelled claims; not supported: {(labels['label'] != 'supported').mean():.1%}")
pd.crosstab([labels["origin"]], [labels["split"], labels["label"]], margins=True)

# %% [markdown]
# The labels of the model's own claims already say something about the reader, before any judge:

# %%
own = labels[labels["origin"] == "model"]
by_answer = own.groupby("qid")["label"].apply(lambda s: (s == "supported").all())
p, lo, hi = stats.wilson(int(by_answer.sum()), len(by_answer))
print(f"answers whose every claim a human labelled supported: {by_answer.sum()} of {len(by_answer)}")
print(f"share with Wilson 95% interval: {stats.fmt_ci(p, lo, hi)}")
print(own["label"].value_counts().to_string())

# %% [markdown]
# ## The judge is a classifier
#
# Treat "supported" as the positive class. Two rates describe a judge (Chapter 5 of the book):
#
# * **TPR**: of the claims a human calls supported, the share the judge calls supported;
# * **TNR**: of the claims a human calls *not* supported, the share the judge also rejects.
#
# A judge with a low TNR lets unfaithful answers through and makes the system look better than it is. We compare
# five judges on the **dev** split to choose one, then report the chosen judge on the **test** split:
#
# * the 1.5B model, and the same with a **quote guard** (a "supported" whose evidence quote does not occur in the
#   context is overruled to "unsupported");
# * the 0.5B model;
# * the **lexical** baseline (no model: every number and 75% of the other content words of the claim occur in
#   the context);
# * a judge that says **supported to everything**, to see what accuracy alone would reward.

# %%
judges = {
    "1.5B": judge_15,
    "1.5B + quote guard": faithfulness.model_judge(llm.from_env(llm.DEFAULT_MODEL), guard=True),
    "0.5B": judge_05,
    "lexical": faithfulness.lexical_judge,
    "always supported": calibration.always_supported,
}
table = calibration.verdict_table(labels.to_dict("records"), judges)
dev, test = table[table["split"] == "dev"], table[table["split"] == "test"]
calibration.judge_report(dev, list(judges))

# %% [markdown]
# Read the *accuracy* column first, then TPR and TNR. The judge that approves everything is right whenever the
# truth is "supported", so its accuracy is simply the share of supported labels, while its TNR is zero: it would
# report a failure rate of zero for any system. Accuracy alone hides this; TPR and TNR separate the two kinds of
# error, and the intervals say how much ~100 labels per split can tell apart.
#
# Where do the model judges go wrong? Label × verdict for the 1.5B, on dev:

# %%
calibration.confusion(dev, "1.5B")

# %% [markdown]
# And the claims that matter most, those a human labelled *contradicted* but the 1.5B called supported (a
# changed number or name slipping through), with the quote it gave as evidence:

# %%
slipped = dev[(dev["label"] == "contradicted") & (dev["1.5B"] == "supported")]
n_contra = (dev["label"] == "contradicted").sum()
print(f"{len(slipped)} of {n_contra} contradicted claims called supported by the 1.5B (dev)")
for _, r in slipped.head(4).iterrows():
    print(f"- [{r['origin']}] {r['claim']}\n    quote: {r['1.5B quote'][:110]!r}")

# %% [markdown]
# ## Choose on dev, report on test
#
# The judge to use is the one with the best balance of TPR and TNR on dev (here: the highest TPR + TNR, which is
# also what the correction below needs: a judge is only informative when TPR + TNR > 1). Its rates on the test
# split are the ones to report:

# %%
dev_report = calibration.judge_report(dev, list(judges)[:4])
chosen = (dev_report["TPR"] + dev_report["TNR"]).idxmax()
print("chosen on dev:", chosen)
calibration.judge_report(test, [chosen, "always supported"])

# %% [markdown]
# ## From a judge's rate to the true rate
#
# Run the chosen judge over the reader's claims and count the claims it calls supported: that is the
# **observed** rate. Because the judge errs, the observed rate is biased. If the judge's TPR and TNR are known,
# the Rogan–Gladen estimator (1978) corrects it:
#
# $$\hat\theta = \frac{p_{obs} + \mathrm{TNR} - 1}{\mathrm{TPR} + \mathrm{TNR} - 1}$$
#
# Its interval must carry both uncertainties (the judged sample and the labelled set), so we bootstrap both. Here
# we have something most teams do not: hand labels for *all* of the reader's claims, so we can see whether the
# correction lands near the truth. TPR and TNR come from the dev labels; the rate is measured on the test
# split's model claims:

# %%
test_own = test[test["origin"] == "model"]
dev_all = dev
res = stats.corrected_rate_ci(
    (test_own[chosen] == "supported").tolist(),
    (dev_all[chosen] == "supported").tolist(),
    (dev_all["label"] == "supported").tolist(),
)
true_rate = (test_own["label"] == "supported").mean()
print(f"claims of the reader (test): {res['n_judged']}; judge calibrated on {res['n_labels']} dev labels")
print(f"observed supported rate:  {stats.fmt_ci(res['observed'], *res['observed_ci'])}")
print(f"Rogan-Gladen corrected:   {stats.fmt_ci(res['corrected'], *res['corrected_ci'])}")
print(f"hand-labelled truth:      {true_rate:.3f}")

# %% [markdown]
# The corrected interval is wide: with about a hundred labels, the judge's own rates are uncertain, and the
# correction divides by TPR + TNR − 1, which magnifies that uncertainty. This is the honest size of what can be
# claimed; a single observed number with no interval would look more precise and be less true.
#
# ## Relevance: the cheap check and the model check
#
# When the question names a clear entity, relevance can be checked in code: does the answer mention it? On the
# handbook, questions that name an error code, a form or a system (a token with capitals and digits, like
# `ERR-4031` or `SRF-2`) give such a term. A model relevance judge asks instead whether the answer responds to
# the question at all:

# %%
term = re.compile(r"\b[A-Z][A-Z0-9]*-?\d+[A-Z0-9-]*\b")
answers["term"] = answers["question"].map(lambda q: (term.findall(q) or [None])[0])
with_term = answers.dropna(subset=["term"])
mentions = [faithfulness.mentions_entity(a, [t]) for a, t in zip(with_term["answer"], with_term["term"], strict=True)]
print(f"{len(with_term)} questions name a code; answers that mention it: {sum(mentions)}")
pairs = zip(dev_answers["question"], dev_answers["answer"], strict=True)
dev_answers["relevant (1.5B)"] = [faithfulness.judge_relevance(q, a, model_15) for q, a in pairs]
verdicts_rel = dev_answers["relevant (1.5B)"].value_counts(dropna=False).to_dict()
print(f"model relevance judge on {len(dev_answers)} dev answers:", verdicts_rel)
dev_answers.loc[dev_answers["relevant (1.5B)"] == False, ["qid", "question", "answer"]].head(4)  # noqa: E712

# %% [markdown]
# ## Context swapping
#
# A debugging tool for grounding: give the reader a context that cannot contain the answer (here, the top 3
# passages of a question from *another department*) and see what it says. An answer that barely changes means
# the model answers from its own knowledge or guesses. It may even be right by luck; the danger is that, when it
# does not know, it invents instead of using evidence. The book's fix is in the prompt, not the retriever:
# *use only the passages provided; if they do not contain the answer, say so.* We ran both prompts on 50 fact
# questions:

# %%
swap = pd.DataFrame(fdata.swap_results())
summary = swap.groupby("condition").agg(
    answers=("answer", "size"),
    declines=("declines", "sum"),
    states_gold_number=("states_gold_number", "sum"),
)
summary

# %% [markdown]
# `declines` counts answers that say they do not know; `states_gold_number` counts answers containing every
# number of the hand-written reference answer (only questions whose reference answer has a number count). With
# swapped passages, a lenient reader that still produces the reference number is answering from somewhere other
# than its context; one that produces another number is inventing. Examples of swapped-context answers under
# each prompt:

# %%
for cond in ("lenient, swapped context", "strict, swapped context"):
    print(f"--- {cond}")
    for _, r in swap[swap["condition"] == cond].head(3).iterrows():
        print(f"Q: {r['question']}\nA: {r['answer']}\n")

# %% [markdown]
# The strict prompt is only a fix if it still answers when the passages *do* hold the answer; the third condition
# (strict prompt, true passages) checks exactly that.
#
# ## Playground
#
# The widget wraps `faithfulness.faithfulness` with the judges above. With plain arguments first, the reader's
# answer to one question judged by the 1.5B:

# %%
row = answers.iloc[0]
r = faithfulness.faithfulness(row["answer"], row["context"], judge_15)
print(row["question"], "->", row["answer"])
print([(v.claim, v.verdict) for v in r.verdicts], r.score, r.status)

# %% [markdown]
# Pick a question and a judge; switch between the continuous score and PASS/FAIL. Each claim shows its verdict
# and the judge's evidence quote, highlighted in the context when it really occurs there:

# %%
# NBVAL_IGNORE_OUTPUT
from labkit import widgets

explorer = widgets.FaithfulnessExplorer(answers.to_dict("records"), judges)
explorer

# %%
explorer.result

# %% [markdown]
# ## What can go wrong
#
# * **Trusting an uncalibrated judge.** Its rate is a number about the judge as much as about the system. Label
#   a few hundred claims, measure TPR and TNR, and state them next to every rate.
# * **Reporting accuracy.** A judge that approves everything scores the share of supported claims.
# * **Labels without failures.** If the labelled set is almost all "supported", TNR has nothing to stand on;
#   add altered claims on purpose.
# * **Choosing the judge on the data you report on.** Pick on dev, report on test.
# * **Averaging the continuous score.** Use it to debug one answer; report PASS/FAIL rates.
# * **Blaming the retriever for ungrounded answers.** Context swapping shows whether the model reads its
#   passages; the fix is in the prompt.
#
# ## Summary
#
# * Faithfulness is judged claim by claim against the context the model saw; PASS means every claim supported.
# * A judge is a classifier: TPR and TNR against hand labels, with intervals, before any rate is trusted.
# * A measured judge lets you correct an observed rate (Rogan–Gladen), with an interval that carries both
#   uncertainties.
# * Relevance is a separate axis: a cheap check in code when the question names an entity, a model otherwise.
# * Context swapping tells grounding from memory; the fix is a prompt that allows "I don't know".
#
# ## Exercises
#
# **6.1** The source's toy: what faithfulness score does an answer get when 2 of its 3 claims are supported?
# (Round to 2 decimals.)

# %% tags=["solution"]
answer_6_1 = round(2 / 3, 2)

# %%
check.exercise("6.1", answer_6_1)

# %% [markdown]
# **6.2** Predict, then run: what TNR does the judge that says "supported" to everything get on the test split?

# %% tags=["solution"]
answer_6_2 = calibration.judge_report(test, ["always supported"]).loc["always supported", "TNR"]

# %%
check.exercise("6.2", answer_6_2, table=test)

# %% [markdown]
# **6.3** Predict, then run: a judge has TPR 0.9 and TNR 0.6 and calls 80% of claims supported. What true rate
# does the Rogan–Gladen estimator give? (Three decimals.)

# %% tags=["solution"]
answer_6_3 = round(stats.rogan_gladen(0.8, 0.9, 0.6), 3)

# %%
check.exercise("6.3", answer_6_3)

# %% [markdown]
# **6.4** How many of the 1.5B judge's dev verdicts were overruled by the quote guard?

# %% tags=["solution"]
answer_6_4 = int(dev["1.5B + quote guard guarded"].sum())

# %%
check.exercise("6.4", answer_6_4, table=dev)

# %% [markdown]
# ## What this chapter cost
#
# Every model call above was replayed from the recording. The table adds up what the recorded calls took on the
# recording machine, and what the same tokens would cost on a hosted model:

# %%
llm.usage_table()
