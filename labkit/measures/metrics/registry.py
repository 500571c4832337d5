"""The metric registry: every retrieval measure labkit computes, written down once.

Taught in ``03_metrics_by_hand`` (the playground prints one ranking's row of each) and used by every
place that turns a metric's name into a number: :func:`~labkit.measures.metrics.evaluate` (and so
``compare_runs`` and ``hybrid_table``), :func:`~labkit.measures.metrics.ranking_metrics`,
:class:`labkit.measures.fusion.HybridSweep`, :class:`labkit.retrieval.grid.ChunkGrid`, the capstone and its
report's conventions.

Each :class:`Metric` holds its printed name (``"nDCG@k"``), its family (set-based, rank-based, graded),
its formula for one ranking and for a whole run at once (the same per-family code, see
:mod:`~labkit.measures.metrics._arrays`), a one-line definition, a reference, and trec_eval's name for
the same measure where trec_eval has one (``None`` where it has none). ``tests/test_metrics.py``
(``test_agrees_with_trec_eval``) checks every entry that names a trec_eval measure against ``pytrec_eval``;
``tests/test_metric_registry.py`` checks that a wrong name fails that check, and lists the entries trec_eval lacks.

>>> metric("nDCG@10").column(10), metric("mrr@k").name, metric("P@k").trec_measure(5)
('nDCG@10', 'RR@k', 'P_5')
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from labkit.measures.metrics._checks import check_finite_total, check_grades, check_idcg, check_k, check_thr
from labkit.measures.metrics.graded import (
    _dcg_value,
    dcg,
    dcg_per_query,
    ideal_gains,
    ideal_ranking,
    ndcg_at_k,
    ndcg_per_query,
)
from labkit.measures.metrics.rank_based import first_relevant_rank, reciprocal, reciprocal_rank
from labkit.measures.metrics.set_based import hit, hit_at_k, hits_at_k, precision, precision_at_k, recall, recall_at_k

__all__ = ["Metric", "Retrieved", "REGISTRY", "FAMILIES", "metric", "parse", "check_ranking"]

FAMILIES = ("set-based", "rank-based", "graded")
"""Set-based: the top k as an unordered set, relevance yes/no (``grade >= thr``). Rank-based: the position of
the first relevant document. Graded: the grades themselves, discounted by rank."""

Formula = Callable[[list[float], int, float, list[float], str], "float | None"]


@dataclass
class Retrieved:
    """A whole run as flat arrays, what the batch formulas read: one row per retrieved document, for every query.

    ``q`` (query number ``0 .. nq - 1``), ``rank`` (1-based) and ``grade``: the rows may be only those with a
    positive grade (the others add nothing to any metric). ``relevant``: ``grade >= thr``. ``n_rel``: per query,
    every judged document with ``grade >= thr``; ``judged``: ``(q, grade)`` of every judged document (the
    ``all_judged`` ideal); ``idcg``: the IDCG convention. Hit counts are computed once per ``k`` and shared.
    """

    q: np.ndarray
    rank: np.ndarray
    grade: np.ndarray
    relevant: np.ndarray
    nq: int
    n_rel: np.ndarray
    judged: tuple[np.ndarray, np.ndarray]
    idcg: str
    _hits: dict[int, np.ndarray] = field(default_factory=dict, repr=False)

    def hits(self, k: int) -> np.ndarray:
        """Per query, how many relevant documents sit at ranks ``1..k`` (computed once per ``k``)."""
        if k not in self._hits:
            self._hits[k] = hits_at_k(self.q, self.rank, self.relevant, k, self.nq)
        return self._hits[k]

    def top(self, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(q, rank, grade)`` of the rows at ranks ``1..k``."""
        top = self.rank <= k
        return self.q[top], self.rank[top], self.grade[top]


