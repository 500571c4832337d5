"""Every chapter widget, driven in real JupyterLab: move it, and the page must show what labkit computes.

One parametrised test, one case per chapter whose manifest lists an explorer (``labkit/chapters/chNN.py``), and
00's slider. Each opens the notebook, clears the stored outputs, runs all cells in a fresh kernel, then plays the
chapter's steps (``STEPS``; a chapter without steps has each of its explorers opened and checked as loaded): it
changes every control the way a learner would (keyboard on sliders, clicks, typing), records the move in the
explorer's state, checks the control's own display (a slider's readout, the pressed toggles) and compares every
output on the page with what the same explorer, built here in the test process by its manifest's input builder
(the function the notebook calls), renders for that state (``labdriver.ExplorerPage``; the unit tests prove what
each state should show). A failure names the notebook and the widget, e.g. ``03_metrics_by_hand: MetricsPlayground
slider 'k' (ArrowLeft) -> nDCG@k shows 0.6176, labkit says 0.5992 (for ...)``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import labdriver as ld
import pytest
from labdriver import ExplorerPage

from labkit.chapters import CHAPTERS
from labkit.data.toys import RUNNING_GRADES
from labkit.studies import cascade
from labkit.ui.widgets import grades_text
from labkit.ui.widgets.chunks import IGNORED_HANDLE

pytestmark = pytest.mark.browser


# ---------------------------------------------------------------- the steps a chapter is made of


@dataclass(frozen=True)
class Control:
    """A control's own display (``read(explorer page)``), which must come to equal ``want``."""

    what: str
    read: Callable[[ExplorerPage], Any]
    want: Any


def readout(label: str, want: str) -> Control:
    return Control(f"slider {label!r} readout", lambda ex: ex.readout(label), want)


def chosen(*want: str) -> Control:
    return Control("toggles", lambda ex: ex.chosen(), list(want))


def greyed(label: str, want: bool) -> Control:  # a slider the explorer's mode ignores: its handle drawn grey
    return Control(f"slider {label!r} greyed", lambda ex: ex.handle_colour(label) == ld.css_rgb(IGNORED_HANDLE), want)


def focus_on(want: str) -> Control:  # the focused element's text, inside the explorer
    return Control("focus", lambda ex: ex.focused(), want)


def value_of(kind: str, label: str, want: str) -> Control:  # kind: "text" or "dropdown"
    return Control(
        f"{kind} {label!r}", lambda ex: (ex.text if kind == "text" else ex.select)(label).input_value(), want
    )


@dataclass(frozen=True, kw_only=True)
class Move:
    """One learner's move: ``act`` on the page, then ``state[field] = value`` (a callable value is computed from
    the explorer page at run time), then every control in ``shows``, then the outputs (``check=False``: not yet).
    ``error``: the error line must mention each fragment; with ``check`` the outputs also keep the last valid
    state's (an input error), without it the state raises and the outputs are not compared."""

    shows: tuple[Control, ...] = ()
    check: bool = True
    error: tuple[str, ...] = ()
    sets: tuple[tuple[str, Any], ...] = ()  # other controls the move changes as well: (field, value)

    def controls(self) -> tuple[Control, ...]:
        return self.shows


@dataclass(frozen=True)
class Slide(Move):
    """``times`` presses of ``key`` on the handle (continuous_update=False: each press sends one value)."""

    label: str
    key: str
    field: str
    value: Any
    readout: str | None = None
    times: int = 1

    def act(self, ex: ExplorerPage, value) -> str:
        ex.press_slider(self.label, self.key, times=self.times)
        return f"slider {self.label!r} ({self.key}{f' x{self.times}' if self.times > 1 else ''})"

    def controls(self) -> tuple[Control, ...]:
        return self.shows if self.readout is None else (readout(self.label, self.readout), *self.shows)


@dataclass(frozen=True)
class TypeReadout(Slide):
    """Click the slider's editable readout, type ``key``, press Enter."""

    def act(self, ex: ExplorerPage, value) -> str:
        ex.slider(self.label).locator(".widget-readout").click()
        ex.page.keyboard.press("ControlOrMeta+a")
        ex.page.keyboard.type(self.key)
        ex.page.keyboard.press("Enter")
        return f"slider {self.label!r} readout typed {self.key!r}"


