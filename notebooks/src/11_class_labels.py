# %% [markdown]
# # 11 · The class's labels (for instructors)
#
# **Every number, table and picture stored in this notebook comes from simulated raters, not people.** Twelve
# raters are simulated by a named, seeded model (`stats.simulate_raters`, through `labkit.studies.class_sim`):
# each copies the reference label of an item (the AI rater's, which the chapters use) and replaces it by another
# label with its own probability, some raters far more often than others. No person's labels are in this
# repository. With `SIMULATE = False` below the same cells read your class's folder instead.
#
# **You will learn** (as an instructor) how a class's labels reach you without any learner reading another's, how
# far many raters agree when each labels different items (Fleiss' κ and Krippendorff's α, with intervals), which
# raters and which items to look at, and what the workbook's judges look like when they are re-checked against a
# class's labels instead of an AI rater's: the workbook's central lesson, with people in it.
#
# This chapter is for instructors: it is built and checked like the others, and left out of the learners' working
# copy and the student copy. Terms used here and defined earlier: TPR, TNR, J and the Rogan–Gladen correction (06),
# the 2×2 (07), Cohen's κ and Wilson intervals (03, 06); the [glossary](00_welcome.ipynb#Glossary) has them all.

# %%
SIMULATE = True  # False: read the class folder that LABKIT_CLASS_DIR names (your class) instead of simulating one

# %%
import shutil
import tempfile
from pathlib import Path

import pandas as pd
from IPython.display import display

import labkit
from labkit.chapters import chapter
from labkit.commands import cli
from labkit.data import class_folder, class_read
from labkit.exercises import BY_CHAPTER
from labkit.measures import stats
from labkit.studies import class_lessons, class_sim
from labkit.ui import plots

labkit.setup()

# %% [markdown]
# ## The class folder
#
# One setting, `LABKIT_CLASS_DIR`, names a folder that every learner's server can reach (on a hub, a shared
# volume). The instructor creates it once, naming a group that only instructors are in:
#
# ```
# python -m labkit class init /srv/class --group instructors --title "RAG evaluation, spring"
# ```
#
# It is laid out like nbgrader's exchange: `labels/<set id>/` is a **drop folder** per label set, where any account
# may create a file but none may list the folder, and (the folder being sticky) only a file's owner may remove it.
# Each learner's labels go to one file, `<learner id>.jsonl`, which only that learner can write and only the
# instructors' group can read. The learner id is a **pseudonym** (`l-` and ten hex digits, from the account name
# and the class's secret salt), never a name unless the instructor asks (`--names accounts`).
#
# Sharing is **opt-in**. With a class folder set, the labelling widget of chapters 02, 06, 07 and 10 shows one more
# line, a box to tick; once ticked it says *"your labels are shared with the instructor"*, sends the labels given
# so far and then each new one, right after the learner's own store has saved it. Unticking removes the shared
# file. Without a class folder, the widget is as it was. The same for the self-checks:
# `check.share_progress()` sends each "correct" or "not yet".
#
# Here the folder is made in a temporary place and filled by the simulated raters, through the same writer the
# widget uses:

# %%
PROGRESS_CHAPTERS = ("03", "06", "07")  # whose self-checks the simulated raters run
exercises = [e for number in PROGRESS_CHAPTERS for e in BY_CHAPTER[number]]
if SIMULATE:
    workspace = Path(tempfile.mkdtemp(prefix="labkit-class-"))
    folder = class_sim.simulate_class(workspace / "class", exercises=exercises, title="simulated class A")
    print(f"a simulated class folder: {len(class_sim.FLIPS)} simulated raters, flip probabilities "
          f"{sorted(set(class_sim.FLIPS.values()))}; each labels the first {min(class_sim.LABELLED)} to "
          f"{max(class_sim.LABELLED)} items of a set, give or take five")  # fmt: skip
else:
    folder = class_folder.open_class()
    print("\n".join(class_read.check_class(folder)) or "the class folder's permissions are as they should be")
for path in sorted(p for p in folder.path.rglob("*") if p.is_dir()):
    files = sum(1 for f in path.iterdir() if f.is_file())
    print(f"  {path.relative_to(folder.path).as_posix() + '/':24} mode {path.stat().st_mode & 0o7777:o}, {files} files")

