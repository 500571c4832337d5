"""Helpers of the browser tests (imported by conftest.py and the tests): servers, Chromium, JupyterLab pages."""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import SimpleNamespace

import labkit
from labkit import metrics, plots

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
SCREENSHOTS = ROOT / "docs" / "img"

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
EXPECT_TIMEOUT_MS = 60_000  # a cold kernel plus Run All; Playwright's default 5 s is far too short
SERVER_START_TIMEOUT_S = 90
SCREENSHOT_MAX_BYTES = 200_000
WIDGET_TIMEOUT_S = 20.0  # once the kernel is warm one widget round trip takes well under a second

# The three settings of the field notes: render every cell (no virtual scrolling), no news pop-up, never save.
LAB_SETTINGS = {
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false"},
    "@jupyterlab/docmanager-extension/plugin.jupyterlab-settings": {"autosave": False},
}


def find_chromium() -> str | None:
    """The Chromium binary to drive, or None.

    ``$LABKIT_CHROMIUM`` when set (and then only it), else ``chromium`` on PATH, else ``/usr/bin/chromium``.
    """
    chosen = os.environ.get("LABKIT_CHROMIUM")
    if chosen:
        candidates = [chosen]
    else:
        candidates = [shutil.which("chromium"), shutil.which("chromium-browser"), "/usr/bin/chromium"]
    for c in candidates:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    return None


# ---------------------------------------------------------------- servers


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """A child process serving HTTP on 127.0.0.1; stopped by its PID (and its process group)."""

    def __init__(self, name: str, argv: list[str], port: int, log: Path, env: dict[str, str], cwd: Path):
        self.name, self.port, self.log = name, port, log
        self.url = f"http://127.0.0.1:{port}"
        self._log_file = log.open("wb")
        self.proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=self._log_file,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def log_text(self) -> str:
        try:
            return self.log.read_text(errors="replace")
        except OSError:
            return ""

    def log_tail(self, n: int = 40) -> str:
        return "\n".join(self.log_text().splitlines()[-n:]) or "(empty log)"

    def wait_ready(self, path: str | None, timeout: float = SERVER_START_TIMEOUT_S) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited with {self.proc.returncode}:\n{self.log_tail()}")
            try:
                if path is None:  # only "is it listening?": a GET on a Voila page would execute the notebook
                    socket.create_connection(("127.0.0.1", self.port), timeout=5).close()
                    return
                with urllib.request.urlopen(self.url + path, timeout=5) as r:
                    if r.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.25)
        self.stop()
        raise RuntimeError(f"{self.name} did not answer {path} within {timeout:.0f} s:\n{self.log_tail()}")

    def stop(self) -> None:
        """SIGTERM to the PID (the server then shuts its kernels down); SIGKILL to its process group if it hangs."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        try:  # a kernel it failed to shut down lives in the same process group (start_new_session=True)
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self._log_file.close()

    # ---- REST helpers (no token: the server was started with an empty one)

    def api(self, method: str, path: str) -> object:
        req = urllib.request.Request(self.url + path, method=method)
        with urllib.request.urlopen(req, timeout=30) as r:
            body = r.read()
        return json.loads(body) if body else None

    def shutdown_kernels(self) -> None:
        """Delete every session (which shuts its kernel down), then any kernel left."""
        for s in self.api("GET", "/api/sessions"):
            self.api("DELETE", f"/api/sessions/{s['id']}")
        for k in self.api("GET", "/api/kernels"):
            self.api("DELETE", f"/api/kernels/{k['id']}")
        deadline = time.monotonic() + 20
        while self.api("GET", "/api/kernels") and time.monotonic() < deadline:
            time.sleep(0.2)


def save_screenshot(locator, stem: str) -> Path:
    """Element screenshot of a chapter's main widget -> docs/img/<stem>.png (rewritten only if it changed)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    data = locator.screenshot(animations="disabled", caret="hide")
    path = SCREENSHOTS / f"{stem}.png"
    assert len(data) < SCREENSHOT_MAX_BYTES, f"{stem}: screenshot is {len(data)} bytes, keep it under 200 KB"
    if not path.exists() or path.read_bytes() != data:
        path.write_bytes(data)
    return path


# ---------------------------------------------------------------- JupyterLab pages


