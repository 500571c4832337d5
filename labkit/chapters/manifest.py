"""What a chapter is made of, written once: :class:`Chapter`, one per chapter in ``labkit/chapters/chNN.py``.

A manifest is data. The notebook build (navigation, 00's chapter list, the README's chapter table), the student
copy, the exercises, the recording plans, the bench, the browser tests and the bad-input probe read it; nothing
else keeps a list of chapters. Names in it (explorers, label sets, plans, modules) are checked against the code
by the suite (``tests/test_chapters.py``), so a manifest cannot name what does not exist.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from labkit.core import args

__all__ = ["Chapter", "Explorer", "Bench", "Judge", "AUDIENCES"]

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
class Bench:
    """How ``bench/explorer_bench.py`` times an explorer: it sets each ``(control, value)`` of ``start`` (untimed),
    then moves ``control`` through ``values``, each a value the control offers."""

    control: str
    values: tuple
    start: tuple[tuple[str, Any], ...] = ()

    def __post_init__(self):
        args.text("control", self.control)
        if len(self.values) < 2:
            raise ValueError(f"bench {self.control!r}: give values= at least two values to move through")


@dataclass(frozen=True)
class Explorer:
    """One explorer a chapter shows, and where its inputs come from.

    - ``widget``: its name in :mod:`labkit.ui.widgets` (``"FusionExplorer"``);
    - ``inputs``: the function that builds exactly what the notebook passes to it, as keyword arguments:
      ``widgets.<widget>(**inputs())``. Called with no arguments (by the browser tests and the bench) it builds
      what it needs from the recorded data and the shared setting; the notebook calls the same function, handing
      it what the chapter has built by then. ``None``: the widget on its own defaults (the labelling widget,
      ``"Labeller"``, is built by its chapter around a label set and has a test of its own);
    - ``bench``: how the bench times it (:class:`Bench`), or ``None`` to leave it out;
    - ``timeout``: seconds the browser tests wait for a state the kernel has not computed yet (a chunking
      indexed on first use, a *k* tokenized on first use); ``None``: the usual wait.
    """

    widget: str
    inputs: Callable[[], dict[str, Any]] | None = None
    bench: Bench | None = None
    timeout: float | None = None

    def __post_init__(self):
        args.text("widget", self.widget)
        if self.inputs is not None and not callable(self.inputs):
            raise TypeError(f"explorer {self.widget!r}: inputs must be a function, got {type(self.inputs).__name__}")
        if self.bench is not None and not isinstance(self.bench, Bench):
            raise TypeError(f"explorer {self.widget!r}: bench must be a Bench, got {type(self.bench).__name__}")

    def build_inputs(self) -> dict[str, Any]:
        """``inputs()``, checked to be keyword arguments; ``{}`` for an explorer without a builder."""
        if self.inputs is None:
            return {}
        built = self.inputs()
        if not isinstance(built, dict) or not all(isinstance(k, str) for k in built):
            raise TypeError(f"explorer {self.widget!r}: {self.inputs.__name__}() must return keyword arguments")
        return built


@dataclass(frozen=True)
class Chapter:
    """One chapter: its notebook ``notebooks/<number>_<slug>.ipynb`` (source ``notebooks/src/<stem>.py``), its
    exercises (``labkit/exercises/ch<number>.py``, if it has any), and what it shows and records.

    - ``title``, ``summary`` (one line, for the navigation and 00's chapter list), ``does`` (the README's table),
      ``status`` (``"ready"``, or what is still missing);
    - ``explorers``: the explorers the chapter shows (each wraps a pure function), as :class:`Explorer` entries
      (a plain name is an :class:`Explorer` without inputs);
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
    explorers: tuple[Explorer, ...] = ()
    label_sets: tuple[str, ...] = ()
    plans: tuple[str, ...] = ()
    probe: tuple[str, ...] = ()
    judges: tuple[Judge, ...] = field(default=())
    audience: str = "learner"

    def __post_init__(self):
        explorers = tuple(Explorer(e) if isinstance(e, str) else e for e in self.explorers)
        if not all(isinstance(e, Explorer) for e in explorers):
            raise TypeError(f"chapter {self.number}: explorers must be Explorer(...) entries or widget names")
        object.__setattr__(self, "explorers", explorers)
        widgets = [e.widget for e in explorers]
        if len(widgets) != len(set(widgets)):
            raise ValueError(f"chapter {self.number}: an explorer is listed twice in {widgets}")
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
    def explorer_names(self) -> list[str]:
        """The widgets' names, in the manifest's order."""
        return [e.widget for e in self.explorers]

    def explorer(self, widget: str) -> Explorer:
        """The explorer named ``widget``."""
        for e in self.explorers:
            if e.widget == widget:
                return e
        raise ValueError(f"chapter {self.number} has no explorer {widget!r}: it has {self.explorer_names}")

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