@dataclass(frozen=True)
class Select(Move):
    """Pick ``value`` in dropdown ``label``, by the text the explorer's control ``field`` shows for it."""

    label: str
    field: str | None
    value: Any

    def act(self, ex: ExplorerPage, value) -> str:
        option = str(value)
        if self.field:  # (text, value) pairs or plain values, as ipywidgets takes them
            pairs = [o if isinstance(o, tuple) else (str(o), o) for o in ex.explorer.controls[self.field].options]
            option = next(text for text, v in pairs if v == value)
        ex.select(self.label).select_option(option)
        return f"dropdown {self.label!r} = {value!r}"


@dataclass(frozen=True)
class Toggle(Move):
    option: str
    field: str
    value: Any = None  # None: the option's text

    def __post_init__(self):
        object.__setattr__(self, "value", self.option if self.value is None else self.value)

    def act(self, ex: ExplorerPage, value) -> str:
        ex.toggle(self.option).click()
        return f"toggle {self.field} = {self.option!r}"


@dataclass(frozen=True)
class Type(Move):
    """Fill text box ``label`` with ``value``, commit with ``key`` (Enter and Tab both commit) or by clicking
    ``button``."""

    label: str
    value: str
    field: str | None = None
    key: str = "Enter"
    button: str | None = None

    def act(self, ex: ExplorerPage, value) -> str:
        ex.type_text(self.label, value, key=self.key, button=self.button)
        return f"text {self.label!r} = {value!r} + {self.key if self.button is None else f'click {self.button!r}'}"


@dataclass(frozen=True)
class Click(Move):
    label: str
    field: str
    value: Any
    times: int = 1

    def act(self, ex: ExplorerPage, value) -> str:
        for _ in range(self.times):
            ex.button(self.label).click()
        return f"button {self.label!r}{f' x{self.times}' if self.times > 1 else ''}"


@dataclass(frozen=True)
class Open:
    """The next explorer: ``widget``, an explorer the chapter's manifest lists (built by its input builder), or
    ``make(page, stem)``. Exactly one on the page, its ``shows`` controls, every output "as loaded". ``chain``: each
    later check must differ from the one before (a move that changes nothing proves nothing)."""

    widget: str | Callable[[Any, str], ExplorerPage]
    shows: tuple[Control, ...] = ()
    chain: bool = True


@dataclass(frozen=True)
class Shot:  # the current explorer -> <stem><suffix>.png in build/screenshots/, docs/img/ by `make screenshots`
    suffix: str = ""


@dataclass(frozen=True)
class Expect:  # what the last check rendered (``test(shown, state)``) says what the chapter's text says it does
    why: str
    test: Callable[[dict, dict], bool]


@dataclass
class Run:  # the driver's place in a chapter: the current explorer page and what its last check rendered
    page: Any
    manifest: Any
    ex: ExplorerPage | None = None
    chain: bool = True
    shown: dict | None = None
    last: str = ""

    @property
    def stem(self) -> str:
        return self.manifest.stem


def drive(run: Run, step) -> None:
    """Play one step of a chapter on the page."""
    ex = run.ex
    if isinstance(step, Open):
        if isinstance(step.widget, str):
            run.ex = ex = ld.explorer_page(run.page, run.manifest, step.widget)
        else:
            run.ex = ex = step.widget(run.page, run.stem)
        assert ex.root.count() == 1, f"{run.stem}: expected one {ex.name}, found {ex.root.count()}"
        for c in step.shows:
            ex.check_control(f"as loaded: {c.what}", lambda c=c: c.read(ex), c.want)
        run.chain, run.last, run.shown = step.chain, "as loaded", ex.check("as loaded")
    elif isinstance(step, Shot):
        ld.save_screenshot(ex.root, run.stem + step.suffix)
    elif isinstance(step, Expect):
        assert step.test(run.shown, ex.state), f"{run.stem}: {ex.name} {run.last} -> {step.why} (for {ex.describe()})"
    elif isinstance(step, Control):
        ex.check_control(step.what, lambda: step.read(ex), step.want)
    elif isinstance(step, Move):  # the one act -> state -> readout -> check block
        value = step.value(ex) if callable(step.value) else step.value
        timed = step.check and not step.error and getattr(step, "times", 1) == 1  # one event, one update
        want = None
        if timed:  # what the page should show, computed here before the key press: not beside the kernel
            want = ex.expected({**ex.state, **({step.field: value} if step.field else {}), **dict(step.sets)})
            ex.arm()
        widget = step.act(ex, value)
        if step.field:
            ex.state[step.field] = value
        ex.state.update(dict(step.sets))
        for c in step.controls():
            ex.check_control(f"{widget}: {c.what}", lambda c=c: c.read(ex), c.want)
        if step.error and step.check:
            ex.check_error(widget, *step.error)
        elif step.error:
            said = ld.poll(lambda: all(f in ex.error() for f in step.error), True)
            assert said, (
                f"{run.stem}: {ex.name} {widget} -> error line shows {ex.error() or '(nothing)'!r}, expected it to "
                f"mention {' and '.join(map(repr, step.error))} (for {ex.describe()})"
            )
        elif step.check:
            run.shown = ex.check(widget, run.shown if run.chain else None, want)
            if timed:
                ms = ex.record_latency(widget)
                print(f"{run.stem}: {ex.name} {widget}: {'-' if ms is None else f'{ms:.0f} ms'} key to update")
        run.last = widget
    else:
        raise TypeError(f"{run.stem}: not a step: {step!r}")


