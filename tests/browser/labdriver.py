"""Helpers of the browser tests (imported by conftest.py and the tests): servers, Chromium, JupyterLab pages, and
:class:`ExplorerPage`: a labkit explorer on the page beside the same explorer built here on the notebook's inputs.
"""

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
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import SimpleNamespace

import labkit
from labkit.ui.widgets.explorer import html_cells, html_text

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
SCREENSHOTS = ROOT / "build" / "screenshots"
"""Where the browser tests write screenshots by default: ignored by git. ``LABKIT_SCREENSHOTS`` names another
folder (relative to the clone): ``make screenshots`` sets it to ``docs/img``, the README's tracked pictures."""

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
RUN_ALL_TIMEOUT_S = 240.0  # Run All of the longest notebook (07 replays ~1,100 answers) on a busy 2-core machine
SERVER_START_TIMEOUT_S = 90
SCREENSHOT_MAX_BYTES = 200_000
WIDGET_TIMEOUT_S = 20.0  # once the kernel is warm one widget round trip takes well under a second

# The three JupyterLab settings the tests rely on: render every cell (no virtual scrolling), no news pop-up,
# never save (the committed notebooks must not change).
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


def screenshot_dir() -> Path:
    """``$LABKIT_SCREENSHOTS`` (relative to the clone unless absolute) when set, else :data:`SCREENSHOTS`."""
    chosen = os.environ.get("LABKIT_SCREENSHOTS", "").strip()
    return ROOT / chosen if chosen else SCREENSHOTS


def save_screenshot(locator, stem: str) -> Path:
    """Element screenshot of a chapter's main widget -> <screenshot_dir()>/<stem>.png (rewritten only if it
    changed): build/screenshots/ unless ``make screenshots`` asks for docs/img/."""
    folder = screenshot_dir()
    folder.mkdir(parents=True, exist_ok=True)
    page, box = locator.page, locator.bounding_box()
    size = page.viewport_size
    # JupyterLab scrolls the notebook inside the page, so a widget taller than the window would be cut to the
    # window: make the window tall enough for the whole widget, then put it back
    tall = bool(size and box and box["height"] + 240 > size["height"])
    if tall:
        page.set_viewport_size({"width": size["width"], "height": int(box["height"]) + 240})
        locator.scroll_into_view_if_needed()
    try:
        data = locator.screenshot(animations="disabled", caret="hide")
    finally:
        if tall:
            page.set_viewport_size(size)
    path = folder / f"{stem}.png"
    assert len(data) < SCREENSHOT_MAX_BYTES, f"{stem}: screenshot is {len(data)} bytes, keep it under 200 KB"
    if not path.exists() or path.read_bytes() != data:
        path.write_bytes(data)
    return path


# ---------------------------------------------------------------- JupyterLab pages


def start_lab(root_dir: Path, tmp: Path, settings_values: dict = LAB_SETTINGS) -> Server:
    """JupyterLab on a free loopback port serving ``root_dir``: no token, private settings, workspaces and
    checkpoints under ``tmp`` (so nothing is written beside the notebooks but the notebooks themselves)."""
    settings = tmp / "settings"
    for rel, value in settings_values.items():
        f = settings / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(json.dumps(value))
    env = dict(os.environ)
    env.update(
        JUPYTERLAB_SETTINGS_DIR=str(settings),
        JUPYTERLAB_WORKSPACES_DIR=str(tmp / "workspaces"),
        JUPYTER_RUNTIME_DIR=str(tmp / "runtime"),
    )
    port = free_port()
    argv = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        "--IdentityProvider.token=",
        "--ServerApp.disable_check_xsrf=True",  # lets the fixture DELETE kernels with plain urllib (loopback only)
        f"--ServerApp.root_dir={root_dir}",
        f"--LabApp.user_settings_dir={settings}",
        f"--LabApp.workspaces_dir={tmp / 'workspaces'}",
        f"--FileCheckpoints.checkpoint_dir={tmp / 'checkpoints'}",  # not .ipynb_checkpoints beside the notebooks
        "--LabApp.extension_manager=readonly",
        "--LabApp.check_for_updates_class=jupyterlab.handlers.announcements.NeverCheckForUpdate",
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:  # containers and CI runners often run as root
        argv.append("--allow-root")
    server = Server("jupyterlab", argv, port, tmp / "jupyterlab.log", env, cwd=root_dir)
    server.wait_ready("/api/status")
    return server


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
        deadline = time.monotonic() + RUN_ALL_TIMEOUT_S
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


