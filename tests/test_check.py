"""labkit.check prints one deterministic line per answer."""

import pytest

from labkit import check


def test_states(capsys):
    check.exercise("3.1", None)
    check.exercise("3.1", 1 / 3)
    check.exercise("3.1", 0.6)
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "Exercise 3.1: not answered yet - replace None with your answer."
    assert out[1] == "Exercise 3.1: correct."
    assert out[2].startswith("Exercise 3.1: not yet. Hint:")


def test_every_exercise_accepts_its_own_expected_value(capsys):
    for number, ex in check.EXERCISES.items():
        check.exercise(number, ex.expected())
    assert capsys.readouterr().out.count("correct.") == len(check.EXERCISES)


def test_list_and_string_answers(capsys):
    check.exercise("3.4", [3, 2, 1, 0, 0])
    check.exercise("3.4", [3, 2, 0, 1, 0])
    check.exercise("3.5", " MRR ")
    out = capsys.readouterr().out.splitlines()
    assert (
        out
        == [
            "Exercise 3.4: correct.",
            out[1],
            "Exercise 3.5: correct.",
        ]
        and "not yet" in out[1]
    )


def test_unknown_exercise():
    with pytest.raises(ValueError, match="unknown exercise"):
        check.exercise("9.9", 1)
