"""Lost in the middle with a language model: the trials, their prompts, accuracy by position with intervals.

Taught in ``04_mrr_hit_rate_lost_in_the_middle``; its short-versus-long slice is reused by ``09_router_eval``.

:mod:`labkit.generation.positions` builds, per question, the gold passage and the retriever's best non-relevant chunks
as distractors. This module turns those contexts into *trials* for a reader (``reader(question, passages)``,
e.g. :func:`labkit.generation.reader.llm_reader`), the same trials for the notebook, the recording plan
(``tools/record.py 04``) and the tests:

- ``position``: the gold passage at position ``p`` among the first ``n_docs - 1`` distractors (Liu et al.);
- ``no gold``: the ``n_docs - 1`` distractors alone. Answers that still state the key number here were copied
  from a distractor or guessed: the floor of the reference-number rule;
- ``closed-book`` (no passages) and ``oracle`` (the gold passage alone): Liu et al.'s two baselines;
- ``ends``: the retrieved order (the gold where the retriever ranked it among the distractors) rearranged
  "best passages at both ends" (:func:`ends_order`), paired with the ``position`` trial at that rank;
- ``padded``: the gold passage first, then ``n_docs - 1`` *padding* passages (:func:`padding_ids`): as long
  as the distractors, but holding no number and far from the question. Oracle versus padded is what length
  alone costs; padded versus the gold first among distractors is what look-alike passages cost.

:func:`study_contexts` fixes the chapter's setting (64-word chunks, 80 questions; see ``data/llm/README.md``
for why). Correctness is a ``check(answer, query)`` from :mod:`labkit.judges.correctness`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from labkit import SEED
from labkit.core import args
from labkit.generation import reader as rd
from labkit.generation.positions import build_contexts
from labkit.judges.correctness import key_numbers
from labkit.measures import stats
from labkit.retrieval.retrievers import make_run
from labkit.studies import handbook as hb
from labkit.text.words import numbers

__all__ = ["Trial", "CONDITIONS", "study_contexts", "study_questions", "arrange", "ends_order",
           "retrieved_position", "study_trials", "trial_prompt", "run_study", "add_check", "SMALL_DESIGN",
           "accuracy_by_position", "ends_vs_middle", "reorder_effect", "distractor_cost", "check_contexts",
           "scored_rows", "padding_ids", "PADDING_DESIGN", "ends_and_middle", "oracle_and_among"]  # fmt: skip

CONDITIONS = ("closed-book", "oracle", "no gold", "position", "ends", "padded")
SIZE, OVERLAP, N_QUESTIONS = 64, 16, 80
# The chapter's design, sized to the recording budget (data/llm/README.md): the ends and the middle at both
# sizes (Liu et al.'s positions for ten documents), the no-gold floor at n = 10, the reordering at n = 5.
N_DOCS = (5, 10)
POSITIONS = {5: (1, 3, 5), 10: (1, 5, 10)}
ENDS = (5,)
NO_GOLD = (10,)
SMALL_DESIGN = {"n_docs": (10,), "positions": {10: (1, 5, 10)}, "ends": (), "no_gold": ()}
"""The 0.5B's trials (with closed-book and oracle): chapter 09's short (oracle) versus long (ten passages) slice."""
PADDING_DESIGN = {"n_docs": (10,), "positions": {10: ()}, "ends": (), "no_gold": (), "padded": (10,)}
"""The padding control, recorded for both models: the gold first among nine padding passages (+ the baselines)."""


@dataclass(frozen=True)
class Trial:
    """One prompt of the study: ``position`` is the gold's 1-based place (None when the gold is left out)."""

    qid: str
    question: str
    condition: str
    n_docs: int
    position: int | None
    passages: tuple[str, ...]


def check_contexts(contexts: Any) -> list[dict]:
    """``contexts`` as a list of the dicts :func:`labkit.generation.positions.build_contexts` makes, or a clear
    error."""
    contexts = args.sequence("contexts", contexts, allow_empty=False, example="positions.build_contexts(...)")
    for i, c in enumerate(contexts):
        if not isinstance(c, Mapping) or not {"qid", "question", "gold", "distractors"} <= set(c):
            raise ValueError(f"contexts[{i}] must be a dict from positions.build_contexts(...), got {c!r:.60}")
    return contexts