# ---------------------------------------------------------------- explorers


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


def _diffs(shown: dict, want: dict) -> list[str]:
    return [
        f"{key} shows {shown.get(key, '(missing)')}, labkit says {value}"
        for key, value in want.items()
        if shown.get(key) != value
    ] + [f"{key} shows {shown[key]}, labkit has no such cell" for key in shown if key not in want]


# An HTML output on the page: its text and, per data attribute, its keyed cells, as html_text / html_cells read
# the HTML labkit renders (textContent, runs of whitespace squeezed).
READ_OUTPUT = """(e, attrs) => {
    const squeeze = s => s.split(/\\s+/).filter(Boolean).join(" ");
    const box = e.querySelector(".widget-html-content") || e;
    const cells = {};
    for (const a of attrs) {
        const keyed = [...box.querySelectorAll(`[data-${a}]`)];
        cells[a] = keyed.map(x => [x.getAttribute(`data-${a}`), squeeze(x.textContent)]);
    }
    return [squeeze(box.textContent), cells];
}"""
# SHA-256 of the PNG an Image output shows (ipywidgets serves it from a blob: URL).
READ_IMAGE = """async img => {
    if (!img.src) return "(no image)";
    const bytes = await (await fetch(img.src)).arrayBuffer();
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
    return Array.from(digest, b => b.toString(16).padStart(2, "0")).join("");
}"""


# Key-to-update latency: from the learner's event on the explorer (key down, pointer down or a select's change,
# the first after arming) to the last change of any of its outputs, in the page's own clock. Read after a check
# has seen the page show the new state, so "the last change" is the one that completed it.
ARM_LATENCY = """root => {
    if (!root.__lk) {
        const st = root.__lk = {t0: null, last: null};
        // the learner's last event before the outputs change starts the clock: a key, a click or a change; a text
        // box filled at once (not typed key by key) may update on its "input" event already, before any key
        const mark = () => { if (st.last === null) st.t0 = performance.now(); };
        const filled = () => { if (st.t0 === null) st.t0 = performance.now(); };
        for (const ev of ["keydown", "pointerdown", "change"]) root.addEventListener(ev, mark, {capture: true});
        root.addEventListener("input", filled, {capture: true});
        const obs = new MutationObserver(() => { if (st.t0 !== null) st.last = performance.now(); });
        root.querySelectorAll("[class*='lk-output-']").forEach(o =>
            obs.observe(o, {subtree: true, childList: true, characterData: true, attributes: true}));
    }
    root.__lk.t0 = null;
    root.__lk.last = null;
}"""
READ_LATENCY = (
    "root => (root.__lk && root.__lk.t0 !== null && root.__lk.last !== null) ? root.__lk.last - root.__lk.t0 : null"
)
SETTLED = "root => root.__lk && root.__lk.last !== null && performance.now() - root.__lk.last > 150"
LATENCIES: dict[str, list[tuple[float, str]]] = {}
"""Measured key-to-update latencies in ms, by "<notebook> <explorer>": printed at the end, never asserted."""


def latency_report() -> list[str]:
    """One line per explorer: moves measured, p50 and max in ms, against p50 <= 50 and max <= 100 (printed only)."""
    import statistics

    lines = []
    for name, moves in LATENCIES.items():
        values = [ms for ms, _ in moves]
        p50, (worst, where) = statistics.median(values), max(moves)
        ok = "within" if p50 <= 50 and worst <= 100 else "OUTSIDE"
        lines.append(f"{name:58} n={len(values):2d}  p50 {p50:6.1f} ms  max {worst:6.1f} ms  ({ok} p50<=50, max<=100)"
                     f"  slowest: {where}")  # fmt: skip
    return lines


