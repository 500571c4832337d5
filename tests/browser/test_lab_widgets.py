"""Every chapter widget, driven in real JupyterLab: move it, and the page must show what labkit computes.

One test per notebook with widgets. Each opens the notebook, clears the stored outputs, runs all cells in a
fresh kernel, then changes every control the way a learner would (keyboard on sliders, clicks, typing) and
compares every output on the page with what the same explorer, built here in the test process on the notebook's
inputs, renders for that state (``labdriver.ExplorerPage``; the unit tests prove what each state should show).
A failure names the notebook and the widget, e.g.
``03_metrics_by_hand: MetricsPlayground slider 'k' -> nDCG@k shows 0.6176, labkit says 0.5992 (for ...)``.
"""

from __future__ import annotations

import json
import math

import pytest
from labdriver import (
    NOTEBOOKS,
    LabNotebook,
    cascade_explorer,
    cells,
    ch01_inputs,
    ch04_runs,
    ch04_study,
    ch05_grid,
    ch07_traces,
    ch09_outcomes,
    ch09_stats,
    chunk_grid_explorer,
    cutoff_explorer,
    exact,
    fusion_explorer,
    playground,
    poll,
    position_explorer,
    question_box,
    routing_explorer,
    save_screenshot,
    slice_triage_explorer,
    triage_explorer,
)

from labkit.studies import cascade
from labkit.toys import RUNNING_GRADES
from labkit.widgets import grades_text

pytestmark = pytest.mark.browser

# Notebooks whose stored outputs hold a widget, and the test that drives them.
COVERED = {
    "00_welcome": "test_00_welcome",
    "01_rrf_hybrid_retrieval": "test_01_rrf_hybrid_retrieval",
    "02_synthetic_hard_questions": "test_02_synthetic_hard_questions",
    "03_metrics_by_hand": "test_03_metrics_by_hand",
    "04_mrr_hit_rate_lost_in_the_middle": "test_04_mrr_hit_rate_lost_in_the_middle",
    "05_chunk_grid": "test_05_chunk_grid",
    "06_faithfulness": "test_06_faithfulness",
    "07_triage": "test_07_triage",
    "08_case_study": "test_08_case_study",
    "09_router_eval": "test_09_router_eval",
}


def test_every_widget_notebook_is_covered():
    """A new chapter with a widget needs its own browser test here."""
    with_widgets = set()
    for path in NOTEBOOKS.glob("*.ipynb"):
        for cell in json.loads(path.read_text())["cells"]:
            for out in cell.get("outputs", []):
                if "application/vnd.jupyter.widget-view+json" in out.get("data", {}):
                    with_widgets.add(path.stem)
    missing = sorted(with_widgets - set(COVERED))
    assert not missing, f"notebooks with widgets but no browser test in {__file__}: {missing}"
    assert all(name in globals() for name in COVERED.values())


# ---------------------------------------------------------------- 00_welcome


def kept_share(rank: int) -> float:
    """The function 00_welcome defines and puts behind its slider."""
    return round(1 / math.log2(rank + 1), 4)


def test_00_welcome(open_notebook):
    stem = "00_welcome"
    nb: LabNotebook = open_notebook(stem)
    page = nb.page
    demo = page.locator(".jp-OutputArea-output .widget-interact")
    assert demo.count() == 1, f"{stem}: expected one interactive widget, found {demo.count()}"
    slider = demo.locator(".widget-slider").filter(has=page.locator("label", has_text=exact("rank")))
    handle, readout = slider.locator(".noUi-handle"), slider.locator(".widget-readout")
    output = demo.locator(".widget-output")

    def check(action: str, rank: int) -> None:
        shown_rank = poll(lambda: readout.inner_text().strip(), str(rank))
        assert shown_rank == str(rank), f"{stem}: slider 'rank' ({action}) reads {shown_rank!r}, expected {rank}"
        want = repr(kept_share(rank))
        shown = poll(lambda: output.inner_text().strip(), want)
        assert shown == want, (
            f"{stem}: slider 'rank' ({action}) -> output shows {shown or '(nothing)'}, kept_share({rank}) = {want}"
        )

    check("as loaded", 3)
    save_screenshot(demo, stem)
    handle.focus()
    handle.press("ArrowRight")
    check("ArrowRight", 4)
    handle.press("ArrowLeft")
    handle.press("ArrowLeft")
    handle.press("ArrowLeft")
    check("ArrowLeft x3", 1)
    readout.click()  # the readout is editable: type a value
    page.keyboard.press("ControlOrMeta+a")
    page.keyboard.type("20")
    page.keyboard.press("Enter")
    check("typed 20 in the readout", 20)


