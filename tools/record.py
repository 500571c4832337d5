"""Record the language-model responses the chapters replay: planned, resumable, in batches.

    python tools/record.py --plan                 # every plan: prompts, already recorded, estimated time
    python tools/record.py 06-answers             # record one plan (appends to data/llm/<model>.jsonl)
    python tools/record.py 06-answers --limit 20  # at most 20 new responses, then stop (a batch)
    python tools/record.py 06                     # every plan of chapter 06, in order

Each plan builds its requests with the same labkit functions the notebook calls, so the keys match. A plan
whose inputs are earlier responses (the judges need the answers) lists only what it can build now. Recording
appends one line per response at once: stop at any moment and run again to resume. Nothing is recorded in
replay, and the same prompt is never recorded twice.

Estimated seconds use the speeds fitted to the model's own recordings (their tokens and seconds), or, before
there are 20 of them, the speeds measured on 2 cores (``SPEED``; 1.5B: ~95 prompt and ~27 generated tokens/s;
0.5B: ~170 / ~40, as README.md states), with ~4 characters a token and the plan's typical answer length.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from labkit.generation import llm  # noqa: E402
from labkit.generation import reader as rd  # noqa: E402
from labkit.judges import faithfulness, pointwise  # noqa: E402
from labkit.studies import faithfulness_data as fdata  # noqa: E402
from labkit.studies import handbook as hb  # noqa: E402

SPEED = {llm.DEFAULT_MODEL: (95.0, 27.0), llm.SMALL_MODEL: (170.0, 40.0)}


@dataclass(frozen=True)
class Request:
    model: str
    prompt: str
    schema: dict | None = None
    max_tokens: int | None = None
    expect_tokens: int = 60  # typical completion length, for the estimate
    reuse_prefix: bool = False
    top_logprobs: int | None = None

    @property
    def key(self) -> str:
        return llm.prompt_key(
            self.model, self.prompt, schema=self.schema, max_tokens=self.max_tokens, top_logprobs=self.top_logprobs
        )

    def seconds(self) -> float:
        p, g = _speed(self.model)
        return len(self.prompt) / 4 / p + self.expect_tokens / g


_FITTED: dict[str, tuple[float, float]] = {}


def _speed(model: str) -> tuple[float, float]:
    """(prompt, generated) tokens per second: fitted to this model's recordings when there are enough
    (seconds ≈ prompt_tokens / p + completion_tokens / g, least squares), else the measured ``SPEED``."""
    if model not in _FITTED:
        import numpy as np

        rows = [r.get("provenance") or {} for r in _replay(model).rows.values()]
        rows = [r for r in rows if r.get("seconds") and r.get("prompt_tokens") and r.get("completion_tokens")]
        _FITTED[model] = SPEED[model]
        if len(rows) >= 20:
            x = np.array([[r["prompt_tokens"], r["completion_tokens"]] for r in rows], dtype=float)
            y = np.array([r["seconds"] for r in rows], dtype=float)
            (a, b), *_ = np.linalg.lstsq(x, y, rcond=None)
            if a > 0 and b > 0:
                _FITTED[model] = (1 / a, 1 / b)
    return _FITTED[model]


def _replay(model: str) -> llm.Replay:
    return llm.Replay(model)


# ----------------------------------------------------------------------------- chapter 00


def plan_00() -> Iterator[Request]:
    from labkit.data.toys import WELCOME_PROMPT

    for model in (llm.DEFAULT_MODEL, llm.SMALL_MODEL):
        yield Request(model, WELCOME_PROMPT, max_tokens=80, expect_tokens=40)


# ----------------------------------------------------------------------------- chapter 06


def _contexts():
    h = hb.handbook()
    sample = hb.reader_sample()
    ctx = hb.reader_contexts(sample)
    return h, sample, ctx


def plan_06_answers() -> Iterator[Request]:
    h, sample, ctx = _contexts()
    for q in sample:
        passages = [h.texts[c] for c in ctx[q.qid]]
        yield Request(llm.DEFAULT_MODEL, rd.reader_prompt(q.search_text, passages, "lenient"), None, rd.MAX_TOKENS, 60)


def plan_06_swap() -> Iterator[Request]:
    """Context swapping: each question with another department's passages, lenient and strict prompts."""
    from labkit.studies.faithfulness_data import swap_sample

    h, sample, ctx = _contexts()
    for q, partner in swap_sample():
        swapped = [h.texts[c] for c in ctx[partner]]
        yield Request(llm.DEFAULT_MODEL, rd.reader_prompt(q.search_text, swapped, "lenient"), None, rd.MAX_TOKENS, 60)
        yield Request(llm.DEFAULT_MODEL, rd.reader_prompt(q.search_text, swapped, "strict"), None, rd.MAX_TOKENS, 20)