class LabNotebook:
    """One notebook opened in JupyterLab, outputs cleared and every cell run in a fresh kernel."""

    def __init__(self, page, server: Server, stem: str):
        self.page, self.server, self.stem = page, server, stem

    def status_idle(self):
        from playwright.sync_api import expect

        # the status bar's kernel item ("Python 3 (ipykernel) | Idle"), not the toolbar indicator,
        # which says idle before the kernel exists
        expect(
            self.page.locator(".jp-StatusBar-TextItem").filter(has_text=re.compile(r"\|\s*Idle")).first,
            f"{self.stem}: kernel never became idle",
        ).to_be_visible()

    def menu(self, top: str, item: str) -> None:
        self.page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(f"^{re.escape(top)}$")).click()
        self.page.locator(".lm-Menu-itemLabel", has_text=re.compile(f"^{re.escape(item)}$")).click()

    def open_and_run_all(self) -> None:
        page = self.page
        # ?reset: an empty workspace, so no other notebook is restored (and no second kernel started)
        page.goto(f"{self.server.url}/lab/tree/{self.stem}.ipynb?reset")
        self.status_idle()
        # Stored outputs (and stored widget state) must not be mistaken for live widgets: clear them first.
        self.menu("Edit", "Clear Outputs of All Cells")
        page.wait_for_function(f"() => {{ const p = {PROMPTS}; return p.numbered === 0; }}")
        self.menu("Run", "Run All Cells")
        deadline = time.monotonic() + EXPECT_TIMEOUT_MS / 1000
        stalled_since = None
        while True:
            p = page.evaluate(f"() => {PROMPTS}")
            if p["total"] and p["numbered"] == p["total"]:
                break
            # Run All stops at the first error: nothing queued any more but cells left unrun
            stalled = p["queued"] == 0 and p["numbered"] > 0
            stalled_since = (stalled_since or time.monotonic()) if stalled else None
            if (stalled_since and time.monotonic() - stalled_since > 2) or time.monotonic() > deadline:
                raise AssertionError(
                    f"{self.stem}: Run All Cells ran {p['numbered']} of {p['total']} code cells"
                    + (f"; error output:\n{self.errors()}" if self.errors() else " before the timeout")
                )
            time.sleep(0.2)
        self.status_idle()
        errors = self.errors()
        assert not errors, f"{self.stem}: a cell failed under Run All Cells:\n{errors}"

    def errors(self) -> str:
        """Text of error outputs (tracebacks) in the notebook, if any."""
        tb = self.page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")
        texts = [t for t in tb.all_inner_texts() if "Traceback" in t or "Error" in t]
        return "\n".join(texts)[-3000:]


# How many code cells are run ("[12]:") and queued ("[*]:") on the page.
PROMPTS = (
    "(() => { const t = [...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')].map(e => e.textContent);"
    " return {total: t.length, numbered: t.filter(s => /\\[\\d+\\]/.test(s)).length,"
    " queued: t.filter(s => s.includes('[*]')).length}; })()"
)


# ---------------------------------------------------------------- widgets


def fmt(v: float | None) -> str:
    """How the playground prints a metric (labkit.widgets._fmt, restated so a bug there is caught)."""
    return "undefined" if v is None else f"{v:.4f}"


def grades_text(grades: list[int]) -> str:
    return ", ".join(str(g) for g in grades)


def exact(text: str) -> re.Pattern:
    return re.compile(f"^\\s*{re.escape(text)}\\s*$")


def poll(read, want, timeout: float = WIDGET_TIMEOUT_S):
    """Read until ``read() == want`` or the timeout; return the last value read."""
    deadline = time.monotonic() + timeout
    while True:
        got = read()
        if got == want or time.monotonic() > deadline:
            return got
        time.sleep(0.1)


