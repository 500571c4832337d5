"""A class folder read by its instructor: every learner's labels of a set, their self-checks, an export to merge.

Taught in 11_class_labels (for instructors). The folder and how learners write into it:
:mod:`labkit.data.class_folder`.

- :func:`read_class` — one label set's files: each learner's newest label per item (an undo unlabels), the time
  of each, and every file or line it did not read, with why.
- :func:`read_progress`, :func:`progress_table` — the self-checks learners shared: one row per learner, one column
  per exercise (``correct`` once any try was, ``not yet`` when tried and never correct, blank when not tried).
- :func:`export_rows`, :func:`write_export`, :func:`read_export` — the class's labels as JSONL, one line per label
  (``set``, ``item``, ``learner``, ``label``, ``time``, ``class``), which ``python -m labkit labels merge`` reads
  beside another class's export or learners' own label files.
- :func:`check_class` — the folder's permissions, checked: what would let one learner read another's file.

**Nothing is read from outside the class folder**, and **what is refused is skipped, never silently**: each
refusal is a :class:`Skipped` (where, why) in the result, for the notebook to print. A drop directory that is a
symlink is not listed; an entry that is not a regular file (a symlink, a folder) is not opened, and a file is
opened with ``O_NOFOLLOW``; a name that is not ``<learner id>.jsonl`` (an id cannot hold ``/`` or start with
``.``) is not read; a file whose owner is not the learner it is named after (another account wrote it), or that
its group or any account could write, is not read; in a file, a line that is torn (being written, or its writer
was killed), not JSON, of another label set or another learner, of an unknown item, or with a label outside the
set's, is skipped with its line number.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from labkit.core import args
from labkit.core.files import path_arg
from labkit.data.class_folder import LABELS, PROGRESS, ClassFolder, ProgressDrop, is_id, open_class
from labkit.data.labels import LabelSet

__all__ = ["Skipped", "ClassLabels", "read_class", "read_progress", "progress_table", "export_rows", "write_export",
           "read_export", "check_class", "MAX_BYTES", "EXPORT_KEYS"]  # fmt: skip

MAX_BYTES = 5_000_000
"""A learner's file larger than this (5 MB, some 50,000 labels) is skipped, not read."""
EXPORT_KEYS = ("set", "item", "learner", "label", "time")


@dataclass(frozen=True)
class Skipped:
    """What was not read (``where``: a file, or a file and line, relative to the class folder) and ``why``."""

    where: str
    why: str

    def __str__(self) -> str:
        return f"skipped {self.where}: {self.why}"


@dataclass
class ClassLabels:
    """One label set of a class: ``ratings`` (learner -> item -> newest label, what ``stats.fleiss_report`` and
    ``stats.alpha_report`` read), ``rows`` (the same as dicts with each label's time), ``skipped``."""

    set_id: str
    ratings: dict[str, dict[str, str]]
    rows: list[dict[str, Any]]
    skipped: list[Skipped] = field(default_factory=list)
    simulated: bool = False
    title: str = ""

    @property
    def learners(self) -> list[str]:
        return list(self.ratings)

    def summary(self) -> str:
        items = {r["item"] for r in self.rows}
        who = "simulated raters" if self.simulated else "learners"
        line = f"{self.set_id}: {len(self.ratings)} {who}, {len(self.rows)} labels on {len(items)} items"
        return line + (f"; skipped {len(self.skipped)} (below)" if self.skipped else "; nothing skipped")