def plan_06_strict() -> Iterator[Request]:
    """The control: the strict prompt with the true passages (does it still answer?), dev questions."""
    from labkit.studies.faithfulness_data import swap_sample

    h, sample, ctx = _contexts()
    for q, _ in swap_sample():
        if q.split != "dev":
            continue
        true_p = [h.texts[c] for c in ctx[q.qid]]
        yield Request(llm.DEFAULT_MODEL, rd.reader_prompt(q.search_text, true_p, "strict"), None, rd.MAX_TOKENS, 60)


def plan_06_toy() -> Iterator[Request]:
    """The source's leave example (in English) and the 20-days claim, judged by both models."""
    from labkit.data import toys

    for model in (llm.DEFAULT_MODEL, llm.SMALL_MODEL):
        for claim in toys.TOY_CLAIMS:
            yield Request(
                model,
                faithfulness.judge_prompt(toys.FAITH_CONTEXT_EN, claim),
                faithfulness.JUDGE_SCHEMA,
                faithfulness.JUDGE_MAX_TOKENS,
                30,
            )


def _claims_to_judge() -> Iterator[tuple[str, str]]:
    """(context, claim) for every claim of every recorded answer and every rater-labelled claim, grouped by
    context so that consecutive requests share the judge's rules and context (llama.cpp reuses that prefix)."""
    from labkit.studies.faithfulness_data import answered, labelled_claims

    by_context: dict[str, list[str]] = {}
    for row in answered():
        for claim in faithfulness.split_claims(row["answer"]):
            by_context.setdefault(row["context"], []).append(claim)
    for row in labelled_claims():
        by_context.setdefault(row["context"], []).append(row["claim"])
    for context, claims in by_context.items():
        for claim in dict.fromkeys(claims):
            yield context, claim


def _plan_judge(model: str, pairs=None) -> Iterator[Request]:
    """Chapter 06's judge on each ``(context, claim)`` (default: the recorded answers' and the rater-labelled
    claims); consecutive requests on one context share the rules and the context (llama.cpp reuses that prefix)."""
    for context, claim in _claims_to_judge() if pairs is None else pairs:
        yield Request(
            model,
            faithfulness.judge_prompt(context, claim),
            faithfulness.JUDGE_SCHEMA,
            faithfulness.JUDGE_MAX_TOKENS,
            30,
            True,
        )


def plan_06_judge_15() -> Iterator[Request]:
    yield from _plan_judge(llm.DEFAULT_MODEL)


def plan_06_judge_05() -> Iterator[Request]:
    yield from _plan_judge(llm.SMALL_MODEL)


def _constructed_pairs() -> Iterator[tuple[str, str]]:
    """Every claim labelled by construction (labkit.judges.construction) with its context, in context order."""
    return ((row["context"], row["claim"]) for row in fdata.constructed_claims())


def plan_06_construction_15() -> Iterator[Request]:
    yield from _plan_judge(llm.DEFAULT_MODEL, _constructed_pairs())


def plan_06_construction_05() -> Iterator[Request]:
    yield from _plan_judge(llm.SMALL_MODEL, _constructed_pairs())