# ---------------------------------------------------------------- 01_rrf_hybrid_retrieval


def test_01_rrf_hybrid_retrieval(open_notebook):
    stem = "01_rrf_hybrid_retrieval"
    nb: LabNotebook = open_notebook(stem)
    inp = ch01_inputs()  # after Run All: the cache is warm and both processes read the same files
    ex = fusion_explorer(nb.page, stem)
    assert ex.root.count() == 1, f"{stem}: expected one FusionExplorer, found {ex.root.count()}"

    shown = ex.check("as loaded")
    save_screenshot(ex.root, stem)

    # RRF constant c: keyboard on the handle; continuous_update=False, so each key press sends one value
    ex.press_slider("RRF constant c", "End")
    ex.state["c"] = 200
    ex.check_control("slider 'c' readout", lambda: ex.readout("RRF constant c"), "200")
    shown = ex.check("slider 'c' (End)", shown)
    ex.press_slider("RRF constant c", "Home")
    ex.state["c"] = 1  # a single high rank now counts for more than agreement
    ex.check_control("slider 'c' readout", lambda: ex.readout("RRF constant c"), "1")
    shown = ex.check("slider 'c' (Home)", shown)
    ex.press_slider("RRF constant c", "ArrowRight", times=4)
    ex.state["c"] = 5
    ex.check_control("slider 'c' readout", lambda: ex.readout("RRF constant c"), "5")
    shown = ex.check("slider 'c' (ArrowRight x4)", shown)

    # one weight per retriever (0-2, step 0.1)
    ex.press_slider("weight bm25", "ArrowRight")
    ex.state["weight bm25"] = 1.1
    ex.check_control("slider 'weight bm25' readout", lambda: ex.readout("weight bm25"), "1.10")
    shown = ex.check("slider 'weight bm25' (ArrowRight)", shown)
    ex.press_slider("weight dense", "Home")
    ex.state["weight dense"] = 0.0  # the hybrid column is BM25's own top 10
    ex.check_control("slider 'weight dense' readout", lambda: ex.readout("weight dense"), "0.00")
    shown = ex.check("slider 'weight dense' (Home)", shown)
    ex.press_slider("weight dense", "End")
    ex.state["weight dense"] = 2.0
    ex.check_control("slider 'weight dense' readout", lambda: ex.readout("weight dense"), "2.00")
    shown = ex.check("slider 'weight dense' (End)", shown)

    # the query dropdown: the table stays, the fused top 5 is another query's
    for qid in ("it-e03", "hr-h06"):  # dev queries (the explorer opens on hr-r09)
        ex.select("query").select_option(value=f"{qid}: {inp.queries[qid].search_text[:70]}")
        ex.state["query"] = qid
        shown = ex.check(f"dropdown 'query' = {qid}", shown)

    # the question box: type, press Enter, three rankings side by side
    box = question_box(nb.page, stem)
    assert box.root.count() == 1, f"{stem}: expected one QuestionBox, found {box.root.count()}"
    box.check("as loaded")
    box.type_text("question", "what does ERR-4031 mean")
    box.state["question"] = "what does ERR-4031 mean"
    box.check("text 'question' = 'what does ERR-4031 mean' + Enter")
    box.type_text("question", "")
    box.check_error("text 'question' empty + Enter", "question", "non-empty")
    box.type_text("question", "paternaty leave how many weeks", key="Tab")  # blur commits too
    box.state["question"] = "paternaty leave how many weeks"
    box.check("text 'question' = 'paternaty leave how many weeks' + Tab")


# ---------------------------------------------------------------- 02_synthetic_hard_questions


