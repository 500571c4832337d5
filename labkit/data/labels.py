"""The learner's own labels: a label set to label, and a store that never loses a label (02, 06, 07).

Taught in 06_faithfulness (label claims, then calibrate the judge on *your* labels), 07_triage (is the answer
right?) and 02_synthetic_hard_questions (how realistic is this question?).

- :class:`LabelSet` — what is labelled: an id (``"06-claims"``), the allowed labels, the keyboard key of each,
  and the item ids in the order they are shown.
- :class:`LabelStore` — one JSON line per label, appended to ``<user cache>/labels/<set id>.jsonl`` (never in the
  repository; ``LABKIT_CACHE`` moves the cache). A line is written whole, flushed and synced before the call
  returns, under an exclusive lock, so a closed tab, a killed kernel or two kernels labelling the same set at
  once cannot corrupt the file. Labelling an item again appends a new line: the newest label counts and the
  history stays. Undo appends a line with ``"label": null`` (the item is unlabelled again).
- :func:`append_line` — how every label line is written, here and in the class folder (:mod:`labkit.data.class_folder`):
  whole, locked, synced, a torn last line cut off first.
- :func:`read_labels` — a label file read back and checked line by line: a line from another label set, an
  unknown item id or a label outside the set is an error naming the file and line; a torn *last* line (the
  process died mid-write) is dropped with a warning, never read; an empty file holds no labels.

A line: ``{"set": "06-claims", "item": "fl-0101", "label": "supported", "rater": "you"}``. Where labels go is
the learner's choice when they make one (``path=``, or the folder ``LABKIT_LABELS`` names): it is written as
given, parent folders created; otherwise the user cache.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from labkit.core import args
from labkit.core.cache import cache_dir, default_cache_dir
from labkit.core.files import path_arg

__all__ = ["LabelSet", "LabelStore", "read_labels", "history", "default_path", "append_line", "append_lines"]


@dataclass(frozen=True)
class LabelSet:
    """What a learner labels: ``id``, ``labels`` (allowed values), ``keys`` (key -> label) and ``items`` (ids).

    ``keys`` default to each label's first character (``s`` for supported, ``u`` for unsupported); give them
    explicitly when two labels share it.
    """

    id: str
    labels: tuple[str, ...]
    items: tuple[str, ...]
    keys: Mapping[str, str] = field(default_factory=dict)
    title: str = ""

    def __post_init__(self) -> None:
        args.text("id", self.id)
        if not all(c.isalnum() or c in "-_." for c in self.id):
            raise ValueError(f"id must use letters, digits, '-', '_' or '.', got {self.id!r} (it names a file)")
        labels = tuple(args.strings("labels", self.labels, allow_empty=False, unique=True))
        items = tuple(args.strings("items", self.items, allow_empty=False, unique=True))
        keys = dict(self.keys) or {label[0].lower(): label for label in labels}
        if len(keys) != len(labels) or set(keys.values()) != set(labels):
            raise ValueError(f"keys must give each label one key, got {keys} for labels {labels}: pass keys=...")
        reserved = {k for k in keys if k in RESERVED_KEYS}
        if reserved:
            raise ValueError(f"keys {sorted(reserved)} are taken by undo/skip/back ({RESERVED_KEYS}): choose others")
        object.__setattr__(self, "labels", labels)
        object.__setattr__(self, "items", items)
        object.__setattr__(self, "keys", keys)


RESERVED_KEYS = ("z", "n", "b")
"""Undo the last label, next item (skip), back one item: the labelling widget's keys besides the labels'."""


def default_path(set_id: str) -> Path:
    """Where the labels of ``set_id`` live: ``<user cache>/labels/<set id>.jsonl`` (the folder is not created)."""
    return default_cache_dir() / "labels" / f"{args.text('set_id', set_id)}.jsonl"


def _parse(path: Path, label_set: LabelSet | None) -> list[dict]:
    raw = path.read_bytes()
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]  # a BOM from an editor that adds one
    text = raw.decode("utf-8", errors="strict")
    lines = text.split("\n")
    torn = lines.pop() if lines else ""
    out = []
    if torn.strip():
        warnings.warn(
            f"{path}: the last line is incomplete (a label was being written when the process stopped); it was "
            "dropped. Label that item again.",
            stacklevel=3,
        )
    for no, line in enumerate(lines, start=1):
        line = line.strip()
        if not line:
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as err:
            raise ValueError(f"{path}, line {no}: not JSON ({err.msg}); fix or delete the line") from None
        if not isinstance(row, dict) or not {"set", "item", "label"} <= set(row):
            raise ValueError(f'{path}, line {no}: a label line needs "set", "item" and "label"; got {line[:80]}')
        if label_set is not None:
            if row["set"] != label_set.id:
                raise ValueError(
                    f"{path}, line {no}: a label of set {row['set']!r}, not {label_set.id!r}: this is another label "
                    "set's file"
                )
            if row["item"] not in label_set.items:
                raise ValueError(f"{path}, line {no}: unknown item id {row['item']!r} for label set {label_set.id!r}")
            if row["label"] is not None and row["label"] not in label_set.labels:
                raise ValueError(
                    f"{path}, line {no}: label {row['label']!r} is not one of {label_set.labels} (set {label_set.id!r})"
                )
        row["line"] = no
        out.append(row)
    return out


def history(path: str | os.PathLike, label_set: LabelSet | None = None) -> list[dict]:
    """Every line of a label file, oldest first, each with its ``line`` number (undo lines have label None)."""
    path = path_arg("path", path)
    if path.is_dir():
        raise ValueError(f"path {path} is a folder; give the label file inside it (<set id>.jsonl)")
    if not path.is_file():
        return []
    return _parse(path, label_set)


def read_labels(path: str | os.PathLike, label_set: LabelSet | None = None) -> dict[str, str]:
    """item id -> its newest label (items whose newest line is an undo are left out), checked against
    ``label_set`` when given. A missing file holds no labels."""
    newest: dict[str, str | None] = {}
    for row in history(path, label_set):
        newest[row["item"]] = row["label"]
    return {item: label for item, label in newest.items() if label is not None}


def _lock(fh) -> None:
    if os.name == "nt":  # pragma: no cover - exercised on Windows only
        import msvcrt

        msvcrt.locking(fh.fileno(), msvcrt.LK_LOCK, 1)
    else:
        import fcntl

        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)


def _unlock(fh) -> None:
    if os.name == "nt":  # pragma: no cover
        import msvcrt

        fh.seek(0)
        msvcrt.locking(fh.fileno(), msvcrt.LK_UNLCK, 1)
    else:
        import fcntl

        fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def append_line(path: Path, line: str, opener: Callable[[str, int], int] | None = None) -> None:
    """Append ``line`` (one JSON object, no newline) to ``path`` whole: under an exclusive lock, a torn last line
    left by a process that died mid-write cut off first (with a warning), then written, flushed and synced before
    returning. Two processes appending at once take turns; a kill leaves at most one torn last line, which the
    next append (and every reader) drops. ``opener`` is :func:`open`'s (the class folder's opens the file
    owner-only and refuses a symlink); the file is opened for reading too, to find a torn line."""
    path = path_arg("path", path)
    append_lines(path, [args.text("line", line)], opener)


def append_lines(path: Path, lines: list[str], opener: Callable[[str, int], int] | None = None) -> None:
    """:func:`append_line` for several lines at once: one lock, one write, one sync (a batch of labels)."""
    path = path_arg("path", path)
    lines = args.strings("lines", lines, example="[json.dumps(record), ...]")
    if opener is not None:
        args.function("opener", opener, "an opener(path, flags) -> file descriptor, as open() takes")
    if any("\n" in line for line in lines):
        raise ValueError("each line must be one line: a newline inside one would be read as two labels")
    with open(path, "a+b", opener=opener) as fh:
        _lock(fh)
        try:
            fh.seek(0, os.SEEK_END)
            end = fh.tell()
            if end:
                fh.seek(end - 1)
                if fh.read(1) != b"\n":  # a torn line left by a process that died mid-write
                    fh.seek(0)
                    data = fh.read()
                    keep = data.rfind(b"\n") + 1
                    fh.truncate(keep)
                    warnings.warn(f"{path}: dropped an incomplete last line before writing", stacklevel=3)
            fh.seek(0, os.SEEK_END)
            fh.write("".join(line + "\n" for line in lines).encode("utf-8"))
            fh.flush()
            os.fsync(fh.fileno())
        finally:
            _unlock(fh)


class LabelStore:
    """The labels of one label set, appended to a JSONL file in the user cache (or ``path``)."""

    def __init__(self, label_set: LabelSet, path: str | os.PathLike | None = None, rater: str = "you") -> None:
        if not isinstance(label_set, LabelSet):
            raise ValueError(f"label_set must be a labkit.data.labels.LabelSet, got {type(label_set).__name__}")
        self.label_set = label_set
        self.rater = args.text("rater", rater)
        if path is None:
            folder = cache_dir("labels")
            if folder is None:
                raise ValueError(
                    f"the user cache {default_cache_dir()} cannot be written, so labels would be lost: set "
                    "LABKIT_CACHE to a folder you can write, or pass path="
                )
            path = folder / f"{label_set.id}.jsonl"
        self.path = path_arg("path", path)
        if self.path.is_dir():
            raise ValueError(f"path {self.path} is a folder; give a file name such as {label_set.id}.jsonl")

    def labels(self) -> dict[str, str]:
        """item id -> newest label."""
        return read_labels(self.path, self.label_set)

    def history(self) -> list[dict]:
        return history(self.path, self.label_set)

    def _append(self, item: str, label: str | None) -> None:
        if item not in self.label_set.items:
            raise ValueError(f"item {item!r} is not in label set {self.label_set.id!r}")
        if label is not None and label not in self.label_set.labels:
            raise ValueError(f"label must be one of {self.label_set.labels}, got {label!r}")
        line = json.dumps({"set": self.label_set.id, "item": item, "label": label, "rater": self.rater})
        self.path.parent.mkdir(parents=True, exist_ok=True)
        append_line(self.path, line)

    def add(self, item: str, label: str) -> None:
        """Label ``item`` (again, if it had a label: the newest counts, the history stays)."""
        self._append(args.text("item", item), args.text("label", label))

    def undo(self, item: str) -> None:
        """Unlabel ``item`` (appends an undo line; the earlier labels stay in the history)."""
        self._append(args.text("item", item), None)

    def __len__(self) -> int:
        return len(self.labels())