@dataclass(frozen=True)
class Metric:
    """One registered measure. ``name`` is how it is printed with a symbolic cutoff (``"nDCG@k"``);
    :meth:`column` names it for a given ``k``. ``formula(rels, k, thr, unretrieved, idcg)`` scores one ranking
    (the arguments of :func:`~labkit.measures.metrics.ranking_metrics`, checked the same way); ``batch(run, k)``
    scores every query of a :class:`Retrieved` at once. ``trec``: trec_eval's measure, ``{k}`` standing for the
    cutoff (``"P_{k}"``); one without ``{k}`` has no cutoff in trec_eval, so the run is cut to its top ``k``
    first. ``aliases``: other accepted spellings of the name before ``@`` (``MRR`` for ``RR``)."""

    name: str
    family: str
    formula: Formula = field(repr=False)
    batch: Callable[[Retrieved, int], np.ndarray] = field(repr=False)
    definition: str
    reference: str
    trec: str | None
    aliases: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.family not in FAMILIES:
            raise ValueError(f"{self.name}: family must be one of {FAMILIES}, got {self.family!r}")
        if not re.fullmatch(r"[A-Za-z]+@k", self.name):
            raise ValueError(f"a metric's name is letters then '@k', e.g. 'nDCG@k', got {self.name!r}")

    @property
    def prefix(self) -> str:
        """The name before ``@``: ``"nDCG"``."""
        return self.name.removesuffix("@k")

    def column(self, k: int) -> str:
        """The column of this metric at cutoff ``k``: ``"nDCG@10"``."""
        return f"{self.prefix}@{k}"

    def trec_measure(self, k: int) -> str | None:
        """trec_eval's (``pytrec_eval``'s) measure at cutoff ``k`` (``"ndcg_cut_10"``), or ``None``."""
        return None if self.trec is None else self.trec.format(k=k)

    @property
    def trec_cuts_run(self) -> bool:
        """True when trec_eval's measure has no cutoff: compare it on the run cut to its top ``k``."""
        return self.trec is not None and "{k}" not in self.trec


# ---------------------------------------------------------------- one ranking: the same checks as ranking_metrics


def check_ranking(
    rels: Sequence[float], k: int, thr: float = 1, unretrieved: Sequence[float] = (), idcg: str = "retrieved"
) -> tuple[list[float], int, float, list[float], str]:
    """``(grades, k, thr, unretrieved grades, idcg)`` checked, in the order ranking_metrics has always checked."""
    idcg = check_idcg(idcg)
    grades = check_grades(rels)
    extra = check_grades(unretrieved, "unretrieved")
    thr = check_thr(thr)
    return grades, check_k(k), thr, extra, idcg


def _precision(rels, k, thr=1, unretrieved=(), idcg="retrieved"):
    grades, k, thr, _, _ = check_ranking(rels, k, thr, unretrieved, idcg)
    return precision_at_k(grades, k, thr)


def _recall(rels, k, thr=1, unretrieved=(), idcg="retrieved"):
    grades, k, thr, extra, _ = check_ranking(rels, k, thr, unretrieved, idcg)
    return recall_at_k(grades, k, sum(g >= thr for g in grades + extra), thr)


def _rr(rels, k, thr=1, unretrieved=(), idcg="retrieved"):
    grades, k, thr, _, _ = check_ranking(rels, k, thr, unretrieved, idcg)
    return reciprocal_rank(grades, k, thr)


def _hit(rels, k, thr=1, unretrieved=(), idcg="retrieved"):
    grades, k, thr, _, _ = check_ranking(rels, k, thr, unretrieved, idcg)
    return hit_at_k(grades, k, thr)


def _dcg(rels, k, thr=1, unretrieved=(), idcg="retrieved"):
    grades, k, _, _, _ = check_ranking(rels, k, thr, unretrieved, idcg)
    return dcg(grades[:k])


def _idcg(rels, k, thr=1, unretrieved=(), idcg="retrieved"):
    grades, k, _, extra, idcg = check_ranking(rels, k, thr, unretrieved, idcg)
    return _dcg_value(ideal_gains(grades, k, extra, idcg), "rels" if idcg == "retrieved" else "rels/unretrieved")


def _ndcg(rels, k, thr=1, unretrieved=(), idcg="retrieved"):
    grades, k, _, extra, idcg = check_ranking(rels, k, thr, unretrieved, idcg)
    return ndcg_at_k(grades, k, None if idcg == "retrieved" else grades + extra)


# ---------------------------------------------------------------- a whole run: one value per query


def _finite(values: np.ndarray, what: str) -> np.ndarray:
    if not np.isfinite(values).all():
        check_finite_total(float("inf"), "qrels", what)
    return values


def _ideal_dcg(run: Retrieved, k: int) -> np.ndarray:
    return dcg_per_query(*ideal_ranking(run.idcg, k, run.top(k), run.judged), run.nq)


REFERENCE_SETS = "C. D. Manning, P. Raghavan & H. Schütze, Introduction to Information Retrieval, CUP 2008, ch. 8"
REFERENCE_GRADED = (
    "K. Järvelin & J. Kekäläinen, Cumulated gain-based evaluation of IR techniques, ACM TOIS 20(4), 2002, 422-446"
)