class ExplorerPage:
    """One labkit explorer on the page, and the same explorer built here on the notebook's inputs.

    A test moves a control on the page as a learner would, records the move in ``state`` (the explorer's control
    names: ``state["k"] = 6``), and :meth:`check` compares every output on the page (found by its class
    ``lk-output-<name>``) with what ``explorer.html_for(**state)`` renders here: its text and every keyed cell,
    or a chart's PNG byte for byte. What each state should show is proven by the unit tests
    (tests/test_widgets.py); this proves the wiring, in the real front end.
    """

    def __init__(self, page, stem: str, explorer, timeout: float = WIDGET_TIMEOUT_S):
        self.page, self.stem, self.explorer, self.timeout = page, stem, explorer, timeout
        self.name = type(explorer).__name__
        self.root = page.locator(f".{explorer.css_class}")
        self.state = dict(explorer.state)  # as the notebook creates it
        self.confirmed: dict | None = None  # what the last passing check found on the page

    # -- controls, by their label
    def slider(self, label: str):
        return self.root.locator(".widget-slider").filter(has=self.page.locator("label", has_text=exact(label)))

    def readout(self, label: str) -> str:
        return self.slider(label).locator(".widget-readout").inner_text().strip()

    def press_slider(self, label: str, key: str, times: int = 1) -> None:
        handle = self.slider(label).locator(".noUi-handle")
        handle.focus()
        for _ in range(times):
            handle.press(key)

    def slide(self, label: str, key: str, field: str, value, readout: str, previous: dict | None = None) -> dict:
        """Press ``key`` on slider ``label``, expect ``state[field] = value`` and ``readout``; check every output."""
        self.press_slider(label, key)
        self.state[field] = value
        self.check_control(f"slider {label!r} readout", lambda: self.readout(label), readout)
        return self.check(f"slider {label!r} ({key})", previous)

    def select(self, label: str):
        has_label = self.page.locator("label", has_text=exact(label))
        return self.root.locator(".widget-dropdown").filter(has=has_label).locator("select")

    def toggle(self, option: str):
        return self.root.locator(".widget-toggle-button", has_text=exact(option))

    def chosen(self) -> list[str]:
        """The pressed toggle button(s) (ipywidgets marks the selected one ``mod-active``)."""
        return self.root.locator(".widget-toggle-button.mod-active").all_inner_texts()

    def button(self, label: str):
        return self.root.locator("button", has_text=exact(label))

    def text(self, label: str):
        return self.root.get_by_label(label, exact=True)

    def type_text(self, label: str, value: str, key: str = "Enter", button: str | None = None) -> None:
        """Fill text box ``label``, then press ``key`` in it, or click ``button`` (which takes the focus)."""
        box = self.text(label)
        box.fill(value)
        if button is None:
            box.press(key)
        else:
            self.button(button).click()

    def focused(self) -> str:
        """The focused element's text (a button's label) if it is inside this explorer, else where focus went."""
        return self.root.evaluate(
            "root => { const el = document.activeElement;"
            " if (!root.contains(el)) return `outside the explorer (${el ? el.tagName.toLowerCase() : 'nothing'})`;"
            " return (el.innerText || el.getAttribute('aria-label') || el.tagName.toLowerCase()).trim(); }"
        )

    # -- what the page shows and what labkit renders
    def expected(self, state: dict | None = None) -> dict:
        """Per output for ``state`` (default the current one): ``[text, {attribute: [[key, text], ...]}]``, or a
        chart's SHA-256."""
        rendered = self.explorer.html_for(**(self.state if state is None else state))
        if not isinstance(rendered, dict):
            rendered = {next(iter(self.explorer.outputs)): rendered}
        out = {}
        for name, value in rendered.items():
            if isinstance(value, bytes):
                out[name] = hashlib.sha256(value).hexdigest()
            else:
                attrs = sorted(set(re.findall(r'\bdata-([a-z]+)="', value)))
                out[name] = [html_text(value), {a: [list(c) for c in html_cells(value, a)] for a in attrs}]
        return out

    def shown(self, want: dict) -> dict:
        out = {}
        for name, value in want.items():
            box = self.root.locator(f".lk-output-{name}").first
            out[name] = (
                box.evaluate(READ_IMAGE) if isinstance(value, str) else box.evaluate(READ_OUTPUT, list(value[1]))
            )
        return out

    def error(self) -> str:
        err = self.root.locator(".lk-error")
        return err.first.inner_text().strip() if err.count() else ""

    def describe(self) -> str:
        return ", ".join(f"{name}={value!r}" for name, value in self.state.items())

    # -- latency, measured in the page (printed, never asserted: speed is bench/'s business)
    def arm(self) -> None:
        """Start timing the next move: the learner's next event on the explorer to its outputs' last change."""
        if self.root.count() == 1:
            self.root.evaluate(ARM_LATENCY)

    def settle(self) -> None:
        """Wait (in the page, polling a flag every 20 ms) until the armed move's outputs changed and then kept
        still for 150 ms, or WIDGET_TIMEOUT_S; the check that follows says what is wrong if nothing changed."""
        from playwright.sync_api import TimeoutError as PlaywrightTimeout

        if self.root.count() != 1:
            return
        try:
            self.page.wait_for_function(SETTLED, arg=self.root.element_handle(), polling=20,
                                        timeout=self.timeout * 1000)  # fmt: skip
        except PlaywrightTimeout:
            pass

    def record_latency(self, move: str = "") -> float | None:
        """The armed move's latency in ms, kept in :data:`LATENCIES` with ``move`` (what the learner did; None: no
        output changed, or not armed)."""
        ms = self.root.evaluate(READ_LATENCY) if self.root.count() == 1 else None
        if ms is not None:
            LATENCIES.setdefault(f"{self.stem} {self.name}", []).append((float(ms), move))
        return ms

    # -- checks
    def check(self, widget: str, previous: dict | None = None, want: dict | None = None) -> dict:
        """Every output shows what labkit renders for ``state``, and no error line.

        ``previous``: what the last check expected; a move that changes nothing would prove nothing. ``want``:
        :meth:`expected`, when it was computed before the move (a timed move: computing it during the move would
        take a core from the kernel and the browser, and time the test, not the explorer). Returns what this
        check expected.
        """
        if want is not None and want != self.confirmed:  # a timed move: let the page settle before reading it,
            self.settle()  # so reads do not time; a move whose outputs equal what is shown changes nothing to wait for
        want = self.expected() if want is None else want
        assert want != previous, f"{self.stem}: {self.name} {widget} -> the test's move changes nothing"
        shown = poll(lambda: self.shown(want), want, self.timeout)
        if shown != want:
            raise AssertionError(f"{self.stem}: {self.name} {widget} -> {self.explain(shown, want)}")
        assert not self.error(), f"{self.stem}: {self.name} {widget} -> unexpected error {self.error()!r}"
        self.confirmed = want
        return want

    def explain(self, shown: dict, want: dict) -> str:
        problems = []
        for name, value in want.items():
            if isinstance(value, str):  # a chart
                if shown[name] != value:
                    problems.append(f"the {name} is not the one labkit draws")
                continue
            for attr, cells in value[1].items():
                problems += _diffs(dict(shown[name][1].get(attr, [])), dict(cells))
            if not problems and shown[name][0] != value[0]:
                problems.append(f"{name} shows {shown[name][0]!r:.400}, labkit renders {value[0]!r:.400}")
        error = self.error()
        return "; ".join(problems) + (f" [widget error: {error}]" if error else "") + f" (for {self.describe()})"

    def check_error(self, widget: str, *fragments: str) -> None:
        """The error line names the problem; every output keeps what it showed for the last valid ``state``."""
        shown = poll(lambda: all(f in self.error() for f in fragments), True)
        assert shown, (
            f"{self.stem}: {self.name} {widget} -> error line shows {self.error() or '(nothing)'!r}, "
            f"expected it to mention {' and '.join(map(repr, fragments))}"
        )
        want = self.expected()
        shown = self.shown(want)
        assert shown == want, (
            f"{self.stem}: {self.name} {widget} -> changed on invalid input: {self.explain(shown, want)}"
        )

    def check_control(self, widget: str, read, want) -> None:
        shown = poll(read, want)
        assert shown == want, f"{self.stem}: {self.name} {widget} shows {shown!r}, expected {want!r}"


