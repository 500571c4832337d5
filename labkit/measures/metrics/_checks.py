"""Argument checks shared by every metric family (built on :mod:`labkit.core.args`).

Each check names the argument in its error, so a learner knows what to fix, and refuses what
would otherwise turn into a plausible wrong number: a NaN or infinite grade, a threshold no
grade can reach, a string where a list of grades belongs (it would be read letter by letter).
"""

from __future__ import annotations

import math
from numbers import Real
from typing import Any

from labkit.core import args

IDCG_CONVENTIONS = ("retrieved", "all_judged")
MAX_K = 10**9  # no ranking is longer; a larger k could not even be turned into a float divisor

GRADES_EXAMPLE = "[0, 2, 0, 3, 1]"


def _finite(name: str, value: Any, **kwargs: Any) -> float:
    """:func:`labkit.core.args.finite_number`, with a whole number beyond a float's range refused by name too."""
    try:
        return args.finite_number(name, value, **kwargs)
    except OverflowError:
        raise ValueError(f"{name} must be a finite number, got a whole number beyond 1.8e308") from None


def check_k(k: Any, name: str = "k") -> int:
    """A cutoff: a whole number >= 1 (``5``, ``np.int64(5)`` and ``5.0`` are all fine)."""
    k = args.whole_number(name, k, minimum=1, hint="a cutoff below 1 looks at no documents at all")
    if k > MAX_K:
        raise ValueError(f"{name} must be <= {MAX_K:,}, got {k:,}: no ranking is that long")
    return k


def check_thr(thr: Any) -> float:
    """The relevance threshold: a finite number > 0 (a document is relevant when ``grade >= thr``)."""
    if isinstance(thr, bool) or not isinstance(thr, Real):
        raise ValueError(f"thr must be a number (the lowest grade that counts as relevant, e.g. 1 or 2), got {thr!r}")
    try:
        shown = str(float(thr))
    except OverflowError:
        shown = "a whole number beyond 1.8e308"
    if shown in ("nan", "inf", "-inf") or shown.startswith("a whole"):
        raise ValueError(
            f"thr must be a finite number, got {shown}: it is the lowest grade that counts as relevant "
            "(e.g. 1 or 2); an infinite or NaN threshold makes every metric a plausible wrong number (all 0 or all 1)"
        )
    return _finite(
        "thr",
        thr,
        minimum=0,
        strict_minimum=True,
        hint="with thr <= 0 every unjudged document (grade 0) would count as relevant",
    )


def check_grades(rels: Any, name: str = "rels") -> list[float]:
    """A list of finite grades (numbers; ``True``/``False``, strings, NaN and ±inf refused)."""
    values = args.sequence(name, rels, example=GRADES_EXAMPLE)
    out = []
    for i, r in enumerate(values):
        if isinstance(r, Real) and not isinstance(r, bool) and r != r:  # NaN (math.isnan overflows on huge ints)
            raise ValueError(f"{name}[{i}] is NaN: give every document a grade (0 when it is not relevant)")
        out.append(_finite(f"{name}[{i}]", r, hint="grades are numbers such as 0, 1, 2, 3"))
    return out


def check_idcg(idcg: Any) -> str:
    """The name of an IDCG convention: ``"retrieved"`` (the book) or ``"all_judged"`` (trec_eval)."""
    if not isinstance(idcg, str) or idcg not in IDCG_CONVENTIONS:
        raise ValueError(f"idcg must be 'retrieved' (the book) or 'all_judged' (trec_eval), got {idcg!r}")
    return idcg


def check_finite_total(value: float, name: str, what: str) -> float:
    """A sum of grades that overflowed a float is an error naming the grades, not ``inf``."""
    if not math.isfinite(value):
        raise ValueError(
            f"{name}: the {what} of these grades overflows a float (grades near 1e308); "
            "use grades on a small scale such as 0-3"
        )
    return value