def plan_06_relevance() -> Iterator[Request]:
    """The model relevance judge, for the dev split's recorded answers (1.5B)."""
    from labkit.studies.faithfulness_data import answered

    for row in [r for r in answered() if r["split"] == "dev"][: fdata.N_EXTRA]:
        yield Request(
            llm.DEFAULT_MODEL,
            faithfulness.relevance_prompt(row["question"], row["answer"]),
            faithfulness.RELEVANCE_SCHEMA,
            20,
            8,
        )


def plan_06_relevance_swap() -> Iterator[Request]:
    """The same relevance judge on each judged question with an answer written for another department's question
    (labkit.studies.relevance_pairs): irrelevant by construction, the labels 06-relevance lacks (1.5B)."""
    from labkit.studies.relevance_pairs import mismatched

    for row in mismatched():
        yield Request(
            llm.DEFAULT_MODEL,
            faithfulness.relevance_prompt(row["question"], row["answer"]),
            faithfulness.RELEVANCE_SCHEMA,
            20,
            8,
            True,
        )


def plan_06_atomic() -> Iterator[Request]:
    """Atomic claims of the dev split's recorded answers (1.5B)."""
    from labkit.studies.faithfulness_data import answered

    for row in [r for r in answered() if r["split"] == "dev"][: fdata.N_EXTRA]:
        prompt = faithfulness.ATOMIC_PROMPT.format(answer=row["answer"].strip())
        yield Request(llm.DEFAULT_MODEL, prompt, faithfulness.ATOMIC_SCHEMA, faithfulness.ATOMIC_MAX_TOKENS, 60)


# ----------------------------------------------------------------------------- chapter 02


def plan_02_easy() -> Iterator[Request]:
    from labkit.generation import synth
    from labkit.studies.synth_data import kinds_of, targets

    h = hb.handbook()
    for c in [c for i, c in enumerate(targets()) if "easy" in kinds_of(i)]:
        prompt = synth.generate_prompt(h.corpus[c.doc].text[c.start_char : c.end_char])
        yield Request(llm.DEFAULT_MODEL, prompt, synth.QA_SCHEMA, synth.QA_MAX_TOKENS, 70)


def plan_02_hard() -> Iterator[Request]:
    from labkit.generation import synth
    from labkit.studies.synth_data import distractors_for, method_of, targets

    h = hb.handbook()
    for i, c in enumerate(targets()):
        ds = distractors_for(c, method_of(i))
        text = lambda ch: h.corpus[ch.doc].text[ch.start_char : ch.end_char]  # noqa: E731
        prompt = synth.hard_prompt(text(c), [text(d) for d in ds])
        yield Request(llm.DEFAULT_MODEL, prompt, synth.QA_SCHEMA, synth.QA_MAX_TOKENS, 70)


def plan_02_realism() -> Iterator[Request]:
    """The few-shot rater on the held-out rater-rated questions, then on every generated question."""
    from labkit.generation import synth
    from labkit.studies.synth_data import generated, realism_labels

    shots = realism_labels("fewshot")
    questions = [r["question"] for r in realism_labels("heldout")] + [r["question"] for r in generated()]
    for q in questions:
        yield Request(llm.DEFAULT_MODEL, synth.realism_prompt(q, shots), synth.RATING_SCHEMA, 20, 8, True)


def plan_02_fact_first() -> Iterator[Request]:
    """The fact-first prompt (labkit.generation.fact_first) on the first N_FACT_FIRST targets of 02's seeded order."""
    from labkit.generation import fact_first, synth
    from labkit.studies.synth_data import targets

    h = hb.handbook()
    for c in targets()[: fact_first.N_FACT_FIRST]:
        prompt = fact_first.fact_first_prompt(h.corpus[c.doc].text[c.start_char : c.end_char])
        yield Request(llm.DEFAULT_MODEL, prompt, fact_first.FACT_SCHEMA, synth.QA_MAX_TOKENS, 70)


def plan_02_domain() -> Iterator[Request]:
    """The domain-only rating (labkit.judges.domain) on its seeded sample: handbook questions and Python FAQ ones."""
    from labkit.judges import domain
    from labkit.studies.domain_data import domain_sample

    for row in domain_sample():
        yield Request(
            llm.DEFAULT_MODEL, domain.domain_prompt(row["question"]), domain.DOMAIN_SCHEMA, domain.DOMAIN_MAX_TOKENS,
            8, True,
        )  # fmt: skip