def cells(want: dict, output: str, attr: str = "cell") -> dict[str, str]:
    """The keyed cells of one output in what :meth:`ExplorerPage.check` returned."""
    return dict(want[output][1].get(attr, []))


# ---------------------------------------------------------------- chapter 03


def playground(page, stem: str = "03_metrics_by_hand") -> ExplorerPage:
    """The 03 playground, as the notebook creates it on the running example."""
    from labkit.data.toys import RUNNING_GRADES, RUNNING_UNRETRIEVED
    from labkit.ui import widgets

    labkit.setup()  # the notebook's matplotlib style: Agg then draws the chart byte for byte as the kernel does
    return ExplorerPage(page, stem, widgets.metrics_playground(RUNNING_GRADES, 5, 1, RUNNING_UNRETRIEVED))


# ---------------------------------------------------------------- chapter 01

CH01_STEM = "01_rrf_hybrid_retrieval"


@functools.cache
def ch01_inputs() -> SimpleNamespace:
    """What 01_rrf_hybrid_retrieval builds before its widgets, rebuilt here once per session (~7 s).

    ``runs`` are each retriever's top 100 per **dev** query, ``qrels`` and ``groups`` the dev queries' (the
    explorer shows the dev split only); ``retrievers`` are the QuestionBox's three.
    The dense vectors come from the committed cache in data/embeddings/, so nothing is embedded but queries.
    """
    from labkit.data.corpus import load_corpus, load_queries
    from labkit.retrieval.retrievers import BM25Retriever, DenseRetriever, HybridRetriever, make_run
    from labkit.text.chunking import chunk_corpus, spans_to_qrels

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
        texts={c.id: c.text for c in chunks},
    )


