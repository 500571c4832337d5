"""labkit.measures.triage: the source chapter's toy traces, the cells, bad input."""

import math

import pytest

from labkit.data.toys import TRIAGE_TRACES as ROWS
from labkit.measures import triage


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


def _tiny_traces(k):
    from labkit.data.corpus import Query, Span
    from labkit.text.chunking import chunk_document, spans_to_qrels

    text = "the vpn guide says connect before jira and git"
    chunks = chunk_document("d", text, 4, 1)  # d#0 "the vpn guide says", d#1 "says connect before jira", ...
    q = Query("q1", "connect before what", "connect before what", "easy", "fact", "dev", (Span("d", 14, 33, 3),))
    run = {"q1": ["d#0", "d#1", "d#2"]}

    def reader(question, passages):
        return passages[-1]

    texts = {c.id: c.text for c in chunks}
    return triage.extractive_traces([q], run, texts, spans_to_qrels([q], chunks), reader, {"d": text}, k)


def test_traces_record_the_gold_span_and_drill_down_shows_it():
    t1, t2 = _tiny_traces(1)[0], _tiny_traces(2)[0]
    assert t1["gold_spans"] == ["says connect before"] and t1["gold"] == ["d#1"]
    d1 = triage.drill_down(t1, 1)
    assert d1["cell"] == "RET_FAIL" and d1["gold_ranks"] == {"d#1": None} and not d1["answer_has_span"]
    d2 = triage.drill_down(t2, 2)
    assert d2["cell"] == "OK" and d2["gold_ranks"] == {"d#1": 2} and d2["answer_has_span"]
    assert d2["question"] == "connect before what" and d2["answer"] == t2["answer"]


def test_drill_down_reads_a_toy_trace_without_text():
    d = triage.drill_down(ROWS[0], 5)
    assert d == {"qid": "", "cell": "GEN_FAIL", "question": "", "gold_ranks": {"hr-07#2": 1}, "gold_spans": [],
                 "answer": "", "answer_has_span": False, "reference": "", "judged_by": "", "why": ""}  # fmt: skip


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda: triage.drill_down(ROWS[0], 0), "k must be"),
        (lambda: triage.drill_down({**ROWS[0], "gold_spans": "a span"}, 5), "gold_spans"),
        (lambda: triage.drill_down({"gold": ["a"], "retrieved": ["a"]}, 5), "needs 'answer_pass'"),
        (lambda: triage.drill_down({**ROWS[0], "answer": 42}, 5), "answer"),
    ],
)
def test_drill_down_bad_input(call, words):
    with pytest.raises(ValueError, match=words):
        call()


def test_plot_triage_by_k_draws_one_bar_per_k_and_refuses_bad_sweeps():
    import pandas as pd

    from labkit.ui import plots

    sweep = pd.DataFrame({k: triage.triage(ROWS, k) for k in (1, 2)}).T.rename_axis("k")
    fig = plots.plot_triage_by_k(sweep)
    assert len(fig.axes[0].patches) == 2 * len(triage.QUADRANTS)
    with pytest.raises(ValueError, match="lacks \\['LUCKY'\\]"):
        plots.plot_triage_by_k(sweep.drop(columns="LUCKY"))
    with pytest.raises(ValueError, match="sweep\\['OK'\\] at k=1"):
        plots.plot_triage_by_k(sweep.assign(OK=[-1, 1]))
    with pytest.raises(ValueError, match="non-empty DataFrame"):
        plots.plot_triage_by_k({"OK": 1})


def test_the_explorer_shows_each_example_with_its_gold_span_and_answer():
    from labkit.ui import widgets

    explorer = widgets.TriageExplorer(_tiny_traces, k=1, max_k=3)
    explorer.cell.value = "RET_FAIL"
    shown = explorer.examples.value
    assert '<q class="lk-gold-span">says connect before</q>' in shown and "d#1 (not read)" in shown
    assert "answer (holds no gold span)" in shown
    explorer.k.value, explorer.cell.value = 2, "OK"
    assert "d#1 (rank 2)" in explorer.examples.value and "answer:" in explorer.examples.value


def test_stage_gap_counts_each_group_and_says_whether_its_interval_decides():
    gen = {"gold": ["g"], "retrieved": ["g"], "answer_pass": False}
    ret = {"gold": ["g"], "retrieved": ["x"], "answer_pass": False}
    ok = {"gold": ["g"], "retrieved": ["g"], "answer_pass": True}
    traces = [dict(gen, slice="easy")] * 20 + [dict(ok, slice="easy")] * 5 + [dict(ret, slice="real")] * 3
    traces += [dict(gen, slice="real")] * 2
    table = triage.stage_gap(traces, 5)
    assert list(table.index) == ["easy", "real", "all"]
    assert table.loc["easy", ["n", "OK", "GEN_FAIL", "RET_FAIL"]].tolist() == [25, 5, 20, 0]
    assert table.loc["easy", "gap"] == pytest.approx(20 / 25) and table.loc["easy", "clear"]
    assert table.loc["real", "fix first"] == "retrieval" and not table.loc["real", "clear"]  # 3 vs 2: unresolved
    assert table.loc["all", "gap"] == pytest.approx((22 - 3) / 30)
    assert list(triage.stage_gap(traces, 5, total=None).index) == ["easy", "real"]