# %% [markdown]
# ## What the reader refuses
#
# A class folder is written by many accounts, so reading it trusts nothing. Below, the drop folder of chapter 06's
# claims gets what a broken or hostile class leaves behind (planted here on purpose), and the reader says what it
# skipped and why. Nothing is read from outside the class folder: a symlink is not followed, an id that looks like
# a path is not an id, a file another account wrote under a learner's id is not that learner's.

# %%
sets = class_sim.chapter_sets() if SIMULATE else {s: cli.KNOWN[s]() for s in class_sim.SETS}
claims_set, claim_items, claim_reference = sets["06-claims"]
if SIMULATE:
    for line in class_sim.plant_bad_input(folder, claims_set):
        print("planted:", line)
classes = {s: class_read.read_class(ls, folder) for s, (ls, _, _) in sets.items()}
for got in classes.values():
    print(got.summary())
    for skip in got.skipped:
        print("  ", skip)

# %% [markdown]
# ## Raters per item
#
# The labelling widget shows every learner the items in the same order, and learners stop at different points, so
# the first items of a set carry the whole class and the later ones fewer. Ratings are missing, and which raters
# rated an item changes from item to item: the situation Cohen's κ (two raters, the same items) does not cover.

# %%
per_item = {s: [sum(i in mine for mine in c.ratings.values()) for i in sets[s][0].items] for s, c in classes.items()}
per_item = {s: n[: max(i for i, x in enumerate(n) if x) + 2] for s, n in per_item.items()}  # up to the first unrated
caption = "raters per item (simulated raters, not people)" if SIMULATE else "raters per item (your class)"
plots.plot_raters_per_item(per_item, caption)

# %% [markdown]
# ## How far the class agrees
#
# Two chance-corrected figures, each with a bootstrap interval over items (`stats.fleiss_report`,
# `stats.alpha_report`):
#
# * **Fleiss' κ** needs the same number of ratings on every item, so it keeps only the items with the most common
#   count and says how many it left out;
# * **Krippendorff's α** uses every item with two ratings or more, whoever skipped it; ordinal α (for 02's 1–5
#   ratings) counts a 4 against a 5 as a smaller disagreement than a 1 against a 5.
#
# Because the raters are simulated, we know what the figures *should* be: the flip probabilities imply an
# agreement (`class_sim.implied_agreement`, on the very items and raters each figure uses). Whether each interval
# covers it is the check that these figures measure what they claim to:

# %%
rows = []
for s, c in classes.items():
    label_set, _, reference = sets[s]
    fleiss = stats.fleiss_report(c.ratings, labels=label_set.labels)
    alpha = stats.alpha_report(c.ratings, labels=label_set.labels)
    kept = [r["item"] for r in stats.item_table(c.ratings) if r["raters"] == fleiss["raters_per_item"]]
    reports = [(fleiss, kept), (alpha, None)]
    if s == "02-realism":
        reports.append((stats.alpha_report(c.ratings, scale="ordinal", labels=label_set.labels), None))
    for rep, items in reports:
        row = {"set": s, "figure": rep["coefficient"], "items": rep["items"],
               "value (95%)": stats.fmt_ci(rep["value"], *rep["ci"]) if rep["ci"] else rep["why"]}  # fmt: skip
        if SIMULATE and "ordinal" not in rep["coefficient"]:
            implied = class_sim.implied_agreement(c.ratings, reference, label_set.labels, class_sim.FLIPS, items)
            row["implied by the simulation"] = round(implied, 3)
            print(f"{s}: {class_sim.recovered(rep, implied)}")
        rows.append(row)
agreement = pd.DataFrame(rows).set_index(["set", "figure"])
agreement

# %% [markdown]
# Read the intervals before the values: a few dozen items leave a wide range, and Fleiss' κ keeps fewer items than
# α (the `items` column), which widens its interval. The simulation's flips jump anywhere on the 1–5 scale, so
# ordinal α has no reason to be kinder than nominal α on them; people's disagreements on a 1–5 scale are mostly one
# step apart, which is what ordinal α is for.
#
# ## Which raters to look at
#
# Each rater against the majority of the *others* on the items they labelled (`stats.rater_table`, leave one out:
# a rater never votes on their own check). With simulated raters we also know each one's flip probability, and so
# the agreement with the reference to expect:

# %%
noise = class_sim.rater_noise(classes["06-claims"].ratings, claim_reference, class_sim.FLIPS)
last = noise.sort_values("rank by others").tail(2)
print("lowest agreement with the others' majority (06-claims): "
      + ", ".join(f"{r} (flip {row['flip']})" for r, row in last.iterrows()))  # fmt: skip