def study_questions(contexts: Sequence[dict], queries: Mapping[str, Any], n: int = N_QUESTIONS, seed: int = SEED):
    """A seeded sample of ``n`` contexts whose question the reference-number rule can score from the gold.

    Eligible: exactly one grade-3 gold span, and the reference's first key number
    (:func:`labkit.judges.correctness.key_numbers`) written in the gold passage. Returned in the order of ``contexts``.
    """
    import numpy as np

    contexts = check_contexts(contexts)
    args.mapping("queries", queries, example="{q.qid: q for q in load_queries()}")
    n = args.whole_number("n", n)
    eligible = []
    for c in contexts:
        if c["qid"] not in queries:
            raise ValueError(f"queries has no query {c['qid']!r} (a context's question)")
        q = queries[c["qid"]]
        keys = key_numbers(q.answer, q.search_text)
        if sum(s.grade >= 3 for s in q.gold) == 1 and keys and keys[0] in numbers(c["gold"]):
            eligible.append(c)
    if n > len(eligible):
        raise ValueError(f"n must be <= {len(eligible)}, the eligible questions of these contexts; got {n}")
    picked = set(np.random.default_rng(seed).choice(len(eligible), size=n, replace=False).tolist())
    return [c for i, c in enumerate(eligible) if i in picked]


def study_contexts(n: int = N_QUESTIONS, n_docs: int = max(N_DOCS), size: int = SIZE, overlap: int = OVERLAP):
    """The chapter's setting: the handbook chunked at ``size``/``overlap``, the hybrid's top 60 per query,
    :func:`labkit.generation.positions.build_contexts` with ``n_docs``, then :func:`study_questions` (computed once per
    process; each call returns new dicts)."""
    return [dict(c) for c in _study_contexts(n, n_docs, size, overlap)]


@lru_cache(maxsize=2)
def _study_contexts(n: int, n_docs: int, size: int, overlap: int) -> tuple:

    h = hb.handbook(size, overlap)
    deep = make_run(h.hybrid, h.queries, 60)
    picked = study_questions(build_contexts(h.queries, h.chunks, h.qrels, deep, n_docs=n_docs), h.by_qid, n)
    text = {c.id: c.text for c in h.chunks}
    for c in picked:
        c["padding"] = [text[i] for i in padding_ids(c, h.chunks, deep[c["qid"]], n_docs - 1)]
    return tuple(picked)


def padding_ids(context: Mapping, chunks: Sequence[Any], ranked: Sequence[str], n: int, seed: int = SEED) -> list:
    """``n`` chunk ids to pad ``context``'s gold passage with: a seeded sample (per question) of the full-length
    chunks (``size`` words) that hold no digit, come from another document than the gold's and are not among
    ``ranked`` (the retriever's deep list for the question). Text of the same kind and length as a distractor,
    with no number for the reference-number rule to find and nothing the retriever finds close."""
    import random

    n = args.whole_number("n", n)
    chunks = args.sequence("chunks", chunks, allow_empty=False, example="handbook(64, 16).chunks")
    size = max(c.n_words for c in chunks)
    gold_doc, near = str(context["gold_id"]).split("#")[0], set(ranked)
    pool = [c.id for c in chunks if c.n_words == size and c.doc != gold_doc and c.id not in near
            and not any(ch.isdigit() for ch in c.text)]  # fmt: skip
    if len(pool) < n:
        raise ValueError(f"only {len(pool)} chunks can pad {context['qid']!r}; n must be <= {len(pool)}")
    return random.Random(f"{seed}:{context['qid']}").sample(pool, n)


def _n_docs(context: Mapping, n_docs: Any) -> int:
    n_docs = args.whole_number("n_docs", n_docs, minimum=2)
    if n_docs - 1 > len(context["distractors"]):
        raise ValueError(
            f"n_docs ({n_docs}) needs {n_docs - 1} distractors; context {context['qid']!r} has "
            f"{len(context['distractors'])}: build the contexts with n_docs >= {n_docs}"
        )
    return n_docs


def arrange(context: Mapping, position: int, n_docs: int) -> list[str]:
    """The first ``n_docs - 1`` distractors in rank order with the gold passage inserted at ``position``."""
    n_docs = _n_docs(context, n_docs)
    position = args.whole_number("position", position, maximum=n_docs)
    passages = list(context["distractors"][: n_docs - 1])
    passages.insert(position - 1, context["gold"])
    return passages


def ends_order(n: int) -> list[int]:
    """Ranks in the order "best at both ends" places them: ``ends_order(5) == [1, 3, 5, 4, 2]``.

    Rank 1 first, rank 2 last, rank 3 second, rank 4 second to last, ...; the weakest end up in the middle
    (LangChain's ``LongContextReorder`` does the same).
    """
    n = args.whole_number("n", n)
    ranks = list(range(1, n + 1))
    return ranks[0::2] + ranks[1::2][::-1]


