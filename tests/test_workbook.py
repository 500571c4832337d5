"""The learner's working copy (tools/workbook.py): made from the student copy, never overwritten, updated
beside the learner's file, never inside notebooks/. The browser test runs a chapter there with autosave on."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
TOOL = ROOT / "tools" / "workbook.py"


def _load_tool():
    sys.path.insert(0, str(TOOL.parent))
    spec = importlib.util.spec_from_file_location("workbook_tool", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


workbook = _load_tool()


def _chapter(path: Path, text: str) -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(text),
                nbformat.v4.new_code_cell("answer_1 = 42", metadata={"tags": ["solution"]}),
                nbformat.v4.new_code_cell("check.exercise('1.1', answer_1)")]  # fmt: skip
    nbformat.write(nb, path)


def test_made_once_kept_then_offered_updates_beside_the_learners_file(tmp_path):
    src, out = tmp_path / "notebooks", tmp_path / "copy"
    src.mkdir()
    _chapter(src / "00_a.ipynb", "# A")
    assert workbook.make_workbook(out, src) == {"added": ["00_a.ipynb"], "kept": [], "updated": []}
    mine = out / "00_a.ipynb"
    assert "answer_1 = None  # your answer here" in mine.read_text()  # the student copy, not the answers
    mine.write_text(mine.read_text().replace("answer_1 = None", "answer_1 = 41"))
    _chapter(src / "01_b.ipynb", "# B")  # a new chapter after a pull
    assert workbook.make_workbook(out, src) == {"added": ["01_b.ipynb"], "kept": ["00_a.ipynb"], "updated": []}
    assert "answer_1 = 41" in mine.read_text()
    _chapter(src / "00_a.ipynb", "# A, revised")  # a changed chapter after a pull
    assert workbook.make_workbook(out, src)["updated"] == ["00_a.ipynb"]
    assert "answer_1 = 41" in mine.read_text(), "the learner's file is never rewritten"
    assert "# A, revised" in (out / "00_a.updated.ipynb").read_text()
    assert set(json.loads((out / workbook.RECORD).read_text())) == {"00_a.ipynb", "01_b.ipynb"}


def test_the_copy_never_lives_in_notebooks_and_solutions_are_a_fresh_copy(tmp_path):
    src = tmp_path / "notebooks"
    src.mkdir()
    _chapter(src / "00_a.ipynb", "# A")
    with pytest.raises(ValueError, match="out must not be"):
        workbook.make_workbook(src, src)
    with pytest.raises(FileNotFoundError, match="no notebooks"):
        workbook.make_workbook(tmp_path / "x", tmp_path / "empty")
    sol = tmp_path / "solutions"
    (sol / "old").mkdir(parents=True)
    assert [p.name for p in workbook.make_solutions(sol, src)] == ["00_a.ipynb"]
    assert not (sol / "old").exists() and "answer_1 = 42" in (sol / "00_a.ipynb").read_text()


def test_make_lab_opens_the_working_copy_on_chapter_00(tmp_path):
    dry = subprocess.run(["make", "-n", "lab", f"WORKBOOK={tmp_path / 'wb'}"], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout  # fmt: skip
    assert f"tools/workbook.py --out {tmp_path / 'wb'}" in dry
    assert f"--notebook-dir={tmp_path / 'wb'}" in dry and "--LabApp.default_url=/lab/tree/00_welcome.ipynb" in dry
    assert "--notebook-dir=notebooks" not in dry


def test_the_app_copy_leaves_out_the_exercises_and_their_checks_but_keeps_the_code_they_feed():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# Chapter"),
                nbformat.v4.new_code_cell("x = 1"),
                nbformat.v4.new_markdown_cell("## Exercises\n\n**3.1** What is x?"),
                nbformat.v4.new_code_cell("answer_3_1 = x", metadata={"tags": ["solution"]}),
                nbformat.v4.new_code_cell('check.exercise("3.1", answer_3_1)'),
                nbformat.v4.new_markdown_cell("**Exercise 1.2 (predict, then run).** Will it?"),
                nbformat.v4.new_markdown_cell("## What this chapter cost")]  # fmt: skip
    app = workbook.app_notebook(nb)
    assert [c.source for c in app.cells] == ["# Chapter", "x = 1", "answer_3_1 = x", "## What this chapter cost"]
    assert len(nb.cells) == 7  # the notebook itself is untouched


def test_the_app_copy_cuts_exercises_out_of_the_cells_that_share_them_with_prose():
    summary = ("## Summary\n\n* Report per slice.\n\n## Exercises\n\nReplace `None` with your answer.\n\n"
               "**1.4** What is D2's score?")  # fmt: skip
    assert workbook.without_exercises(summary) == "## Summary\n\n* Report per slice."
    sweep = "Two lists where *c* matters.\n\n**Exercise 1.1 (predict, then run).** Before you run..."
    assert workbook.without_exercises(sweep) == "Two lists where *c* matters."
    intro = "**Predict, then run.** Two to try:\n\n* **0.2** What share?\n* **0.3** Which rank?"
    assert workbook.without_exercises(intro) == ""
    assert workbook.without_exercises("## Exercises\n\n**1.1** x\n\n## Next\n\nkept") == "## Next\n\nkept"
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(intro), nbformat.v4.new_markdown_cell(summary)]
    assert [c.source for c in workbook.app_notebook(nb).cells] == ["## Summary\n\n* Report per slice."]


def test_an_instructors_chapter_stays_out_of_the_working_copy_and_in_the_answered_one(tmp_path):
    src = tmp_path / "notebooks"
    src.mkdir()
    _chapter(src / "00_a.ipynb", "# A")
    _chapter(src / "11_class_labels.ipynb", "# 11 · for instructors")  # its manifest says audience="instructor"
    assert workbook.make_workbook(tmp_path / "copy", src)["added"] == ["00_a.ipynb"]
    assert not (tmp_path / "copy" / "11_class_labels.ipynb").exists()
    assert [p.name for p in workbook.make_solutions(tmp_path / "sol", src)] == ["00_a.ipynb", "11_class_labels.ipynb"]
