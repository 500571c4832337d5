"""The student copy (tools/make_student.py): no solution survives, and its exercises run and say "not answered
yet". The notebooks themselves are not executed here: `make nbval` runs each one once, followed by its student
tail (``make_student.py --nbval``); the tests below check that copy's structure, and run it on two tiny notebooks.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from labkit.exercises.check import not_answered

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"


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
    originals = make_student.learners_notebooks(NOTEBOOKS)
    assert sorted(p.name for p in student_dir.glob("*.ipynb")) == [p.name for p in originals]
    left_out = make_student.for_instructors()
    assert left_out and not any((student_dir / name).exists() for name in left_out), "an instructor's chapter"
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


def test_exercise_numbers_in_source_order():
    source = 'check.exercise("3.10", a)\nfor x in []:\n    pass\ncheck.exercise("3.2", b); exercise("3.1", c)'
    assert make_student.exercise_numbers(source) == ["3.10", "3.2", "3.1"]


@pytest.fixture(scope="module")
def nbval_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("nbval")
    make_student.make_nbval_copy(out)
    return out


def test_nbval_copy_is_each_notebook_then_its_student_tail(nbval_dir):
    originals = sorted(NOTEBOOKS.glob("*.ipynb"))
    assert sorted(p.name for p in nbval_dir.glob("*.ipynb")) == [p.name for p in originals]
    for path in originals:
        teacher = nbformat.read(path, as_version=4)
        copy = nbformat.read(nbval_dir / path.name, as_version=4)
        nbformat.validate(copy)
        n = len(teacher.cells)
        assert copy.cells[:n] == teacher.cells, f"{path.name}: the notebook itself must run unchanged"
        solutions = _solution_cells(teacher)
        if not solutions:
            assert len(copy.cells) == n
            continue
        first = teacher.cells.index(solutions[0])
        tail = copy.cells[n:]
        assert tail[0].cell_type == "markdown" and "Student copy" in tail[0].source
        assert len(tail) == 1 + n - first, path.name
        counts = [c.execution_count for c in copy.cells if c.cell_type == "code"]
        assert counts == sorted(counts) and len(set(counts)) == len(counts), f"{path.name}: execution counts"
        for original, cell in zip(teacher.cells[first:], tail[1:], strict=True):
            assert cell.cell_type == original.cell_type
            if cell.cell_type != "code":
                assert cell.source == original.source
            elif original in solutions:
                names = make_student.assigned_names(original.source)
                assert cell.source == "\n".join(f"{n} = None  # your answer here" for n in names)
                assert cell.outputs == []
            elif make_student.is_check_cell(original.source):
                assert cell.source == original.source
                expected = "".join(not_answered(n) + "\n" for n in make_student.exercise_numbers(cell.source))
                assert [o.get("text") for o in cell.outputs] == [expected], path.name
            else:  # any other cell must run in the student copy; its output may depend on the answers
                assert cell.source == original.source
                ignored = cell.source.lstrip().startswith("# NBVAL_IGNORE_OUTPUT")  # once, not twice
                assert ignored != (make_student.IGNORE_OUTPUT_TAG in cell.metadata.get("tags", [])), path.name


def _tiny_notebook(cells: list[tuple[str, list[str], str]]) -> nbformat.NotebookNode:
    """(source, tags, stored stdout) per code cell, executed in order."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    for i, (source, tags, stdout) in enumerate(cells, start=1):
        outputs = [nbformat.v4.new_output("stream", name="stdout", text=stdout)] if stdout else []
        cell = nbformat.v4.new_code_cell(source, execution_count=i, outputs=outputs)
        if tags:
            cell.metadata["tags"] = tags
        nb.cells.append(cell)
    return nb


@pytest.mark.slow
def test_the_student_tail_runs_under_nbval(tmp_path):
    """Two tiny notebooks through `make nbval`'s path: one whose student copy works, one whose does not (a later
    cell uses a helper that only the solution cell defined, which is None in the student copy)."""
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    good = [
        ("from labkit.exercises import check\ntable = {'unused': 1}", [], ""),
        ("answer_3_1 = 1 / 3", ["solution"], ""),
        ('check.exercise("3.1", answer_3_1)', [], "Exercise 3.1: correct.\n"),
        ("print(len(table))", [], "1\n"),  # runs whatever the answer
    ]
    bad = [
        ("from labkit.exercises import check", [], ""),
        ("helper = 3\nanswer_3_1 = 1 / helper", ["solution"], ""),
        ('check.exercise("3.1", answer_3_1)', [], "Exercise 3.1: correct.\n"),
        ("print(helper + 1)", [], "4\n"),
    ]
    nbformat.write(_tiny_notebook(good), notebooks / "good.ipynb")
    nbformat.write(_tiny_notebook(bad), notebooks / "bad.ipynb")
    out = tmp_path / "nbval"
    make_student.make_nbval_copy(out, notebooks)
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval", "-rf", str(out)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    failed = sorted(set(re.findall(r"FAILED \S*?(\w+\.ipynb::Cell \d+)", proc.stdout)))
    # bad.ipynb: 4 cells, the tail's header is not a code cell, then placeholder 4, check 5, print(helper + 1) 6
    assert failed == ["bad.ipynb::Cell 6"], proc.stdout[-3000:]
    assert re.search(r"(\d+) passed", proc.stdout) and int(re.search(r"(\d+) passed", proc.stdout)[1]) == 13
