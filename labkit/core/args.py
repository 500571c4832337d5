"""One set of argument checks for every public labkit function.

Each check takes the argument's *name* first, so the error a learner sees names what to fix::

    >>> whole_number("k", 0)
    Traceback (most recent call last):
    ...
    ValueError: k must be >= 1, got 0

NumPy integers and floats are accepted wherever Python's are (``np.int64(5)`` is a fine ``k``);
``True``/``False`` are not numbers here. Non-finite numbers (NaN, ±inf) are refused unless a
check says otherwise, because every labkit formula would turn them into a plausible wrong answer.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from numbers import Integral, Real
from typing import Any

__all__ = ["whole_number", "finite_number", "text", "sequence", "queries", "strings", "numbers", "mapping", "ranking",
           "top_k", "ids_as_text", "by_id", "table", "fields", "attributes", "function"]  # fmt: skip


def whole_number(name: str, value: Any, minimum: int = 1, maximum: int | None = None, hint: str = "") -> int:
    """``value`` as an ``int`` in ``[minimum, maximum]``, or a ``ValueError`` naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, Integral):
        if isinstance(value, Real) and not isinstance(value, bool) and math.isfinite(value) and value == int(value):
            value = int(value)  # 5.0 is a whole number; 5.5 is not
        else:
            raise ValueError(f"{name} must be a whole number >= {minimum}, got {value!r}")
    value = int(value)
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}{': ' + hint if hint else ''}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {value}{': ' + hint if hint else ''}")
    return value


def finite_number(
    name: str,
    value: Any,
    minimum: float | None = None,
    maximum: float | None = None,
    strict_minimum: bool = False,
    hint: str = "",
) -> float:
    """``value`` as a finite ``float`` within the bounds, or a ``ValueError`` naming ``name``.

    ``strict_minimum=True`` makes the lower bound exclusive (``> minimum``).
    """
    if isinstance(value, bool) or not isinstance(value, Real):
        raise ValueError(f"{name} must be a number, got {value!r}{' (' + hint + ')' if hint else ''}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value}{': ' + hint if hint else ''}")
    tail = f": {hint}" if hint else ""
    if minimum is not None and (value <= minimum if strict_minimum else value < minimum):
        raise ValueError(f"{name} must be {'>' if strict_minimum else '>='} {minimum}, got {value:g}{tail}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {value:g}{tail}")
    return value


def text(name: str, value: Any, allow_empty: bool = False) -> str:
    """``value`` if it is a string (non-blank unless ``allow_empty``), else a ``ValueError``."""
    if not isinstance(value, str):
        raise ValueError(f"{name} must be a string, got {type(value).__name__} {value!r:.60}")
    if not allow_empty and not value.strip():
        raise ValueError(f"{name} must not be empty")
    return value


def sequence(name: str, value: Any, allow_empty: bool = True, example: str = "") -> list:
    """``value`` as a list, refusing a string/bytes/mapping (which would be used letter by letter or key by key)."""
    if isinstance(value, str | bytes | bytearray | Mapping) or not isinstance(value, Iterable):
        ex = f", e.g. {example}" if example else ""
        raise ValueError(f"{name} must be a list{ex}, got {type(value).__name__} {value!r:.60}")
    out = list(value)
    if not allow_empty and not out:
        raise ValueError(f"{name} must not be empty")
    return out


def queries(
    name: str, value: Any, allow_empty: bool = True, example: str = "load_queries()", gold: bool = False
) -> list:
    """``value`` as a list of labelled queries: each item needs ``qid`` and ``search_text`` (a Query).

    With ``gold=True`` each also needs its gold evidence: ``.gold``, a list of spans (doc, start, end, grade), as
    every function that turns spans into chunk judgements does.
    """
    out = sequence(name, value, allow_empty=allow_empty, example=example)
    for i, q in enumerate(out):
        if gold:
            if not hasattr(q, "qid") or not hasattr(q, "gold"):
                raise ValueError(
                    f"{name}[{i}] must be a query with .qid and .gold (from load_queries), got {type(q).__name__} "
                    f"{q!r:.60}"
                )
            spans = q.gold
            if isinstance(spans, str | bytes | Mapping) or not isinstance(spans, Iterable):
                raise ValueError(f"{name}[{i}].gold must be a list of spans, got {type(spans).__name__} {spans!r:.60}")
            for j, span in enumerate(spans):
                if not all(hasattr(span, a) for a in ("doc", "start", "end", "grade")):
                    raise ValueError(f"{name}[{i}].gold[{j}] must be a Span (doc, start, end, grade), got {span!r:.60}")
        elif not hasattr(q, "qid") or not hasattr(q, "search_text"):
            raise ValueError(f"{name}[{i}] must be a Query (from load_queries), got {type(q).__name__} {q!r:.60}")
    ids_as_text(f"{name}' qids", [q.qid for q in out])
    return out


def strings(name: str, value: Any, allow_empty: bool = True, unique: bool = False, example: str = "") -> list[str]:
    """A list of non-empty strings (e.g. document ids), optionally without duplicates."""
    out = sequence(name, value, allow_empty=allow_empty, example=example)
    for i, item in enumerate(out):
        if not isinstance(item, str) or not item:
            raise ValueError(f"{name}[{i}] must be a non-empty string, got {item!r}")
    if unique and len(set(out)) != len(out):
        seen: set[str] = set()
        dup = next(x for x in out if x in seen or seen.add(x))
        raise ValueError(f"{name} lists {dup!r} more than once; each item may appear once")
    return out