def _files(folder: ClassFolder, drop: Path, skipped: list[Skipped]) -> list[tuple[str, str]]:
    """(learner id, text) of each file of ``drop`` that may be read; the others go to ``skipped``."""
    rel = drop.relative_to(folder.path).as_posix()
    for part in [p for p in (drop, *drop.parents) if p != folder.path and folder.path in p.parents][::-1]:
        try:
            info = os.lstat(part)
        except FileNotFoundError:
            return []
        if not stat.S_ISDIR(info.st_mode):
            where = part.relative_to(folder.path).as_posix()
            skipped.append(Skipped(where, "not a folder (a symlink?): nothing is read from outside the class folder"))
            return []
    out = []
    with os.scandir(drop) as entries:
        names = sorted((e.name, e.is_file(follow_symlinks=False), e.is_symlink()) for e in entries)
    for name, regular, link in names:
        where, stem = f"{rel}/{name}", name.removesuffix(".jsonl")
        if link or not regular:
            skipped.append(Skipped(where, "a symlink: nothing is read from outside the class folder" if link else
                                   "not a regular file"))  # fmt: skip
            continue
        if not name.endswith(".jsonl") or not is_id(stem):
            skipped.append(Skipped(where, "not a learner's file (<learner id>.jsonl, an id being letters, digits, "
                                          "'-', '_', '.')"))  # fmt: skip
            continue
        why, text = _read(folder, drop / name, stem)
        if why:
            skipped.append(Skipped(where, why))
        else:
            out.append((stem, text))
    return out