# ---------------------------------------------------------------- what some chapters need beyond the explorers


def kept_share(rank: int) -> float:
    """The function 00_welcome defines and puts behind its slider."""
    return round(1 / math.log2(rank + 1), 4)


class WelcomePage(ExplorerPage):
    """00_welcome's ``interact(kept_share, rank=3)``: its slider and the value it prints, against kept_share here."""

    outputs = ".widget-output"  # ipywidgets' own output area: a timed move ends when it changes
    # the explorers' target is for states computed ahead in the page; interact calls the function in the kernel
    no_target = "ipywidgets.interactive, a kernel round trip per move"

    def __init__(self, page, stem: str):
        self.page, self.stem, self.timeout, self.name = page, stem, ld.WIDGET_TIMEOUT_S, "interactive widget"
        self.root, self.state = page.locator(".jp-OutputArea-output .widget-interact"), {"rank": 3}

    def expected(self, state: dict | None = None) -> dict:
        return {"output": repr(kept_share((self.state if state is None else state)["rank"]))}

    def shown(self, want: dict) -> dict:
        return {"output": self.root.locator(".widget-output").inner_text().strip()}

    def error(self) -> str:
        return ""

    def explain(self, shown: dict, want: dict) -> str:
        return f"output shows {shown['output'] or '(nothing)'}, kept_share({self.state['rank']}) = {want['output']}"


def last_question(ex: ExplorerPage) -> str:
    """04: the position study's last question, a move across the whole list."""
    return list(dict.fromkeys(ld.inputs("04", "PositionExplorer")["table"].qid))[-1]


def question_with_other_verdicts(ex: ExplorerPage) -> str:
    """06: the first question after the one shown whose verdicts, by the judge now chosen, differ from its."""
    first = ex.expected()
    for qid in [r["qid"] for r in ld.inputs("06", "FaithfulnessExplorer")["rows"]][1:]:
        ex.state["question"] = qid
        if ex.expected() != first:
            break
    return ex.state["question"]


def ex_question(qid: str) -> str:
    """04b: the question ``qid`` as the reranking explorer's data holds it."""
    return ld.inputs("04b", "RerankExplorer")["data"]["questions"][qid]


def wasted_request(ex: ExplorerPage) -> str:
    """09: a request the cascade escalated although the small model was right."""
    outcomes = ld.inputs("09", "CascadeExplorer")["table"]
    return next(q for q, r in outcomes.iterrows() if cascade.outcome_label(r) == "escalated, small was right")


# ---------------------------------------------------------------- the chapters


FUSION_C, MOVED_DOWN, MOVED_UP = "RRF constant c", grades_text([3, 1, 0, 2, 0, 1]), grades_text([0, 3, 1, 2, 0, 1])
TRIAGE_K, ROUTING_K = "k (chunks read)", "k (chunks in the prompt)"
K1 = "k1 (stage 1)"