REGISTRY: tuple[Metric, ...] = (
    Metric("P@k", "set-based", _precision, lambda run, k: precision(run.hits(k), k),
           "relevant documents in the top k / k (the empty slots of a short ranking count as misses)",
           f"{REFERENCE_SETS}; trec_eval m_P.c", "P_{k}"),
    Metric("R@k", "set-based", _recall, lambda run, k: recall(run.hits(k), run.n_rel),
           "relevant documents in the top k / every relevant document of the query, retrieved or not "
           "(undefined, NaN, when there is none; trec_eval says 0)",
           f"{REFERENCE_SETS}; trec_eval m_recall.c", "recall_{k}"),
    Metric("RR@k", "rank-based", _rr,
           lambda run, k: reciprocal(first_relevant_rank(run.q, run.rank, run.relevant, k, run.nq)),
           "1 / rank of the first relevant document in the top k, 0 when there is none (its mean is MRR@k)",
           "E. M. Voorhees, The TREC-8 Question Answering Track Report, TREC-8, NIST SP 500-246, 1999; "
           "trec_eval m_recip_rank.c (no cutoff: cut the run at k)", "recip_rank", aliases=("MRR",)),
    Metric("hit@k", "set-based", _hit, lambda run, k: hit(run.hits(k)),
           "1 when a relevant document is in the top k, else 0 (its mean is the hit rate)",
           f"{REFERENCE_SETS}; trec_eval m_success.c", "success_{k}"),
    Metric("DCG@k", "graded", _dcg, lambda run, k: _finite(dcg_per_query(*run.top(k), run.nq), "DCG"),
           "sum over ranks i <= k of max(grade_i, 0) / log2(i + 1) (linear gain, as trec_eval)",
           REFERENCE_GRADED, None),
    Metric("IDCG@k", "graded", _idcg, lambda run, k: _finite(_ideal_dcg(run, k), "ideal DCG"),
           "DCG@k of the ideal ranking: the retrieved top k re-sorted (idcg='retrieved', the book) or every "
           "judged document sorted (idcg='all_judged', trec_eval)", REFERENCE_GRADED, None),
    Metric("nDCG@k", "graded", _ndcg,
           lambda run, k: ndcg_per_query(run.idcg, k, run.nq, (run.q, run.rank, run.grade), run.judged),
           "DCG@k / IDCG@k: linear gain (the grade), discount log2(rank + 1); in [0, 1], 0 when IDCG@k is 0",
           f"{REFERENCE_GRADED}; trec_eval m_ndcg_cut.c (its IDCG: idcg='all_judged')", "ndcg_cut_{k}"),
)  # fmt: skip
"""Every registered metric, in the order the 03 playground prints them (:func:`ranking_metrics`)."""

_BY_PREFIX = {p.lower(): m for m in REGISTRY for p in (m.prefix, *m.aliases)}
_NAME = re.compile(r"^([a-z]+)@(\d+|k)$", re.IGNORECASE)


def _unknown(name: Any, arg: str) -> ValueError:
    aliases = "".join(f"; {a}@k means {m.name}" for m in REGISTRY for a in m.aliases)
    return ValueError(
        f"{arg}: unknown metric {name!r}: the registered metrics are {', '.join(m.name for m in REGISTRY)}{aliases};"
        " write a whole number for k, e.g. 'nDCG@10'"
    )


def parse(name: Any, arg: str = "name") -> tuple[Metric, int]:
    """``"nDCG@10"`` -> ``(the nDCG@k Metric, 10)``; case-insensitive. An error names ``arg`` and lists the registry."""
    if not isinstance(name, str):
        raise ValueError(f"{arg} must name metrics such as 'nDCG@10', got {type(name).__name__} {name!r:.60}")
    m = _NAME.match(name.strip())
    if not m or m.group(1).lower() not in _BY_PREFIX:
        raise _unknown(name, arg)
    if m.group(2).lower() == "k":
        found = _BY_PREFIX[m.group(1).lower()]
        raise ValueError(f"{arg}: {name!r} names {found.name} without its cutoff: write a whole number for k, "
                         f"e.g. {found.column(10)!r}")  # fmt: skip
    try:
        k = check_k(int(m.group(2)), f"k in {name!r}")
    except ValueError as err:
        raise ValueError(f"{arg}: {err}") from None
    return _BY_PREFIX[m.group(1).lower()], k


def metric(name: str) -> Metric:
    """The registered metric called ``name``: ``"nDCG@k"``, or with a cutoff ``"nDCG@10"`` (case-insensitive,
    ``MRR@k`` is ``RR@k``). An unknown name is a ``ValueError`` listing the registered ones."""
    if isinstance(name, str) and (m := _NAME.match(name.strip())) and m.group(2).lower() == "k":
        found = _BY_PREFIX.get(m.group(1).lower())
        if found is None:
            raise _unknown(name, "name")
        return found
    return parse(name)[0]
