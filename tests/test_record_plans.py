"""tools/record.py's plans for 04, 07, 08, 09 ask exactly the prompts the chapters replay, in an order that shares
prompt prefixes, and the estimate counts a shared prefix once. No model is called: the judge here is a test
double that records the prompts it is sent."""

import pytest

from labkit.generation import llm
from labkit.generation import reader as rd
from labkit.judges import correctness, faithfulness
from labkit.measures import triage
from labkit.studies import handbook as hb
from labkit.studies import position_study as ps


@pytest.fixture(scope="module")
def tool():
    from test_record_tool import _load_record  # tests/ is on the path: pytest puts each test's folder there

    return _load_record()


def _prompts(tool, name):
    return [r.prompt for r in tool.PLANS[name]()]


def test_the_estimate_counts_a_shared_prefix_once(tool):
    a, b = "x" * 4000 + "one", "x" * 4000 + "two"
    reuse = [tool.Request(llm.DEFAULT_MODEL, p, expect_tokens=0, reuse_prefix=True) for p in (a, b)]
    fresh = [tool.Request(llm.DEFAULT_MODEL, p, expect_tokens=0) for p in (a, b)]
    assert tool._seconds(reuse) == pytest.approx(tool._seconds(fresh) * (4003 + 3) / 8006)


def test_the_04_plans_are_the_position_study_sorted_for_prefix_reuse(tool):
    seen = []

    def fake(prompt, schema=None, max_tokens=None):  # records what the notebook's reader would ask
        seen.append((prompt, max_tokens))
        return "-"

    ps.run_study(ps.study_trials(ps.study_contexts()), rd.llm_reader(fake))
    plan = list(tool.PLANS["04-positions"]())
    assert sorted({p for p, _ in seen}) == [r.prompt for r in plan]  # every prompt once, in sorted order
    assert {m for _, m in seen} == {rd.MAX_TOKENS} and all(r.max_tokens == rd.MAX_TOKENS for r in plan)
    assert all(r.reuse_prefix and r.model == llm.DEFAULT_MODEL for r in plan)
    assert ps.N_QUESTIONS * 10 <= len(plan) <= ps.N_QUESTIONS * 11
    small = list(tool.PLANS["04-positions-0.5b"]())
    assert {r.prompt for r in small} < {r.prompt for r in plan} and {r.model for r in small} == {llm.SMALL_MODEL}
    assert len(small) == ps.N_QUESTIONS * 5


def test_07_answers_cover_every_query_and_reuse_the_06_answers(tool):
    answers = _prompts(tool, "07-answers")
    assert len(answers) == len(hb.handbook().queries) and answers == sorted(answers)
    assert set(_prompts(tool, "06-answers")) <= set(answers)
    sweep = _prompts(tool, "07-sweep")
    judgeable = [q for q in hb.reader_sample() if correctness.key_numbers(q.answer, q.search_text)]
    assert len(sweep) == len(judgeable) < len(hb.reader_sample()) and not set(sweep) & set(answers)
    small = list(tool.PLANS["09-answers"]())
    assert {r.model for r in small} == {llm.SMALL_MODEL}
    assert {r.prompt for r in small} == set(_prompts(tool, "06-answers"))


def test_07_judge_holds_every_judge_prompt_the_triage_of_recorded_answers_sends(tool):
    from labkit.retrieval.retrievers import make_run

    h = hb.handbook()
    sample = hb.reader_sample()
    seen = []

    def fake_judge_client(prompt, schema=None, max_tokens=None):  # a test double, not the judge's verdicts
        seen.append(prompt)
        return '{"verdict": "supported", "quote": ""}'

    corpus_texts = {d: doc.text for d, doc in h.corpus.items()}
    check = correctness.judge_check(faithfulness.model_judge(fake_judge_client), corpus_texts)
    run = make_run(h.hybrid, sample, 20)  # the case study's run: its top 3 are the reader's contexts
    reader = rd.llm_reader(llm.Replay(llm.DEFAULT_MODEL))  # the 120 answers chapter 06 recorded
    triage.reader_traces(sample, run, h.texts, h.qrels, reader, check, corpus_texts, hb.READER_K)
    plan = list(tool.PLANS["07-judge"]())
    assert seen and set(seen) <= {r.prompt for r in plan}
    assert all(
        r.schema == faithfulness.JUDGE_SCHEMA and r.max_tokens == faithfulness.JUDGE_MAX_TOKENS and r.reuse_prefix
        for r in plan
    )


