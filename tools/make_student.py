"""Write the student copy of the workbook: every solution cell emptied, its check left to answer.

    python tools/make_student.py                  # -> build/student/
    python tools/make_student.py --out DIR        # somewhere else

For every notebook in ``notebooks/``:

- a code cell tagged ``solution`` gets, for each name it assigns at top level, one line
  ``<name> = None  # your answer here``, so the following ``check.exercise(...)`` cell prints
  "not answered yet" instead of "correct";
- the outputs (and execution counts) of solution cells and of check cells (cells that call
  ``check.exercise``) are cleared, so no answer survives in a stored output either.

Only the ``.ipynb`` files are copied: the notebooks ``import labkit`` (installed editable from the clone by
``requirements.txt``) and ``labkit`` finds ``data/`` by itself, so the copy runs anywhere on this machine.
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
DEFAULT_OUT = ROOT / "build" / "student"
SOLUTION_TAG = "solution"
PLACEHOLDER = "{name} = None  # your answer here"


def _target_names(target: ast.expr) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Tuple | ast.List):
        return [n for elt in target.elts for n in _target_names(elt)]
    if isinstance(target, ast.Starred):
        return _target_names(target.value)
    return []  # attribute or subscript assignments bind no new name


def assigned_names(source: str) -> list[str]:
    """Names bound by top-level assignments of a cell, in order, without repeats."""
    names: list[str] = []
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign | ast.AugAssign):
            targets = [node.target]
        else:
            continue
        for target in targets:
            for name in _target_names(target):
                if name not in names:
                    names.append(name)
    return names


def is_check_cell(source: str) -> bool:
    """Does the cell call ``check.exercise(...)`` (or a bare ``exercise(...)``)?"""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            if (isinstance(f, ast.Attribute) and f.attr == "exercise") or (
                isinstance(f, ast.Name) and f.id == "exercise"
            ):
                return True
    return False


def _clear(cell: nbformat.NotebookNode) -> None:
    cell.outputs = []
    cell.execution_count = None
    cell.metadata.pop("execution", None)


def studentize(nb: nbformat.NotebookNode, name: str = "notebook") -> int:
    """Empty the solution cells of ``nb`` in place; return how many there were."""
    count = 0
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        if SOLUTION_TAG in cell.metadata.get("tags", []):
            names = assigned_names(cell.source)
            if not names:
                raise ValueError(
                    f"{name}, cell {i}: a solution cell must assign the answer to a name "
                    f"(e.g. answer_3_1 = ...); found none in {cell.source!r}"
                )
            cell.source = "\n".join(PLACEHOLDER.format(name=n) for n in names)
            _clear(cell)
            count += 1
        elif is_check_cell(cell.source):
            _clear(cell)
    return count


def make_student(out: Path = DEFAULT_OUT, notebooks: Path = NOTEBOOKS) -> list[Path]:
    """Write the student copy of every notebook of ``notebooks`` into ``out``; return the files written."""
    paths = sorted(notebooks.glob("*.ipynb"))
    if not paths:
        raise FileNotFoundError(f"no notebooks in {notebooks}")
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        n = studentize(nb, path.name)
        target = out / path.name
        nbformat.write(nb, target)
        written.append(target)
        print(f"{target}: {n} solution cell(s) emptied")
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output folder (default: build/student)")
    args = parser.parse_args(argv)
    make_student(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
