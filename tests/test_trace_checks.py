"""labkit.studies.trace_checks: which traces get prompt fixes and context swaps, and what is asked of the model."""

from __future__ import annotations

import pytest

from labkit.generation import reader as rd
from labkit.studies import trace_checks


def test_the_fix_sample_is_seeded_and_drawn_from_its_cells():
    cells = {t["qid"]: t["cell"] for t in trace_checks.traces()}
    sample = trace_checks.fix_sample()
    assert {c: len(q) for c, q in sample.items()} == {
        "RET_FAIL": trace_checks.PER_CELL,
        "GEN_FAIL": trace_checks.PER_CELL,
    }
    assert all(cells[q] == cell for cell, qids in sample.items() for q in qids)
    assert trace_checks.fix_sample() == sample and trace_checks.fix_sample(seed=1) != sample


def test_every_lucky_trace_is_swapped_beside_as_many_ok_ones_with_a_donor_from_another_department():
    cells = {t["qid"]: t["cell"] for t in trace_checks.traces()}
    swaps = trace_checks.swap_sample()
    lucky = sorted(q for q, c in cells.items() if c == "LUCKY")
    assert [q for q, c, _ in swaps if c == "LUCKY"] == lucky
    assert sum(c == "OK" for _, c, _ in swaps) == len(lucky)
    assert all(cells[q] == c and d.split("-")[0] != q.split("-")[0] for q, c, d in swaps)


def test_the_prompts_keep_the_passages_and_change_only_the_instructions_or_the_passages():
    by_qid = {t["qid"]: t for t in trace_checks.traces()}
    asked = trace_checks.requests()
    assert len(asked["07-fixes"]) == 2 * trace_checks.PER_CELL * len(trace_checks.FIXES) and len(
        asked["08-swap"]
    ) == len(trace_checks.swap_sample())
    qid, _, variant, prompt = asked["07-fixes"][0]
    assert variant == trace_checks.FIXES[0] and prompt.startswith(rd.PROMPTS[variant].split("{passages}")[0])
    own = {p.split("\n\nQuestion:")[0].split("\n\n", 1)[1] for q, _, _, p in asked["07-fixes"] if q == qid}
    assert len(own) == 1  # the three rounds read the same passages
    from labkit.studies import handbook as hb

    texts = hb.handbook().texts
    for qid, _, donor, prompt in asked["08-swap"]:
        assert texts[by_qid[donor]["retrieved"][0]].strip() in prompt
        assert not set(by_qid[qid]["retrieved"][:3]) & set(by_qid[donor]["retrieved"][:3])
    assert rd.reader_prompt("q", ["p"], "cite") != rd.reader_prompt("q", ["p"], "careful")


def test_bad_input():
    with pytest.raises(ValueError, match='plan must be "07-fixes" or "08-swap"'):
        trace_checks.answers("07-answers")


def test_every_recorded_answer_and_its_before_has_one_rater_label():
    labels = trace_checks.labels()
    asked = trace_checks.requests()
    wanted = {(q, v) for q, _, v, _ in asked["07-fixes"]} | {(q, "swap") for q, *_ in asked["08-swap"]}
    wanted |= {(q, "before") for q, *_ in asked["07-fixes"] + asked["08-swap"]}
    assert set(labels) == wanted
    assert {row["rater"] for row in labels.values()} == {"checks-1", "checks-2"}


def test_a_label_outside_the_rubric_is_refused(tmp_path):
    path = tmp_path / "checks.jsonl"
    path.write_text('{"qid": "hr-e01", "variant": "strict", "label": "maybe", "rater": "x"}\n', encoding="utf-8")
    with pytest.raises(ValueError, match="checks.jsonl line 1: label must be one of"):
        trace_checks.labels(path)
