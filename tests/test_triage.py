"""labkit.triage: the source chapter's toy traces, the cells, bad input."""

import pytest

from labkit import triage

ROWS = [
    {"gold": ["hr-07#2"], "retrieved": ["hr-07#2", "hr-07#5"], "answer_pass": False},
    {"gold": ["adm-04#1"], "retrieved": ["it-09#3", "hr-02#1"], "answer_pass": False},
    {"gold": ["it-03#1"], "retrieved": ["hr-12#3", "hr-12#4"], "answer_pass": True},
    {"gold": ["fin-02#3"], "retrieved": ["fin-02#3", "fin-02#1"], "answer_pass": True},
]


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
