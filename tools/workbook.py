"""The learner's working copy: the student notebooks, outside the tracked tree, made once and never overwritten.

    python tools/workbook.py                  # workbook/ (ignored by git): create it, or add the chapters it lacks
    python tools/workbook.py --out DIR        # the copy somewhere else (your documents folder, say)
    python tools/workbook.py --solutions      # build/solutions/: the answered notebooks, for instructors
    python tools/workbook.py --app            # build/app/: the chapters as Voila serves them (make app)

``make lab`` runs the first and opens ``00_welcome.ipynb`` of the copy; ``make lab-solutions`` the last. The
committed notebooks in ``notebooks/`` are never opened for editing, so nothing a learner does in JupyterLab
(autosave included) changes a tracked file.

A chapter for instructors (its manifest's ``audience="instructor"``) is not in the working copy; ``--solutions``
has it. A chapter already in the copy is never rewritten: it holds the learner's answers. After a ``git pull`` that
changed a chapter, running this again writes the new version *beside* the learner's as
``<chapter>.updated.ipynb`` and says so, to open side by side and carry the answers over (or to replace the old
file with, once the answers are moved). ``.made-from.json`` in the copy remembers which version of each chapter
the copy was made from, so an unchanged chapter is never offered again. Chapters new to the repository are
added as they are.

``--app`` writes the chapters for projection with Voila: the exercises' prompts and their checks are left out
(a served page would show "correct." with no answer on screen); the solution cells stay, as hidden code, since
later cells may use what they compute.

The copy runs from anywhere on this machine: the notebooks ``import labkit``, which ``requirements.txt`` installs
editable from this clone and which finds ``data/`` by itself (see ``tools/make_student.py``).
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import re
import shutil
import sys
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parent))

from make_student import NOTEBOOKS, ROOT, is_check_cell, learners_notebooks, studentize  # noqa: E402

DEFAULT_OUT = ROOT / "workbook"
SOLUTIONS_OUT = ROOT / "build" / "solutions"
APP_OUT = ROOT / "build" / "app"
RECORD = ".made-from.json"
FIRST = "00_welcome.ipynb"


def version(nb: nbformat.NotebookNode) -> str:
    """What a learner's copy of ``nb`` was made from: a digest of its cells' type and source (outputs aside)."""
    cells = [[c.cell_type, c.source] for c in nb.cells]
    return hashlib.sha256(json.dumps(cells, ensure_ascii=False).encode()).hexdigest()[:16]


def make_workbook(out: Path = DEFAULT_OUT, notebooks: Path = NOTEBOOKS) -> dict[str, list[str]]:
    """Create or update the working copy in ``out``; return the chapters ``added``, ``kept`` and ``updated``
    (the last written beside the learner's file as ``<chapter>.updated.ipynb``). The instructors' chapters are left
    out (``make_student.for_instructors``)."""
    paths = learners_notebooks(notebooks)
    if not paths:
        raise FileNotFoundError(f"no notebooks in {notebooks}")
    out = Path(out)
    if out.resolve() == notebooks.resolve():
        raise ValueError(f"out must not be {notebooks}: the working copy lives outside the committed notebooks")
    out.mkdir(parents=True, exist_ok=True)
    record_path = out / RECORD
    record = json.loads(record_path.read_text()) if record_path.exists() else {}
    done: dict[str, list[str]] = {"added": [], "kept": [], "updated": []}
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        studentize(nb, path.name)
        now = version(nb)
        target = out / path.name
        if not target.exists():
            nbformat.write(nb, target)
            record[path.name] = now
            done["added"].append(path.name)
        elif record.get(path.name) in (None, now):
            record.setdefault(path.name, now)
            done["kept"].append(path.name)
        else:
            nbformat.write(nb, out / f"{path.stem}.updated.ipynb")
            done["updated"].append(path.name)
    record_path.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    return done


def make_solutions(out: Path = SOLUTIONS_OUT, notebooks: Path = NOTEBOOKS) -> list[Path]:
    """The answered notebooks, copied afresh into ``out`` (an instructor's edits there are not kept)."""
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    return [Path(shutil.copy2(p, out / p.name)) for p in sorted(notebooks.glob("*.ipynb"))]


def is_exercise_prompt(cell: nbformat.NotebookNode) -> bool:
    """A markdown cell that states an exercise: it starts with ``**3.2`` or ``**Exercise 1.2``, or it is the
    ``## Exercises`` heading."""
    text = cell.source.lstrip()
    return cell.cell_type == "markdown" and bool(re.match(r"(\*\*(Exercise )?\d+b?\.\d+|## Exercises)", text))


EXERCISE_PARAGRAPH = re.compile(r"(\* )?\*\*((Exercise )?\d+b?\.\d+\b|Predict, then run)")
"""A paragraph that states an exercise: ``**1.4** ...``, ``**Exercise 1.1 (predict, then run).** ...``, a list of
them (``* **0.2** ...``) or 00's ``**Predict, then run.**`` introduction."""


def without_exercises(markdown: str) -> str:
    """``markdown`` without what asks the reader for an answer: an ``## Exercises`` or ``### Predict, then run``
    section (to the next heading) and every paragraph that states an exercise; the rest as it was."""
    kept, skipping = [], False
    for para in re.split(r"\n\s*\n", markdown):
        head = para.lstrip()
        if re.match(r"#{1,3} (Exercises|Predict, then run)\b", head):
            skipping = True
            continue
        if skipping and re.match(r"#{1,6} ", head):
            skipping = False
        if not skipping and not EXERCISE_PARAGRAPH.match(head):
            kept.append(para)
    return "\n\n".join(kept)


def app_notebook(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """``nb`` for projection: its check cells, exercise prompts and exercise paragraphs (inside a summary cell,
    say) left out (a copy; ``nb`` is not changed)."""
    out = copy.deepcopy(nb)
    out.cells = [c for c in out.cells if not (is_exercise_prompt(c) or (c.cell_type == "code" and
                                                                        is_check_cell(c.source)))]  # fmt: skip
    for cell in out.cells:
        if cell.cell_type == "markdown":
            cell.source = without_exercises(cell.source)
    out.cells = [c for c in out.cells if c.cell_type != "markdown" or c.source.strip()]
    return out


def make_app(out: Path = APP_OUT, notebooks: Path = NOTEBOOKS) -> list[Path]:
    """Every chapter as :func:`app_notebook`, into ``out`` (rebuilt each time)."""
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    written = []
    for path in sorted(notebooks.glob("*.ipynb")):
        nbformat.write(app_notebook(nbformat.read(path, as_version=4)), out / path.name)
        written.append(out / path.name)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help=f"where the copy lives (default {DEFAULT_OUT.relative_to(ROOT)}/)")
    parser.add_argument("--solutions", action="store_true", help="copy the answered notebooks for instructors")
    parser.add_argument("--app", action="store_true", help="the chapters for Voila, exercises left out")
    a = parser.parse_args(argv)
    if a.app:
        out = a.out or APP_OUT
        print(f"{len(make_app(out))} chapters for Voila in {out}")
        return 0
    if a.solutions:
        out = a.out or SOLUTIONS_OUT
        written = make_solutions(out)
        print(f"{len(written)} answered notebooks in {out} (rebuilt each time: keep no work there)")
        return 0
    out = a.out or DEFAULT_OUT
    done = make_workbook(out)
    print(f"your working copy: {out}")
    if done["added"]:
        print(f"  added {len(done['added'])} chapter(s): {', '.join(done['added'])}")
    if done["kept"]:
        print(f"  kept {len(done['kept'])} chapter(s) as you left them")
    for name in done["updated"]:
        stem = name.removesuffix(".ipynb")
        print(f"  {name} changed in the repository: the new version is {stem}.updated.ipynb, beside yours "
              "(move your answers across, then replace yours with it)")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