def fusion_explorer(page, stem: str = CH01_STEM) -> ExplorerPage:
    """01's FusionExplorer: the dev queries that have judgements, opened on hr-r09."""
    from labkit.ui import widgets

    inp = ch01_inputs()
    questions = {qid: inp.queries[qid].search_text for qid in inp.qrels}
    explorer = widgets.FusionExplorer(inp.runs, inp.qrels, inp.groups, questions, query="hr-r09", texts=inp.texts)
    return ExplorerPage(page, stem, explorer)


def question_box(page, stem: str = CH01_STEM) -> ExplorerPage:
    """01's QuestionBox: the three retrievers' top 5 for one question."""
    from labkit.ui import widgets

    box = widgets.QuestionBox(ch01_inputs().retrievers, question="my vpn says certificate expired what do i do", k=5)
    return ExplorerPage(page, stem, box)


# ---------------------------------------------------------------- chapter 04

CH04_STEM = "04_mrr_hit_rate_lost_in_the_middle"


@functools.cache
def ch04_runs() -> dict[str, dict[str, list[str]]]:
    """The ``runs`` 04_mrr_hit_rate_lost_in_the_middle gives its CutoffExplorer: each retriever's top 20.

    Same chunks (128/32) and retrievers as chapter 01 (the notebook's ``HybridRetriever([bm25, dense])`` is
    ``ch01_inputs().retrievers["hybrid"]``: c=60, depth 100), so they are reused; the runs are made at depth 20
    as the notebook does, not cut from chapter 01's top 100, so BM25's tie order is the notebook's own.
    """
    from labkit.retrieval.retrievers import make_run

    inp = ch01_inputs()
    queries = list(inp.queries.values())
    return {name: make_run(r, queries, 20) for name, r in inp.retrievers.items()}


@functools.cache
def ch04_judgements() -> tuple[dict[str, dict[str, int]], dict[str, str]]:
    """The ``qrels`` and slices 04's CutoffExplorer gets: every query's (chapter 01's cover its dev split only)."""
    from labkit.text.chunking import spans_to_qrels

    inp = ch01_inputs()
    queries = list(inp.queries.values())
    qrels = spans_to_qrels(queries, inp.retrievers["bm25"].chunks)
    return qrels, {q.qid: q.slice for q in queries}


def cutoff_explorer(page, stem: str = CH04_STEM) -> ExplorerPage:
    from labkit.ui import widgets

    qrels, groups = ch04_judgements()
    return ExplorerPage(page, stem, widgets.CutoffExplorer(ch04_runs(), qrels, groups, k=5))


