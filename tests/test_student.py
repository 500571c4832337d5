"""The student copy (tools/make_student.py): no solution survives, every notebook still runs, checks say
"not answered yet". Executes the notebooks (~15 s), so it is marked ``slow``; it is part of ``make unit``."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"

pytestmark = pytest.mark.slow


def _load_tool():
    spec = importlib.util.spec_from_file_location("make_student", ROOT / "tools" / "make_student.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


make_student = _load_tool()


def test_assigned_names():
    names = make_student.assigned_names
    assert names("answer_3_1 = metrics.precision_at_k(rels, 3)") == ["answer_3_1"]
    assert names("a, (b, *c) = 1, (2, 3)\nd: int = 4\na += 1\nx.y = 5\nz[0] = 6\nprint(a)") == ["a", "b", "c", "d"]
    assert make_student.is_check_cell('check.exercise("3.1", answer_3_1)')
    assert not make_student.is_check_cell("answer = 1  # check.exercise later")


def test_a_solution_cell_without_an_assignment_is_refused():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("print(42)", metadata={"tags": ["solution"]})]
    with pytest.raises(ValueError, match="must assign the answer"):
        make_student.studentize(nb, "x.ipynb")


@pytest.fixture(scope="module")
def student_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("student")
    make_student.make_student(out)
    return out


def _solution_cells(nb):
    return [c for c in nb.cells if c.cell_type == "code" and "solution" in c.metadata.get("tags", [])]


def test_no_solution_survives(student_dir):
    originals = sorted(NOTEBOOKS.glob("*.ipynb"))
    assert sorted(p.name for p in student_dir.glob("*.ipynb")) == [p.name for p in originals]
    for path in originals:
        teacher = nbformat.read(path, as_version=4)
        student = nbformat.read(student_dir / path.name, as_version=4)
        assert len(student.cells) == len(teacher.cells), path.name
        solutions = _solution_cells(teacher)
        assert len(_solution_cells(student)) == len(solutions), path.name
        everything = "\n".join(c.source + "".join(str(o) for o in c.get("outputs", [])) for c in student.cells) + str(
            student.metadata
        )
        for cell in solutions:
            names = make_student.assigned_names(cell.source)
            for line in cell.source.splitlines():
                if line.strip():
                    assert line not in everything, f"{path.name}: solution line survives: {line!r}"
            mirror = student.cells[teacher.cells.index(cell)]
            assert mirror.source == "\n".join(f"{n} = None  # your answer here" for n in names)
            assert mirror.outputs == [] and mirror.execution_count is None
        for cell in student.cells:
            if cell.cell_type == "code" and make_student.is_check_cell(cell.source):
                assert cell.outputs == [], f"{path.name}: a check cell kept its output"


def test_student_notebooks_run_and_checks_say_not_answered(student_dir):
    # every student notebook runs top to bottom (nbval-lax: cells must not fail, outputs are not compared)
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval-lax", str(student_dir)],
        cwd=student_dir,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        # meanwhile (2 cores), execute one notebook here and read what its checks print
        from nbclient import NotebookClient

        nb = nbformat.read(student_dir / "00_welcome.ipynb", as_version=4)
        resources = {"metadata": {"path": str(student_dir)}}
        NotebookClient(nb, timeout=300, kernel_name="python3", resources=resources).execute()
        checks = [c for c in nb.cells if c.cell_type == "code" and make_student.is_check_cell(c.source)]
        assert checks, "00_welcome has no check cell"
        for cell in checks:
            text = "".join(o.get("text", "") for o in cell.outputs)
            assert "not answered yet" in text, f"00_welcome: check cell {cell.source!r} printed {text!r}"
        out, _ = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, f"pytest --nbval-lax on the student copy failed:\n{out[-4000:]}"
    ran = re.search(r"(\d+) passed", out)
    assert ran and int(ran.group(1)) > 0, f"pytest --nbval-lax ran no cell:\n{out[-2000:]}"
