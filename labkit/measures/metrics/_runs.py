"""Runs and judgements as flat, checked arrays: what :func:`labkit.measures.metrics.evaluate` computes on.

Whatever shape comes in (``{qid: {doc: score}}``, ``{qid: [doc, ...]}``, a long DataFrame), it
becomes parallel arrays ``(qid, doc, value)``; ids become integer codes, and every row is ranked
the way trec_eval ranks it (score descending, then doc id descending). Every refusal names the
argument (``run``, ``qrels``) and the row, so the learner can find it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import chain
from numbers import Integral, Real
from typing import Any

import numpy as np

from labkit.measures.metrics._arrays import group_ranks


def _is_id(value: Any) -> bool:
    """Query and document ids are non-empty strings; whole numbers are accepted and read as text."""
    if isinstance(value, str):
        return bool(value)
    return isinstance(value, Integral) and not isinstance(value, bool)


def _objects(values) -> np.ndarray:
    """A 1-D object array of ``values`` as they are (``np.asarray`` would turn tuples or lists into rows)."""
    values = list(values)
    return np.fromiter(values, dtype=object, count=len(values))


def _all_text(values: np.ndarray) -> bool:
    """True when every value is a non-empty ``str`` (checked in C, not a Python loop)."""
    from pandas.api.types import infer_dtype

    values = np.asarray(values, dtype=object)
    return infer_dtype(values, skipna=False) in ("string", "empty") and not (values == "").any()


class Qids:
    """The query id of every row, stored as ``keys`` (one per query) and ``idx`` (row -> key)."""

    def __init__(self, keys, lengths=None, idx=None):
        self.keys = _objects(keys)
        self.idx = np.repeat(np.arange(len(self.keys)), lengths) if idx is None else np.asarray(idx)

    def __len__(self) -> int:
        return len(self.idx)

    def __getitem__(self, i):
        return self.keys[self.idx[i]]


class Where:
    """Names row ``i`` as "qid 'q1' doc 'd3'" for error messages, lazily."""

    def __init__(self, q, d):
        self.q, self.d = q, d

    def __getitem__(self, i):
        return f"qid {self.q[i]!r} doc {self.d[i]!r}"


# ---------------------------------------------------------------- numbers


def _raise_first_not_number(values, what: str, where, arg: str) -> None:
    for i, v in enumerate(values):
        if isinstance(v, bool) or not isinstance(v, Real):
            raise ValueError(f"{arg}: {what} for {where[i]} is {v!r}: {what}s must be numbers")


def _floats(values, what: str, arg: str, count: int = -1) -> np.ndarray:
    try:
        return np.fromiter(values, dtype=float, count=count)
    except OverflowError:  # a Python int beyond 1.8e308
        raise ValueError(f"{arg}: a {what} is too large to be a float (beyond 1.8e308)") from None


def numbers(values, what: str, where, arg: str) -> np.ndarray:
    """A float array from ``values``; a clear error for anything that is not a finite real number."""
    if not isinstance(values, np.ndarray):
        if not all(issubclass(t, Real) and not issubclass(t, bool) for t in set(map(type, values))):
            _raise_first_not_number(values, what, where, arg)  # np.asarray would read True as 1.0
        values = _floats(values, what, arg)
    if values.dtype.kind not in "iuf" or values.ndim != 1:
        _raise_first_not_number(values, what, where, arg)
    arr = values.astype(float, copy=False)
    if not np.isfinite(arr).all():
        nan = np.flatnonzero(np.isnan(arr))
        if len(nan):
            raise ValueError(
                f"{arg}: {what} for {where[nan[0]]} is NaN ({len(nan)} NaN {what}s in all): "
                f"drop those rows or give them a real {what}"
            )
        inf = np.flatnonzero(np.isinf(arr))
        raise ValueError(
            f"{arg}: {what} for {where[inf[0]]} is {arr[inf[0]]} ({len(inf)} infinite {what}s in all): "
            f"{what}s must be finite numbers"
        )
    return arr


def _column_values(col: Any):
    """A numeric column as a float array as is (no Python objects); anything else as a list to check."""
    if col.dtype.kind in "iuf":
        return col.to_numpy(dtype=float, na_value=np.nan)
    return col.tolist()


def _frame_columns(frame: Any, value_cols: tuple[str, ...], kind: str):
    cols = [str(c) for c in frame.columns]
    value = next((c for c in value_cols if c in cols), None)
    if "qid" not in cols or "doc" not in cols or value is None:
        raise ValueError(f"a {kind} DataFrame needs columns qid, doc and {' or '.join(value_cols)}; it has {cols}")
    for name in ("qid", "doc", value):
        if cols.count(name) > 1:
            raise ValueError(f"the {kind} DataFrame has {cols.count(name)} columns named {name!r}; keep one")
    return frame["qid"].to_numpy(dtype=object), frame["doc"].to_numpy(dtype=object), value


def _flatten_dicts(nested: Mapping, what: str, arg: str):
    """``{qid: {doc: value}}`` as (qids, doc array, float array) without building Python lists."""
    inner = list(nested.values())
    lengths = [len(x) for x in inner]
    n = sum(lengths)
    q = Qids(list(nested), lengths)
    d = np.fromiter(chain.from_iterable(inner), dtype=object, count=n)
    types = set(map(type, chain.from_iterable(x.values() for x in inner)))
    if not all(issubclass(t, Real) and not issubclass(t, bool) for t in types):
        _raise_first_not_number(list(chain.from_iterable(x.values() for x in inner)), what, Where(q, d), arg)
    values = _floats(chain.from_iterable(x.values() for x in inner), what, arg, count=n)
    return q, d, numbers(values, what, Where(q, d), arg)


# ---------------------------------------------------------------- the accepted shapes


def run_arrays(run: Any, arg: str = "run"):
    """Flatten any accepted run shape to (qid, doc, score, may_repeat) arrays.

    ``may_repeat`` is False only for ``{qid: {doc: score}}``, where a dict
    cannot hold a doc twice, so the duplicate check can be skipped.
    """
    import pandas as pd

    if isinstance(run, pd.DataFrame):
        q, d, col = _frame_columns(run, ("score", "rank"), arg)
        s = numbers(_column_values(run[col]), col, Where(q, d), arg)
        s = -s if col == "rank" else s
        may_repeat = True
    elif isinstance(run, Mapping) and run and all(isinstance(r, Mapping) for r in run.values()):
        q, d, s = _flatten_dicts(run, "score", arg)
        may_repeat = False
    elif isinstance(run, Mapping):
        ds: list = []
        ss: list = []
        lengths: list[int] = []
        may_repeat = False
        for qid, ranking in run.items():
            if isinstance(ranking, Mapping):
                ds.extend(ranking)
                ss.extend(ranking.values())
            elif isinstance(ranking, Sequence) and not isinstance(ranking, str | bytes):
                ds.extend(ranking)
                ss.extend(range(-1, -len(ranking) - 1, -1))
                may_repeat = True
            else:
                raise ValueError(
                    f"{arg}[{qid!r}] must be a {{doc: score}} dict or a ranked list of doc ids, "
                    f"got {type(ranking).__name__}"
                )
            lengths.append(len(ranking))
        q = Qids(list(run), lengths)
        d = _objects(ds)
        s = numbers(ss, "score", Where(q, d), arg)
    else:
        raise ValueError(
            f"{arg} must be {{qid: {{doc: score}}}}, {{qid: [doc, ...]}} (ranked) or a DataFrame (qid, doc, score), "
            f"got {type(run).__name__}"
        )
    if len(q) == 0:
        raise ValueError(f"{arg} is empty: no query has any retrieved document")
    return q, d, s, may_repeat


def qrels_arrays(qrels: Any):
    """Flatten ``{qid: {doc: grade}}`` or a DataFrame ``(qid, doc, grade)`` to (qid, doc, grade) arrays."""
    import pandas as pd

    if isinstance(qrels, pd.DataFrame):
        q, d, col = _frame_columns(qrels, ("grade",), "qrels")
        g = numbers(_column_values(qrels[col]), "grade", Where(q, d), "qrels")
    elif isinstance(qrels, Mapping) and qrels and all(isinstance(j, Mapping) for j in qrels.values()):
        q, d, g = _flatten_dicts(qrels, "grade", "qrels")
    elif isinstance(qrels, Mapping) and not qrels:
        raise ValueError("qrels is empty: give each judged query its {doc: grade} dict, e.g. {'q1': {'d3': 2}}")
    elif isinstance(qrels, Mapping):
        bad = next(qid for qid, judged in qrels.items() if not isinstance(judged, Mapping))
        raise ValueError(f"qrels[{bad!r}] must be a {{doc: grade}} dict, got {type(qrels[bad]).__name__}")
    else:
        raise ValueError(
            f"qrels must be {{qid: {{doc: grade}}}} or a DataFrame (qid, doc, grade), got {type(qrels).__name__}"
        )
    if len(q) == 0:
        raise ValueError("qrels are empty: there is nothing to evaluate against")
    return q, d, g


# ---------------------------------------------------------------- ids as integer codes


def _check_query_ids(keys, arg: str, rows=()) -> None:
    """Every query id a non-empty string (or whole number), and no two ids that read the same as text.

    ``rows``: the id of every row, checked too when some id is not text (hashing merges True with 1).
    """
    if _all_text(keys):
        return  # distinct strings: nothing can collide
    for key in chain(keys, rows):
        if not _is_id(key):
            raise ValueError(
                f"{arg} has a query id {key!r} ({type(key).__name__}): query ids must be non-empty strings such as 'q1'"
            )
    texts = [str(k) for k in keys]
    if len(set(texts)) < len(texts):
        seen: dict[str, Any] = {}
        for key, text in zip(keys, texts, strict=True):
            if text in seen:
                raise ValueError(
                    f"{arg} has query ids {seen[text]!r} and {key!r}, the same id once written as text: "
                    "spell each query id one way"
                )
            seen[text] = key


def as_qids(q, arg: str) -> Qids:
    """Query ids as codes. A long table is usually grouped by query, so only the first row
    of each block of equal ids is hashed; a missing (None/NaN) id is an error."""
    import pandas as pd

    if isinstance(q, Qids):
        _check_query_ids(q.keys, arg)
        return q
    n = len(q)
    try:
        starts = np.r_[0, np.flatnonzero(q[1:] != q[:-1]) + 1] if n else np.zeros(0, dtype=np.int64)
        if len(starts) * 4 < n:
            idx, keys = pd.factorize(q[starts])
            idx = np.repeat(idx, np.diff(np.r_[starts, n]))
        else:
            idx, keys = pd.factorize(q)
    except TypeError:  # pd.NA compared, or an unhashable id such as a list
        try:
            idx, keys = pd.factorize(q)
        except TypeError:
            bad = next(v for v in q if not _is_id(v))
            msg = f"{arg} has a query id {bad!r}: query ids must be non-empty strings such as 'q1'"
            raise ValueError(msg) from None
    if n and idx.min() < 0:
        row = int(np.flatnonzero(idx < 0)[0])
        raise ValueError(f"{arg} row {row} has no qid ({q[row]!r}): every row needs a query id")
    _check_query_ids(keys, arg, rows=q)
    return Qids(keys, idx=idx)


def codes(values, sort: bool, where=lambda row: ""):
    """Integer codes for doc ids; ids are compared as strings (as trec_eval does)."""
    import pandas as pd

    try:
        codes_, uniq = pd.factorize(values)
    except TypeError:  # an unhashable id such as a list
        row = next(i for i, v in enumerate(values) if not _is_id(v))
        raise ValueError(f"a doc id is {values[row]!r}{where(row)}: doc ids must be non-empty strings") from None
    if len(codes_) and codes_.min() < 0:
        row = int(np.flatnonzero(codes_ < 0)[0])
        raise ValueError(f"a doc id is missing ({values[row]!r}{where(row)}): every row needs a doc id")
    uniq = np.asarray(uniq, dtype=object)
    if not _all_text(uniq):
        for row, v in enumerate(values):  # every row: hashing merges True with 1 and 1.0 with 1
            if not _is_id(v):
                raise ValueError(f"a doc id is {v!r}{where(row)}: doc ids must be non-empty strings such as 'doc-a'")
        texts = np.asarray([str(u) for u in uniq], dtype=object)
        if len(set(texts)) < len(texts):
            _, first = np.unique(texts.astype(str), return_index=True)
            firsts = set(first.tolist())
            j = next(j for j in range(len(texts)) if j not in firsts)
            row = int(np.flatnonzero(codes_ == j)[0])
            raise ValueError(
                f"doc id {uniq[j]!r}{where(row)} reads the same as another doc id once written as text: "
                "spell each doc id one way"
            )
        return codes(texts[codes_], sort, where)
    if sort:
        order = np.argsort(uniq.astype(str), kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        codes_, uniq = rank[codes_], uniq[order]
    return codes_.astype(np.int64), uniq


def first_duplicate(key):
    """Index of one row whose int key repeats an earlier one, or None."""
    import pandas as pd

    if pd.Index(key).is_unique:  # a hash table: much cheaper than the sort below, which only names the row
        return None
    order = np.argsort(key, kind="stable")
    same = np.flatnonzero(key[order][1:] == key[order][:-1])
    return None if len(same) == 0 else int(order[same[0] + 1])


# ---------------------------------------------------------------- ranks


def _sort_run(q, s, d):
    """Order rows by query, score descending, doc code descending (trec_eval's order)."""
    uniq_s, s_rank = np.unique(-s, return_inverse=True)  # 0 = highest score
    nq, ns, nd = int(q.max()) + 1, len(uniq_s), int(d.max()) + 1
    if nq * ns * nd < 2**62:  # one int64 key sorts faster than a three-key lexsort
        key = (q * ns + s_rank.astype(np.int64)) * nd + (nd - 1 - d)
        return np.argsort(key)  # keys are unique (one row per query and doc), so stability is moot
    return np.lexsort((-d, -s, q))


def ranks(q, s, d, sel):
    """1-based rank (score descending, then doc code descending) of each ``sel`` row in its query.

    Rows grouped by query (the usual case) are laid out as a query x position table, and each
    selected row counts the rows of its query that come before it: no sort of the whole run.
    Otherwise, or when that table would be much larger than the run, the whole run is sorted.
    """
    n, idx = len(q), np.flatnonzero(sel)
    if n == 0 or len(idx) == 0:
        return np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.r_[True, q[1:] != q[:-1]])
    lengths = np.diff(np.r_[starts, n])
    width = int(lengths.max())
    grouped = len(np.unique(q[starts])) == len(starts)
    if grouped and len(starts) * width <= 4 * n and len(idx) * width <= 64 * n:
        block = np.repeat(np.arange(len(starts)), lengths)
        pos = np.arange(n) - starts[block]
        scores = np.full((len(starts), width), -np.inf)  # padding never comes first: d = -1 loses ties
        docs = np.full((len(starts), width), -1, dtype=np.int64)
        scores[block, pos], docs[block, pos] = s, d
        out = np.empty(len(idx), dtype=np.int64)
        step = max(1, 2_000_000 // width)  # bounded temporaries (~16 MB per array)
        for a in range(0, len(idx), step):
            rows = idx[a : a + step]
            b, sr, dr = block[rows], s[rows][:, None], d[rows][:, None]
            before = (scores[b] > sr) | ((scores[b] == sr) & (docs[b] > dr))
            out[a : a + step] = before.sum(axis=1) + 1
        return out
    order = _sort_run(q, s, d)
    rank = np.empty(n, dtype=np.int64)
    rank[order] = group_ranks(q[order])
    return rank[idx]