def test_02_synthetic_hard_questions(open_notebook):
    from ch02driver import synth_explorer

    stem = "02_synthetic_hard_questions"
    nb: LabNotebook = open_notebook(stem)
    ex = synth_explorer(nb.page, stem)
    assert ex.root.count() == 1, f"{stem}: expected one SynthExplorer, found {ex.root.count()}"
    shown = ex.check("as loaded")
    save_screenshot(ex.root, stem)

    # the threshold: an IntSlider, keyboard on the handle, one value per key press (continuous_update=False)
    shown = ex.slide("keep rating ≥", "ArrowRight", "threshold", 5, "5", shown)
    # one distractor method only, then another retriever
    ex.toggle("jaccard").click()
    ex.state["method"] = "jaccard"
    shown = ex.check("toggle 'distractors' = jaccard", shown)
    ex.select("retriever").select_option("bm25")
    ex.state["retriever"] = "bm25"
    shown = ex.check("dropdown 'retriever' = bm25", shown)
    # keep everything: every question kept, nothing dropped
    ex.slide("keep rating ≥", "Home", "threshold", 1, "1", shown)


# ---------------------------------------------------------------- 03_metrics_by_hand


def test_03_metrics_by_hand(open_notebook):
    nb: LabNotebook = open_notebook("03_metrics_by_hand")
    pg = playground(nb.page, "03_metrics_by_hand")
    assert pg.root.count() == 1, f"{pg.stem}: expected one playground, found {pg.root.count()}"

    pg.check("as loaded")
    save_screenshot(pg.root, pg.stem)

    # sliders: keyboard on the handle, as a learner without a mouse would
    pg.press_slider("k", "ArrowLeft")
    pg.state["k"] = 4
    pg.check_control("slider 'k' readout", lambda: pg.readout("k"), "4")
    pg.check("slider 'k'")
    pg.press_slider("k", "ArrowRight", times=3)
    pg.state["k"] = 7  # past the end of the ranking: P@k still divides by k
    pg.check("slider 'k'")
    pg.press_slider("threshold (grade >=)", "ArrowRight")
    pg.state["thr"] = 2
    pg.check("slider 'threshold (grade >=)'")

    # toggle buttons
    pg.toggle("trec_eval: all judged").click()
    pg.state["idcg"] = "all_judged"
    pg.check("toggle 'IDCG' = trec_eval: all judged")
    pg.toggle("book: re-sort retrieved").click()
    pg.state["idcg"] = "retrieved"
    pg.check("toggle 'IDCG' = book: re-sort retrieved")
    pg.toggle("trec_eval: all judged").click()
    pg.state["idcg"] = "all_judged"
    pg.check("toggle 'IDCG' = trec_eval: all judged")

    # text boxes (Tab and Enter both commit)
    pg.type_text("judged, not retrieved", "2, 3", key="Tab")
    pg.state["unretrieved"] = "2, 3"
    pg.check("text 'judged, not retrieved'")
    grades = [3, 0, 1, 2, 0, 1]
    pg.type_text("retrieved grades", grades_text(grades))
    pg.state["grades"] = grades_text(grades)
    pg.check("text 'retrieved grades'")
    pg.check_control(
        "dropdown 'move rank' options",
        lambda: pg.select("move rank").locator("option").all_inner_texts(),
        list("123456"),
    )

    # up / down buttons move the document at the chosen rank
    pg.select("move rank").select_option("2")
    pg.button("down").click()
    grades[1], grades[2] = grades[2], grades[1]
    pg.state["grades"] = grades_text(grades)
    pg.check_control("button 'down': text 'retrieved grades'", lambda: pg.text("retrieved grades").input_value(),
                     pg.state["grades"])  # fmt: skip
    pg.check_control("button 'down': dropdown 'move rank'", lambda: pg.select("move rank").input_value(), "3")
    pg.check("button 'down' (rank 2 -> 3)")
    pg.button("up").click()
    pg.button("up").click()
    grades.insert(0, grades.pop(2))  # the document at rank 3 moves to rank 1
    pg.state["grades"] = grades_text(grades)
    pg.check_control("button 'up': text 'retrieved grades'", lambda: pg.text("retrieved grades").input_value(),
                     pg.state["grades"])  # fmt: skip
    pg.check_control("button 'up': dropdown 'move rank'", lambda: pg.select("move rank").input_value(), "1")
    pg.check("button 'up' x2 (rank 3 -> 1)")

    # invalid input: a message that names the problem, and the last valid numbers stay
    pg.type_text("retrieved grades", "0, x, 3")
    pg.check_error("text 'retrieved grades' = '0, x, 3'", "'x'", "not a number")
    pg.type_text("retrieved grades", "   ")
    pg.check_error("text 'retrieved grades' empty", "at least one grade")
    pg.type_text("judged, not retrieved", "two", key="Tab")
    pg.check_error("text 'judged, not retrieved' = 'two'", "'two'", "not a number")
    pg.type_text("judged, not retrieved", "2")
    pg.state["unretrieved"] = "2"
    pg.type_text("retrieved grades", grades_text(RUNNING_GRADES))  # the running example again
    pg.state["grades"] = grades_text(RUNNING_GRADES)
    pg.check("text 'retrieved grades' valid again")