def retrieved_position(context: Mapping, n_docs: int) -> int:
    """Where the retriever ranks the gold among it and the first ``n_docs - 1`` distractors."""
    n_docs = _n_docs(context, n_docs)
    if "nonrelevant_above" not in context:
        raise ValueError("context lacks 'nonrelevant_above': build it with positions.build_contexts(...)")
    return min(1 + args.whole_number("nonrelevant_above", context["nonrelevant_above"], minimum=0), n_docs)


def study_trials(
    contexts: Sequence[dict],
    n_docs: Sequence[int] = N_DOCS,
    positions: Mapping[int, Sequence[int]] | None = POSITIONS,
    ends: Sequence[int] = ENDS,
    no_gold: Sequence[int] = NO_GOLD,
    padded: Sequence[int] = (),
) -> list[Trial]:
    """Every trial of the study, question by question: closed-book, oracle, then for each ``n_docs`` the
    no-gold context (for each ``n`` in ``no_gold``), the gold at each of ``positions[n]`` (None: every
    position), for each ``n`` in ``ends`` the ends-reordered retrieved list with its pair, the gold at
    :func:`retrieved_position` (which adds that position's trial when the design lacks it: a few questions at
    positions outside ``positions``, so read accuracy tables with their ``questions`` column), and for each
    ``n`` in ``padded`` the gold first among ``n - 1`` padding passages (contexts from :func:`study_contexts`)."""
    contexts = check_contexts(contexts)
    sizes = [args.whole_number(f"n_docs[{i}]", n, minimum=2) for i, n in enumerate(args.sequence("n_docs", n_docs))]
    positions = {n: tuple(range(1, n + 1)) for n in sizes} if positions is None else positions
    args.mapping("positions", positions, example="{5: [1, 2, 3, 4, 5], 10: [1, 5, 10]}")
    no_gold = args.sequence("no_gold", no_gold, example="[10]")
    padded = args.sequence("padded", padded, example="[10]")
    unknown = [n for n in [*positions, *ends, *no_gold, *padded] if n not in sizes]
    if unknown:
        raise ValueError(f"positions/ends/no_gold/padded name n_docs={unknown[0]}, which is not in n_docs={sizes}")
    if padded and any(len(c.get("padding", ())) < max(padded) - 1 for c in contexts):
        raise ValueError(f"padded={list(padded)} needs {max(padded) - 1} padding passages per context: use "
                         "study_contexts(), which adds them (padding_ids)")  # fmt: skip
    out = []
    for c in contexts:
        q = c["qid"], c["question"]
        out += [Trial(*q, "closed-book", 0, None, ()), Trial(*q, "oracle", 1, 1, (c["gold"],))]
        for n in sizes:
            if n in no_gold:
                out.append(Trial(*q, "no gold", n, None, tuple(arrange(c, 1, n)[1:])))
            wanted = list(positions.get(n, ()))
            if n in ends:
                wanted.append(retrieved_position(c, n))
            for p in dict.fromkeys(wanted):
                out.append(Trial(*q, "position", n, p, tuple(arrange(c, p, n))))
            if n in ends:
                ranked, order = arrange(c, retrieved_position(c, n), n), ends_order(n)
                gold_at = order.index(retrieved_position(c, n)) + 1
                out.append(Trial(*q, "ends", n, gold_at, tuple(ranked[r - 1] for r in order)))
            if n in padded:
                out.append(Trial(*q, "padded", n, 1, (c["gold"], *c["padding"][: n - 1])))
    return out


def trial_prompt(trial: Trial) -> str:
    """The prompt :func:`labkit.generation.reader.llm_reader` sends for ``trial`` (the lenient reader, or
    closed-book)."""
    if not hasattr(trial, "passages") or not hasattr(trial, "question"):
        raise ValueError(f"trial must be a Trial (from study_trials), got {type(trial).__name__} {trial!r:.60}")

    if not trial.passages:
        return rd.closed_book_prompt(trial.question)
    return rd.reader_prompt(trial.question, list(trial.passages), "lenient")


