"""labkit.studies.cascade: answers with their cost, the escalation check, the strategies' outcomes and bad input. The
clients are test doubles returning fixed text (and made-up token counts), never a model's answers."""

import pandas as pd
import pytest

from labkit.data.corpus import Query
from labkit.generation import reader as rd
from labkit.generation.llm.cassette import Completion
from labkit.judges.correctness import reference_rule
from labkit.measures.router import evaluate_router
from labkit.studies import cascade

Q = [Query(f"q{i}", f"How many days for case {i}?", f"{40 + i} days.", "easy", "fact", "dev", ()) for i in range(4)]
CTX = {q.qid: [f"Case {i} takes {40 + i} days to settle."] for i, q in enumerate(Q)}


class Canned:
    """A test double with ``complete``: the reply and the cost are fixed by a table per question."""

    mode = "replay"

    def __init__(self, model, replies, tokens=(100, 10), seconds=2.0):
        self.model, self.replies, self.tokens, self.seconds, self.prompts = model, replies, tokens, seconds, []

    def complete(self, prompt, schema=None, max_tokens=None):
        self.prompts.append((prompt, max_tokens))
        qid = next(q.qid for q in Q if q.search_text in prompt)
        return Completion(self.replies[qid], *self.tokens, self.seconds)


SMALL = Canned("small-m", {"q0": "Case 0 takes 40 days.", "q1": "I don't know.", "q2": "It takes 99 days.",
                           "q3": "Case 3 takes 7 days."}, (100, 10), 1.0)  # fmt: skip
LARGE = Canned("large-m", {"q0": "40 days.", "q1": "Case 1 takes 41 days.", "q2": "42 days.", "q3": "Maybe 5 days."},
               (100, 20), 4.0)  # fmt: skip


def test_model_answers_use_chapter_07s_reader_prompt_and_keep_the_cost():
    table = cascade.model_answers(Q, CTX, SMALL)
    assert SMALL.prompts[0] == (rd.reader_prompt(Q[0].search_text, CTX["q0"], "lenient"), rd.MAX_TOKENS)
    assert table.loc[0, ["qid", "model", "prompt tokens", "completion tokens", "seconds"]].tolist() == [
        "q0", "small-m", 100, 10, 1.0]  # fmt: skip

    def plain(prompt, schema=None, max_tokens=None):  # a plain function: the cost is unknown
        return "  40 days. "

    table = cascade.model_answers(Q[:1], CTX, plain, model="plain")
    assert table.loc[0, "answer"] == "40 days." and table["prompt tokens"].isna().all()


def test_grounded_keeps_answers_whose_claims_the_passages_hold():
    passages = ["Case 0 takes 40 days to settle."]
    assert cascade.grounded("Case 0 takes 40 days.", passages)
    assert not cascade.grounded("Case 0 takes 99 days.", passages)  # a number the passages do not hold
    assert not cascade.grounded("I don't know.", passages) and not cascade.grounded("", passages)


def test_the_cascade_escalates_on_a_failed_check_and_pays_for_both_calls():
    table = cascade.cascade_table(cascade.model_answers(Q, CTX, SMALL), cascade.model_answers(Q, CTX, LARGE), Q, CTX,
                             reference_rule())  # fmt: skip
    assert table["escalated"].tolist() == [False, True, True, True]
    assert table["small correct"].tolist() == [True, False, False, False]
    assert table["large correct"].tolist() == [True, True, True, False]
    assert table["cascade correct"].tolist() == [True, True, True, False]
    assert table["cascade seconds"].tolist() == [1.0, 5.0, 5.0, 5.0]
    assert table["cascade completion tokens"].tolist() == [10, 30, 30, 30]
    summary = cascade.strategy_summary(table)
    assert summary.loc["small only", "pass rate"] == 0.25 and summary.loc["cascade", "pass rate"] == 0.75
    assert summary.loc["cascade", "escalated"] == 0.75 and summary.loc["cascade", "mean seconds"] == 4.0
    assert summary.loc["large only", "USD per 1k requests"] == pytest.approx((100 * 0.15 + 20 * 0.60) / 1000)
    priced = cascade.strategy_summary(table, prices={"small-m": (0.0, 0.0), "large-m": (1.0, 1.0)})
    assert priced.loc["cascade", "USD per 1k requests"] == pytest.approx(0.75 * 120 / 1000)
    passing, none_pass = cascade.passing_sets(table)
    assert passing == {"q0": {"small-m", "large-m"}, "q1": {"large-m"}, "q2": {"large-m"}} and none_pass == ["q3"]
    graded = evaluate_router({q: ["small-m", "large-m"] for q in passing}, passing, {"small-m": 1, "large-m": 4})
    assert graded["regret"].tolist() == [0, 1, 1]


