"""The language model as a pointwise reranker: the prompt, the yes/no log-odds, the recorder's checks."""

from __future__ import annotations

import json
import math

import pytest

from labkit.generation import llm
from labkit.generation.llm.cassette import Completion
from labkit.generation.llm.lines import logprob_text, read_logprobs, request_options
from labkit.judges import pointwise


def test_the_question_comes_before_the_passage_so_a_question_s_requests_share_their_start():
    a = pointwise.prompt("How many leave days?", "Passage one.")
    b = pointwise.prompt("How many leave days?", "Another passage.")
    shared = len(__import__("os").path.commonprefix([a, b]))
    assert a.index("How many leave days?") < a.index("Passage one.") and shared > a.index("Passage")
    with pytest.raises(ValueError, match="question"):
        pointwise.prompt("  ", "p")


def test_every_spelling_of_yes_and_no_is_summed():
    text = logprob_text(
        "yes",
        [
            ("yes", math.log(0.5)),
            ("no", math.log(0.2)),
            ("Yes", math.log(0.1)),
            (" no", math.log(0.05)),
            ("The", math.log(0.01)),
        ],
    )
    s = pointwise.yes_no_score(text)
    assert s.score == pytest.approx(math.log(0.6 / 0.25), abs=1e-4)
    assert s.p_yes == pytest.approx(0.6 / 0.85, abs=1e-4) and not s.bounded


def test_a_word_missing_from_the_top_tokens_is_given_the_least_listed_probability_and_flagged():
    text = logprob_text("yes", [("yes", -0.1), ("Yes", -2.5), ("The", -6.0)])
    s = pointwise.yes_no_score(text)
    assert s.bounded and s.score == pytest.approx(math.log(math.exp(-0.1) + math.exp(-2.5)) + 6.0, abs=1e-4)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("yes", "not a top_logprobs response"),
        ('{"top_logprobs": []}', "no log-probabilities"),
        ('{"top_logprobs": [["yes", NaN]]}', "NaN or positive"),
        ('{"top_logprobs": [["yes", 0.5]]}', "positive"),
        ('{"top_logprobs": [["yes"]]}', "not a top_logprobs response"),
    ],
)
def test_a_response_that_is_not_log_probabilities_is_refused(text, message):
    with pytest.raises(ValueError, match=message):
        pointwise.yes_no_score(text)


@pytest.mark.parametrize("bad", [0, 21, True, 2.5, "5"])
def test_top_logprobs_is_checked(bad):
    with pytest.raises(ValueError, match="top_logprobs"):
        request_options(top_logprobs=bad)


def test_top_logprobs_changes_the_key():
    assert llm.prompt_key("m", "p", max_tokens=1) != llm.prompt_key("m", "p", max_tokens=1, top_logprobs=20)


class Scripted:
    """A client that answers every request with the next scripted reply."""

    model = "scripted"

    def __init__(self, replies):
        self.replies, self.asked = list(replies), []

    def complete(self, prompt, schema=None, max_tokens=None, top_logprobs=None):
        self.asked.append((prompt, max_tokens, top_logprobs))
        return Completion(self.replies.pop(0), 40, 1, 0.5)


def test_the_model_reranker_scores_each_passage_with_one_one_token_request(tmp_path):
    replies = [logprob_text("no", [("no", -0.1), ("yes", -2.4)]), logprob_text("yes", [("yes", -0.3), ("no", -1.5)])]
    client = Scripted(replies)
    reranker = pointwise.ModelReranker(llm.Recorder(client, tmp_path / "s.jsonl"))
    scores = reranker("What is the limit?", ["about parking", "the limit is 5,000"])
    assert scores[1] > 0 > scores[0] and [a[1:] for a in client.asked] == [(1, 20), (1, 20)]
    assert reranker.calls == [(40, 0.5), (40, 0.5)]
    again = pointwise.ModelReranker(llm.Replay("scripted", tmp_path / "s.jsonl"))  # replayed, no model
    assert again("What is the limit?", ["about parking", "the limit is 5,000"]) == scores
    with pytest.raises(ValueError, match="passages"):
        reranker("What is the limit?", [])


def test_a_recorder_never_writes_a_reply_that_is_not_log_probabilities(tmp_path):
    cassette = tmp_path / "s.jsonl"
    with pytest.raises(ValueError, match="nothing was recorded"):
        llm.Recorder(Scripted(["yes"]), cassette)("relevant?", max_tokens=1, top_logprobs=20)
    assert not cassette.exists() or cassette.read_text() == ""


def test_read_logprobs_round_trips():
    top = [("yes", -0.123456789), ("no", -2.0)]
    assert read_logprobs(logprob_text("yes", top)) == [("yes", -0.12346), ("no", -2.0)]
    assert json.loads(logprob_text("yes", top))["token"] == "yes"
