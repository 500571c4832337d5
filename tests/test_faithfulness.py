"""Claims, judges, calibration and the reader prompt: the source's example, fake judges, bad input."""

from __future__ import annotations

import json

import pytest

from labkit.data import toys
from labkit.generation import reader as rd
from labkit.judges import calibration, faithfulness
from labkit.judges.faithfulness import Verdict
from labkit.measures import stats


def fixed(verdicts):
    """A judge that answers the given verdicts in order (a stand-in for a model in unit tests)."""
    it = iter(verdicts)
    return lambda context, claim: Verdict(claim, next(it))


def test_the_source_example_scores_two_thirds_and_fails():
    r = faithfulness.faithfulness(toys.FAITH_ANSWER_VI, toys.FAITH_CONTEXT_VI, fixed(toys.FAITH_SOURCE_VERDICTS))
    assert len(r.claims) == 3 and round(r.score, 2) == 0.67 and r.status == "FAIL"
    assert faithfulness.mentions_entity(toys.FAITH_ANSWER_VI, [toys.FAITH_RELEVANCE_TERM_VI])
    assert faithfulness.faithfulness("One. Two.", "ctx", fixed(["supported", "supported"])).status == "PASS"


def test_split_claims_keeps_decimals_and_refuses_empty():
    assert faithfulness.split_claims("It costs 1.5 USD. Ask IT! Why? Because.") == [
        "It costs 1.5 USD.",
        "Ask IT!",
        "Why?",
        "Because.",
    ]
    # the toy's claims are data in labkit.data.toys (toys imports nothing above Data): the splitter must agree
    assert faithfulness.split_claims(toys.FAITH_ANSWER_EN) == list(toys.FAITH_CLAIMS_EN)
    with pytest.raises(ValueError, match="answer must not be empty"):
        faithfulness.split_claims("  ")
    with pytest.raises(ValueError, match="answer must be a string"):
        faithfulness.split_claims(None)


class FakeLLM:
    def __init__(self, reply):
        self.reply, self.prompts = reply, []

    def __call__(self, prompt, schema=None, max_tokens=None):
        self.prompts.append((prompt, schema, max_tokens))
        return self.reply


def test_judge_claim_reads_the_reply_and_counts_malformed_ones():
    ok = FakeLLM(json.dumps({"verdict": "contradicted", "quote": "15 days"}))
    v = faithfulness.judge_claim("Leave is 15 days.", "Leave is 20 days.", ok)
    assert (v.verdict, v.quote, v.error) == ("contradicted", "15 days", None)
    assert ok.prompts[0][1] == faithfulness.JUDGE_SCHEMA
    bad = faithfulness.judge_claim("ctx", "claim", FakeLLM("I think it is supported"))
    assert bad.verdict is None and "malformed LLM JSON" in bad.error
    odd = faithfulness.judge_claim("ctx", "claim", FakeLLM('{"verdict": "maybe", "quote": ""}'))
    assert odd.verdict is None and "unknown verdict" in odd.error
    r = faithfulness.faithfulness("A. B.", "ctx", faithfulness.model_judge(FakeLLM("not json")))
    assert r.status == "ERROR" and r.n_errors == 2 and r.score is None  # never NaN


def test_the_quote_guard_overrules_a_quote_that_is_not_in_the_context():
    invented = FakeLLM(json.dumps({"verdict": "supported", "quote": "Leave is 20 days."}))
    v = faithfulness.judge_claim("Leave is 15 days.", "Leave is 20 days.", invented, guard=True)
    assert v.verdict == "unsupported" and v.guarded
    real = FakeLLM(json.dumps({"verdict": "supported", "quote": "leave  IS 15 days"}))
    assert faithfulness.judge_claim("Leave is 15 days.", "You get 15 days.", real, guard=True).verdict == "supported"


def test_lexical_judge_needs_every_number():
    ctx = "Full-time employees have 15 days of annual leave."
    assert faithfulness.lexical_judge(ctx, "Employees have 15 days of annual leave.").supported
    assert not faithfulness.lexical_judge(ctx, "Employees have 20 days of annual leave.").supported


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="context must not be empty"):
        faithfulness.judge_prompt("", "claim")
    with pytest.raises(ValueError, match="window allows"):
        faithfulness.judge_prompt("word " * 3000, "claim")
    with pytest.raises(ValueError, match="required_terms must be a list"):
        faithfulness.mentions_entity("answer", "leave")
    with pytest.raises(ValueError, match="judge must be a function"):
        faithfulness.faithfulness("A.", "ctx", "1.5B")