_GEN = {"gold": ["g"], "retrieved": ["g"], "answer_pass": False}
_RET = {"gold": ["g"], "retrieved": ["x"], "answer_pass": False}
_OK = {"gold": ["g"], "retrieved": ["g"], "answer_pass": True}


def _group(name, gen, ret, ok):
    return [dict(_GEN, slice=name)] * gen + [dict(_RET, slice=name)] * ret + [dict(_OK, slice=name)] * ok


def _pairs(gen, ret, ok):
    return [1] * gen + [0] * (ret + ok), [0] * gen + [1] * ret + [0] * ok


def test_stage_gap_interval_is_the_paired_01_kind_not_a_bootstrap_of_signs():
    from labkit.measures import stats

    table = triage.stage_gap(_group("a", 4, 0, 26), 5, total=None)  # 4 GEN_FAIL, no RET_FAIL, of 30
    old = stats.bootstrap_ci([1] * 4 + [0] * 26)  # the percentile bootstrap called this clear: [0.033, 0.267]
    assert old[1] > 0
    iv = stats.interval_for("paired 0/1", _pairs(4, 0, 26))  # paired Newcombe; exact McNemar p 0.125
    row = table.loc["a"]
    assert (row["gap low"], row["gap high"]) == pytest.approx((iv.low, iv.high)) and row["gap low"] < 0
    assert not row["clear"] and row["p"] == pytest.approx(iv.p) and row["among"] == 1
    assert table.attrs["findings"]["a"].details["McNemar p"] == pytest.approx(0.125)


def test_stage_gap_corrects_the_groups_as_one_family_and_asks_the_overall_row_alone():
    from labkit.measures import stats

    traces = _group("a", 7, 1, 22) + _group("b", 2, 2, 26) + _group("c", 1, 3, 26)
    table = triage.stage_gap(traces, 5)
    alone = stats.interval_for("paired 0/1", _pairs(7, 1, 22))
    assert alone.resolved and not table.loc["a", "clear"]  # 7 vs 1 of 30: clear alone, not among three
    fam = stats.Family("groups", ["a", "b", "c"]).finding("a", _pairs(7, 1, 22), "paired 0/1")  # Bonferroni / 3
    assert tuple(table.loc["a", ["gap low", "gap high", "p"]]) == pytest.approx((fam.low, fam.high, fam.p))
    assert table.loc["a", "p"] == pytest.approx(min(1, 3 * alone.p)) and table.loc["a", "among"] == 3
    overall = stats.interval_for("paired 0/1", _pairs(10, 6, 74))  # all 90 traces, a family of one
    assert tuple(table.loc["all", ["gap low", "gap high"]]) == pytest.approx((overall.low, overall.high))
    assert table.loc["all", "among"] == 1
    strong = triage.stage_gap(_group("a", 12, 0, 18) + _group("b", 2, 2, 26), 5)
    assert strong.loc["a", "clear"] and strong.loc["a", "gap low"] > 0  # a clear gap stays clear after Bonferroni


def test_stage_gap_gives_a_group_of_too_few_traces_no_interval_and_never_calls_it_clear():
    table = triage.stage_gap(_group("small", 6, 0, 0) + _group("big", 20, 0, 5), 5)
    small = table.loc["small"]
    assert small["gap"] == 1.0 and math.isnan(small["gap low"]) and math.isnan(small["gap high"])
    assert not small["clear"] and small["p"] is None or math.isnan(small["p"])
    assert table.loc["big", "clear"] and table.loc["big", "among"] == 2  # the small group still counts in the family


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda: triage.stage_gap(ROWS, 5), "traces\\[0\\] has no 'slice'"),
        (lambda: triage.stage_gap([dict(ROWS[0], slice="all")], 5), "named 'all'"),
        (lambda: triage.stage_gap([], 5), "traces is empty"),
        (lambda: triage.stage_gap([dict(ROWS[0], slice="a")], 0), "k must be"),
    ],
)
def test_stage_gap_bad_input(call, words):
    with pytest.raises(ValueError, match=words):
        call()


def test_reader_traces_take_the_pass_from_the_check_and_refuse_a_check_that_cannot_judge():
    from labkit.data.corpus import Query, Span
    from labkit.text.chunking import chunk_document, spans_to_qrels

    text = "the vpn guide says connect before jira and git"
    chunks = chunk_document("d", text, 4, 1)
    q = Query("q1", "connect before what", "Before jira.", "easy", "fact", "dev", (Span("d", 14, 33, 3),))
    texts, qrels = {c.id: c.text for c in chunks}, spans_to_qrels([q], chunks)

    def reader(question, passages):  # a test double: a fixed answer, whatever it reads
        return "Connect before opening Jira."

    def mentions_jira(answer, query):
        return "jira" in answer.lower()

    t1 = triage.reader_traces([q], {"q1": ["d#0", "d#1"]}, texts, qrels, reader, mentions_jira, {"d": text}, 1)[0]
    assert t1["answer_pass"] is True and t1["reference"] == "Before jira." and triage.quadrant(t1, 1) == "LUCKY"
    assert t1["gold_spans"] == ["says connect before"]  # the verbatim rule would have failed this answer
    with pytest.raises(ValueError, match="check returned None for 'q1'"):
        triage.reader_traces([q], {"q1": ["d#0"]}, texts, qrels, reader, lambda a, q: None, {"d": text}, 1)
    with pytest.raises(ValueError, match="check must be a function"):
        triage.reader_traces([q], {"q1": ["d#0"]}, texts, qrels, reader, "jira", {"d": text}, 1)