def _read(folder: ClassFolder, path: Path, stem: str) -> tuple[str, str]:
    """(why it is not read, "") or ("", its text)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as err:
        return f"unreadable ({err.strerror}): is this account in the class folder's group?", ""
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fh.fileno())
        mode = stat.S_IMODE(info.st_mode)
        if not stat.S_ISREG(info.st_mode):
            return "not a regular file", ""
        if folder.simulated and info.st_uid != folder.owner:
            return f"written by uid {info.st_uid}, not by the account that simulated this class", ""
        if not folder.simulated and folder.learner_of(info.st_uid) != stem:
            return f"written by another account (uid {info.st_uid}), not by learner {stem}: not read", ""
        if mode & (stat.S_IWGRP | stat.S_IWOTH):
            return f"writable by other accounts (mode {mode:o}): another account could have changed it", ""
        if info.st_size > MAX_BYTES:
            return f"too large ({info.st_size / 1e6:.1f} MB, over {MAX_BYTES / 1e6:.0f} MB)", ""
        raw = fh.read(MAX_BYTES + 1)
    try:
        return "", raw.decode("utf-8")
    except UnicodeDecodeError as err:
        return f"not UTF-8 text (byte {err.start})", ""


def _lines(text: str, where: str, skipped: list[Skipped]) -> list[tuple[int, dict]]:
    """(line number, object) of each whole JSON line; a torn last line and non-JSON lines go to ``skipped``."""
    lines = text.split("\n")
    torn = lines.pop()
    if torn.strip():
        skipped.append(Skipped(f"{where}, line {len(lines) + 1}", "incomplete (being written, or its writer was "
                                                                 "stopped mid-write)"))  # fmt: skip
    out = []
    for no, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            skipped.append(Skipped(f"{where}, line {no}", "not JSON (a foreign line)"))
            continue
        out.append((no, row))
    return out


def _foreign(row: Any, stem: str, keys: tuple[str, ...]) -> str | None:
    if not isinstance(row, dict) or not set(keys) <= set(row):
        return f"a foreign line: a line needs {', '.join(keys)}"
    learner = row["learner"]
    if learner != stem:
        if not is_id(learner):
            return f"learner id {learner!r} is not an id (letters, digits, '-', '_', '.'; never a path)"
        return f"a line of learner {learner!r} in the file of {stem}"
    if not isinstance(row["time"], str):
        return "time must be text (ISO 8601)"
    return None


def read_class(label_set: LabelSet, folder: ClassFolder | str | os.PathLike | None = None) -> ClassLabels:
    """Every shared label of ``label_set`` in the class folder (default: ``LABKIT_CLASS_DIR``): see the module."""
    if not isinstance(label_set, LabelSet):
        raise ValueError(f"label_set must be a LabelSet (labelling.claims_set()[0]), got {type(label_set).__name__}")
    folder = _folder(folder)
    skipped: list[Skipped] = []
    keys = ("set", "item", "label", "learner", "time")
    ratings, rows = {}, []
    for stem, text in _files(folder, folder.drop(LABELS, label_set.id), skipped):
        where = f"{LABELS}/{label_set.id}/{stem}.jsonl"
        newest: dict[str, tuple[str | None, str]] = {}
        for no, row in _lines(text, where, skipped):
            why = _foreign(row, stem, keys)
            if why is None and row["set"] != label_set.id:
                why = f"a line of label set {row['set']!r}, not {label_set.id!r}"
            elif why is None and row["item"] not in label_set.items:
                why = f"unknown item {row['item']!r} for label set {label_set.id!r}"
            elif why is None and row["label"] is not None and row["label"] not in label_set.labels:
                why = f"label {row['label']!r} is not one of the set's labels {label_set.labels}"
            if why:
                skipped.append(Skipped(f"{where}, line {no}", why))
            else:
                newest[row["item"]] = (row["label"], row["time"])
        mine = {i: v for i, v in newest.items() if v[0] is not None}
        if mine:
            order = [i for i in label_set.items if i in mine]
            ratings[stem] = {i: mine[i][0] for i in order}
            rows += [{"set": label_set.id, "item": i, "learner": stem, "label": mine[i][0], "time": mine[i][1]}
                     for i in order]  # fmt: skip
    return ClassLabels(label_set.id, ratings, rows, skipped, folder.simulated, folder.title)


def _folder(folder: ClassFolder | str | os.PathLike | None) -> ClassFolder:
    if isinstance(folder, ClassFolder):
        return folder
    if folder is not None and not isinstance(folder, os.PathLike):
        folder = path_arg("folder", folder)  # a ClassFolder (open_class(path)) or the class folder's path
    found = open_class(folder)
    if found is None:
        raise ValueError("no class folder: set LABKIT_CLASS_DIR, or pass folder=")
    return found


def read_progress(
    folder: ClassFolder | str | os.PathLike | None = None, exercises: Sequence[str] | None = None
) -> tuple[list[dict], list[Skipped]]:
    """The shared self-checks: (rows ``{learner, exercise, verdict, time}`` oldest first per learner, skipped).
    With ``exercises`` (the workbook's numbers), a line naming another exercise is skipped."""
    folder = _folder(folder)
    skipped: list[Skipped] = []
    known = set(args.strings("exercises", exercises, example='["3.1", "3.2"]')) if exercises is not None else None
    rows = []
    for stem, text in _files(folder, folder.drop(PROGRESS), skipped):
        where = f"{PROGRESS}/{stem}.jsonl"
        for no, row in _lines(text, where, skipped):
            why = _foreign(row, stem, ("exercise", "verdict", "learner", "time"))
            if why is None and row["verdict"] not in ProgressDrop.VERDICTS:
                why = f"verdict {row['verdict']!r} is not one of {ProgressDrop.VERDICTS}"
            elif why is None and known is not None and row["exercise"] not in known:
                why = f"no exercise {row['exercise']!r} in the workbook"
            if why:
                skipped.append(Skipped(f"{where}, line {no}", why))
            else:
                rows.append({k: row[k] for k in ("learner", "exercise", "verdict", "time")})
    return rows, skipped


def progress_table(rows: Sequence[dict], exercises: Sequence[str]) -> Any:
    """One row per learner, one column per exercise of ``exercises`` (in that order): ``correct`` once any try
    was, ``not yet`` when tried and never correct, ``""`` when not tried; a last column counts the correct."""
    import pandas as pd

    rows = args.sequence("rows", rows, example="read_progress(folder)[0]")
    exercises = args.strings("exercises", exercises, example='["3.1", "3.2"]')
    for i, r in enumerate(rows):
        args.fields(f"rows[{i}]", r, ("learner", "exercise", "verdict"), "read_progress(folder)[0]")
        args.text(f"rows[{i}]['learner']", r["learner"])
        args.text(f"rows[{i}]['exercise']", r["exercise"])
    best: dict[str, dict[str, str]] = {}
    for r in rows:
        cell = best.setdefault(r["learner"], {})
        if cell.get(r["exercise"]) != "correct":
            cell[r["exercise"]] = r["verdict"]
    table = pd.DataFrame([{e: best[lr].get(e, "") for e in exercises} for lr in sorted(best)],
                         index=pd.Index(sorted(best), name="learner"), columns=list(exercises))  # fmt: skip
    table["correct"] = (table == "correct").sum(axis=1)
    return table


def export_rows(classes: Sequence[ClassLabels]) -> list[dict]:
    """The labels of ``classes`` as export lines: ``set``, ``item``, ``learner``, ``label``, ``time``, ``class``."""
    classes = args.sequence("classes", classes, example="[read_class(label_set, folder)]")
    for i, c in enumerate(classes):
        if not isinstance(c, ClassLabels):
            raise ValueError(
                f"classes[{i}] must be a ClassLabels (read_class(label_set, folder)), got {type(c).__name__} {c!r:.40}"
            )
    return [{**{k: r[k] for k in EXPORT_KEYS}, "class": c.title} for c in classes for r in c.rows]


def write_export(rows: Sequence[dict], out: str | os.PathLike) -> Path:
    """Write export lines to ``out`` (JSONL, one label a line; the folder must exist)."""
    out = path_arg("out", out)
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return out


def read_export(path: str | os.PathLike) -> list[dict]:
    """The lines of an export (``set``, ``item``, ``learner``, ``label``, ``time``); a line that is not one is an
    error naming the file and the line (an export is the instructor's own file, not a learner's)."""
    path = path_arg("path", path)
    rows = []
    for no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as err:
            raise ValueError(f"{path}, line {no}: not JSON ({err.msg})") from None
        if not isinstance(row, dict) or not set(EXPORT_KEYS) <= set(row) or not is_id(row["learner"]):
            raise ValueError(f"{path}, line {no}: an export line needs {', '.join(EXPORT_KEYS)} and a learner id")
        rows.append(row)
    return rows


def check_class(folder: ClassFolder) -> list[str]:
    """What is wrong with the folder's permissions, one sentence each (empty when nothing is): a drop directory
    that others can list or that is not sticky, a learner file others can read, a group that is also another
    account's primary group."""
    import pwd

    folder = _folder(folder)
    labels = folder.path / LABELS
    drops = [folder.path / PROGRESS] + sorted(p for p in labels.iterdir() if not p.name.startswith("."))
    problems = []
    for d in drops:
        info = os.lstat(d)
        rel = d.relative_to(folder.path).as_posix()
        if not stat.S_ISDIR(info.st_mode):
            problems.append(f"{rel} is not a folder (a symlink?): learners' labels cannot be dropped there")
            continue
        mode = stat.S_IMODE(info.st_mode)
        if mode & stat.S_IROTH:
            problems.append(f"{rel}: any account can list it (mode {mode:o}); run `class init` again")
        if not mode & stat.S_ISVTX:
            problems.append(f"{rel}: not sticky (mode {mode:o}): a learner could remove another's file")
        with os.scandir(d) as entries:
            loose = sorted(e.name for e in entries if e.is_file(follow_symlinks=False)
                           and e.stat(follow_symlinks=False).st_mode & (stat.S_IROTH | stat.S_IWOTH))  # fmt: skip
        if loose:
            problems.append(f"{rel}: {len(loose)} file(s) readable or writable by any account, e.g. {loose[0]}")
    gid = os.lstat(folder.path).st_gid
    shared = sorted(p.pw_name for p in pwd.getpwall() if p.pw_gid == gid and p.pw_uid not in (0, folder.owner))
    if shared:
        problems.append(
            f"the class folder's group (gid {gid}) is the primary group of {len(shared)} other account(s): they "
            "could read every learner's file; give `class init --group` a group only instructors are in"
        )
    return problems
