"""labkit.studies.answers_data: the recorded reader answers of chapters 07-09 and their correctness labels (replay
only, no model), stats.judge_report on a rule that cannot judge everything, and what a model's trace shows in the
drill-down and the triage widget."""

import json

import pandas as pd
import pytest

from labkit.generation import llm
from labkit.judges import correctness
from labkit.measures import stats, triage
from labkit.studies import answers_data
from labkit.studies import handbook as hb
from labkit.ui import widgets


@pytest.fixture(scope="module")
def answers_15():
    return answers_data.recorded_answers(llm.DEFAULT_MODEL)


def test_every_handbook_query_has_a_recorded_1_5b_answer_and_exactly_one_label(answers_15):
    labels = answers_data.correctness_labels()
    assert len(answers_15) == len(hb.handbook().queries) == 344
    mine = labels[(labels["model"] == llm.DEFAULT_MODEL) & (labels["k"] == hb.READER_K)]
    assert sorted(mine["qid"]) == sorted(answers_15["qid"])
    assert set(labels["label"]) <= set(answers_data.LABELS) and labels["why"].str.len().min() > 10
    second = answers_data.second_rater()
    assert second.groupby("model").size().to_dict() == {llm.DEFAULT_MODEL: 60, llm.SMALL_MODEL: 60}
    assert set(second.loc[second["model"] == llm.DEFAULT_MODEL, "qid"]) <= set(mine["qid"])
    small = labels[labels["model"] == llm.SMALL_MODEL]
    assert set(second.loc[second["model"] == llm.SMALL_MODEL, "qid"]) <= set(small["qid"])
    assert (answers_15["prompt tokens"] > 0).all() and (answers_15["seconds"] > 0).all()


def test_label_check_applies_a_label_only_to_the_answer_it_was_given(answers_15):
    check = answers_data.label_check()
    h = hb.handbook()
    labels = answers_data.correctness_labels().query("model == @llm.DEFAULT_MODEL and k == 3").set_index("qid")["label"]
    for row in answers_15.head(20).to_dict("records"):
        assert check(row["answer"], h.by_qid[row["qid"]]) is (labels[row["qid"]] == "right")
    q = h.by_qid[answers_15["qid"][0]]
    with pytest.raises(ValueError, match="not a labelled one"):
        check("Some other answer.", q)
    with pytest.raises(ValueError, match="no labelled answer"):
        check("x", type("Q", (), {"qid": "nope"})())


def test_labels_file_problems_name_the_line(tmp_path):
    path = tmp_path / "labels.jsonl"
    row = {"model": "m", "qid": "q1", "label": "right", "why": "ok", "rater": "a"}
    path.write_text(json.dumps(row) + "\n" + json.dumps({**row, "label": "maybe"}) + "\n")
    with pytest.raises(ValueError, match="line 2: label must be one of"):
        answers_data.correctness_labels(path)
    path.write_text(json.dumps(row) + "\n" + json.dumps(row) + "\n")
    with pytest.raises(ValueError, match="line 2: m / q1 at k = 3 is labelled twice"):
        answers_data.correctness_labels(path)
    path.write_text(json.dumps(row) + "\n" + json.dumps({**row, "k": 5}) + "\n")  # another answer: k = 5
    assert answers_data.correctness_labels(path)["k"].tolist() == [3, 5]
    path.write_text(json.dumps({**row, "k": 0}) + "\n")
    with pytest.raises(ValueError, match="line 1: k must be a whole number >= 1"):
        answers_data.correctness_labels(path)
    path.write_text(json.dumps({k: v for k, v in row.items() if k != "rater"}) + "\n")
    with pytest.raises(ValueError, match="no 'rater'"):
        answers_data.correctness_labels(path)
    with pytest.raises(FileNotFoundError, match="missing"):
        answers_data.correctness_labels(tmp_path / "absent.jsonl")


def test_rule_report_counts_tpr_tnr_and_leaves_out_what_a_rule_cannot_judge():
    table = pd.DataFrame(
        {
            "rater label": [True, True, True, False, False, True],
            "rule": [True, False, True, False, True, None],
        }
    )
    row = stats.judge_report(table, ["rule"], truth="rater label", missing="skip").loc["rule"]
    assert row.judged == 5 and row["left out"] == 1
    assert row.TPR == pytest.approx(2 / 3) and row.TNR == pytest.approx(1 / 2)
    assert row.accuracy == pytest.approx(3 / 5) and row["says pass"] == pytest.approx(3 / 5)
    with pytest.raises(ValueError, match="not a column"):
        stats.judge_report(table, ["judge"], truth="rater label")
    with pytest.raises(ValueError, match="both passes and fails"):
        stats.judge_report(table.assign(**{"rater label": True}), ["rule"], truth="rater label", missing="skip")
    with pytest.raises(ValueError, match="truth names 'truth'"):
        stats.judge_report(table, ["rule"], truth="truth")
    with pytest.raises(ValueError, match="missing must be one of"):
        stats.judge_report(table, ["rule"], truth="rater label", missing="drop")
    with_error = stats.judge_report(table, ["rule"], truth="rater label").loc["rule"]  # None fails the item
    assert with_error.judged == 6 and with_error.errors == 1 and with_error.TPR == pytest.approx(2 / 4)