@functools.cache
def ch04_study():
    """The notebook's position study: ``table`` (the 1.5B's recorded answers, reference-number rule), ``study``
    (the contexts) and ``by_qid`` (the queries), rebuilt from the recording as the notebook builds them."""
    from labkit.generation import llm
    from labkit.generation import reader as rd
    from labkit.judges import correctness
    from labkit.studies import handbook as hb
    from labkit.studies import position_study as ps

    study = ps.study_contexts()
    by_qid = hb.handbook().by_qid
    reader = rd.llm_reader(llm.Replay(llm.DEFAULT_MODEL))
    table = ps.run_study(ps.study_trials(study), reader, model="1.5B")
    return ps.add_check(table, correctness.reference_rule("first"), by_qid), study, by_qid


def position_explorer(page, stem: str = CH04_STEM) -> ExplorerPage:
    from labkit.ui import widgets

    table, study, by_qid = ch04_study()
    return ExplorerPage(page, stem, widgets.PositionExplorer(table, study, by_qid, trial="gold at 5 of 10"))


CH08_STEM = "08_case_study"


@functools.cache
def ch08_traces() -> list[dict]:
    """08's ``traces``: the 1.5B's recorded answers over the hybrid (BM25 + dense, RRF c=60, top 100) top 3,
    judged by the rater labels, rebuilt as the notebook builds them."""
    from labkit.data.corpus import load_corpus
    from labkit.generation import llm
    from labkit.generation import reader as rd
    from labkit.measures import fusion, triage
    from labkit.retrieval.retrievers import make_run
    from labkit.studies import answers_data
    from labkit.text.chunking import spans_to_qrels

    inp = ch01_inputs()
    queries = list(inp.queries.values())
    bm25, dense = inp.retrievers["bm25"], inp.retrievers["dense"]
    hybrid = fusion.fuse_runs([make_run(bm25, queries, 100), make_run(dense, queries, 100)], c=60, top_n=100)
    texts = {c.id: c.text for c in bm25.chunks}
    corpus_texts = {d: doc.text for d, doc in load_corpus().items()}
    model = rd.llm_reader(llm.Replay(llm.DEFAULT_MODEL))
    qrels = spans_to_qrels(queries, bm25.chunks)
    return triage.reader_traces(queries, hybrid, texts, qrels, model, answers_data.label_check(), corpus_texts, 3)


def slice_triage_explorer(page, stem: str = CH08_STEM) -> ExplorerPage:
    from labkit.ui import widgets

    return ExplorerPage(page, stem, widgets.SliceTriageExplorer(ch08_traces(), 3, group="real", cell="RET_FAIL"))


# ---------------------------------------------------------------- chapter 05

CH05_STEM = "05_chunk_grid"
GRID_TIMEOUT_S = 60.0  # a chunking the kernel has not built yet: chunk, index BM25, load cached vectors (1-3 s)


@functools.cache
def ch05_grid():
    """The ``dev`` ChunkGrid 05_chunk_grid builds before its widget, rebuilt here once per session.

    Building is lazy: each chunking is chunked and indexed on first use (chunk vectors from the cache in
    data/embeddings/), and the first one also embeds the dev queries (2-5 s).
    """
    from labkit.data.corpus import load_corpus, load_queries
    from labkit.retrieval.grid import ChunkGrid

    return ChunkGrid(load_corpus(), load_queries(split="dev"), retrievers=("bm25", "dense"))


def chunk_grid_explorer(page, stem: str = CH05_STEM) -> ExplorerPage:
    """05's ChunkGridExplorer: sizes 64/128/256, overlaps 0/25/50 % (the explorer's defaults, as the notebook
    passes them), opened on 128 words, 25 %, k = 10."""
    from labkit.ui import widgets

    explorer = widgets.ChunkGridExplorer(ch05_grid(), size=128, overlap_share=0.25, k=10)
    return ExplorerPage(page, stem, explorer, timeout=GRID_TIMEOUT_S)


# ---------------------------------------------------------------- chapter 04b

CH04B_STEM = "04b_reranking"