# ----------------------------------------------------------------------------- chapter 08: the query rewriter


def plan_08_rewrite() -> Iterator[Request]:
    """The 1.5B as the rewriting step: one request per conversational follow-up (history and the follow-up)."""
    from labkit.generation import rewriter

    for q in hb.handbook().queries:
        if q.history:
            prompt = rewriter.rewrite_prompt(q.history, q.question)
            yield Request(llm.DEFAULT_MODEL, prompt, rewriter.REWRITE_SCHEMA, rewriter.REWRITE_MAX_TOKENS, 30, True)


# ----------------------------------------------------------------------------- chapters 04, 07, 08, 09: the reader
# Every request keeps llama.cpp's prompt cache (reuse_prefix) and the plans are sorted by prompt text: a sorted
# list walks the prompts' prefix tree depth first, so each prompt only pays for what it does not share with the
# one before. Two recorders on one plan: one forward, one with --reverse (--shard would break the runs of shared
# prefixes). data/llm/README.md has the sizing and the order.


def _sorted(requests) -> list[Request]:
    return sorted({r.prompt: r for r in requests}.values(), key=lambda r: r.prompt)


def _plan_04(model: str, design: dict) -> Iterator[Request]:
    """Chapter 04's position study (labkit.studies.position_study): 80 questions, the trials of ``design``."""
    from labkit.studies import position_study as ps

    trials = ps.study_trials(ps.study_contexts(), **design)
    yield from _sorted(Request(model, ps.trial_prompt(t), None, rd.MAX_TOKENS, 20, True) for t in trials)


def plan_04_positions() -> Iterator[Request]:
    """The 1.5B on every trial of the chapter's design (position_study's defaults)."""
    yield from _plan_04(llm.DEFAULT_MODEL, {})


def plan_04_positions_05() -> Iterator[Request]:
    """The 0.5B on position_study.SMALL_DESIGN: closed-book, oracle, ten passages with the gold at 1, 5, 10."""
    from labkit.studies.position_study import SMALL_DESIGN

    yield from _plan_04(llm.SMALL_MODEL, SMALL_DESIGN)


def plan_04_padding() -> Iterator[Request]:
    """The padding control (position_study.PADDING_DESIGN) for both models: the gold first among nine padding
    passages; their closed-book and oracle trials are already in 04-positions and 04-positions-0.5b."""
    from labkit.studies.position_study import PADDING_DESIGN

    yield from _plan_04(llm.SMALL_MODEL, PADDING_DESIGN)
    yield from _plan_04(llm.DEFAULT_MODEL, PADDING_DESIGN)


def _reader_pairs(model: str, questions, k: int) -> Iterator[tuple]:
    """(query, request): chapter 06's lenient reader over the hybrid's top ``k`` (06-answers' prompts at k = 3)."""
    h = hb.handbook()
    ctx = hb.reader_contexts(questions, k)
    for q in questions:
        prompt = rd.reader_prompt(q.search_text, [h.texts[c] for c in ctx[q.qid]], "lenient")
        yield q, Request(model, prompt, None, rd.MAX_TOKENS, 20, True)


def _reader_requests(model: str, questions, k: int) -> Iterator[Request]:
    return (r for _, r in _reader_pairs(model, questions, k))


def plan_07_answers() -> Iterator[Request]:
    """The 1.5B reader on every handbook query at the case study's k = 3 (06's 120 answers are among them)."""
    yield from _sorted(_reader_requests(llm.DEFAULT_MODEL, hb.handbook().queries, hb.READER_K))


def plan_07_sweep() -> Iterator[Request]:
    """The 1.5B reader at k = 5 on the questions of 06's 120-question sample that the reference-number rule can
    judge (k = 3 is 07-answers): answers_data.sweep_questions; their answers are rater-labelled as well."""
    from labkit.studies.answers_data import SWEEP_K, sweep_questions

    yield from _sorted(_reader_requests(llm.DEFAULT_MODEL, sweep_questions(), SWEEP_K))