class Playground:
    """The 03 playground on the page, with the state the test has put it in."""

    def __init__(self, page, stem: str = "03_metrics_by_hand"):
        self.page, self.stem = page, stem
        self.root = page.locator(".jp-OutputArea-output > .widget-vbox").filter(has=page.locator(".lk-result"))
        self.grades, self.k, self.thr, self.unretrieved, self.idcg = [0, 2, 0, 3, 1], 5, 1, [2], "retrieved"

    # -- controls
    def slider(self, label: str):
        return self.root.locator(".widget-slider").filter(has=self.page.locator("label", has_text=exact(label)))

    def text(self, label: str):
        return self.root.get_by_label(label, exact=True)

    def button(self, label: str):
        return self.root.locator("button", has_text=exact(label))

    @property
    def dropdown(self):
        return self.root.locator(".widget-dropdown select")

    # -- what the page shows
    def table(self) -> dict[str, str]:
        return self.root.locator(".lk-value").evaluate_all(
            "els => Object.fromEntries(els.map(e => [e.dataset.metric, e.textContent.trim()]))"
        )

    def error(self) -> str:
        err = self.root.locator(".lk-error")
        return err.first.inner_text().strip() if err.count() else ""

    def expected(self) -> dict[str, str]:
        result = metrics.ranking_metrics(self.grades, self.k, self.thr, self.unretrieved, self.idcg)
        return {name: fmt(v) for name, v in result.items()}

    def chart_sha256(self) -> str:
        """SHA-256 of the PNG the chart <img> shows (ipywidgets serves it from a blob: URL)."""
        return self.root.locator(".widget-image").first.evaluate(
            """async img => {
                if (!img.src) return "(no image)";
                const bytes = await (await fetch(img.src)).arrayBuffer();
                const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
                return Array.from(digest, b => b.toString(16).padStart(2, "0")).join("");
            }"""
        )

    def expected_chart_sha256(self) -> str:
        """The same chart drawn here by labkit (Agg output is byte-identical to the kernel's)."""
        labkit.setup()  # the notebook's matplotlib style, as its first cell sets it
        fig = plots.plot_gain_discount(self.grades, self.k, self.unretrieved, self.idcg)
        return hashlib.sha256(plots.figure_png(fig)).hexdigest()

    # -- checks
    def check(self, widget: str) -> None:
        """The table and the chart show what labkit computes for the current state, and no error."""
        want = self.expected()
        state = f"grades={self.grades} k={self.k} thr={self.thr} unretrieved={self.unretrieved} idcg={self.idcg!r}"
        shown = poll(self.table, want)
        if shown != want:
            diffs = [
                f"{name} shows {shown.get(name, '(missing)')}, labkit says {value}"
                for name, value in want.items()
                if shown.get(name) != value
            ]
            error = self.error()
            raise AssertionError(
                f"{self.stem}: {widget} -> {'; '.join(diffs)}"
                + (f" [widget error: {error}]" if error else "")
                + f" (for {state})"
            )
        assert not self.error(), f"{self.stem}: {widget} -> unexpected error {self.error()!r}"
        want_chart = self.expected_chart_sha256()
        assert poll(self.chart_sha256, want_chart) == want_chart, (
            f"{self.stem}: {widget} -> the gain/discount chart is not the one labkit draws for {state}"
        )

    def check_error(self, widget: str, *fragments: str) -> None:
        """The error line names the problem; the table keeps the last valid values."""
        before = self.expected()
        shown = poll(lambda: all(f in self.error() for f in fragments), True)
        assert shown, (
            f"{self.stem}: {widget} -> error line shows {self.error() or '(nothing)'!r}, "
            f"expected it to mention {' and '.join(map(repr, fragments))}"
        )
        assert self.table() == before, f"{self.stem}: {widget} -> the table changed although the input is invalid"

    def check_control(self, widget: str, read, want: str) -> None:
        shown = poll(read, want)
        assert shown == want, f"{self.stem}: {widget} shows {shown!r}, expected {want!r}"

    # -- actions
    def press_slider(self, label: str, key: str, times: int = 1) -> None:
        handle = self.slider(label).locator(".noUi-handle")
        handle.focus()
        for _ in range(times):
            handle.press(key)

    def type_text(self, label: str, value: str, key: str = "Enter") -> None:
        box = self.text(label)
        box.fill(value)
        box.press(key)


# ---------------------------------------------------------------- chapter 01

CH01_STEM = "01_rrf_hybrid_retrieval"


@functools.cache
def ch01_inputs() -> SimpleNamespace:
    """What 01_rrf_hybrid_retrieval builds before its widgets, rebuilt here once per session (~7 s).

    ``runs`` are each retriever's top 100 per **dev** query, ``qrels`` and ``groups`` the dev queries' (the
    explorer shows the dev split only); ``retrievers`` are the QuestionBox's three.
    The dense vectors come from the committed cache in data/embeddings/, so nothing is embedded but queries.
    """
    from labkit.chunking import chunk_corpus, spans_to_qrels
    from labkit.data import load_corpus, load_queries
    from labkit.retrieval import BM25Retriever, DenseRetriever, HybridRetriever, make_run

    queries = load_queries()
    dev = [q for q in queries if q.split == "dev"]
    chunks = chunk_corpus(load_corpus(), 128, 32)
    bm25, dense = BM25Retriever(chunks), DenseRetriever(chunks)
    return SimpleNamespace(
        queries={q.qid: q for q in queries},
        qrels=spans_to_qrels(dev, chunks),
        groups={q.qid: q.slice for q in dev},
        runs={"bm25": make_run(bm25, dev, 100), "dense": make_run(dense, dev, 100)},
        retrievers={"bm25": bm25, "dense": dense, "hybrid": HybridRetriever([bm25, dense], c=60)},
    )


def _diffs(shown: dict, want: dict) -> list[str]:
    return [
        f"{key} shows {shown.get(key, '(missing)')}, labkit says {value}"
        for key, value in want.items()
        if shown.get(key) != value
    ] + [f"{key} shows {shown[key]}, labkit has no such cell" for key in shown if key not in want]


