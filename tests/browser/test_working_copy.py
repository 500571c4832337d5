"""The learner's working copy in a real JupyterLab: a chapter run there with autosave on is saved there, and
no tracked file of the repository changes (the committed notebooks are never the ones a learner edits)."""

from __future__ import annotations

import json
import subprocess
import sys
import time

from labdriver import LAB_SETTINGS, ROOT, LabNotebook, start_lab

AUTOSAVE = {"@jupyterlab/docmanager-extension/plugin.jupyterlab-settings": {"autosave": True, "autosaveInterval": 2}}
STEM = "00_welcome"


def run_saved(path) -> bool:
    """Does the notebook on disk hold a finished run: every code cell executed?"""
    try:
        cells = [c for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"]
    except (OSError, ValueError):  # mid-write
        return False
    return bool(cells) and all(c.get("execution_count") for c in cells)


def wait_saved(path, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while not run_saved(path) and time.monotonic() < deadline:
        time.sleep(0.5)
    return run_saved(path)


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
        saved_by = wait_saved(copy / f"{STEM}.ipynb", 20) and "autosave"
        if not saved_by:
            # Autosave can stall on JupyterLab's "file changed on disk" check after a quick series of saves
            # (mtime granularity); the learner then saves by hand, which must go to the same place.
            page.keyboard.press("ControlOrMeta+s")
            overwrite = page.get_by_role("button", name="Overwrite")
            if overwrite.count():
                overwrite.click()
            saved_by = wait_saved(copy / f"{STEM}.ipynb", 15) and "Ctrl+S"
    finally:
        server.shutdown_kernels()
        server.stop()
    assert "Saving file at" in server.log_text(), "JupyterLab never saved the chapter (is autosave on?)"
    print(f"the finished run was saved by {saved_by}")
    assert saved_by, "neither autosave nor Ctrl+S wrote the finished run to the working copy"
    assert (copy / f"{STEM}.ipynb").stat().st_mtime > before_copy
    assert tracked_changes() == before_repo, "running a chapter in the working copy changed a tracked file"
    assert not list(copy.glob(".ipynb_checkpoints")), "checkpoints belong in the server's private folder"
