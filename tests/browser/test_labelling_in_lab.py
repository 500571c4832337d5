"""The learner labels in a real JupyterLab, labels a learner can trust and make: keys label claims in
chapter 06, the labels survive a reload, and the calibration cell then computes with the learner's labels."""

from __future__ import annotations

import json
import re
import time

from labdriver import LAB_SETTINGS, NOTEBOOKS, WIDGET_TIMEOUT_S, LabNotebook, start_lab

STEM = "06_faithfulness"
KEYS = "susssucsss"  # ten labels: chapter 06 switches to the learner's labels from 10 on
CELLS = "(() => document.querySelectorAll('.jp-Notebook .jp-Cell').length)()"


def progress(page) -> str:
    return page.locator(".lk-labeller .lk-lab-progress").first.inner_text()


def wait_for(read, pattern: str, timeout: float = WIDGET_TIMEOUT_S) -> str:
    deadline = time.monotonic() + timeout
    while True:
        text = read()
        if re.search(pattern, text) or time.monotonic() > deadline:
            return text
        time.sleep(0.1)


def calibration_output(page) -> str:
    out = page.locator(".jp-OutputArea-output").filter(has_text="labels used:")
    return out.first.inner_text()


def test_keys_label_claims_the_labels_survive_a_reload_and_the_calibration_uses_them(page, chromium_path, tmp_path,
                                                                                    monkeypatch):  # fmt: skip
    labels = tmp_path / "labels"
    monkeypatch.setenv("LABKIT_LABELS", str(labels))  # the server's kernels inherit it: a private label folder
    server = start_lab(NOTEBOOKS, tmp_path / "lab", LAB_SETTINGS)
    try:
        nb = LabNotebook(page, server, STEM)
        nb.open_and_run_all()
        assert "the reference labels of 73 items" in calibration_output(page)
        assert wait_for(lambda: progress(page), r"^0 of 30 labelled").startswith("0 of 30 labelled")
        cells_before = page.evaluate(CELLS)
        box = page.locator(".lk-labeller .lk-lab-keys").first
        box.click()
        latencies = []
        for n, key in enumerate(KEYS, start=1):
            t0 = time.perf_counter()
            box.press(key)
            shown = wait_for(lambda: progress(page), rf"^{n} of 30 labelled")
            latencies.append(time.perf_counter() - t0)
            assert shown.startswith(f"{n} of 30 labelled"), f"after key {n} ({key!r}) the widget shows {shown!r}"
        box.press("b")  # JupyterLab's "insert cell below" must not fire while the box has focus
        box.press("z")  # ... nor its "undo cell operation": z undoes the last label instead
        assert wait_for(lambda: progress(page), r"^9 of 30").startswith("9 of 30"), progress(page)
        box.press("s")
        assert wait_for(lambda: progress(page), r"^10 of 30").startswith("10 of 30"), progress(page)
        assert page.evaluate(CELLS) == cells_before, "a key typed into the labeller reached the notebook"
        print(f"key -> progress updated: median {sorted(latencies)[len(latencies) // 2] * 1000:.0f} ms, "
              f"max {max(latencies) * 1000:.0f} ms")  # fmt: skip

        lines = [json.loads(x) for x in (labels / "06-claims.jsonl").read_text().splitlines()]
        assert len(lines) == 12 and sum(line["label"] is None for line in lines) == 1  # 11 labels, 1 undo

        server.shutdown_kernels()
        nb.open_and_run_all()  # a reload: a new kernel, the notebook run again from the top
        assert wait_for(lambda: progress(page), r"^10 of 30").startswith("10 of 30 labelled"), progress(page)
        assert "labels used: your 10 labels (06-claims)" in calibration_output(page)
        assert "you and the rater agree on" in calibration_output(page)
    finally:
        server.shutdown_kernels()
        server.stop()


def test_chapter_10_switches_to_the_learners_answer_labels(page, chromium_path, tmp_path, monkeypatch):
    """Chapter 10: ten keys rate the reader's answers; run again, the 2x2 counts those ten by the learner's labels."""
    labels = tmp_path / "labels"
    monkeypatch.setenv("LABKIT_LABELS", str(labels))
    server = start_lab(NOTEBOOKS, tmp_path / "lab", LAB_SETTINGS)
    try:
        nb = LabNotebook(page, server, "10_your_own_documents")
        nb.open_and_run_all()
        assert "the reference labels of 80 items" in calibration_output(page)  # the answers' cell comes first
        box = page.locator(".lk-labeller .lk-lab-keys").first
        box.click()
        for n, key in enumerate("rrwprwwdrr", start=1):  # five "right"
            box.press(key)
            assert wait_for(lambda: progress(page), rf"^{n} of 30 labelled").startswith(f"{n} of 30 labelled")
        assert len((labels / "10-answers.jsonl").read_text().splitlines()) == 10
        cell = page.locator(".jp-Notebook .jp-Cell").filter(has_text="labels used:").first
        cell.locator(".jp-InputArea-editor").click()  # run that one cell again (no reload: Run All once is enough)
        page.keyboard.press("Shift+Enter")
        shown = wait_for(lambda: calibration_output(page), r"your 10 labels[\s\S]*RET_FAIL")
        assert "labels used: your 10 labels (10-answers)" in shown, shown
        counts = {c: int(n) for c, n in re.findall(r"^(OK|GEN_FAIL|LUCKY|RET_FAIL)\s+(\d+)", shown, re.MULTILINE)}
        assert sum(counts.values()) == 10 and counts["OK"] + counts["LUCKY"] == 5, shown
    finally:
        server.shutdown_kernels()
        server.stop()