class FusionExplorerPage:
    """The 01 fusion explorer (``labkit.widgets.FusionExplorer``) on the page, with the state the test put it in."""

    def __init__(self, page, stem: str = CH01_STEM):
        self.page, self.stem = page, stem
        self.root = page.locator(".lk-fusion-explorer")
        self.c, self.weights, self.qid = 60, {"bm25": 1.0, "dense": 1.0}, "hr-r09"  # as the notebook creates it

    # -- controls
    def slider(self, label: str):
        return self.root.locator(".widget-slider").filter(has=self.page.locator("label", has_text=exact(label)))

    @property
    def dropdown(self):
        return self.root.locator(".widget-dropdown select")

    # -- what the page shows
    def table(self) -> dict[str, str]:
        return self.root.locator("td.lk-value").evaluate_all(
            "els => Object.fromEntries(els.map(e => [e.dataset.cell, e.textContent.trim()]))"
        )

    def ranking(self) -> list[str]:
        """``"<chunk id> <score>"`` per fused rank, the id from ``data-chunk``, the score as printed."""
        return self.root.locator("li.lk-rank").evaluate_all(
            "els => els.map(e => e.dataset.chunk + ' ' + e.textContent.trim().split(/\\s+/)[1])"
        )

    def state(self) -> str:
        return f"c={self.c} weights={self.weights} query={self.qid!r}"

    def expected(self) -> tuple[dict[str, str], list[str]]:
        from labkit import fusion

        inp = ch01_inputs()
        weights = [self.weights[name] for name in inp.runs]
        table = fusion.hybrid_table(inp.runs, inp.qrels, inp.groups, c=self.c, weights=weights, k=10)
        cells = {f"{m}|{n}|{group}": fmt(v) for group, row in table.iterrows() for (m, n), v in row.items()}
        fused, score = fusion.rrf([run[self.qid] for run in inp.runs.values()], c=self.c, top_n=5, weights=weights)
        return cells, [f"{d} {score[d]:.5f}" for d in fused]

    # -- checks
    def check(self, widget: str, previous: tuple | None = None) -> tuple:
        """Every table cell and the fused top 5 show labkit's values for the current state.

        ``previous``: what the last check expected; a move that changes nothing would prove nothing.
        Returns what this check expected.
        """
        want_table, want_ranking = want = self.expected()
        assert want != previous, f"{self.stem}: {widget} -> the test's move changes nothing ({self.state()})"
        shown = poll(lambda: (self.table(), self.ranking()), want)
        if shown != want:
            problems = _diffs(shown[0], want_table)
            if shown[1] != want_ranking:
                problems.append(f"fused top 5 shows {shown[1]}, labkit says {want_ranking}")
            raise AssertionError(f"{self.stem}: FusionExplorer {widget} -> {'; '.join(problems)} (for {self.state()})")
        return want

    def check_control(self, widget: str, read, want: str) -> None:
        shown = poll(read, want)
        assert shown == want, f"{self.stem}: FusionExplorer {widget} shows {shown!r}, expected {want!r}"

    def readout(self, label: str) -> str:
        return self.slider(label).locator(".widget-readout").inner_text().strip()

    # -- actions
    def press_slider(self, label: str, key: str, times: int = 1) -> None:
        handle = self.slider(label).locator(".noUi-handle")
        handle.focus()
        for _ in range(times):
            handle.press(key)


class QuestionBoxPage:
    """The 01 question box (``labkit.widgets.QuestionBox``): one question, each retriever's top 5 side by side."""

    def __init__(self, page, stem: str = CH01_STEM, question: str = "my vpn says certificate expired what do i do"):
        self.page, self.stem, self.question = page, stem, question
        self.root = page.locator(".lk-question-box")

    @property
    def text(self):
        return self.root.get_by_label("question", exact=True)

    def columns(self) -> dict[str, list[str]]:
        """``{retriever: [chunk id at rank 1, 2, ...]}`` from the ``data-cell="{retriever}|{rank}"`` cells."""
        cells = self.root.locator("td[data-cell]").evaluate_all(
            "els => els.map(e => [e.dataset.cell, e.textContent.trim()])"
        )
        out: dict[str, dict[int, str]] = {}
        for key, text in cells:
            name, rank = key.rsplit("|", 1)
            out.setdefault(name, {})[int(rank)] = text
        return {name: [ids[r] for r in sorted(ids)] for name, ids in out.items()}

    def error(self) -> str:
        err = self.root.locator(".lk-error")
        return err.first.inner_text().strip() if err.count() else ""

    def expected(self) -> dict[str, list[str]]:
        from labkit.retrieval import side_by_side

        frame = side_by_side(self.question, ch01_inputs().retrievers, k=5)
        return {name: [re.sub(r"\s+\[gold \d+\]$", "", v) for v in frame[name]] for name in frame.columns}

    def check(self, widget: str) -> None:
        want = self.expected()
        shown = poll(self.columns, want)
        if shown != want:
            problems = [
                f"{name} shows {shown.get(name, '(missing)')}, labkit says {ids}"
                for name, ids in want.items()
                if shown.get(name) != ids
            ]
            error = self.error()
            raise AssertionError(
                f"{self.stem}: QuestionBox {widget} -> {'; '.join(problems)}"
                + (f" [widget error: {error}]" if error else "")
                + f" (for question {self.question!r})"
            )
        assert not self.error(), f"{self.stem}: QuestionBox {widget} -> unexpected error {self.error()!r}"

    def check_error(self, widget: str, *fragments: str) -> None:
        """The error line names the problem; the table keeps the last valid question's rankings."""
        before = self.expected()
        shown = poll(lambda: all(f in self.error() for f in fragments), True)
        assert shown, (
            f"{self.stem}: QuestionBox {widget} -> error line shows {self.error() or '(nothing)'!r}, "
            f"expected it to mention {' and '.join(map(repr, fragments))}"
        )
        assert self.columns() == before, f"{self.stem}: QuestionBox {widget} -> the table changed on invalid input"

    def ask(self, question: str, key: str = "Enter") -> None:
        self.text.fill(question)
        self.text.press(key)