def run_study(trials: Sequence[Trial], reader: Callable[[str, Sequence[str]], str], model: str = ""):
    """One row per trial: qid, condition, n_docs, position, answer (and ``model`` when given)."""
    import pandas as pd

    trials = args.sequence("trials", trials, allow_empty=False, example="study_trials(contexts)")
    if not callable(reader):
        raise ValueError(f"reader must be a function reader(question, passages) -> answer, got {reader!r:.60}")
    rows = []
    for i, t in enumerate(trials):
        if not isinstance(t, Trial):
            raise ValueError(f"trials[{i}] must be a Trial from study_trials(...), got {type(t).__name__}")
        answer = reader(t.question, list(t.passages))
        if not isinstance(answer, str):
            raise ValueError(f"reader must return the answer as a string, got {type(answer).__name__} ({t.qid})")
        rows.append({"model": model, "qid": t.qid, "condition": t.condition, "n_docs": t.n_docs,
                     "position": t.position, "answer": answer})  # fmt: skip
    table = pd.DataFrame(rows)
    return table if model else table.drop(columns="model")


def add_check(table, check: Callable[[str, Any], Any], queries: Mapping[str, Any], column: str = "correct"):
    """A copy of ``table`` with ``column`` = ``check(answer, query)`` per row."""
    if not callable(check):
        raise ValueError("check must be a function check(answer, query), e.g. correctness.reference_rule()")
    args.mapping("queries", queries, example="{q.qid: q for q in load_queries()}")
    missing = sorted(set(table["qid"]) - set(queries))
    if missing:
        raise ValueError(f"queries has no query {missing[0]!r} (a row of the table)")
    return table.assign(**{column: [check(a, queries[q]) for a, q in zip(table["answer"], table["qid"], strict=True)]})


def scored_rows(table, column: str):
    """The rows of a study table that ``column`` (a check) could judge; a clear error if a column is missing."""
    args.table("table", table, example="run_study(...)")
    for col in ("qid", "condition", "n_docs", "position", column):
        if col not in table:
            raise ValueError(f"table needs a {col!r} column: run_study(...), then add_check(..., column={column!r})")
    return table[table[column].notna()]


def accuracy_by_position(table, column: str = "correct"):
    """Per (model,) condition, n_docs and position: questions, right answers, accuracy and its Wilson 95 %
    interval (:func:`labkit.measures.stats.wilson`). Rows whose check is None (cannot be judged) are left out."""
    import pandas as pd

    scored = scored_rows(table, column)
    keys = [k for k in ("model", "condition", "n_docs", "position") if k in scored]
    rows = []
    for key, group in scored.groupby(keys, dropna=False, sort=True):
        right = int(group[column].astype(bool).sum())
        p, low, high = stats.wilson(right, len(group))
        rows.append({**dict(zip(keys, key, strict=True)), "questions": len(group), "right": right,
                     "accuracy": p, "low": low, "high": high})  # fmt: skip
    return pd.DataFrame(rows).set_index(keys)


def _paired(a, b, seed: int) -> dict:

    diff = [x - y for x, y in zip(a, b, strict=True)]
    d, low, high = stats.bootstrap_ci(diff, seed=seed)
    return {"questions": len(diff), "difference": d, "low": low, "high": high}


def ends_and_middle(table, n_docs: int, column: str = "correct", middle: Sequence[int] | None = None):
    """Per question (index ``qid``): ``ends``, the mean verdict with the gold at positions 1 and ``n_docs``,
    and ``middle``, the mean at the ``middle`` positions (default: the other positions every question was tried
    at; a position only some questions have, such as the reordering's retrieved-position trials, is left out).
    ``frame.attrs["middle positions"]`` lists them. Questions missing position 1 or ``n_docs`` are left out."""
    n_docs = args.whole_number("n_docs", n_docs, minimum=3)
    scored = scored_rows(table, column)
    pos = scored[(scored["condition"] == "position") & (scored["n_docs"] == n_docs)]
    if "model" in pos and pos["model"].nunique() > 1:
        raise ValueError("table holds several models: pass one model's rows (table[table.model == name])")
    wide = pos.pivot_table(index="qid", columns="position", values=column, aggfunc="first")
    if 1 not in wide.columns or n_docs not in wide.columns:
        raise ValueError(f"the table needs positions 1 and {n_docs} for n_docs={n_docs}")
    wide = wide[wide[1].notna() & wide[n_docs].notna()]
    if middle is None:
        middle = [p for p in wide.columns if p not in (1, n_docs) and wide[p].notna().all()]
    middle = [args.whole_number("middle position", p, minimum=2, maximum=n_docs - 1) for p in middle]
    missing = [p for p in middle if p not in wide.columns or wide[p].isna().any()]
    if not middle or missing or wide.empty:
        raise ValueError(f"the table needs a middle position tried for every question (n_docs={n_docs})")
    frame = wide[[1, n_docs]].astype(float).mean(axis=1).to_frame("ends")
    frame["middle"] = wide[middle].astype(float).mean(axis=1)
    frame.attrs["middle positions"] = [int(p) for p in middle]
    return frame


