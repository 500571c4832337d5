"""Exercise self-checks: ``check.exercise("3.1", answer)`` prints one line.

Used at the end of every chapter. The expected value is computed by ``labkit`` when you check, never typed in,
so a check cannot drift from the code it teaches. It is computed from one of two places, and never by
rebuilding a chapter (a check takes milliseconds, not the seconds a retrieval run takes):

- the source's toy inputs, from :mod:`labkit.data.toys`, which the chapters use too;
- the chapter's own objects, passed by name: ``check.exercise("5.3", answer, table=table)``. The check reads
  the cell of that table the exercise asks about, so it agrees with the numbers on your screen.

The printout is deterministic (nbval compares it):

- ``None`` (or ``...``)  ->  "not answered yet"
- the right value        ->  "correct"
- anything else          ->  "not yet", how close a number must be, and a hint

With a class folder and :func:`share_progress` called (opt-in), each "correct" or "not yet" is also sent to the
instructor (:mod:`labkit.data.class_folder`), and the line says so.

Numbers count when they are within the exercise's tolerance (±0.005 unless the exercise says otherwise, so two
decimals are enough: 0.33 answers 1/3), and may be given as ``0.33``, ``"1/3"`` or ``"33%"``. Words ignore case,
spaces and a trailing ``@k``: ``"MRR@k"``, ``"mrr"`` and ``"MRR@3"`` are the same answer.
"""

from __future__ import annotations

import math
import re
from numbers import Real
from typing import Any

from labkit.data.class_folder import ProgressDrop, open_class
from labkit.exercises import EXERCISES, Exercise

__all__ = ["exercise", "EXERCISES", "Exercise", "not_answered", "share_progress"]


def _is_number(x: Any) -> bool:
    return isinstance(x, Real) and not isinstance(x, bool)


def _plain(x: Any) -> Any:
    """NumPy arrays and scalars (and pandas Series) as the equivalent Python list or number.

    ``np.array([3, 2, 1, 0, 0])`` answers "give the list of grades" as well as ``[3, 2, 1, 0, 0]`` does, and
    ``np.float64(0.6)`` or ``np.int64(2)`` is a number.
    """
    module = type(x).__module__.split(".")[0]
    if module in ("numpy", "pandas") and hasattr(x, "tolist"):
        return x.tolist()
    return x


def _number(x: Any) -> float | None:
    """A number, or a string that spells one: ``"0.33"``, ``"1/3"``, ``"33%"``; otherwise ``None``."""
    if _is_number(x):
        return float(x)
    if isinstance(x, str):
        t = x.strip().replace(" ", "")
        try:
            if t.endswith("%"):
                return float(t[:-1]) / 100
            if t.count("/") == 1:
                num, den = t.split("/")
                return float(num) / float(den)
            return float(t)
        except (ValueError, ZeroDivisionError):
            return None
    return None


def _word(x: str) -> str:
    """``"MRR@k"``, ``" mrr "`` and ``"MRR@3"`` all read as ``"mrr"``: case, spaces and a trailing @k are ignored."""
    return re.sub(r"@(k|\d+)$", "", re.sub(r"\s+", "", x.lower()))


def _same(answer: Any, expected: Any, tol: float) -> bool:
    answer, expected = _plain(answer), _plain(expected)
    if _is_number(expected):
        value = _number(answer)
        return value is not None and math.isclose(value, expected, abs_tol=tol)
    if isinstance(expected, str):
        return isinstance(answer, str) and _word(answer) == _word(expected)
    if isinstance(expected, list | tuple):
        return (
            isinstance(answer, list | tuple)
            and len(answer) == len(expected)
            and all(_same(a, e, tol) for a, e in zip(answer, expected, strict=True))
        )
    return answer == expected


def _tolerance(ex: Exercise, expected: Any) -> str:
    """How close a number must be, in words, for the "not yet" line; empty for words and lists."""
    if not _is_number(_plain(expected)):
        return ""
    if ex.tol == 0:
        return " (a whole number, exactly)"
    return f" (anything within ±{ex.tol:g} of the expected value counts)"