# ---------------------------------------------------------------- chapter 04

CH04_STEM = "04_mrr_hit_rate_lost_in_the_middle"


@functools.cache
def ch04_runs() -> dict[str, dict[str, list[str]]]:
    """The ``runs`` 04_mrr_hit_rate_lost_in_the_middle gives its CutoffExplorer: each retriever's top 20.

    Same chunks (128/32) and retrievers as chapter 01 (the notebook's ``HybridRetriever([bm25, dense])`` is
    ``ch01_inputs().retrievers["hybrid"]``: c=60, depth 100), so they are reused; the runs are made at depth 20
    as the notebook does, not cut from chapter 01's top 100, so BM25's tie order is the notebook's own.
    """
    from labkit.retrieval import make_run

    inp = ch01_inputs()
    queries = list(inp.queries.values())
    return {name: make_run(r, queries, 20) for name, r in inp.retrievers.items()}


@functools.cache
def ch04_judgements() -> tuple[dict[str, dict[str, int]], dict[str, str]]:
    """The ``qrels`` and slices 04's CutoffExplorer gets: every query's (chapter 01's cover its dev split only)."""
    from labkit.chunking import spans_to_qrels

    inp = ch01_inputs()
    queries = list(inp.queries.values())
    qrels = spans_to_qrels(queries, inp.retrievers["bm25"].chunks)
    return qrels, {q.qid: q.slice for q in queries}


class CutoffExplorerPage:
    """The 04 explorer (``labkit.widgets.CutoffExplorer``) on the page, with the state the test put it in."""

    def __init__(self, page, stem: str = CH04_STEM):
        self.page, self.stem = page, stem
        self.root = page.locator(".lk-cutoff-explorer")
        self.k = 5  # as the notebook creates it

    # -- controls
    def slider(self, label: str):
        return self.root.locator(".widget-slider").filter(has=self.page.locator("label", has_text=exact(label)))

    def readout(self, label: str) -> str:
        return self.slider(label).locator(".widget-readout").inner_text().strip()

    # -- what the page shows
    def table(self) -> dict[str, str]:
        return self.root.locator("td.lk-value").evaluate_all(
            "els => Object.fromEntries(els.map(e => [e.dataset.cell, e.textContent.trim()]))"
        )

    def state(self) -> str:
        return f"k={self.k}"

    def expected(self) -> dict[str, str]:
        (qrels, groups), k = ch04_judgements(), self.k
        cut = {name: {q: r[:k] for q, r in run.items()} for name, run in ch04_runs().items()}
        table = metrics.compare_runs(cut, qrels, groups, (f"RR@{k}", f"hit@{k}"))
        return {f"{m}|{n}|{group}": fmt(v) for group, row in table.iterrows() for (m, n), v in row.items()}

    # -- checks
    def check(self, widget: str, previous: dict | None = None) -> dict:
        """Every table cell shows labkit's value for the current k (the metric names in ``data-cell`` carry k).

        ``previous``: what the last check expected; a move that changes nothing would prove nothing.
        Returns what this check expected.
        """
        want = self.expected()
        assert want != previous, (
            f"{self.stem}: CutoffExplorer {widget} -> the test's move changes nothing ({self.state()})"
        )
        shown = poll(self.table, want)
        if shown != want:
            raise AssertionError(
                f"{self.stem}: CutoffExplorer {widget} -> {'; '.join(_diffs(shown, want))}"
                f" (for {self.state()}; slider 'k' reads {self.readout('k')!r})"
            )
        return want

    def check_control(self, widget: str, read, want: str) -> None:
        shown = poll(read, want)
        assert shown == want, f"{self.stem}: CutoffExplorer {widget} shows {shown!r}, expected {want!r}"

    # -- actions
    def press_slider(self, label: str, key: str, times: int = 1) -> None:
        handle = self.slider(label).locator(".noUi-handle")
        handle.focus()
        for _ in range(times):
            handle.press(key)


# ---------------------------------------------------------------- chapter 05

CH05_STEM = "05_chunk_grid"
GRID_TIMEOUT_S = 60.0  # a chunking the kernel has not built yet: chunk, index BM25, load cached vectors (1-3 s)