# ---------------------------------------------------------------- 04_mrr_hit_rate_lost_in_the_middle


def test_04_mrr_hit_rate_lost_in_the_middle(open_notebook):
    stem = "04_mrr_hit_rate_lost_in_the_middle"
    nb: LabNotebook = open_notebook(stem)
    ch04_runs()  # after Run All: the embedding cache is warm and both processes read the same files
    ex = cutoff_explorer(nb.page, stem)
    assert ex.root.count() == 1, f"{stem}: expected one CutoffExplorer, found {ex.root.count()}"

    ex.check_control("slider 'k' readout", lambda: ex.readout("k"), "5")
    shown = ex.check("as loaded")
    save_screenshot(ex.root, stem)

    # k: keyboard on the handle; continuous_update=False, so each key press sends one value.
    # Every move renames the columns (RR@k, hit@k), so a stale table can never pass for a new one.
    for key, times, k in (("ArrowRight", 1, 6), ("End", 1, 20), ("Home", 1, 1), ("ArrowRight", 2, 3)):
        ex.press_slider("k", key, times=times)
        ex.state["k"] = k  # 20: the runs' full depth; 1: RR@1 equals hit@1
        ex.check_control("slider 'k' readout", lambda: ex.readout("k"), str(k))
        shown = ex.check(f"slider 'k' ({key} x{times})", shown)

    # the position study: one question through its trials, the passages in prompt order, the answer, the verdict
    px = position_explorer(nb.page, stem)
    assert px.root.count() == 1, f"{stem}: expected one PositionExplorer, found {px.root.count()}"
    shown = px.check("as loaded")
    save_screenshot(px.root, f"{stem}-positions")
    for trial in ("gold at 1 of 10", "ends order · 5 passages", "closed book"):
        px.select("trial").select_option(trial)
        px.state["trial"] = trial
        shown = px.check(f"dropdown 'trial' = {trial!r}", shown)
    table, _, _ = ch04_study()
    other = list(dict.fromkeys(table.qid))[-1]  # the last question: a move across the whole list
    px.select("question").select_option(next(text for text, qid in px.explorer.question.options if qid == other))
    px.state["question"] = other
    shown = px.check(f"dropdown 'question' = {other}", shown)
    assert other in shown["output"][0], f"{stem}: the question {other} is not shown"


# ---------------------------------------------------------------- 05_chunk_grid


def test_05_chunk_grid(open_notebook):
    stem = "05_chunk_grid"
    nb: LabNotebook = open_notebook(stem)
    ch05_grid()  # after Run All: the embedding cache is warm and both processes read the same files
    ex = chunk_grid_explorer(nb.page, stem)
    assert ex.root.count() == 1, f"{stem}: expected one ChunkGridExplorer, found {ex.root.count()}"

    shown = ex.check("as loaded")
    save_screenshot(ex.root, stem)

    # SelectionSliders: keyboard on the handle moves one option; the readout shows the option's label.
    # continuous_update=False, so each key press sends one value. Run All's grid table has already built all nine
    # chunkings in the kernel; a chunking it had not would take 1-3 s, hence the longer poll (GRID_TIMEOUT_S).
    ex.press_slider("chunk size (words)", "ArrowRight")
    ex.state["size"] = 256
    ex.check_control("slider 'chunk size (words)' readout", lambda: ex.readout("chunk size (words)"), "256")
    shown = ex.check("slider 'chunk size (words)' (ArrowRight)", shown)
    ex.press_slider("overlap", "Home")
    ex.state["overlap_share"] = 0.0
    ex.check_control("slider 'overlap' readout", lambda: ex.readout("overlap"), "0%")
    shown = ex.check("slider 'overlap' (Home)", shown)

    # k: an IntSlider, same chunking, another cut of the cached runs
    ex.press_slider("k", "ArrowLeft", times=3)
    ex.state["k"] = 7
    ex.check_control("slider 'k' readout", lambda: ex.readout("k"), "7")
    shown = ex.check("slider 'k' (ArrowLeft x3)", shown)

    # back to the smallest chunks: overlap stays 0 %, k stays 7
    ex.press_slider("chunk size (words)", "Home")
    ex.state["size"] = 64
    ex.check_control("slider 'chunk size (words)' readout", lambda: ex.readout("chunk size (words)"), "64")
    ex.check("slider 'chunk size (words)' (Home)", shown)