def _describe(ex: Exercise, name: str) -> str:
    what = ex.objects.get(name)
    return f"{name} ({what})" if what else name


def _expected(ex: Exercise, number: str, objects: dict) -> Any:
    missing = [name for name in ex.needs if name not in objects]
    if missing:
        name = missing[0]
        raise ValueError(
            f"exercise {number} is checked against the chapter's {_describe(ex, name)}: "
            f"pass it by name, check.exercise({number!r}, answer, {name}={name})"
        )
    try:
        return ex.expected(**{name: objects[name] for name in ex.needs})
    except (KeyError, IndexError, AttributeError, TypeError) as err:
        given = ", ".join(_describe(ex, name) for name in ex.needs)
        raise ValueError(
            f"exercise {number} could not read its value from {given}: {type(err).__name__} {err}; "
            "pass the chapter's own object, unchanged"
        ) from None


def not_answered(number: str) -> str:
    """The line a check prints for an answer that is still ``None`` (the student copy's check cells)."""
    return f"Exercise {number}: not answered yet - replace None with your answer."


def exercise(number: str, answer: Any, **objects: Any) -> None:
    """Print whether ``answer`` solves exercise ``number`` (e.g. ``"3.1"``).

    NumPy arrays and scalars are compared as the equivalent list or number. Some exercises check an answer
    against the chapter's own objects (``check.exercise("5.3", answer, table=table)``), so the check computes
    nothing the chapter has already computed; the error for a missing object names it.
    """
    if not isinstance(number, str):
        raise ValueError(
            f'number must be the exercise\'s number as a string, e.g. "3.1", got {type(number).__name__} '
            f"{number!r} (as a float, 3.10 and 3.1 would be the same)"
        )
    if number not in EXERCISES:
        raise ValueError(f"unknown exercise {number!r}; this chapter's are {sorted(EXERCISES)}")
    ex = EXERCISES[number]
    unknown = sorted(set(objects) - set(ex.needs))
    if unknown:
        takes = f"only {', '.join(ex.needs)}" if ex.needs else "no chapter object"
        raise ValueError(f"exercise {number} takes {takes}; got {', '.join(unknown)}")
    if answer is None or answer is Ellipsis:
        print(not_answered(number))
    elif _same(answer, expected := _expected(ex, number, objects), ex.tol):
        print(f"Exercise {number}: correct.{_shared(number, 'correct')}")
    else:
        print(f"Exercise {number}: not yet{_tolerance(ex, expected)}. Hint: {ex.hint}.{_shared(number, 'not yet')}")


def _drop() -> ProgressDrop | None:
    folder = open_class()
    return None if folder is None else ProgressDrop(folder)


def _shared(number: str, verdict: str) -> str:
    """Send a verdict to the class folder when the learner has opted in; what to add to the printed line."""
    try:
        drop = _drop()
    except (OSError, ValueError):  # no usable class folder: nothing was ever shared, nothing to say
        return ""
    if drop is None or not drop.opted_in:
        return ""
    try:
        drop.record(number, verdict)
    except (OSError, ValueError) as err:
        return f" (not shared with the instructor: {err})"
    return " (shared with the instructor)"


def share_progress(on: bool = True) -> None:
    """Share your self-checks' verdicts with the instructor (``on=False``: stop, and remove what was shared).

    Needs a class folder (``LABKIT_CLASS_DIR``, set by the hub); opt-in: nothing is shared until you call this.
    From then on each check you run sends one line, ``{"exercise": "3.2", "verdict": "correct"}``, under your
    pseudonymous learner id, into a file only you can write and only the instructors can read.
    """
    drop = _drop()
    if drop is None:
        print("No class folder (LABKIT_CLASS_DIR is not set): your self-checks stay on this account.")
    elif on:
        drop.opt_in()
        print(f"Your self-checks are shared with the instructor (as learner {drop.learner}) from now on.")
    else:
        removed = drop.withdraw()
        print("Your self-checks are not shared" + (" any more; what was shared is removed." if removed else "."))