def plan_09_answers() -> Iterator[Request]:
    """The 0.5B reader at k = 3 on 06's 120-question sample: the cascade's small model."""
    yield from _sorted(_reader_requests(llm.SMALL_MODEL, hb.reader_sample(), hb.READER_K))


def _plan_correctness(model: str, questions, ks) -> Iterator[Request]:
    """The 1.5B judge's correctness verdicts (labkit.judges.correctness.judged) on ``model``'s recorded answers:
    every claim against the reference answer and gold spans. Answers not recorded yet are left out."""
    from labkit.judges import correctness

    h = hb.handbook()
    corpus_texts = {d: doc.text for d, doc in h.corpus.items()}
    replay = _replay(model)
    prompts = []
    for k in ks:
        for q, r in _reader_pairs(model, questions, k):
            if r.key in replay.rows:
                prompts += correctness.judge_prompts(replay.rows[r.key]["response"].strip(), q, corpus_texts)
    judge = llm.DEFAULT_MODEL
    yield from _sorted(
        Request(judge, p, faithfulness.JUDGE_SCHEMA, faithfulness.JUDGE_MAX_TOKENS, 40, True) for p in prompts
    )


def plan_07_judge() -> Iterator[Request]:
    yield from _plan_correctness(llm.DEFAULT_MODEL, hb.handbook().queries, (hb.READER_K,))


def plan_09_judge() -> Iterator[Request]:
    yield from _plan_correctness(llm.SMALL_MODEL, hb.reader_sample(), (hb.READER_K,))


# ----------------------------------------------------------------------------- chapter 04b: the second stage


def plan_04b_rerank() -> Iterator[Request]:
    """The 1.5B as a pointwise reranker (labkit.judges.pointwise) of the hybrid's top rs.MODEL_K1 for the test
    questions of the reader sample: one one-token request per (question, passage), the question first."""
    from labkit.studies import rerank_study as rs

    yield from _sorted(
        Request(llm.DEFAULT_MODEL, p, None, 1, 1, True, pointwise.TOP_LOGPROBS) for p in rs.model_prompts()
    )


def plan_04b_answers() -> Iterator[Request]:
    """The 1.5B reader (07's lenient prompt, k = 3) over each reranker's top 3 of the 60 questions; a top 3 equal to
    the hybrid's is 07-answers' prompt, already recorded. The model reranker's questions join as its scores do."""
    from labkit.studies import rerank_study as rs

    prompts = []
    for name in rs.RERANKERS:
        try:
            prompts += rs.reader_prompts(name).values()
        except llm.MissingRecording:
            rs.model_scored.cache_clear()
            print(f"04b-answers: {name}'s scores are not all recorded yet (plan 04b-rerank); its prompts wait")
    yield from _sorted(Request(llm.DEFAULT_MODEL, p, None, rd.MAX_TOKENS, 20, True) for p in prompts)


def plan_07_fixes() -> Iterator[Request]:
    """Three rounds of prompt fixes on a seeded 30 RET_FAIL and 30 GEN_FAIL traces (labkit.studies.trace_checks)."""
    from labkit.studies import trace_checks

    yield from _sorted(Request(llm.DEFAULT_MODEL, p, None, rd.MAX_TOKENS, 40, True)
                       for *_, p in trace_checks.requests()["07-fixes"])  # fmt: skip


def plan_08_swap() -> Iterator[Request]:
    """Every LUCKY trace and as many OK ones answered over another question's passages (trace_checks)."""
    from labkit.studies import trace_checks

    yield from _sorted(Request(llm.DEFAULT_MODEL, p, None, rd.MAX_TOKENS, 30, True)
                       for *_, p in trace_checks.requests()["08-swap"])  # fmt: skip


