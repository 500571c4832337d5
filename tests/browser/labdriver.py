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


def css_rgb(hex_colour: str) -> str:
    """``"#c8c8c8"`` as a computed style says it: ``"rgb(200, 200, 200)"``."""
    r, g, b = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgb({r}, {g}, {b})"


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
ARM_LATENCY = """(root, outputs) => {
    if (!root.__lk) {
        const st = root.__lk = {t0: null, last: null};
        // the learner's last event before the outputs change starts the clock: a key, a click or a change; a text
        // box filled at once (not typed key by key) may update on its "input" event already, before any key
        const mark = () => { if (st.last === null) st.t0 = performance.now(); };
        const filled = () => { if (st.t0 === null) st.t0 = performance.now(); };
        for (const ev of ["keydown", "pointerdown", "change"]) root.addEventListener(ev, mark, {capture: true});
        root.addEventListener("input", filled, {capture: true});
        const obs = new MutationObserver(() => { if (st.t0 !== null) st.last = performance.now(); });
        root.querySelectorAll(outputs).forEach(o =>
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
NO_TARGET: dict[str, str] = {}
"""Widgets measured without the explorers' target, by the same name: why (printed instead of within/OUTSIDE)."""


def latency_report() -> list[str]:
    """One line per explorer: moves measured, p50 and max in ms, against p50 <= 50 and max <= 100 (printed only)."""
    import statistics

    lines = []
    for name, moves in LATENCIES.items():
        values = [ms for ms, _ in moves]
        p50, (worst, where) = statistics.median(values), max(moves)
        ok = "within" if p50 <= 50 and worst <= 100 else "OUTSIDE"
        verdict = f"no target: {NO_TARGET[name]}" if name in NO_TARGET else f"{ok} p50<=50, max<=100"
        lines.append(f"{name:58} n={len(values):2d}  p50 {p50:6.1f} ms  max {worst:6.1f} ms  ({verdict})"
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

    outputs = "[class*='lk-output-']"  # the elements whose changes end a timed move (CSS selector, inside root)
    no_target = ""  # why this widget is measured without the explorers' latency target (empty: it has the target)

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

    def handle_colour(self, label: str) -> str:
        """The computed background colour of slider ``label``'s handle, as the page draws it (``rgb(r, g, b)``)."""
        handle = self.slider(label).locator(".noUi-handle")
        return handle.evaluate("h => getComputedStyle(h).backgroundColor")

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
            self.root.evaluate(ARM_LATENCY, self.outputs)

    def settle(self) -> bool:
        """Wait (in the page, polling a flag every 20 ms) until the armed move's outputs changed and then kept
        still for 150 ms, or WIDGET_TIMEOUT_S; the check that follows says what is wrong if nothing changed.
        False: no output under :attr:`outputs` changed in that time."""
        from playwright.sync_api import TimeoutError as PlaywrightTimeout

        if self.root.count() != 1:
            return True
        try:
            self.page.wait_for_function(SETTLED, arg=self.root.element_handle(), polling=20,
                                        timeout=self.timeout * 1000)  # fmt: skip
        except PlaywrightTimeout:
            return False
        return True

    def record_latency(self, move: str = "") -> float | None:
        """The armed move's latency in ms, kept in :data:`LATENCIES` with ``move`` (what the learner did; None: no
        output changed, or not armed)."""
        ms = self.root.evaluate(READ_LATENCY) if self.root.count() == 1 else None
        if ms is not None:
            LATENCIES.setdefault(f"{self.stem} {self.name}", []).append((float(ms), move))
            if self.no_target:
                NO_TARGET[f"{self.stem} {self.name}"] = self.no_target
        return ms

    # -- checks
    def check(self, widget: str, previous: dict | None = None, want: dict | None = None) -> dict:
        """Every output shows what labkit renders for ``state``, and no error line.

        ``previous``: what the last check expected; a move that changes nothing would prove nothing. ``want``:
        :meth:`expected`, when it was computed before the move (a timed move: computing it during the move would
        take a core from the kernel and the browser, and time the test, not the explorer). Returns what this
        check expected.
        """
        settled = True
        if want is not None and want != self.confirmed:  # a timed move: let the page settle before reading it,
            settled = self.settle()  # so reads do not time; a move whose outputs equal what is shown has no change
        want = self.expected() if want is None else want
        assert want != previous, f"{self.stem}: {self.name} {widget} -> the test's move changes nothing"
        shown = poll(lambda: self.shown(want), want, self.timeout)
        if shown != want:
            raise AssertionError(f"{self.stem}: {self.name} {widget} -> {self.explain(shown, want)}")
        # the page shows the new state, so an output changed: unseen, the move waited the whole timeout, untimed
        assert settled, (f"{self.stem}: {self.name} {widget} -> the outputs changed but none under {self.outputs!r} "
                         "did: that selector misses where this explorer shows them")  # fmt: skip
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


# ---------------------------------------------------------------- a chapter's explorers, from its manifest


@functools.cache
def built_inputs(explorer) -> dict:
    """What the notebook passes ``explorer`` (a manifest's :class:`labkit.chapters.Explorer`): its builder's
    keyword arguments, built once per session (the builder the notebook itself calls)."""
    labkit.setup()  # the notebook's matplotlib style: Agg then draws a chart byte for byte as the kernel does
    return explorer.build_inputs()


def inputs(number: str, widget: str) -> dict:
    """:func:`built_inputs` of chapter ``number``'s explorer ``widget``."""
    from labkit.chapters import chapter

    return built_inputs(chapter(number).explorer(widget))


def explorer_page(page, manifest, widget: str, stem: str | None = None) -> ExplorerPage:
    """The explorer ``widget`` of chapter ``manifest`` on ``page``, and the same explorer built here as the notebook
    builds it: ``widgets.<widget>(**inputs)`` from the manifest's input builder (on the widget's own defaults when
    it has none). ``stem``: how failures name the page (default the chapter's notebook)."""
    from labkit.ui import widgets

    entry = manifest.explorer(widget)
    explorer = getattr(widgets, widget)(**built_inputs(entry))
    return ExplorerPage(page, stem or manifest.stem, explorer, timeout=entry.timeout or WIDGET_TIMEOUT_S)


def drivers_for(page, manifest) -> list[ExplorerPage]:
    """Every explorer a chapter's manifest lists, as :class:`ExplorerPage` objects on ``page`` (the labelling
    widget, built by its chapter around a label set, is driven by test_labelling_in_lab.py)."""
    return [explorer_page(page, manifest, e.widget) for e in manifest.explorers if e.widget != LABELLER]


LABELLER = "Labeller"
