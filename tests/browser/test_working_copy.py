"""The learner's working copy in a real JupyterLab: a chapter run there with autosave on is saved there, and
no tracked file of the repository changes (issue: the committed notebooks are never the ones a learner edits)."""

from __future__ import annotations

import json
import subprocess
import sys
import time

from labdriver import LAB_SETTINGS, ROOT, LabNotebook, start_lab

AUTOSAVE = {"@jupyterlab/docmanager-extension/plugin.jupyterlab-settings": {"autosave": True, "autosaveInterval": 2}}
STEM = "00_welcome"


def tracked_changes() -> str:
    return subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT, capture_output=True,
                          text=True, check=True).stdout  # fmt: skip


def test_a_chapter_run_in_the_working_copy_with_autosave_saves_there_and_nowhere_else(page, chromium_path, tmp_path):
    copy = tmp_path / "workbook"
    made = subprocess.run([sys.executable, str(ROOT / "tools" / "workbook.py"), "--out", str(copy)],
                          capture_output=True, text=True, check=True)  # fmt: skip
    assert f"your working copy: {copy}" in made.stdout
    answer_cells = [c for c in json.loads((copy / f"{STEM}.ipynb").read_text())["cells"] if "your answer here" in
                    "".join(c["source"])]  # fmt: skip
    assert answer_cells, "the working copy must be the student copy: its answers are left to the learner"
    before_repo, before_copy = tracked_changes(), (copy / f"{STEM}.ipynb").stat().st_mtime
    server = start_lab(copy, tmp_path / "lab", {**LAB_SETTINGS, **AUTOSAVE})
    try:
        LabNotebook(page, server, STEM).open_and_run_all()
        after_run = len(server.log_text())  # autosave may also fire mid-run: wait for a save of the finished run
        deadline = time.monotonic() + 30
        while "Saving file at" not in server.log_text()[after_run:] and time.monotonic() < deadline:
            time.sleep(0.5)
    finally:
        server.shutdown_kernels()
        server.stop()
    assert "Saving file at" in server.log_text()[after_run:], "autosave never saved the run (is autosave on?)"
    saved = json.loads((copy / f"{STEM}.ipynb").read_text())
    assert (copy / f"{STEM}.ipynb").stat().st_mtime > before_copy
    assert any(c.get("outputs") for c in saved["cells"] if c["cell_type"] == "code"), "the run's outputs were saved"
    assert tracked_changes() == before_repo, "running a chapter in the working copy changed a tracked file"
    assert not list(copy.glob(".ipynb_checkpoints")), "checkpoints belong in the server's private folder"