@functools.cache
def ch05_grid():
    """The ``dev`` ChunkGrid 05_chunk_grid builds before its widget, rebuilt here once per session.

    Building is lazy: each chunking is chunked and indexed on first use (chunk vectors from the cache in
    data/embeddings/), and the first one also embeds the dev queries (2-5 s).
    """
    from labkit.data import load_corpus, load_queries
    from labkit.grid import ChunkGrid

    return ChunkGrid(load_corpus(), load_queries(split="dev"), retrievers=("bm25", "dense"))


class ChunkGridPage:
    """The 05 explorer (``labkit.widgets.ChunkGridExplorer``) on the page, with the state the test put it in."""

    def __init__(self, page, stem: str = CH05_STEM):
        self.page, self.stem = page, stem
        self.root = page.locator(".lk-chunk-grid")
        self.size, self.fraction, self.k = 128, 0.25, 10  # as the notebook creates it

    @property
    def overlap(self) -> int:
        """Overlap in words, as the widget derives it from the fraction."""
        return int(self.size * self.fraction)

    # -- controls
    def slider(self, label: str):
        return self.root.locator(".widget-slider").filter(has=self.page.locator("label", has_text=exact(label)))

    def readout(self, label: str) -> str:
        return self.slider(label).locator(".widget-readout").inner_text().strip()

    # -- what the page shows
    def costs(self) -> dict[str, str]:
        """The costs line: ``{"config": "size 128, overlap 32 words", name: value as printed, ...}``."""
        line = self.root.locator(".lk-costs")
        if not line.count():
            return {}
        return line.evaluate(
            "e => Object.fromEntries([['config', e.textContent.split(':')[0].trim()],"
            " ...[...e.querySelectorAll('b[data-cost]')].map(b => [b.dataset.cost, b.textContent.trim()])])"
        )

    def table(self) -> dict[str, str]:
        return self.root.locator("td.lk-value").evaluate_all(
            "els => Object.fromEntries(els.map(e => [e.dataset.cell, e.textContent.trim()]))"
        )

    def state(self) -> str:
        return f"size={self.size} overlap={self.fraction:.0%} ({self.overlap} words) k={self.k}"

    def expected(self) -> tuple[dict[str, str], dict[str, str]]:
        grid = ch05_grid()
        costs = {"config": f"size {self.size}, overlap {self.overlap} words"}
        costs.update({name: f"{v:.4g}" for name, v in grid.costs(self.size, self.overlap, self.k).items()})
        table = grid.evaluate(self.size, self.overlap, self.k, evidence=True)
        cells = {f"{m}|{n}|{group}": fmt(v) for group, row in table.iterrows() for (m, n), v in row.items()}
        return costs, cells

    # -- checks
    def check(self, widget: str, previous: tuple | None = None) -> tuple:
        """The costs line and every table cell show labkit's values for the current state.

        ``previous``: what the last check expected; a move that changes nothing would prove nothing.
        Returns what this check expected.
        """
        want_costs, want_table = want = self.expected()
        assert want != previous, (
            f"{self.stem}: ChunkGridExplorer {widget} -> the test's move changes nothing ({self.state()})"
        )
        shown = poll(lambda: (self.costs(), self.table()), want, timeout=GRID_TIMEOUT_S)
        if shown != want:
            problems = [f"costs {p}" for p in _diffs(shown[0], want_costs)] + _diffs(shown[1], want_table)
            readouts = ", ".join(f"{s} reads {self.readout(s)!r}" for s in ("chunk size (words)", "overlap", "k"))
            raise AssertionError(
                f"{self.stem}: ChunkGridExplorer {widget} -> {'; '.join(problems)} (for {self.state()}; {readouts})"
            )
        return want

    def check_control(self, widget: str, read, want: str) -> None:
        shown = poll(read, want)
        assert shown == want, f"{self.stem}: ChunkGridExplorer {widget} shows {shown!r}, expected {want!r}"

    # -- actions
    def press_slider(self, label: str, key: str, times: int = 1) -> None:
        handle = self.slider(label).locator(".noUi-handle")
        handle.focus()
        for _ in range(times):
            handle.press(key)


# ---------------------------------------------------------------- chapter 07

CH07_STEM = "07_triage"


@functools.cache
def ch07_traces(k: int) -> list[dict]:
    """The notebook's ``traces_at(k)``, the function its TriageExplorer wraps, computed here once per k.

    Same queries, chunks (128/32) and ``make_run(HybridRetriever([bm25, dense]), queries, 20)`` as chapter 04
    (``ch04_runs()["hybrid"]``: c=60, depth 100, made at depth 20), so they are reused; the chunk texts are
    chapter 01's BM25 retriever's chunks. The qrels are every query's, made here: chapter 01's cover its dev
    split only.
    """
    from labkit import triage
    from labkit.chunking import spans_to_qrels
    from labkit.data import load_corpus
    from labkit.positions import LexicalReader

    inp = ch01_inputs()
    queries = list(inp.queries.values())  # load_queries() order
    chunks = inp.retrievers["bm25"].chunks
    texts = {c.id: c.text for c in chunks}
    qrels = spans_to_qrels(queries, chunks)
    corpus_texts = {d: doc.text for d, doc in load_corpus().items()}
    return triage.extractive_traces(queries, ch04_runs()["hybrid"], texts, qrels, LexicalReader(), corpus_texts, k)