noise

# %% [markdown]
# The line above names the two raters with the lowest agreement with the others, and their flip probabilities:
# the leave-one-out column looks for careless raters with no reference at all, which is all a real class offers.
# The `covers` column says whether each rater's Wilson interval against the reference covers the agreement its flip
# probability implies.
#
# ## The items the class split on
#
# The items with the lowest share for their most common label are the ones to discuss in class: a claim that
# half the class calls supported is either hard or badly worded, and the rubric should say which.

# %%
split_claims = class_lessons.split_items(classes["06-claims"].ratings, {i: d["claim"] for i, d in claim_items.items()})
split_claims

# %%
answer_items = sets["07-answers"][1]
class_lessons.split_items(classes["07-answers"].ratings, {q: d["question"] for q, d in answer_items.items()})

# %% [markdown]
# ## Chapter 06's judges, re-checked against the class
#
# Chapter 06 measured five judges against the AI rater's labels of the reader's claims and chose one. The same judges
# against the **class's majority** (here, of the simulated raters) on the claims it settled, beside the AI rater's
# labels on the same claims (`class_lessons.claims_lesson`; a claim the class ties on is left out):

# %%
CH06 = chapter("06")
lesson06 = class_lessons.claims_lesson(classes["06-claims"].ratings, CH06.judges)
print(f"{lesson06['items']} claims with a class majority; it differs from the AI rater's label on "
      f"{lesson06['differ']}; the chosen judge (as in 06): {lesson06['chosen']}")  # fmt: skip
print(class_lessons.inside("the chosen judge", *lesson06["reports"].values(), lesson06["chosen"], "TPR"))
print(class_lessons.inside("the chosen judge", *lesson06["reports"].values(), lesson06["chosen"], "TNR"))
lesson06["rates"]

# %% [markdown]
# And the reader's rate of supported claims on the test split, observed through the chosen judge and corrected
# (Rogan–Gladen) with the judge's TPR and TNR measured against each set of labels:

# %%
print(f"the reader's {lesson06['n_test']} test claims; supported by the AI rater's labels: {lesson06['truth']:.3f}")
lesson06["corrected"].drop(columns="_res")

# %% [markdown]
# Where the class's majority matches the AI rater's label on every claim it settled (the count of differing claims
# is printed above), the two columns are the same numbers. That count is the first thing to look at with a real
# class: where its majority and the AI rater part, the judge's figures move with them, and the claims behind the
# difference are the ones to read.
#
# ## Chapter 07's 2×2, by the class's labels
#
# The 1.5B reader's answers at *k* = 3, each in its cell by the AI rater's label (07's) and by the class's
# majority (here, of the simulated raters; an answer passes when labelled *right*), and the two cheap correctness
# checks against each:

# %%
lesson07 = class_lessons.answers_lesson(classes["07-answers"].ratings)
print(f"{lesson07['items']} answers with a class majority; it differs from the AI rater's label on "
      f"{lesson07['differ']}")  # fmt: skip
display(lesson07["cells"])
print(class_lessons.inside("reference number", *lesson07["reports"].values(), "reference number", "TPR"))
print(class_lessons.inside("lexical judge", *lesson07["reports"].values(), "lexical judge", "TNR"))
lesson07["rates"]

# %% [markdown]
# ## Chapter 02's realism rater, against the class's ratings
#
# Chapter 02 found the model realism rater close to useless against the AI rater's held-out ratings. Against the
# class's median rating (the median, since ratings are ordered; here, of the simulated raters):

# %%
lesson02 = class_lessons.realism_lesson(classes["02-realism"].ratings)
print(f"{lesson02['items']} held-out questions rated by the class and readably by the model")
display(lesson02["kappa"])
lesson02["rates"]

# %% [markdown]
# ## Chapter 10's first passages, by the class
#
# How often the hybrid's first passage answers the question on the Python documentation, by the reference (from
# the AI raters' gold quotes) and by the class's majority (here, of the simulated raters):

# %%
lesson10 = class_lessons.relevance_lesson(classes["10-relevance"].ratings)
print(f"{lesson10['items']} questions; the class's majority and the reference agree on {lesson10['agree']}; "
      f"Cohen's kappa {lesson10['kappa']}")  # fmt: skip
lesson10["share"]