def test_reader_prompts_and_dont_know():
    p = rd.reader_prompt("How long?", ["one", "two"], "strict")
    assert "[1] one\n\n[2] two" in p and rd.DONT_KNOW in p and p.endswith("Question: How long?\nAnswer:")
    assert rd.says_dont_know("I don’t know.") and not rd.says_dont_know("45 days.")
    with pytest.raises(ValueError, match="passages must not be empty"):
        rd.reader_prompt("q", [])
    with pytest.raises(ValueError, match="prompt must be one of"):
        rd.reader_prompt("q", ["p"], "polite")
    fake = FakeLLM("  45 days.  ")
    assert rd.llm_reader(fake)("q", ["p"]) == "45 days." and fake.prompts[0][2] == rd.MAX_TOKENS


def test_judge_report_separates_tpr_from_tnr():
    import pandas as pd

    labels = ["supported"] * 6 + ["unsupported"] * 3 + ["contradicted"]
    table = pd.DataFrame(
        {
            "label": labels,
            "always": ["supported"] * 10,
            "half": ["supported"] * 3 + ["unsupported"] * 3 + ["unsupported"] * 2 + ["supported", None],
        }
    )
    rep = stats.judge_report(table, ["always", "half"], truth="label", passes="supported")
    assert rep.loc["always", "TPR"] == 1 and rep.loc["always", "TNR"] == 0 and rep.loc["always", "accuracy"] == 0.6
    assert rep.loc["half", "TPR"] == 0.5 and rep.loc["half", "TNR"] == 0.75 and rep.loc["half", "errors"] == 1
    conf = calibration.confusion(table, "half")
    assert conf.loc["contradicted", "error"] == 1 and int(conf.values.sum()) == 10
    assert rep.loc["half", "TPR n"] == "3/6" and rep.loc["half", "TNR n"] == "3/4"
    assert rep.loc["half", "J"] == pytest.approx(0.25)
    assert rep.loc["always", "TNR 95%"] == "[0.00, 0.49]"  # Wilson at 0/4, never a zero-width interval
    with pytest.raises(ValueError, match="both passes and fails"):
        stats.judge_report(table[table["label"] == "supported"], ["always"], truth="label", passes="supported")


def test_stats_helpers():
    p, lo, hi = stats.wilson(0, 10)
    assert p == 0 and lo == pytest.approx(0, abs=1e-12) and 0.25 < hi < 0.35  # not degenerate at 0
    est, lo, hi = stats.bootstrap_ci([1, 0, 1, 1], n=500)
    assert est == 0.75 and 0 <= lo <= est <= hi <= 1
    assert stats.rogan_gladen(0.8, 0.9, 0.6) == pytest.approx(0.8)
    assert stats.rogan_gladen(0.5, 0.5, 0.5) is None  # a coin says nothing
    r = stats.judge_rates([True, True, False, False], [True, False, False, True])
    assert (r["TPR"], r["TNR"], r["accuracy"]) == (0.5, 0.5, 0.5)
    with pytest.raises(ValueError, match="successes must be <= 3"):
        stats.wilson(4, 3)
    with pytest.raises(ValueError, match="true_pass has 1: pair them"):
        stats.judge_rates([True, False], [True])
    with pytest.raises(ValueError, match=r"values\[1\] must be a finite number"):
        stats.bootstrap_ci([1, float("nan")])


def test_corrected_rate_recovers_a_known_truth():
    import numpy as np

    rng = np.random.default_rng(7)
    true = rng.random(400) < 0.6
    pred = np.where(true, rng.random(400) < 0.9, rng.random(400) < 0.3)  # TPR 0.9, TNR 0.7
    judged_true = rng.random(2000) < 0.5
    judged = np.where(judged_true, rng.random(2000) < 0.9, rng.random(2000) < 0.3)
    res = stats.corrected_rate_ci(judged.tolist(), pred.tolist(), true.tolist(), n=400)
    assert res["observed"] > 0.55  # biased upwards by the judge's false passes
    lo, hi = res["corrected_ci"]
    assert lo < 0.5 < hi and abs(res["corrected"] - 0.5) < 0.05