def numbers(name: str, value: Any, allow_empty: bool = True, minimum: float | None = None) -> list[float]:
    """A list of finite numbers (grades, scores, weights), optionally all ``>= minimum``."""
    out = sequence(name, value, allow_empty=allow_empty)
    result = []
    for i, item in enumerate(out):
        result.append(finite_number(f"{name}[{i}]", item, minimum=minimum))
    return result


def mapping(name: str, value: Any, example: str = "") -> Mapping:
    """``value`` if it is a dict-like ``Mapping`` (qrels, runs, costs), else a ``ValueError`` naming ``name``."""
    if not isinstance(value, Mapping):
        ex = f", e.g. {example}" if example else ""
        raise ValueError(f"{name} must be a dict{ex}, got {type(value).__name__} {value!r:.60}")
    return value


def table(name: str, value: Any, example: str = "") -> Any:
    """``value`` if it is a table (a pandas DataFrame: it has ``columns``), else a ``ValueError`` naming ``name``
    and, with ``example``, the call that makes the table."""
    if not hasattr(value, "columns") or not hasattr(value, "index"):
        ex = f" from {example}" if example else ""
        raise ValueError(f"{name} must be a table (a pandas DataFrame{ex}), got {type(value).__name__} {value!r:.60}")
    return value


def ids_as_text(name: str, keys: Any) -> None:
    """Keys that will be written as text (qids in a TREC file, say) must stay distinct as text: ``1`` and ``"1"``
    are one query once written, so a mapping that holds both is refused, naming them."""
    keys = list(keys)
    if all(type(key) is str for key in keys):
        return  # distinct strings cannot collide
    seen: dict[str, Any] = {}
    for key in keys:
        other = seen.setdefault(str(key), key)
        if other is not key and other != key:
            raise ValueError(
                f"{name} holds both {other!r} and {key!r}, which are the same id as text: use one spelling"
            )


def by_id(name: str, value: Any, example: str = "") -> dict[str, Any]:
    """A mapping keyed by ids (a run or qrels by qid, answers by request) re-keyed by the ids *as text*.

    labkit matches ids the way a TREC file does, as text: a run keyed by ``1`` finds the query whose qid is
    ``"1"`` (look it up with ``str(qid)``). Two keys that read the same (``1`` and ``"1"``) are refused,
    naming both, instead of one silently hiding the other. Returns a new dict; ``value`` is not changed.
    """
    mapping(name, value, example)
    ids_as_text(f"{name}'s keys", value)
    return {str(key): item for key, item in value.items()}


def ranking(name: str, value: Any, allow_empty: bool = True, example: str = "") -> list[str]:
    """A ranked list of ids: what :func:`strings` accepts, except a set, which has no order to rank by."""
    if isinstance(value, set | frozenset):
        raise ValueError(f"{name} must be a ranked list, got a {type(value).__name__}, which has no order")
    return strings(name, value, allow_empty=allow_empty, example=example)


def top_k(run: Mapping, qid: str, k: int, texts: Mapping | None = None) -> list[str]:
    """The first ``k`` ids that ``run`` ranks for query ``qid``, checked: every query must have been retrieved,
    and with ``texts`` every retrieved chunk must have its text (what a reader or a prompt is about to read).

    ``qid`` is looked up as given, then as text (a run keyed by ``"1"`` answers qid ``1``); pass ``by_id(...)``'s
    dict to have keys that collide as text refused once, up front."""
    key = qid if qid in run else str(qid)
    if key not in run:
        raise ValueError(f"run has no ranking for query {qid!r}: retrieve every query first (make_run)")
    top = ranking(f"run[{qid!r}]", run[key])[:k]
    if texts is not None:
        missing = [c for c in top if c not in texts]
        if missing:
            raise ValueError(f"texts has no chunk {missing[0]!r} (retrieved for {qid!r}): pass every chunk's text")
    return top


def fields(name: str, value: Any, keys: Sequence[str], made_by: str) -> Mapping:
    """``value`` if it is a mapping holding every key of ``keys`` (a view one of labkit's functions made), else a
    ``ValueError`` that names ``made_by``, the function whose result to pass."""
    if not isinstance(value, Mapping):
        raise ValueError(f"{name} must be what {made_by} returns (a dict), got {type(value).__name__} {value!r:.40}")
    missing = [k for k in keys if k not in value]
    if missing:
        raise ValueError(f"{name} lacks {missing}: pass what {made_by} returns")
    return value


def attributes(name: str, value: Any, attrs: Sequence[str], made_by: str) -> Any:
    """``value`` if it has every attribute of ``attrs``, else a ``ValueError`` naming ``made_by``."""
    missing = [a for a in attrs if not hasattr(value, a)]
    if missing:
        raise ValueError(f"{name} must be what {made_by} returns; {type(value).__name__} has no {missing}")
    return value


def function(name: str, value: Any, example: str) -> Any:
    """``value`` if it can be called, else a ``ValueError`` with an example of what to pass."""
    if not callable(value):
        raise ValueError(f"{name} must be a function, e.g. {example}; got {type(value).__name__} {value!r:.40}")
    return value