class TriageExplorerPage:
    """The 07 explorer (``labkit.widgets.TriageExplorer``) on the page, with the state the test put it in."""

    SLIDER = "k (chunks read)"
    TOGGLE = "examples of"
    EMPTY = "no trace in this cell"

    def __init__(self, page, stem: str = CH07_STEM):
        self.page, self.stem = page, stem
        self.root = page.locator(".lk-triage-explorer")
        self.k, self.cell = 5, "GEN_FAIL"  # as the notebook creates it

    # -- controls
    def slider(self, label: str = SLIDER):
        return self.root.locator(".widget-slider").filter(has=self.page.locator("label", has_text=exact(label)))

    def readout(self, label: str = SLIDER) -> str:
        return self.slider(label).locator(".widget-readout").inner_text().strip()

    def toggle(self, option: str):
        return self.root.locator(".widget-toggle-button", has_text=exact(option))

    def chosen(self) -> list[str]:
        """The pressed toggle button(s) of "examples of" (ipywidgets marks the selected one ``mod-active``)."""
        return self.root.locator(".widget-toggle-button.mod-active").all_inner_texts()

    # -- what the page shows
    def table(self) -> dict[str, str]:
        """``{cell: "count share"}``: the ``data-count`` cell and the percentage cell next to it, as printed."""
        return self.root.locator("td.lk-value").evaluate_all(
            "els => Object.fromEntries(els.map(e => [e.dataset.count,"
            " e.textContent.trim() + ' ' + (e.nextElementSibling ? e.nextElementSibling.textContent.trim() : '')]))"
        )

    def priority(self) -> str:
        b = self.root.locator("b.lk-priority")
        return b.first.inner_text().strip() if b.count() else "(missing)"

    def examples(self) -> list[str]:
        return self.root.locator("li.lk-example").evaluate_all("els => els.map(e => e.dataset.qid)")

    def gold_spans(self) -> list[str]:
        """Each example's gold span(s) as shown, " | "-joined, whitespace collapsed as HTML renders it."""
        return self.root.locator("li.lk-example").evaluate_all(
            "els => els.map(e => Array.from(e.querySelectorAll('.lk-gold-span'))"
            ".map(s => s.textContent.split(/\\s+/).filter(Boolean).join(' ')).join(' | '))"
        )

    def expected_gold_spans(self) -> list[str]:
        """labkit's gold spans (``triage.drill_down``) of the examples the widget should show."""
        from labkit import triage

        traces = [t for t in ch07_traces(self.k) if triage.quadrant(t, self.k) == self.cell][:3]
        return [" | ".join(" ".join(s.split()) for s in triage.drill_down(t, self.k)["gold_spans"]) for t in traces]

    def empty_message(self) -> str:
        return self.EMPTY if self.root.get_by_text(self.EMPTY, exact=True).count() else ""

    def shown(self) -> tuple:
        return self.table(), self.priority(), self.examples(), self.empty_message()

    def state(self) -> str:
        return f"k={self.k}, examples of {self.cell}"

    def expected(self) -> tuple[dict[str, str], str, list[str], str]:
        from labkit import triage

        traces = ch07_traces(self.k)
        counts = triage.triage(traces, self.k)
        n = len(traces)
        table = {q: f"{c} {c / n:.1%}" for q, c in counts.items()}  # labkit.widgets' format, restated
        qids = [t["qid"] for t in traces if triage.quadrant(t, self.k) == self.cell][:3]
        return table, triage.priority(counts), qids, "" if qids else self.EMPTY

    # -- checks
    def check(self, widget: str, previous: tuple | None = None) -> tuple:
        """Every count cell (and its share), the priority and the example qids show labkit's values.

        An empty cell must show "no trace in this cell". ``previous``: what the last check expected; a move that
        changes nothing would prove nothing. Returns what this check expected.
        """
        want = self.expected()
        assert want != previous, (
            f"{self.stem}: TriageExplorer {widget} -> the test's move changes nothing ({self.state()})"
        )
        shown = poll(self.shown, want)
        if shown != want:
            want_table, want_priority, want_qids, want_empty = want
            problems = _diffs(shown[0], want_table)
            if shown[1] != want_priority:
                problems.append(f"priority shows {shown[1]!r}, labkit says {want_priority!r}")
            if shown[2] != want_qids:
                problems.append(f"examples show {shown[2]}, labkit says {want_qids}")
            if shown[3] != want_empty:
                problems.append(
                    f"the page shows {self.EMPTY!r}" if shown[3] else f"the page does not show {self.EMPTY!r}"
                )
            raise AssertionError(
                f"{self.stem}: TriageExplorer {widget} -> {'; '.join(problems)}"
                f" (for {self.state()}; slider {self.SLIDER!r} reads {self.readout()!r},"
                f" toggle {self.TOGGLE!r} shows {self.chosen()})"
            )
        return want

    def check_control(self, widget: str, read, want) -> None:
        shown = poll(read, want)
        assert shown == want, f"{self.stem}: TriageExplorer {widget} shows {shown!r}, expected {want!r}"

    # -- actions
    def press_slider(self, label: str, key: str, times: int = 1) -> None:
        handle = self.slider(label).locator(".noUi-handle")
        handle.focus()
        for _ in range(times):
            handle.press(key)