def test_label_sheet_gives_the_rater_the_reference_gold_spans_and_answer(answers_15):
    sheet = answers_data.label_sheet()
    assert [r["qid"] for r in sheet] == list(answers_15["qid"])
    first = sheet[0]
    assert first["gold"].startswith("Reference answer: ") and "From the handbook:" in first["gold"]
    assert first["answer"] == answers_15["answer"][0]


MODEL_TRACE = {"qid": "q1", "question": "How long?", "gold": ["a"], "retrieved": ["b", "c"], "answer_pass": True,
               "gold_spans": ["ten days"], "answer": "Ten days.", "reference": "10 days.", "judged_by": "rater label",
               "why": "States 10 days."}  # fmt: skip


def test_a_model_trace_shows_its_reference_and_verdict_in_the_drill_down_and_the_widget():
    d = triage.drill_down(MODEL_TRACE, 2)
    assert d["cell"] == "LUCKY" and d["reference"] == "10 days." and d["judged_by"] == "rater label"
    assert triage.drill_down({k: v for k, v in MODEL_TRACE.items() if k != "why"}, 2)["why"] == ""

    def traces_for(k, reader):
        if reader == "model" and k != 2:
            raise ValueError("the model's answers are recorded at k = 2 only")
        return [MODEL_TRACE]

    ex = widgets.TriageExplorer(traces_for, k=2, max_k=3, readers=["model", "control"])
    shown = ex.html_for(cell="LUCKY")["examples"]
    assert '<q class="lk-reference">10 days.</q>' in shown
    assert 'rater label: <b class="lk-verdict">pass</b> (States 10 days.)' in shown
    assert ex.result["reader"] == "model" and ex.result["counts"]["LUCKY"] == 1
    ex.k.value = 3
    assert "recorded at k = 2 only" in ex.message.value and ex.result["error"].startswith("ValueError")
    ex.reader.value = "control"
    counts = triage.triage([MODEL_TRACE], 3)
    assert ex.message.value == ""
    assert ex.result == {"reader": "control", "k": 3, "counts": counts, "priority": triage.priority(counts),
                         "examples": []}  # fmt: skip


def test_reader_traces_record_which_check_judged_them():
    from labkit.data.corpus import Query, Span

    q = Query("q1", "How long?", "10 days.", "easy", "fact", "dev", (Span("d", 0, 8, 3),))
    traces = triage.reader_traces(
        [q], {"q1": ["a"]}, {"a": "ten days"}, {"q1": {"a": 3}}, lambda question, passages: "10 days.",
        correctness.reference_rule(), {"d": "ten days"}, 1,
    )  # fmt: skip
    assert traces[0]["judged_by"] == "reference number (first)" and traces[0]["answer_pass"] is True


def test_one_label_check_judges_both_models_answers_of_the_cascade():
    sample = hb.reader_sample()
    check = answers_data.label_check([llm.SMALL_MODEL, llm.DEFAULT_MODEL], sample)
    labels = answers_data.correctness_labels().query("k == 3").set_index(["model", "qid"])["label"]
    h = hb.handbook()
    for model in (llm.SMALL_MODEL, llm.DEFAULT_MODEL):
        for row in answers_data.recorded_answers(model, sample).head(10).to_dict("records"):
            assert check(row["answer"], h.by_qid[row["qid"]]) is (labels[(model, row["qid"])] == "right")
    assert len(answers_data.correctness_labels().query("model == @llm.SMALL_MODEL")) == len(sample) == 120


def test_the_k5_answers_of_the_sweep_questions_are_labelled_and_checked_at_their_k():
    questions = answers_data.sweep_questions()
    check = answers_data.label_check(llm.DEFAULT_MODEL, questions, answers_data.SWEEP_K)
    labels = answers_data.correctness_labels().query("k == @answers_data.SWEEP_K").set_index("qid")["label"]
    assert sorted(labels.index) == sorted(q.qid for q in questions) and len(questions) == 93
    h = hb.handbook()
    at_5 = answers_data.recorded_answers(llm.DEFAULT_MODEL, questions, answers_data.SWEEP_K)
    for row in at_5.head(10).to_dict("records"):
        assert check(row["answer"], h.by_qid[row["qid"]]) is (labels[row["qid"]] == "right")
    at_3 = answers_data.recorded_answers(llm.DEFAULT_MODEL, questions).set_index("qid")["answer"]
    changed = next(r for r in at_5.to_dict("records") if r["answer"] != at_3[r["qid"]])
    with pytest.raises(ValueError, match="labels are for the recorded answers at k = 5"):
        check(at_3[changed["qid"]], h.by_qid[changed["qid"]])  # a k = 3 answer is not judged by a k = 5 label
    with pytest.raises(ValueError, match=r"no answer at k = 7 is labelled; the labels are for k in \[3, 5\]"):
        answers_data.label_check(llm.DEFAULT_MODEL, questions[:1], 7)
