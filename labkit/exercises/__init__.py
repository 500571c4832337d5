"""Every chapter's exercises, one module per chapter (``ch01`` ... ``ch10``, ``ch04b``), merged into :data:`EXERCISES`.

A chapter's module holds what its exercises ask, the hint for a wrong answer, and how the expected value is
computed: from :mod:`labkit.toys` or from the chapter's own objects, passed by name to ``check.exercise``.
"""

from __future__ import annotations

from labkit.exercises import ch00, ch01, ch02, ch03, ch04, ch04b, ch05, ch06, ch07, ch08, ch09, ch10
from labkit.exercises._base import Exercise

__all__ = ["EXERCISES", "Exercise"]

EXERCISES: dict[str, Exercise] = {}
for _module in (ch00, ch01, ch02, ch03, ch04, ch04b, ch05, ch06, ch07, ch08, ch09, ch10):
    for _number, _exercise in _module.EXERCISES.items():
        if _number in EXERCISES:
            raise RuntimeError(f"exercise {_number} is defined twice (in {_module.__name__})")
        EXERCISES[_number] = _exercise
