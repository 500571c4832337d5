"""labkit.judges.correctness: the reference-number rule, the judge against the gold, and bad input. No model is called:
the judges here are plain functions returning fixed text, test doubles only."""

import pytest

from labkit.data.corpus import Query, Span
from labkit.judges import correctness, faithfulness

DOC = "Lodging caps per night: | Singapore | 230 | 75 | 30 |. Replacement badges cost SGD 15."
TEXTS = {"fin": DOC}


def _query(answer="USD 230 per night.", question="What is the lodging cap in Singapore in 2025?", gold=None):
    gold = gold or (Span("fin", 24, 53, 3), Span("fin", 55, 86, 2), Span("fin", 0, 5, 1))
    return Query("fin-e02", question, answer, "easy", "fact", "dev", gold)


def test_key_numbers_drop_what_the_question_already_says_and_thousands_separators():
    assert correctness.key_numbers("USD 230 per night.", "cap in 2025?") == ["230"]
    assert correctness.key_numbers("200,000 VND or SGD 15, then 15 again.") == ["200000", "15"]
    assert correctness.key_numbers("ERR-4031 means the 90-day certificate expired.", "What does ERR-4031 mean?") == [
        "90"
    ]
    assert correctness.key_numbers("Version 1.5 is current.") == ["1.5"]
    assert correctness.key_numbers("Economy.", "under 6 hours") == []


def test_reference_check_first_all_and_none():
    ref, q = "30 minutes, 24/7 (resolution target 4 hours).", "What is the P1 first response target?"
    assert correctness.reference_check("Within 30 minutes.", ref, q) is True
    assert correctness.reference_check("Within 30 minutes.", ref, q, rule="all") is False
    assert correctness.reference_check("30 minutes, 24/7, resolved in 4 hours.", ref, q, rule="all") is True
    assert correctness.reference_check("One business day.", ref, q) is False
    assert correctness.reference_check("Anything.", "Economy.", q) is None  # no key number: the rule cannot judge
    assert correctness.reference_check("It costs 200000 VND.", "200,000 VND.", "") is True
    check = correctness.reference_rule()
    assert check("The cap is 230 USD.", _query()) is True and check("It is 120 USD.", _query()) is False


def test_gold_context_holds_the_reference_and_the_gold_spans_from_grade_2():
    ctx = correctness.gold_context(_query(), TEXTS)
    assert ctx.startswith("Reference answer: USD 230 per night.")
    assert "| Singapore | 230 | 75 | 30 |" in ctx and "Replacement badges cost SGD 15." in ctx
    assert "Lodg" not in ctx  # the grade-1 span is left out
    assert "Replacement" not in correctness.gold_context(_query(), TEXTS, min_grade=3)


def test_the_judge_sees_exactly_the_prompts_judge_prompts_lists():
    seen = []

    def fake_client(prompt, schema=None, max_tokens=None):  # a test double, not a model's output
        seen.append(prompt)
        return '{"verdict": "supported", "quote": "| Singapore | 230 | 75 | 30 |"}'

    answer = "The cap is USD 230 a night. Meals are extra."
    result = correctness.judged(answer, _query(), TEXTS, faithfulness.model_judge(fake_client))
    assert result.status == "PASS" and len(result.verdicts) == 2
    assert seen == correctness.judge_prompts(answer, _query(), TEXTS)
    assert all("Reference answer: USD 230 per night." in p for p in seen)


def test_declined_or_empty_answers_fail_without_a_judge_call():
    calls = []

    def judge(context, claim):
        calls.append(claim)
        return faithfulness.Verdict(claim, "supported")

    for answer in ("I don't know.", "", "   "):
        assert correctness.judged(answer, _query(), TEXTS, judge).status == "FAIL"
        assert correctness.judge_prompts(answer, _query(), TEXTS) == []
    assert calls == []
    check = correctness.judge_check(judge, TEXTS)
    assert check("USD 230.", _query()) is True and check("I don't know.", _query()) is False


def test_a_judge_error_is_not_a_pass():
    def broken(context, claim):
        return faithfulness.Verdict(claim, None, error="malformed")

    assert correctness.judged("USD 230.", _query(), TEXTS, broken).status == "ERROR"
    assert correctness.judge_check(broken, TEXTS)("USD 230.", _query()) is False


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda: correctness.reference_check("a", "1 day", rule="most"), "rule must be one of"),
        (lambda: correctness.reference_rule("any"), "rule must be one of"),
        (lambda: correctness.reference_check(5, "1 day"), "answer must be a string"),
        (lambda: correctness.key_numbers("", "q"), "reference must not be empty"),
        (lambda: correctness.gold_context("fin-e02", TEXTS), "query must be a Query"),
        (lambda: correctness.gold_context(_query(), {}), "corpus_texts has no document 'fin'"),
        (lambda: correctness.gold_context(_query(), TEXTS, min_grade=4), "min_grade must be <= 3"),
        (lambda: correctness.judged("USD 230.", _query(), TEXTS, "judge"), "judge must be a function"),
        (lambda: correctness.judge_check(None, TEXTS), "judge must be a function"),
        (lambda: correctness.judge_check(lambda c, x: None, ["fin"]), "corpus_texts must be a dict"),
    ],
)
def test_bad_input(call, words):
    with pytest.raises(ValueError) as info:
        call()
    assert words in str(info.value)