def test_09_answers_are_the_prompts_the_cascade_asks_the_small_model(tool):
    from labkit.studies import cascade

    seen = []

    def fake(prompt, schema=None, max_tokens=None):  # records what chapter 09 would ask
        seen.append(prompt)
        return "-"

    h, sample = hb.handbook(), hb.reader_sample()
    contexts = {q: [h.texts[c] for c in ids] for q, ids in hb.reader_contexts(sample).items()}
    cascade.model_answers(sample, contexts, fake)
    assert sorted(seen) == _prompts(tool, "09-answers")
    seen.clear()
    ps.run_study(ps.study_trials(ps.study_contexts(), **ps.SMALL_DESIGN), rd.llm_reader(fake))
    assert sorted(set(seen)) == _prompts(tool, "04-positions-0.5b")


def test_the_04b_plans_ask_what_the_chapter_replays(tool):
    from labkit.judges import pointwise
    from labkit.studies import rerank_study as rs

    plan = list(tool.PLANS["04b-rerank"]())
    assert len(plan) == len(rs.model_questions()) * rs.MODEL_K1 == 300
    assert all(r.max_tokens == 1 and r.top_logprobs == pointwise.TOP_LOGPROBS and r.reuse_prefix for r in plan)
    assert [r.prompt for r in plan] == sorted(rs.model_prompts())  # a question's ten requests share their start
    answers = {r.prompt for r in tool.PLANS["04b-answers"]()}
    assert answers == {p for name in rs.RERANKERS for p in rs.reader_prompts(name).values()}
    assert answers & set(_prompts(tool, "07-answers"))  # a top 3 the reranker left alone is 07's request


def test_10_plans_ask_what_chapter_10_replays(tool):
    from labkit.studies import capstone

    generate, answers = list(tool.PLANS["10-generate"]()), list(tool.PLANS["10-answers"]())
    assert len(generate) == capstone.N_GENERATED and all(r.schema for r in generate)
    assert all("the Python 3.11 documentation" in r.prompt for r in generate + answers)
    assert len(answers) == len(capstone.setting().queries) and [r.prompt for r in answers] == sorted(
        r.prompt for r in answers
    )


def test_the_thin_item_plans_ask_what_chapters_02_06_08_replay(tool):
    """06-relevance-swap, 08-rewrite, 02-fact-first and 02-domain build their prompts with the functions the
    chapters call (a test double records what those functions ask)."""
    from labkit.generation import fact_first, rewriter
    from labkit.judges import domain
    from labkit.studies import relevance_pairs
    from labkit.studies.domain_data import domain_sample
    from labkit.studies.synth_data import targets

    def asked(fn):
        seen = []

        def fake(prompt, schema=None, max_tokens=None):
            seen.append((prompt, max_tokens))
            return "{}"

        fn(fake)
        return seen

    def keys(name):
        return [(r.prompt, r.max_tokens) for r in tool.PLANS[name]()]

    pairs = relevance_pairs.mismatched()
    assert keys("06-relevance-swap") == asked(
        lambda m: [faithfulness.judge_relevance(p["question"], p["answer"], m) for p in pairs]
    )
    follow_ups = [q for q in hb.handbook().queries if q.rewritten]
    assert keys("08-rewrite") == asked(lambda m: [rewriter.rewrite(q.history, q.question, m) for q in follow_ups])
    h = hb.handbook()
    texts = {d: doc.text for d, doc in h.corpus.items()}
    first = targets()[: fact_first.N_FACT_FIRST]
    assert keys("02-fact-first") == asked(lambda m: [fact_first.generate_fact_first(c, texts[c.doc], m) for c in first])
    sample = domain_sample()
    assert keys("02-domain") == asked(lambda m: [domain.judge_domain(r["question"], m) for r in sample])