# ---------------------------------------------------------------- 06_faithfulness


def test_06_faithfulness(open_notebook):
    from ch06driver import ch06_inputs, faithfulness_explorer

    stem = "06_faithfulness"
    nb: LabNotebook = open_notebook(stem)
    ex = faithfulness_explorer(nb.page, stem)
    assert ex.root.count() == 1, f"{stem}: expected one FaithfulnessExplorer, found {ex.root.count()}"
    ex.check("as loaded")
    save_screenshot(ex.root, stem)
    rows, judges = ch06_inputs()

    # the judge: every judge on the same answer (the lexical one needs no model; "always supported" passes all)
    for judge in list(judges)[1:]:
        ex.select("judge").select_option(judge)
        ex.state["judge"] = judge
        ex.check(f"dropdown 'judge' = {judge!r}")
    # the display: continuous score instead of PASS/FAIL
    ex.toggle("score").click()
    ex.state["mode"] = "score"
    ex.check("toggle 'show' = score")
    # another question, with the 1.5B judge: pick one whose verdicts differ from the first question's
    ex.select("judge").select_option("1.5B")
    ex.state["judge"] = "1.5B"
    first = ex.expected()
    for qid in list(rows)[1:]:
        ex.state["question"] = qid
        if ex.expected() != first:
            break
    ex.select("question").select_option(ex.state["question"])
    ex.check(f"dropdown 'question' = {ex.state['question']!r}")


# ---------------------------------------------------------------- 07_triage


def test_07_triage(open_notebook):
    stem = "07_triage"
    nb: LabNotebook = open_notebook(stem)
    ch07_traces(3, "1.5B · hand label")  # after Run All: the embedding cache is warm, both processes read the files
    ex = triage_explorer(nb.page, stem)
    assert ex.root.count() == 1, f"{stem}: expected one TriageExplorer, found {ex.root.count()}"
    label = "k (chunks read)"

    ex.check_control(f"slider {label!r} readout", lambda: ex.readout(label), "3")
    ex.check_control("toggles", ex.chosen, ["1.5B · hand label", "GEN_FAIL"])
    shown = ex.check("as loaded")  # each example: gold span, answer, reference, the hand label and its reason
    assert "hand label: fail" in shown["examples"][0], f"{stem}: the GEN_FAIL examples show no verdict"
    save_screenshot(ex.root, stem)

    # the cell picker: a language model can be right without the evidence
    ex.toggle("LUCKY").click()
    ex.state["cell"] = "LUCKY"
    ex.check_control("toggles", ex.chosen, ["1.5B · hand label", "LUCKY"])
    shown = ex.check("toggle 'examples of' = LUCKY", shown)
    assert shown["examples"][0] != "no trace in this cell", f"{stem}: the 1.5B has no LUCKY trace on the page"

    # the reader picker: same traces, another check; the answer columns move
    ex.toggle("1.5B · lexical judge").click()
    ex.state["reader"] = "1.5B · lexical judge"
    ex.check_control("toggles", ex.chosen, ["1.5B · lexical judge", "LUCKY"])
    shown = ex.check("toggle 'reader · check' = lexical judge", shown)

    # the model was recorded at k = 3 only: another k is an error that says so, and empties the outputs
    ex.press_slider(label, "ArrowRight")
    ex.state["k"] = 4
    ex.check_control(f"slider {label!r} readout", lambda: ex.readout(label), "4")
    said = poll(lambda: "recorded at k = 3" in ex.error(), True)
    assert said, f"{stem}: TriageExplorer at k=4 with the 1.5B shows error {ex.error() or '(nothing)'!r}"

    # the extractive control at that k: the error goes, and it is never LUCKY
    ex.toggle("extractive control").click()
    ex.state["reader"] = "extractive control"
    ex.check_control("toggles", ex.chosen, ["extractive control", "LUCKY"])
    shown = ex.check("toggle 'reader · check' = extractive control", shown)
    assert shown["examples"][0] == "no trace in this cell", f"{stem}: the extractive control has LUCKY traces"

    # k: keyboard on the handle; continuous_update=False, so each key press sends one value (each k: ~1 s)
    ex.press_slider(label, "Home")
    ex.state["k"] = 1  # the reader cannot miss the only passage: GEN_FAIL is 0, every failure is retrieval's
    ex.check_control(f"slider {label!r} readout", lambda: ex.readout(label), "1")
    shown = ex.check(f"slider {label!r} (Home)", shown)
    assert cells(shown, "table")["GEN_FAIL|traces"] == "0" and "fix first: retrieval" in shown["table"][0], (
        f"{stem}: TriageExplorer slider {label!r} (Home) -> labkit says {shown['table'][0]!r} at k=1"
    )
    ex.toggle("RET_FAIL").click()
    ex.state["cell"] = "RET_FAIL"
    ex.check_control("toggles", ex.chosen, ["extractive control", "RET_FAIL"])
    ex.check("toggle 'examples of' = RET_FAIL", shown)