class _Capture:
    """A stand-in model that keeps every request a function makes (and answers "{}"), so a plan asks exactly
    what the chapter's function will ask the replayed model."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def __call__(self, prompt: str, schema: dict | None = None, max_tokens: int | None = None, **_: object) -> str:
        self.calls.append((prompt, schema, max_tokens))
        return "{}"


def plan_10_generate() -> Iterator[Request]:
    """Chapter 10: the 1.5B writes one question per seeded target chunk of the bundled Python documentation."""
    from labkit.studies import capstone

    cap = _Capture()
    capstone.generated(capstone.setting(), cap)
    yield from (Request(llm.DEFAULT_MODEL, p, schema, tokens, 70) for p, schema, tokens in cap.calls)


def plan_10_answers() -> Iterator[Request]:
    """Chapter 10: the 1.5B reader answers every labelled FAQ question over the hybrid's top 3."""
    from labkit.studies import capstone

    cap = _Capture()
    capstone.answers(capstone.setting(), cap)
    yield from _sorted(Request(llm.DEFAULT_MODEL, p, schema, tokens, 50, True) for p, schema, tokens in cap.calls)


PLANS = {
    "00-welcome": plan_00,
    "06-answers": plan_06_answers,
    "06-toy": plan_06_toy,
    "06-swap": plan_06_swap,
    "06-strict": plan_06_strict,
    "06-judge-1.5b": plan_06_judge_15,
    "06-judge-0.5b": plan_06_judge_05,
    "06-relevance": plan_06_relevance,
    "06-construction-1.5b": plan_06_construction_15,
    "06-construction-0.5b": plan_06_construction_05,
    "06-atomic": plan_06_atomic,
    "06-relevance-swap": plan_06_relevance_swap,
    "02-easy": plan_02_easy,
    "02-hard": plan_02_hard,
    "02-realism": plan_02_realism,
    "02-fact-first": plan_02_fact_first,
    "02-domain": plan_02_domain,
    "07-answers": plan_07_answers,
    "07-judge": plan_07_judge,
    "04-positions": plan_04_positions,
    "09-answers": plan_09_answers,
    "09-judge": plan_09_judge,
    "04-positions-0.5b": plan_04_positions_05,
    "07-sweep": plan_07_sweep,
    "04-padding": plan_04_padding,
    "04b-rerank": plan_04b_rerank,
    "04b-answers": plan_04b_answers,
    "07-fixes": plan_07_fixes,
    "08-swap": plan_08_swap,
    "08-rewrite": plan_08_rewrite,
    "10-generate": plan_10_generate,
    "10-answers": plan_10_answers,
}


def _seconds(todo: list[Request]) -> float:
    """Estimated seconds for ``todo`` in plan order: with ``reuse_prefix`` a prompt only pays for the characters
    it does not share with the one recorded before it (one llama.cpp cache per model, as in :func:`record`)."""
    import os

    total, prev = 0.0, ""
    for r in todo:
        shared = len(os.path.commonprefix([prev, r.prompt])) if r.reuse_prefix else 0
        p, g = _speed(r.model)
        total += (len(r.prompt) - shared) / 4 / p + r.expect_tokens / g
        prev = r.prompt if r.reuse_prefix else ""
    return total


def estimate(names: list[str]) -> None:
    print(f"{'plan':16} {'model':36} {'prompts':>8} {'recorded':>9} {'to do':>6} {'est. min':>9}")
    total = 0.0
    for name in names:
        reqs = list(PLANS[name]())
        by_model: dict[str, list[Request]] = {}
        for r in reqs:
            by_model.setdefault(r.model, []).append(r)
        for model, rs in by_model.items():
            have = _replay(model).rows
            todo = [r for r in rs if r.key not in have]
            minutes = _seconds(todo) / 60
            total += minutes
            print(f"{name:16} {model:36} {len(rs):8d} {len(rs) - len(todo):9d} {len(todo):6d} {minutes:9.1f}")
    print(f"{'total':16} {'':36} {'':8} {'':9} {'':6} {total:9.1f}")
    for model in SPEED:
        p, g = _speed(model)
        print(f"speeds used for {model}: {p:.0f} prompt / {g:.0f} generated tokens per second")