def test_unjudged_requests_stay_in_the_table_but_out_of_the_rates():
    def check(answer, query):
        return None if query.qid == "q3" else "40" in answer

    table = cascade.cascade_table(
        cascade.model_answers(Q, CTX, SMALL), cascade.model_answers(Q, CTX, LARGE), Q, CTX, check
    )
    assert cascade.strategy_summary(table).loc["large only", "requests"] == 3
    assert "q3" not in cascade.passing_sets(table)[0]


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda: cascade.model_answers(Q, {}, SMALL), "contexts has no passages for query 'q0'"),
        (lambda: cascade.model_answers(["q0"], CTX, SMALL), "queries[0] must be a Query"),
        (lambda: cascade.model_answers(Q, CTX, 42), "client must be a labkit.generation.llm client"),
        (lambda: cascade.model_answers(Q[:1], CTX, lambda p, schema=None, max_tokens=None: 3), "not text"),
        (lambda: cascade.grounded("x", []), "passages must not be empty"),
        (lambda: cascade.cascade_table(pd.DataFrame({"qid": ["q0"]}), None, Q, CTX, reference_rule()),
         "small must be a table from model_answers"),
        (lambda: cascade.cascade_table(cascade.model_answers(Q[:1], CTX, SMALL),
                                       cascade.model_answers(Q[:1], CTX, LARGE), Q, CTX, reference_rule()),
         "query 'q1' has no answer in small"),
        (lambda: cascade.cascade_table(None, None, Q, CTX, "check"), "must be functions"),
        (lambda: cascade.strategy_summary(cascade.cascade_table(cascade.model_answers(Q, CTX, SMALL),
                                                                cascade.model_answers(Q, CTX, LARGE),
                                                                Q, CTX, reference_rule()), prices={"small-m": (1, 1)}),
         "prices has no entry for model 'large-m'"),
    ],
)  # fmt: skip
def test_bad_input(call, words):
    with pytest.raises(ValueError) as info:
        call()
    assert words in str(info.value)


def test_request_view_and_the_cascade_explorer_show_one_request_and_its_costs():
    import pandas as pd

    from labkit.ui import widgets

    table = pd.DataFrame(
        [{"qid": "q1", "small": "s", "large": "L", "small answer": "Ten <days>.", "large answer": "10 days.",
          "small correct": False, "large correct": True, "escalated": False, "cascade correct": False,
          "small only prompt tokens": 100, "small only completion tokens": 5, "small only seconds": 2.0,
          "large only prompt tokens": 100, "large only completion tokens": 6, "large only seconds": 6.0,
          "cascade prompt tokens": 100, "cascade completion tokens": 5, "cascade seconds": 2.0},
         {"qid": "q2", "small": "s", "large": "L", "small answer": "I don't know.", "large answer": "Ask HR.",
          "small correct": False, "large correct": False, "escalated": True, "cascade correct": False,
          "small only prompt tokens": 90, "small only completion tokens": 4, "small only seconds": 1.0,
          "large only prompt tokens": 90, "large only completion tokens": 3, "large only seconds": 5.0,
          "cascade prompt tokens": 180, "cascade completion tokens": 7, "cascade seconds": 6.0}]
    ).set_index("qid")  # fmt: skip
    v = cascade.request_view(table, "q2", "Who?")
    assert v["escalated"] and v["cost"]["cascade"]["seconds"] == 6.0 and v["question"] == "Who?"
    with pytest.raises(ValueError, match="not a request"):
        cascade.request_view(table, "q9")
    assert [cascade.outcome_label(r) for _, r in table.iterrows()] == [
        "kept, not right",
        "escalated, small was not right",
    ]
    ex = widgets.CascadeExplorer(table, {"q1": "How long?"})
    assert [o[1] for o in ex.request.options] == ["q1", "q2"] and ex.request.options[0][0] == "q1 · kept, not right"
    shown = ex.html_for()
    assert "Ten &lt;days&gt;." in shown and "kept the small answer" in shown and "How long?" in shown
    assert 'data-cost="cascade|seconds"' in shown and 'data-verdict="small">not right' in shown
    ex.request.value = "q2"
    assert ex.result == {"qid": "q2", "escalated": True, "small correct": False, "large correct": False,
                         "cascade correct": False}  # fmt: skip
    assert "escalated to the large model" in ex.output.value