# ---------------------------------------------------------------- 08_case_study


def test_08_case_study(open_notebook):
    stem = "08_case_study"
    nb: LabNotebook = open_notebook(stem)
    ex = slice_triage_explorer(nb.page, stem)
    assert ex.root.count() == 1, f"{stem}: expected one SliceTriageExplorer, found {ex.root.count()}"
    assert ex.chosen() == ["real", "RET_FAIL"], f"{stem}: the explorer opens on {ex.chosen()}"
    shown = ex.check("as loaded")
    save_screenshot(ex.root, stem)

    # a slice, then a cell, then back to all: the table, the gap line and the examples follow each click
    for field, option in (("group", "hard"), ("cell", "GEN_FAIL"), ("cell", "LUCKY"), ("group", "all")):
        ex.toggle(option).click()
        ex.state[field] = option
        shown = ex.check(f"toggle {field} = {option!r}", shown)
        assert option in ex.chosen(), f"{stem}: {option!r} is not shown as chosen ({ex.chosen()})"


# ---------------------------------------------------------------- 09_router_eval


def test_09_router_eval(open_notebook):
    stem = "09_router_eval"
    nb: LabNotebook = open_notebook(stem)
    ch09_stats(5)  # after Run All: the embedding cache is warm and both processes read the same files
    ex = routing_explorer(nb.page, stem)
    assert ex.root.count() == 1, f"{stem}: expected one RoutingExplorer, found {ex.root.count()}"
    label = "k (chunks in the prompt)"

    ex.check_control(f"slider {label!r} readout", lambda: ex.readout(label), "5")
    shown = ex.check("as loaded")
    save_screenshot(ex.root, stem)

    # k: keyboard on the handle; continuous_update=False, so each key press sends one value. The widget computes
    # each k once (every query's prompt, tokenized: ~2 s in the kernel), hence the longer poll (ROUTING_TIMEOUT_S).
    # End: the run's full depth, nano and mini are out of the window; ArrowRight x9: nine values sent, k = 2..10
    for key, times, k in (("ArrowRight", 1, 6), ("End", 1, 20), ("Home", 1, 1), ("ArrowRight", 9, 10)):
        ex.press_slider(label, key, times=times)
        ex.state["k"] = k
        ex.check_control(f"slider {label!r} readout", lambda: ex.readout(label), str(k))
        shown = ex.check(f"slider {label!r} ({key} x{times})", shown)

    # the cascade: one request at a time, both answers with their labels, the check's decision, the costs
    cx = cascade_explorer(nb.page, stem)
    assert cx.root.count() == 1, f"{stem}: expected one CascadeExplorer, found {cx.root.count()}"
    shown = cx.check("as loaded")
    assert "kept the small answer" in shown["output"][0], f"{stem}: the first request shown was not kept"
    save_screenshot(cx.root, f"{stem}-cascade")
    outcomes, _ = ch09_outcomes()
    wasted = next(q for q, r in outcomes.iterrows() if cascade.outcome_label(r) == "escalated, small was right")
    cx.select("request").select_option(next(text for text, qid in cx.explorer.request.options if qid == wasted))
    cx.state["request"] = wasted
    shown = cx.check(f"dropdown 'request' = {wasted}", shown)
    assert "escalated to the large model" in shown["output"][0], f"{stem}: {wasted} is not shown as escalated"
