"""Fixtures of the browser tests: a private JupyterLab server, Debian's Chromium driven by Playwright.

Every test in this folder is marked ``browser`` (``make browser``; ``make unit`` leaves them out).
Why each setting is here is said beside it (``labdriver.LAB_SETTINGS``, ``CHROMIUM_ARGS`` and the fixtures below).

- No Chromium binary found -> the tests are skipped with a loud reason, unless
  ``LABKIT_REQUIRE_BROWSER=1`` (CI), where they fail instead.
- ``LABKIT_CHROMIUM=/path/to/chromium`` picks another binary.
- Never ``playwright install``: the tests only drive the system's Chromium.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from labdriver import (
    CHROMIUM_ARGS,
    EXPECT_TIMEOUT_MS,
    NOTEBOOKS,
    ROOT,
    LabNotebook,
    Server,
    find_chromium,
    free_port,
    start_lab,
)

_skipped_for_no_browser: list[str] = []


@pytest.hookimpl(tryfirst=True)  # before -m selects, so a test file that forgets pytestmark is still marked
def pytest_collection_modifyitems(items):
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.browser)


def pytest_terminal_summary(terminalreporter):
    from labdriver import latency_report

    lines = latency_report()
    if lines:  # measured, printed, never asserted (targets: p50 <= 50 ms, max <= 100 ms)
        terminalreporter.write_sep("-", "explorer latency in the browser: key press -> outputs updated")
        for line in lines:
            terminalreporter.write_line(line)
    if _skipped_for_no_browser:
        terminalreporter.write_sep("!", "BROWSER TESTS SKIPPED", red=True, bold=True)
        terminalreporter.write_line(_skipped_for_no_browser[0], red=True)


# ---------------------------------------------------------------- Chromium


def _no_browser(reason: str) -> None:
    if os.environ.get("LABKIT_REQUIRE_BROWSER") == "1":
        pytest.fail(f"LABKIT_REQUIRE_BROWSER=1 but {reason}", pytrace=False)
    message = (
        f"BROWSER TESTS SKIPPED: {reason}. Install Debian's Chromium (`apt-get install chromium`) "
        "or point LABKIT_CHROMIUM at a Chromium binary; set LABKIT_REQUIRE_BROWSER=1 to make this a failure."
    )
    if message not in _skipped_for_no_browser:
        _skipped_for_no_browser.append(message)
    pytest.skip(message)


@pytest.fixture(scope="session")
def chromium_path() -> str:
    path = find_chromium()
    if path is None:
        where = os.environ.get("LABKIT_CHROMIUM") or "chromium on PATH and /usr/bin/chromium"
        _no_browser(f"no Chromium binary found (looked at {where})")
    return path


@pytest.fixture(scope="session")
def browser(chromium_path):
    try:
        from playwright.sync_api import expect, sync_playwright
    except ImportError as err:  # pragma: no cover - playwright is in requirements.txt
        _no_browser(f"Python playwright is not importable ({err})")
    expect.set_options(timeout=EXPECT_TIMEOUT_MS)
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium_path, args=CHROMIUM_ARGS, headless=True)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture
def page(browser):
    """A fresh context per test: no cookies or local storage carried between notebooks."""
    context = browser.new_context(viewport={"width": 1280, "height": 900}, device_scale_factor=1)
    context.set_default_timeout(EXPECT_TIMEOUT_MS)
    pg = context.new_page()
    try:
        yield pg
    finally:
        context.close()


# ---------------------------------------------------------------- servers


@pytest.fixture(scope="session")
def lab_server(chromium_path, tmp_path_factory) -> Iterator[Server]:
    """JupyterLab serving notebooks/ with autosave off (the committed notebooks are never saved)."""
    server = start_lab(NOTEBOOKS, tmp_path_factory.mktemp("jupyterlab"))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def lab(lab_server) -> Iterator[Server]:
    """The shared server with no kernel running before and after the test (kernels survive page loads).

    Also checks that JupyterLab saved nothing: the tests must never rewrite a committed notebook.
    """
    lab_server.shutdown_kernels()
    log_start = len(lab_server.log_text())
    try:
        yield lab_server
    finally:
        lab_server.shutdown_kernels()
        saved = [line for line in lab_server.log_text()[log_start:].splitlines() if "Saving file at" in line]
        assert not saved, f"JupyterLab saved a file during the test (autosave must be off): {saved}"


@pytest.fixture
def start_voila(chromium_path, tmp_path) -> Iterator[Callable[[str], Server]]:
    """Start Voila on one chapter (``start_voila("03_metrics_by_hand")``) as ``make app`` serves it: the copy
    ``tools/workbook.py --app`` writes, exercises left out. Stopped by PID afterwards."""
    servers: list[Server] = []
    app = tmp_path / "app"
    subprocess.run([sys.executable, str(ROOT / "tools" / "workbook.py"), "--app", "--out", str(app)], check=True,
                   capture_output=True)  # fmt: skip

    def start(stem: str) -> Server:
        port = free_port()
        argv = [
            sys.executable,
            "-m",
            "voila",
            "--no-browser",
            f"--port={port}",
            "--Voila.port_retries=0",
            "--Voila.ip=127.0.0.1",
            "--strip_sources=True",
            str(app / f"{stem}.ipynb"),
        ]
        env = dict(os.environ, JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"))
        server = Server("voila", argv, port, tmp_path / "voila.log", env, cwd=ROOT)
        servers.append(server)
        server.wait_ready(None)
        return server

    try:
        yield start
    finally:
        for s in servers:
            s.stop()


@pytest.fixture
def open_notebook(page, lab) -> Callable[[str], LabNotebook]:
    def open_(stem: str) -> LabNotebook:
        nb = LabNotebook(page, lab, stem)
        nb.open_and_run_all()
        return nb

    return open_