# ---------------------------------------------------------------- chapter 09

CH09_STEM = "09_router_eval"
ROUTING_TIMEOUT_S = 60.0  # a k the kernel has not computed yet: every query's prompt, tokenized (~2 s per k)

# The made-up line-up 09_router_eval defines (restated so a change there is caught): $ per 1M tokens, windows.
CH09_COST = {"nano": 0.1, "mini": 0.4, "mid": 1.5, "large": 5.0, "xl": 15.0}
CH09_WINDOW = {"nano": 1024, "mini": 2048, "mid": 4096, "large": 16384, "xl": 131072}


@functools.cache
def ch09_stats(k: int) -> dict[str, float]:
    """The notebook's ``stats(k)``, the function its RoutingExplorer wraps, computed here once per k.

    Same queries, chunks (128/32) and ``make_run(HybridRetriever([bm25, dense]), queries, 20)`` as chapter 04
    (``ch04_runs()["hybrid"]``: c=60, depth 100, made at depth 20), so they are reused; the chunk texts are
    chapter 01's BM25 retriever's chunks.
    """
    from labkit import router
    from labkit.embeddings import count_tokens

    inp = ch01_inputs()
    queries = list(inp.queries.values())  # load_queries() order
    texts = {c.id: c.text for c in inp.retrievers["bm25"].chunks}
    prompts = router.rag_prompts(queries, ch04_runs()["hybrid"], texts, k)
    return router.routing_at_k(count_tokens(prompts), [router.chars_over_4(p) for p in prompts], CH09_WINDOW, CH09_COST)


class RoutingExplorerPage:
    """The 09 explorer (``labkit.widgets.RoutingExplorer``) on the page, with the state the test put it in."""

    SLIDER = "k (chunks in the prompt)"

    def __init__(self, page, stem: str = CH09_STEM):
        self.page, self.stem = page, stem
        self.root = page.locator(".lk-routing-explorer")
        self.k = 5  # as the notebook creates it

    # -- controls
    def slider(self, label: str = SLIDER):
        return self.root.locator(".widget-slider").filter(has=self.page.locator("label", has_text=exact(label)))

    def readout(self, label: str = SLIDER) -> str:
        return self.slider(label).locator(".widget-readout").inner_text().strip()

    # -- what the page shows
    def table(self) -> dict[str, str]:
        return self.root.locator("td.lk-value").evaluate_all(
            "els => Object.fromEntries(els.map(e => [e.dataset.stat, e.textContent.trim()]))"
        )

    def state(self) -> str:
        return f"k={self.k}"

    def expected(self) -> dict[str, str]:
        return {name: f"{v:.4g}" for name, v in ch09_stats(self.k).items()}

    # -- checks
    def check(self, widget: str, previous: dict | None = None) -> dict:
        """Every stat cell shows labkit's value (``f"{v:.4g}"``) for the current k.

        ``previous``: what the last check expected; a move that changes nothing would prove nothing.
        Returns what this check expected.
        """
        want = self.expected()
        assert want != previous, (
            f"{self.stem}: RoutingExplorer {widget} -> the test's move changes nothing ({self.state()})"
        )
        shown = poll(self.table, want, timeout=ROUTING_TIMEOUT_S)
        if shown != want:
            raise AssertionError(
                f"{self.stem}: RoutingExplorer {widget} -> {'; '.join(_diffs(shown, want))}"
                f" (for {self.state()}; slider {self.SLIDER!r} reads {self.readout()!r})"
            )
        return want

    def check_control(self, widget: str, read, want: str) -> None:
        shown = poll(read, want)
        assert shown == want, f"{self.stem}: RoutingExplorer {widget} shows {shown!r}, expected {want!r}"

    # -- actions
    def press_slider(self, label: str, key: str, times: int = 1) -> None:
        handle = self.slider(label).locator(".noUi-handle")
        handle.focus()
        for _ in range(times):
            handle.press(key)
