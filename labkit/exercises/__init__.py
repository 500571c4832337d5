"""Every chapter's exercises, one module per chapter (``ch01`` ... ``ch10``, ``ch04b``), merged into :data:`EXERCISES`.

The chapters are those of :data:`labkit.chapters.CHAPTERS`; a chapter's exercises module is
``labkit/exercises/ch<number>.py`` (a chapter without exercises has none), found by that name.

A chapter's module holds what its exercises ask, the hint for a wrong answer, and how the expected value is
computed: from :mod:`labkit.data.toys` or from the chapter's own objects, passed by name to ``check.exercise``.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from labkit.chapters import CHAPTERS
from labkit.exercises._base import Exercise

__all__ = ["EXERCISES", "Exercise", "BY_CHAPTER"]

BY_CHAPTER: dict[str, tuple[str, ...]] = {}
"""Each chapter's exercise numbers, in order, by chapter number (empty for a chapter without exercises)."""
EXERCISES: dict[str, Exercise] = {}
_modules = [
    importlib.import_module(f"{__name__}.ch{c.number}")
    for c in CHAPTERS
    if (Path(__file__).parent / f"ch{c.number}.py").is_file()
]
for _module in _modules:
    BY_CHAPTER[_module.__name__.rpartition(".ch")[2]] = tuple(_module.EXERCISES)
    for _number, _exercise in _module.EXERCISES.items():
        if _number in EXERCISES:
            raise RuntimeError(f"exercise {_number} is defined twice (in {_module.__name__})")
        EXERCISES[_number] = _exercise