# %% [markdown]
# ## Export, and a second class
#
# `python -m labkit labels export` writes the class's labels as JSONL, one line per label: label set, item,
# learner id, label, time (and the class's title). Another class's export merges with it: `python -m labkit labels
# merge` reads exports beside learners' own label files, one rater per learner id. Here a second simulated class
# (five raters, noisier than the first) is exported too, and the two are merged on chapter 06's claims:

# %%
if SIMULATE:
    flips_b = {f"b-{i + 1:02d}": p for i, p in enumerate((0.2, 0.25, 0.3, 0.35, 0.45))}
    folder_b = class_sim.simulate_class(workspace / "class-b", flips=flips_b, labelled=(30, 30, 25, 35, 30),
                                        seed=labkit.SEED + 100, title="simulated class B")  # fmt: skip
    exports = {}
    for name, f in (("class-a", folder), ("class-b", folder_b)):
        read = [class_read.read_class(ls, f) for ls, _, _ in sets.values()]
        exports[name] = class_read.write_export(class_read.export_rows(read), workspace / f"{name}.jsonl")
        print(f"{name}.jsonl: {sum(len(r.rows) for r in read)} labels; first line:")
        print("  ", exports[name].read_text(encoding="utf-8").splitlines()[0])
    merged = cli.merge(list(exports.values()), set_id="06-claims", show=5)

# %% [markdown]
# Merging pools raters, not verdicts: the pooled α above mixes both classes' raters (compare it with class A's
# alone in the agreement table), and the majority of an item is a vote of every rater who labelled it. The second
# class alone, re-run through chapter 06's lesson, shows what a noisier majority does to the judge's figures:

# %%
if SIMULATE:
    class_b = class_read.read_class(claims_set, folder_b)
    lesson06_b = class_lessons.claims_lesson(class_b.ratings, CH06.judges)
    print(f"simulated class B: {lesson06_b['items']} claims with a majority; it differs from the AI rater's label "
          f"on {lesson06_b['differ']}")  # fmt: skip
    print(class_lessons.inside("the chosen judge", *lesson06_b["reports"].values(), lesson06_b["chosen"], "TNR"))
    display(lesson06_b["rates"].loc[[lesson06_b["chosen"]]])

# %% [markdown]
# ## The self-checks, for the instructor
#
# Learners who call `check.share_progress()` send each self-check's verdict to `progress/` in the class folder. One
# table (correct out of each chapter's exercises, per learner) and one picture (every exercise):

# %%
progress_rows, progress_skipped = class_read.read_progress(folder, exercises)
for skip in progress_skipped:
    print(skip)
progress = class_read.progress_table(progress_rows, exercises)
per_chapter = pd.DataFrame({number: (progress[list(BY_CHAPTER[number])] == "correct").sum(axis=1).astype(str)
                            + f"/{len(BY_CHAPTER[number])}" for number in PROGRESS_CHAPTERS})  # fmt: skip
per_chapter

# %%
title = "self-checks by learner (simulated raters, not people)" if SIMULATE else "self-checks by learner"
plots.plot_progress(progress, title)

# %% [markdown]
# ## What can go wrong
#
# * **A group learners are in.** The instructors' group reads every file; if it is also a learner's group, that
#   learner reads everyone's. `python -m labkit class check` says so.
# * **A majority is not a truth.** A class can share a misreading of the rubric; a tie is not broken silently
#   (the item is left out, and counted). The items the class split on are where to look, not a nuisance.
# * **Few raters per item.** Below two ratings an item says nothing about agreement; below ten items there is no
#   figure at all, and the reports say why instead of printing one.
# * **Simulated is not real.** The raters above flip labels uniformly and independently; people err on the hard
#   items together. A real class's κ will not come with an "implied" value to check it against.
#
# ## Summary
#
# * A class folder collects labels nbgrader-style: opt-in, pseudonymous, each learner writing only their own file,
#   the reader skipping and saying whatever it cannot trust.
# * Many raters with missing ratings need Fleiss' κ (same count per item) or Krippendorff's α (any count); on a
#   simulated class both intervals are checked against the agreement the simulation implies.
# * Rater by rater, agreement with the others' majority finds careless raters without a reference; item by item,
#   the split items are the class discussion.
# * Every judge of the workbook can be re-checked against the class's majority beside the AI rater's labels.

# %%
if SIMULATE:
    shutil.rmtree(workspace)