def record(name: str, limit: int | None, shard: tuple[int, int] = (1, 1), reverse: bool = False, client=None) -> None:
    """Record plan ``name``. ``client(model, reuse_prefix)`` makes the model client (default: the local model in
    process; tests pass a scripted fake)."""
    if client is None:
        from labkit.generation.llm.local import Local

        def client(model: str, reuse_prefix: bool):
            return Local(model, reuse_prefix=reuse_prefix)

    clients: dict[tuple[str, bool], llm.Recorder] = {}
    done = 0
    t0 = time.perf_counter()
    k, n = shard
    requests = [r for i, r in enumerate(PLANS[name]()) if i % n == k - 1]
    for r in reversed(requests) if reverse else requests:
        rec = clients.get((r.model, r.reuse_prefix))
        if rec is None:
            rec = clients[(r.model, r.reuse_prefix)] = llm.Recorder(client(r.model, r.reuse_prefix))
        rec.replay.refresh()  # a recorder working from the other end may have recorded it meanwhile
        if r.key in rec.replay.rows:
            continue
        if limit is not None and done >= limit:
            break
        c = rec.complete(r.prompt, schema=r.schema, max_tokens=r.max_tokens, top_logprobs=r.top_logprobs)
        done += 1
        print(
            f"[{name}] {done:4d} {c.seconds:6.1f}s {c.prompt_tokens:5d}+{c.completion_tokens:<4d} {c.text[:70]!r}",
            flush=True,
        )
    print(f"[{name}] recorded {done} responses in {(time.perf_counter() - t0) / 60:.1f} min", flush=True)


def add_digests(paths: list[str]) -> int:
    """``--add-digests``: the migration of cassettes recorded before lines carried a digest."""
    from labkit import data_dir

    files = [Path(p) for p in paths] or sorted((data_dir() / "llm").glob("*.jsonl"))
    for path in files:
        added, had = llm.cassette.add_digests(path)
        print(f"{path.name}: {added} lines given a digest, {had} had one")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("plans", nargs="*", help=f"plans to record: {', '.join(PLANS)}")
    ap.add_argument("--plan", action="store_true", help="print what each plan would record and how long it takes")
    ap.add_argument("--limit", type=int, default=None, help="record at most this many new responses per plan")
    ap.add_argument(
        "--shard",
        default="1/1",
        metavar="K/N",
        help="record only every N-th request, starting at the K-th: run 1/2 and 2/2 in two processes, one per core",
    )
    ap.add_argument(
        "--reverse",
        action="store_true",
        help="record from the last request backwards: run one process forward and one with --reverse, one per "
        "core, and they meet in the middle (each re-reads the cassette before every request)",
    )
    ap.add_argument(
        "--add-digests",
        nargs="*",
        metavar="CASSETTE",
        default=None,
        help="give every line of the cassettes (default: data/llm/*.jsonl) its digest, adding that field only; "
        "idempotent. Lines recorded by this labkit have one already; replay asks for this on older lines",
    )
    a = ap.parse_args(argv)
    if a.add_digests is not None:
        return add_digests(a.add_digests)
    try:
        k, n = (int(x) for x in a.shard.split("/"))
        if not 1 <= k <= n:
            raise ValueError
    except ValueError:
        ap.error(f"--shard must be K/N with 1 <= K <= N, like 1/2; got {a.shard!r}")
    # a chapter number stands for all its plans, in order: `record.py 06`
    expanded = {p: [p] if p in PLANS else [n for n in PLANS if n.startswith(p + "-")] for p in a.plans}
    unknown = [p for p, names in expanded.items() if not names]
    a.plans = [n for names in expanded.values() for n in names]
    if unknown:
        ap.error(f"unknown plan(s) {unknown}; choose from {list(PLANS)}")
    if a.plan or not a.plans:
        estimate(a.plans or list(PLANS))
        return 0
    for name in reversed(a.plans) if a.reverse else a.plans:
        record(name, a.limit, (k, n), a.reverse)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