@functools.cache
def ch04b_data():
    """What 04b's explorer shows: rerank_study.explorer_data(), computed once per session (the learned reranker's
    features and training, the model reranker's replayed scores: ~15 s)."""
    from labkit.studies import rerank_study as rs

    return rs.explorer_data()


def rerank_explorer(page, stem: str = CH04B_STEM) -> ExplorerPage:
    """04b's RerankExplorer as the notebook opens it: the model reranker, k1 = 10, k2 = 3, the first question."""
    from labkit.studies import rerank_study as rs
    from labkit.ui import widgets

    return ExplorerPage(page, stem, widgets.RerankExplorer(ch04b_data(), k1=10, k2=3, reranker=rs.MODEL))


# ---------------------------------------------------------------- chapter 07

CH07_STEM = "07_triage"


CH07_READERS = ["1.5B · rater label", "1.5B · reference number", "1.5B · lexical judge", "extractive control"]


@functools.cache
def _ch07_setting():
    """What chapter 07's ``traces_for`` reads: the handbook setting, the hybrid run at depth 20, the checks."""
    from types import SimpleNamespace

    from labkit.generation import llm
    from labkit.generation import reader as rd
    from labkit.judges import correctness, faithfulness
    from labkit.retrieval.retrievers import make_run
    from labkit.studies import answers_data
    from labkit.studies import handbook as hb

    h = hb.handbook()
    corpus_texts = {d: doc.text for d, doc in h.corpus.items()}
    checks = {"rater label": answers_data.label_check(),
              "reference number": correctness.reference_rule("first"),
              "lexical judge": correctness.judge_check(faithfulness.lexical_judge, corpus_texts)}  # fmt: skip
    labels = answers_data.correctness_labels().query("model == @llm.DEFAULT_MODEL and k == 3").set_index("qid")["why"]
    return SimpleNamespace(h=h, run=make_run(h.hybrid, h.queries, 20), corpus_texts=corpus_texts, checks=checks,
                           why=labels, model=rd.llm_reader(llm.Replay(llm.DEFAULT_MODEL)), k=hb.READER_K)  # fmt: skip


@functools.cache
def ch07_traces(k: int, reader: str) -> list[dict]:
    """The notebook's ``traces_for(k, reader)``, the function its TriageExplorer wraps, computed here once each.

    The 1.5B's recorded answers over the hybrid top 3 (``make_run(h.hybrid, queries, 20)``), judged by the hand
    labels (with their reason), the reference-number rule (on the queries it can judge) or the lexical judge
    against the gold; the extractive control at any k. The model at another k raises, as in the notebook.
    """
    from labkit.generation.positions import LexicalReader
    from labkit.measures import triage

    s = _ch07_setting()
    h = s.h
    if reader == "extractive control":
        return triage.extractive_traces(h.queries, s.run, h.texts, h.qrels, LexicalReader(), s.corpus_texts, k)
    if k != s.k:
        raise ValueError(f"the 1.5B's answers are recorded at k = {s.k} (every query); set k to {s.k}, or pick "
                         "the extractive control to sweep k")  # fmt: skip
    name = reader.split(" · ")[1]
    check = s.checks[name]
    queries = [q for q in h.queries if name != "reference number" or check("", q) is not None]
    traces = triage.reader_traces(queries, s.run, h.texts, h.qrels, s.model, check, s.corpus_texts, k)
    for t in traces:
        t["why"] = s.why[t["qid"]] if name == "rater label" else ""
    return traces


def triage_explorer(page, stem: str = CH07_STEM) -> ExplorerPage:
    from labkit.ui import widgets

    locked = {reader: 3 for reader in CH07_READERS if reader != "extractive control"}
    return ExplorerPage(page, stem, widgets.TriageExplorer(ch07_traces, k=3, readers=CH07_READERS, recorded_k=locked))


# ---------------------------------------------------------------- chapter 09

CH09_STEM = "09_router_eval"
ROUTING_TIMEOUT_S = 60.0  # a k the kernel has not computed yet: every query's prompt, tokenized (~2 s per k)


