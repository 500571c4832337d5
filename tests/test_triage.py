"""labkit.triage: the source chapter's toy traces, the cells, bad input."""

import pytest

from labkit import triage
from labkit.toys import TRIAGE_TRACES as ROWS


def test_source_chapter_toy():
    assert [triage.quadrant(r) for r in ROWS] == ["GEN_FAIL", "RET_FAIL", "LUCKY", "OK"]
    assert triage.triage(ROWS) == {"OK": 1, "GEN_FAIL": 1, "LUCKY": 1, "RET_FAIL": 1}
    assert triage.priority(triage.triage(ROWS)) == "a tie - read the traces to decide"


def test_k_decides_whether_retrieval_succeeded():
    row = {"gold": ["g"], "retrieved": ["a", "b", "g"], "answer_pass": True}
    assert triage.quadrant(row, k=2) == "LUCKY" and triage.quadrant(row, k=3) == "OK"
    assert triage.priority({"OK": 0, "GEN_FAIL": 1, "LUCKY": 0, "RET_FAIL": 3}) == "retrieval"


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda: triage.quadrant({"gold": [], "retrieved": []}), "needs 'answer_pass'"),
        (lambda: triage.quadrant({"gold": [], "retrieved": [], "answer_pass": "yes"}), "True or False"),
        (lambda: triage.quadrant(ROWS[0], k=0), "k must be"),
        (lambda: triage.triage([]), "traces is empty"),
    ],
)
def test_bad_input(call, words):
    with pytest.raises(ValueError) as info:
        call()
    assert words in str(info.value)