def ends_vs_middle(
    table, n_docs: int, column: str = "correct", middle: Sequence[int] | None = None, seed: int = SEED
) -> dict:
    """Per question, accuracy with the gold at the two ends minus accuracy in the middle
    (:func:`ends_and_middle`); the mean over questions with a paired bootstrap 95 % interval. A U shows as a
    difference whose interval lies above 0."""
    frame = ends_and_middle(table, n_docs, column, middle)
    return {"ends": float(frame["ends"].mean()), "middle": float(frame["middle"].mean()),
            "middle positions": frame.attrs["middle positions"],
            **_paired(frame["ends"], frame["middle"], seed)}  # fmt: skip


def reorder_effect(table, contexts: Sequence[dict], n_docs: int, column: str = "correct", seed: int = SEED) -> dict:
    """The "best at both ends" order against the retrieved order, paired per question.

    ``as retrieved``: the ``position`` trial at :func:`retrieved_position`; ``ends``: the ``ends`` trial.
    Also counts the questions each order alone gets right (McNemar's discordant pairs) and those whose gold
    does not move (retrieved first: only the distractors are rearranged).
    """
    contexts = check_contexts(contexts)
    n_docs = args.whole_number("n_docs", n_docs, minimum=2)
    scored = scored_rows(table, column)
    if "model" in scored and scored["model"].nunique() > 1:
        raise ValueError("table holds several models: pass one model's rows (table[table.model == name])")
    rows = scored[scored["n_docs"] == n_docs]
    at = {(r.qid, r.condition, r.position): bool(getattr(r, column)) for r in rows.itertuples()}
    before, after, still = [], [], 0
    for c in contexts:
        r = retrieved_position(c, n_docs)
        ends = [k for k in at if k[0] == c["qid"] and k[1] == "ends"]
        if (c["qid"], "position", r) not in at or not ends:
            continue
        before.append(at[(c["qid"], "position", r)])
        after.append(at[ends[0]])
        still += ends[0][2] == r
    if not before:
        raise ValueError(f"no question has both its retrieved-position and its ends trial at n_docs={n_docs}")
    out = {"as retrieved": sum(before) / len(before), "ends": sum(after) / len(after)}
    out.update(_paired([float(a) for a in after], [float(b) for b in before], seed))
    out.update({"only ends right": sum(a and not b for a, b in zip(after, before, strict=True)),
                "only as retrieved right": sum(b and not a for a, b in zip(after, before, strict=True)),
                "gold not moved": still})  # fmt: skip
    return out


def oracle_and_among(table, n_docs: int, column: str = "correct"):
    """Per question (index ``qid``): ``oracle``, the verdict with the gold passage alone, and ``among``, the
    mean verdict over the ``n_docs``-passage positions every question was tried at (position-blind: the same
    gold among ``n_docs - 1`` distractors, wherever it sits). Questions without an oracle trial are left out."""
    n_docs = args.whole_number("n_docs", n_docs, minimum=2)
    scored = scored_rows(table, column)
    if "model" in scored and scored["model"].nunique() > 1:
        raise ValueError("table holds several models: pass one model's rows (table[table.model == name])")
    oracle = scored[scored["condition"] == "oracle"].set_index("qid")[column]
    pos = scored[(scored["condition"] == "position") & (scored["n_docs"] == n_docs)]
    wide = pos.pivot_table(index="qid", columns="position", values=column, aggfunc="first")
    wide = wide.loc[wide.index.intersection(oracle.index), wide.notna().all(axis=0)]
    if wide.empty or wide.shape[1] == 0:
        raise ValueError(f"no question has both an oracle trial and positions tried for every question at "
                         f"n_docs={n_docs}")  # fmt: skip
    frame = oracle.loc[wide.index].astype(float).to_frame("oracle")
    frame["among"] = wide.astype(float).mean(axis=1)
    frame.attrs["positions"] = [int(p) for p in wide.columns]
    return frame


def distractor_cost(table, n_docs: int, column: str = "correct", seed: int = SEED) -> dict:
    """What the distractors cost: per question, the oracle verdict minus the mean verdict among distractors
    (:func:`oracle_and_among`); the mean over questions with a paired bootstrap 95 % interval."""
    frame = oracle_and_among(table, n_docs, column)
    return {"oracle": float(frame["oracle"].mean()), "among distractors": float(frame["among"].mean()),
            "positions": frame.attrs["positions"], **_paired(frame["oracle"], frame["among"], seed)}  # fmt: skip