STEPS = {  # by chapter number: the steps a learner takes in it
    "00": [
        Open(WelcomePage, shows=(readout("rank", "3"),), chain=False),
        Shot(),
        Slide("rank", "ArrowRight", "rank", 4, "4"),
        Slide("rank", "ArrowLeft", "rank", 1, "1", times=3),
        TypeReadout("rank", "20", "rank", 20, "20"),  # the readout is editable
    ],
    "01": [
        Open("FusionExplorer"),
        Shot(),
        Slide(FUSION_C, "End", "c", 200, "200"),
        Slide(FUSION_C, "Home", "c", 1, "1"),  # a single high rank now counts for more than agreement
        Slide(FUSION_C, "ArrowRight", "c", 10, "10", times=2),  # log-spaced steps: 1, 3, 10, 30, 60, 100, 200
        Slide("weight bm25", "ArrowRight", "weight bm25", 1.1, "1.10"),  # one weight per retriever, 0-2 step 0.1
        Slide("weight dense", "Home", "weight dense", 0.0, "0.00"),  # the hybrid column is BM25's own top 10
        Slide("weight dense", "End", "weight dense", 2.0, "2.00"),
        Select("query", "query", "it-e03"),  # dev queries (the explorer opens on hr-r09): another fused top 5
        Select("query", "query", "hr-h06"),
        Open("QuestionBox", chain=False),  # type, press Enter: three rankings side by side
        Type("question", "what does ERR-4031 mean", "question"),
        Type("question", "", error=("question", "non-empty")),
        # blur commits too; Tab lands on the search button in this cell (not in the next cell, which JupyterLab
        # would activate, holding the page for 50-90 ms)
        Type("question", "paternaty leave how many weeks", "question", key="Tab", shows=(focus_on("search"),)),
        Type("question", "is there a stipend for home office internet", "question", button="search"),
    ],
    "02": [
        Open("SynthExplorer"),
        Shot(),
        Slide("keep rating ≥", "ArrowRight", "threshold", 5, "5"),
        Toggle("jaccard", "method"),  # one distractor method only, then another retriever
        Select("retriever", "retriever", "bm25"),
        Slide("keep rating ≥", "Home", "threshold", 1, "1"),  # keep everything: nothing dropped
    ],
    "03": [
        Open("metrics_playground", chain=False),
        Shot(),
        Slide("k", "ArrowLeft", "k", 4, "4"),  # keyboard on the handle, as a learner without a mouse would
        Slide("k", "ArrowRight", "k", 7, times=3),  # past the end of the ranking: P@k still divides by k
        Slide("threshold (grade >=)", "ArrowRight", "thr", 2),
        Toggle("trec_eval: all judged", "idcg", "all_judged"),
        Toggle("book: re-sort retrieved", "idcg", "retrieved"),
        Toggle("trec_eval: all judged", "idcg", "all_judged"),
        Type("judged, not retrieved", "2, 3", "unretrieved", key="Tab"),
        Type("retrieved grades", grades_text([3, 0, 1, 2, 0, 1]), "grades"),
        Control("dropdown 'move rank' options", lambda ex: ex.select("move rank").locator("option").all_inner_texts(),
                list("123456")),
        # up / down move the document at the chosen rank: down swaps ranks 2 and 3, up x2 takes rank 3 to 1
        Select("move rank", None, "2", check=False),
        Click("down", "grades", MOVED_DOWN, shows=(value_of("text", "retrieved grades", MOVED_DOWN),
                                                   value_of("dropdown", "move rank", "3"))),
        Click("up", "grades", MOVED_UP, times=2, shows=(value_of("text", "retrieved grades", MOVED_UP),
                                                         value_of("dropdown", "move rank", "1"))),
        # invalid input: a message that names the problem, and the last valid numbers stay
        Type("retrieved grades", "0, x, 3", error=("'x'", "not a number")),
        Type("retrieved grades", "   ", error=("at least one grade",)),
        Type("judged, not retrieved", "two", key="Tab", error=("'two'", "not a number")),
        Type("judged, not retrieved", "2", "unretrieved", check=False),
        Type("retrieved grades", grades_text(RUNNING_GRADES), "grades"),  # the running example, valid again
    ],
    "04": [
        Open("CutoffExplorer", shows=(readout("k", "5"),)),
        Shot(),
        # every move renames the columns (RR@k, hit@k), so a stale table can never pass for a new one
        Slide("k", "ArrowRight", "k", 6, "6"),
        Slide("k", "End", "k", 20, "20"),  # the runs' full depth
        Slide("k", "Home", "k", 1, "1"),  # RR@1 equals hit@1
        Slide("k", "ArrowRight", "k", 3, "3", times=2),
        # the position study: one question through its trials, the passages in prompt order, answer, verdict
        Open("PositionExplorer"),
        Shot("-positions"),
        Select("trial", "trial", "gold at 1 of 10"),
        Select("trial", "trial", "ends order · 5 passages"),
        Select("trial", "trial", "closed book"),
        Select("question", "question", last_question),
        Expect("the question is not shown", lambda shown, state: state["question"] in shown["output"][0]),
    ],
    "04b": [
        Open("RerankExplorer", shows=(readout(K1, "10"), chosen("1.5B yes/no"))),
        Shot(),
        Slide("k2 (kept)", "ArrowRight", "k2", 5, "5"),
        # the model reranker was recorded at k1 = 10 only: the slider stands there, greyed; a key press does not move it
        Slide(K1, "ArrowRight", "k1", 10, "10", check=False),
        Toggle("lambdarank", "reranker", shows=(chosen("lambdarank"),)),
        Slide(K1, "ArrowRight", "k1", 20, "20"),
        Slide(K1, "End", "k1", 100, "100"),  # a deeper stage 1: the ceiling rises, the cost line stays at 0 requests
        # back to the model: k1 returns to its one recorded value, no error on the way
        Toggle("1.5B yes/no", "reranker", sets=(("k1", 10),), shows=(readout(K1, "10"), chosen("1.5B yes/no"))),
        Select("question", "qid", lambda ex: list(ex.explorer.data["questions"])[-1]),
        Expect("the question is not shown",
               lambda shown, state: ex_question(state["qid"]) in shown["ranks"][0]),
    ],
    "05": [
        # SelectionSliders: a key press moves one option, the readout shows its label. Run All has built all nine
        # chunkings in the kernel; one it had not would take 1-3 s, hence the longer poll (GRID_TIMEOUT_S)
        Open("ChunkGridExplorer", shows=(greyed("k", True), greyed("budget (words)", False))),
        Shot(),
        Slide("chunk size (words)", "ArrowRight", "size", 256, "256"),
        Slide("overlap", "Home", "overlap_share", 0.0, "0%"),
        Slide("budget (words)", "ArrowLeft", "budget", 960, "960"),  # an equal budget: k follows the size
        Toggle("shared k", "mode", shows=(greyed("budget (words)", True), greyed("k", False))),  # budget ignored
        Slide("k", "ArrowLeft", "k", 7, "7", times=3),  # an IntSlider: same chunking, another cut of the runs
        Slide("chunk size (words)", "Home", "size", 64, "64"),  # overlap stays 0 %, k stays 7
    ],
    "06": [
        Open("FaithfulnessExplorer", chain=False),
        Shot(),
        # every judge on the same answer (the manifest's judges after the first; "always supported" passes all)
        *(Select("judge", "judge", j) for j in ("1.5B + quote guard", "0.5B", "lexical", "always supported")),
        Toggle("score", "mode"),  # a continuous score instead of PASS/FAIL
        # another question, with the 1.5B judge: one whose verdicts differ from the first question's
        Select("judge", "judge", "1.5B", check=False),
        Select("question", "question", question_with_other_verdicts),
    ],
    "07": [
        Open("TriageExplorer", shows=(readout(TRIAGE_K, "3"), chosen("1.5B · rater label", "GEN_FAIL"))),
        # each example: gold span, answer, reference, the rater label and its reason
        Expect("the GEN_FAIL examples show no verdict", lambda shown, _: "rater label: fail" in shown["examples"][0]),
        Shot(),
        # the cell picker: a language model can be right without the evidence
        Toggle("LUCKY", "cell", shows=(chosen("1.5B · rater label", "LUCKY"),)),
        Expect("the 1.5B has no LUCKY trace", lambda shown, _: shown["examples"][0] != "no trace in this cell"),
        # the reader picker: same traces, another check; the answer columns move
        Toggle("1.5B · lexical judge", "reader", shows=(chosen("1.5B · lexical judge", "LUCKY"),)),
        # the model was recorded at k = 3 only: the slider is locked there, a key press does not move it
        Slide(TRIAGE_K, "ArrowRight", "k", 3, "3", check=False),
        # the extractive control can sweep k, and it is never LUCKY
        Toggle("extractive control", "reader", shows=(chosen("extractive control", "LUCKY"),)),
        Expect("the extractive control has LUCKY traces",
               lambda shown, _: shown["examples"][0] == "no trace in this cell"),
        Slide(TRIAGE_K, "ArrowRight", "k", 4, "4"),
        # back to the model: the slider returns to its one recorded k, no error on the way
        Toggle("1.5B · lexical judge", "reader", sets=(("k", 3),),
               shows=(readout(TRIAGE_K, "3"), chosen("1.5B · lexical judge", "LUCKY"))),
        Toggle("extractive control", "reader", shows=(chosen("extractive control", "LUCKY"),)),
        # each k: ~1 s. At k = 1 the reader cannot miss the only passage: GEN_FAIL is 0, every failure retrieval's
        Slide(TRIAGE_K, "Home", "k", 1, "1"),
        Expect("GEN_FAIL is not 0 or the fix is not retrieval's", lambda shown, _: (
            ld.cells(shown, "table")["GEN_FAIL|traces"] == "0" and "fix first: retrieval" in shown["table"][0])),
        Toggle("RET_FAIL", "cell", shows=(chosen("extractive control", "RET_FAIL"),)),
    ],
    "08": [
        Open("SliceTriageExplorer", shows=(chosen("real", "RET_FAIL"),)),
        Shot(),
        # a slice, then a cell, then back to all: the table, the gap line and the examples follow each click
        Toggle("hard", "group", shows=(chosen("hard", "RET_FAIL"),)),
        Toggle("GEN_FAIL", "cell", shows=(chosen("hard", "GEN_FAIL"),)),
        Toggle("LUCKY", "cell", shows=(chosen("hard", "LUCKY"),)),
        Toggle("all", "group", shows=(chosen("all", "LUCKY"),)),
    ],
    "09": [
        # each k is computed once (every query's prompt, tokenized: ~2 s), hence the longer poll (ROUTING_TIMEOUT_S)
        Open("RoutingExplorer", shows=(readout(ROUTING_K, "5"),)),
        Shot(),
        Slide(ROUTING_K, "ArrowRight", "k", 6, "6"),
        Slide(ROUTING_K, "End", "k", 20, "20"),  # the run's full depth: nano and mini are out of the window
        Slide(ROUTING_K, "Home", "k", 1, "1"),
        Slide(ROUTING_K, "ArrowRight", "k", 10, "10", times=9),  # nine values sent, k = 2..10
        # the cascade: one request at a time, both answers with their labels, the check's decision, the costs
        Open("CascadeExplorer"),
        Expect("the first request shown was not kept", lambda shown, _: "kept the small answer" in shown["output"][0]),
        Shot("-cascade"),
        Select("request", "request", wasted_request),
        Expect("the request is not shown as escalated",
               lambda shown, _: "escalated to the large model" in shown["output"][0]),
    ],
}  # fmt: skip


