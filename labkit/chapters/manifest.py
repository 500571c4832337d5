"""What a chapter is made of, written once: :class:`Chapter`, one per chapter in ``labkit/chapters/chNN.py``.

A manifest is data. The notebook build (navigation, 00's chapter list, the README's chapter table), the student
copy, the exercises, the recording plans, the bench, the browser tests and the bad-input probe read it; nothing
else keeps a list of chapters. Names in it (explorers, label sets, plans, modules) are checked against the code
by the suite (``tests/test_chapters.py``), so a manifest cannot name what does not exist.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from labkit.core import args

__all__ = ["Chapter", "Judge", "AUDIENCES"]

AUDIENCES = ("learner", "instructor")
"""Who a chapter is for: every learner, or the instructor only (kept out of the learners' copies)."""


@dataclass(frozen=True)
class Judge:
    """One candidate judge of chapter 06, by name: ``kind`` is ``"model"`` (a language model, ``model`` naming it:
    ``"1.5b"`` or ``"0.5b"``, with or without the quote ``guard``), ``"lexical"`` or ``"always supported"``.
    ``candidate`` judges are compared and one is chosen; the others are baselines that are only reported."""

    name: str
    kind: str
    model: str | None = None
    guard: bool = False
    candidate: bool = True

    def __post_init__(self):
        args.text("name", self.name)
        if self.kind not in ("model", "lexical", "always supported"):
            raise ValueError(f"kind must be 'model', 'lexical' or 'always supported', got {self.kind!r}")
        if (self.kind == "model") != (self.model is not None):
            raise ValueError(f"judge {self.name!r}: give model= exactly when kind is 'model'")


@dataclass(frozen=True)
class Chapter:
    """One chapter: its notebook ``notebooks/<number>_<slug>.ipynb`` (source ``notebooks/src/<stem>.py``), its
    exercises (``labkit/exercises/ch<number>.py``, if it has any), and what it shows and records.

    - ``title``, ``summary`` (one line, for the navigation and 00's chapter list), ``does`` (the README's table),
      ``status`` (``"ready"``, or what is still missing);
    - ``explorers``: the names in :mod:`labkit.ui.widgets` the chapter shows (each wraps a pure function);
    - ``label_sets``: the ids of the label sets the learner labels in it (``"06-claims"``);
    - ``plans``: the recording plans of ``tools/record.py`` that make its recorded model responses;
    - ``probe``: modules of the Studies part whose functions learners call directly, probed with bad input;
    - ``judges``: chapter 06's candidate judges, by name (adding a judge is one line here);
    - ``audience``: ``"learner"``, or ``"instructor"`` for a chapter that is built, navigated and checked like the
      others but left out of the learner's working copy and the student copy (00's contents list it as for
      instructors).
    """

    number: str
    slug: str
    title: str
    summary: str
    does: str
    status: str = "ready"
    explorers: tuple[str, ...] = ()
    label_sets: tuple[str, ...] = ()
    plans: tuple[str, ...] = ()
    probe: tuple[str, ...] = ()
    judges: tuple[Judge, ...] = field(default=())
    audience: str = "learner"

    def __post_init__(self):
        if self.audience not in AUDIENCES:
            raise ValueError(f"audience must be one of {AUDIENCES}, got {self.audience!r}")
        if not re.fullmatch(r"\d\d[a-z]?", self.number):
            raise ValueError(f"number must be two digits and an optional letter ('04b'), got {self.number!r}")
        if not re.fullmatch(r"[a-z0-9]+(_[a-z0-9]+)*", self.slug):
            raise ValueError(f"slug must be lower-case words joined by '_', got {self.slug!r}")
        for name in ("title", "summary", "does", "status"):
            args.text(name, getattr(self, name))
        names = [j.name for j in self.judges]
        if len(names) != len(set(names)):
            raise ValueError(f"chapter {self.number}: two judges share a name in {names}")

    @property
    def stem(self) -> str:
        """``"03_metrics_by_hand"``: the notebook's and the source's file name without suffix."""
        return f"{self.number}_{self.slug}"

    @property
    def notebook(self) -> str:
        return f"notebooks/{self.stem}.ipynb"

    @property
    def source(self) -> str:
        return f"notebooks/src/{self.stem}.py"

    @property
    def candidates(self) -> list[str]:
        """The judges compared and chosen among, in the manifest's order."""
        return [j.name for j in self.judges if j.candidate]

    @property
    def for_learners(self) -> bool:
        """In the learner's working copy and the student copy (an instructor's chapter is not)."""
        return self.audience == "learner"

    def sort_key(self) -> tuple[int, str]:
        return int(self.number[:2]), self.number[2:]