@functools.cache
def ch09_stats(k: int) -> dict[str, float]:
    """The notebook's ``routing_stats(k)``, the function its RoutingExplorer wraps, computed here once per k.

    Same queries, chunks (128/32) and ``make_run(HybridRetriever([bm25, dense]), queries, 20)`` as chapter 04
    (``ch04_runs()["hybrid"]``: c=60, depth 100, made at depth 20), so they are reused; the chunk texts are
    chapter 01's BM25 retriever's chunks; the line-up (windows, $ per 1M tokens) is the notebook's, from
    labkit.data.toys.
    """
    from labkit.data.toys import ROUTER_COST, ROUTER_WINDOW
    from labkit.measures import router
    from labkit.retrieval.embeddings import count_tokens

    inp = ch01_inputs()
    queries = list(inp.queries.values())  # load_queries() order
    texts = {c.id: c.text for c in inp.retrievers["bm25"].chunks}
    prompts = router.rag_prompts(queries, ch04_runs()["hybrid"], texts, k)
    tokens, estimates = count_tokens(prompts), [router.chars_over_4(p) for p in prompts]
    return router.routing_at_k(tokens, estimates, ROUTER_WINDOW, ROUTER_COST)


@functools.cache
def ch09_outcomes():
    """The notebook's ``outcomes`` (``cascade.cascade_table``: 0.5B first, 1.5B on a failed check, rater labels)
    and its questions, rebuilt from the recordings as the notebook builds them."""
    from labkit.generation import llm
    from labkit.studies import answers_data, cascade
    from labkit.studies import handbook as hb

    h = hb.handbook()
    sample = hb.reader_sample()
    contexts = {qid: [h.texts[c] for c in ids] for qid, ids in hb.reader_contexts(sample).items()}
    small = cascade.model_answers(sample, contexts, llm.Replay(llm.SMALL_MODEL))
    large = cascade.model_answers(sample, contexts, llm.Replay(llm.DEFAULT_MODEL))
    check = answers_data.label_check([llm.SMALL_MODEL, llm.DEFAULT_MODEL], sample)
    return cascade.cascade_table(small, large, sample, contexts, check), {q.qid: q.search_text for q in sample}


def cascade_explorer(page, stem: str = CH09_STEM) -> ExplorerPage:
    from labkit.studies import cascade
    from labkit.ui import widgets

    outcomes, questions = ch09_outcomes()
    first = next(q for q, r in outcomes.iterrows() if cascade.outcome_label(r) == "kept, not right")
    return ExplorerPage(page, stem, widgets.CascadeExplorer(outcomes, questions, qid=first))


def routing_explorer(page, stem: str = CH09_STEM) -> ExplorerPage:
    from labkit.ui import widgets

    return ExplorerPage(page, stem, widgets.RoutingExplorer(ch09_stats, k=5), timeout=ROUTING_TIMEOUT_S)


# ---------------------------------------------------------------- a chapter's explorers, from its manifest

DRIVERS = {
    "metrics_playground": playground,
    "FusionExplorer": fusion_explorer,
    "QuestionBox": question_box,
    "CutoffExplorer": cutoff_explorer,
    "PositionExplorer": position_explorer,
    "SliceTriageExplorer": slice_triage_explorer,
    "ChunkGridExplorer": chunk_grid_explorer,
    "RerankExplorer": rerank_explorer,
    "TriageExplorer": triage_explorer,
    "CascadeExplorer": cascade_explorer,
    "RoutingExplorer": routing_explorer,
}
"""How the browser tests rebuild an explorer on the notebook's inputs, by the name a manifest lists (02's and 06's
live in ch02driver / ch06driver; the labelling widget has its own test)."""


def drivers_for(page, manifest) -> list[ExplorerPage]:
    """The explorers a chapter's manifest lists, as :class:`ExplorerPage` objects on ``page``: each by its driver
    above, or, for an explorer no driver knows, built by ``widgets.<name>()`` on its own default inputs (so a new
    chapter whose explorer needs no inputs is driven from its manifest alone)."""
    from labkit.ui import widgets

    out = []
    for name in manifest.explorers:
        if name == "Labeller":
            continue
        if name in DRIVERS:
            out.append(DRIVERS[name](page, manifest.stem))
        else:
            labkit.setup()
            out.append(ExplorerPage(page, manifest.stem, getattr(widgets, name)()))
    return out
