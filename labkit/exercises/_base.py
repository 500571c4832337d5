"""The shape of one exercise; each chapter's module under :mod:`labkit.exercises` lists its own."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Exercise:
    """One exercise: what it asks, how its expected value is computed, the hint for a wrong answer.

    ``expected`` takes no argument, or the chapter objects it reads, by name; ``objects`` says in words what
    each of them is (the error for a missing or wrong object quotes it).
    """

    question: str
    expected: Callable[..., Any]
    hint: str
    tol: float = 0.005
    objects: Mapping[str, str] = field(default_factory=dict)

    @property
    def needs(self) -> list[str]:
        """The names of the chapter objects this exercise is checked against (in the order of ``expected``)."""
        return list(inspect.signature(self.expected).parameters)