def driven(c) -> list[str]:
    """The explorers of chapter ``c``'s manifest a browser test drives here (not the labelling widget, driven by
    test_labelling_in_lab.py)."""
    return [e.widget for e in c.explorers if e.widget != ld.LABELLER]


def steps_of(c) -> list:
    """Chapter ``c``'s steps, or, for a chapter without any, each of its explorers opened and checked as loaded."""
    return STEPS.get(c.number) or [Open(widget, chain=False) for widget in driven(c)]


CASES = [c for c in CHAPTERS if c.number in STEPS or driven(c)]


def test_every_explorer_of_every_manifest_is_opened():
    """The steps name manifest chapters only, and open every explorer their chapter's manifest lists (a chapter
    without steps is opened explorer by explorer); every notebook that stores a widget is a case here or holds
    nothing but labelling widgets."""
    numbers = {c.number for c in CHAPTERS}
    assert set(STEPS) <= numbers, f"steps for chapters no manifest defines: {sorted(set(STEPS) - numbers)}"
    for c in CASES:
        opened = [s.widget for s in steps_of(c) if isinstance(s, Open) and isinstance(s.widget, str)]
        assert sorted(opened) == sorted(driven(c)), f"{c.stem}: the steps open {opened}, its manifest lists {driven(c)}"
    with_widgets = set()
    for path in ld.NOTEBOOKS.glob("*.ipynb"):
        for cell in json.loads(path.read_text())["cells"]:
            for out in cell.get("outputs", []):
                if "application/vnd.jupyter.widget-view+json" in out.get("data", {}):
                    with_widgets.add(path.stem)
    labelling_only = {c.stem for c in CHAPTERS if c.explorers and not driven(c)}
    missing = sorted(with_widgets - {c.stem for c in CASES} - labelling_only)
    assert not missing, f"notebooks with widgets their manifest does not list: {missing}"


@pytest.mark.parametrize("manifest", CASES, ids=[c.stem for c in CASES])
def test_chapter_widgets(open_notebook, manifest):
    nb = open_notebook(manifest.stem)
    for widget in driven(manifest):  # after Run All: the inputs built here, while the kernel is idle
        ld.built_inputs(manifest.explorer(widget))
    run = Run(nb.page, manifest)
    for step in steps_of(manifest):
        drive(run, step)
