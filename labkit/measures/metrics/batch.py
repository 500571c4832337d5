"""A whole run at once: ``evaluate``, per group (``evaluate_by_group``) and side by side (``compare_runs``).

Taught in ``04_mrr_hit_rate_lost_in_the_middle`` (per slice) and used by ``01``, ``05``, ``08``.

The run and its judgements are flattened to arrays (:mod:`labkit.measures.metrics._runs`), every retrieved
document gets its rank (score descending, then doc id descending, like trec_eval) and its grade
(0 when unjudged), and each measure is then computed for every query at once by its entry of the
:mod:`~labkit.measures.metrics.registry`, which calls the *same* functions the per-ranking measures use:
:mod:`~labkit.measures.metrics.set_based` (P, R, hit), :mod:`~labkit.measures.metrics.rank_based` (RR) and
:mod:`~labkit.measures.metrics.graded` (DCG, IDCG, nDCG, with :func:`~labkit.measures.metrics.graded.ideal_ranking`
for the IDCG).

Means over queries: every judged query counts, including one missing from the run (it scores 0);
recall of a query with nothing relevant is undefined (NaN) and left out, where trec_eval counts 0.
Agreement with trec_eval (via ``pytrec_eval``) to 1e-9, for every registered metric that trec_eval has, is tested
in ``tests/test_metrics.py``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from labkit.core import args
from labkit.measures.metrics import _runs, registry
from labkit.measures.metrics._arrays import per_query
from labkit.measures.metrics._checks import check_idcg, check_thr

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["evaluate", "Evaluation", "parse_metric", "evaluate_by_group", "compare_runs", "METRIC_NAMES"]

METRIC_NAMES = tuple(m.name for m in registry.REGISTRY)
"""The registered metrics' names (:data:`labkit.measures.metrics.registry.REGISTRY`), e.g. ``"nDCG@k"``."""


def parse_metric(name: str) -> tuple[str, int]:
    """``"nDCG@10"`` -> ``("nDCG", 10)``; names are case-insensitive, ``MRR@k`` means ``RR@k``."""
    found, k = registry.parse(name, "name")
    return found.prefix, k


def _metric_names(metrics: Any) -> tuple[str, ...]:
    """``metrics`` as a tuple of names: one string is one metric; an empty list or a repeat is an error."""
    names = (metrics,) if isinstance(metrics, str) else tuple(args.sequence("metrics", metrics, example="('nDCG@10',)"))
    if not names:
        raise ValueError("metrics is empty: name at least one, e.g. ('nDCG@10', 'R@100')")
    for name in names:
        registry.parse(name, "metrics")
    if len(set(names)) < len(names):
        dup = next(n for i, n in enumerate(names) if n in names[:i])
        raise ValueError(f"metrics lists {dup!r} twice: name each metric once")
    return names


@dataclass
class Evaluation:
    """What :func:`evaluate` returns.

    ``per_query``: one row per judged query, one column per metric (recall is
    NaN for a query with no relevant document). ``mean``: the column means,
    NaN left out. ``missing``: judged queries absent from the run (they
    score 0 and are still in the mean). ``unjudged``: run queries with no
    judgements (ignored).
    """

    per_query: pd.DataFrame
    mean: pd.Series
    missing: list[str] = field(default_factory=list)
    unjudged: list[str] = field(default_factory=list)

    def __repr__(self) -> str:
        means = ", ".join(f"{m}={v:.4f}" for m, v in self.mean.items())
        extra = f", {len(self.missing)} missing from the run" if self.missing else ""
        return f"Evaluation({len(self.per_query)} queries{extra}: {means})"


def evaluate(
    run: Any,
    qrels: Any,
    metrics: Iterable[str] = ("nDCG@10", "P@10", "R@100", "RR@10", "hit@5"),
    thr: float = 1,
    idcg: str = "all_judged",
) -> Evaluation:
    """Evaluate a whole run against judgements; one row per judged query.

    ``run``: ``{qid: {doc: score}}`` (ties: score descending, then doc id
    descending, like trec_eval), ``{qid: [doc, ...]}`` already ranked, or a
    long DataFrame with columns ``qid, doc, score`` (or ``rank``).
    ``qrels``: ``{qid: {doc: grade}}`` or a DataFrame ``qid, doc, grade``.
    ``metrics``: names like ``nDCG@10``, ``P@5``, ``R@100``, ``RR@10``
    (``MRR@10`` is accepted), ``hit@5``, ``DCG@10``, ``IDCG@10`` (the registry's names, :data:`METRIC_NAMES`,
    with a number for k); one string is one metric. ``thr``: the
    lowest grade that counts as relevant for the binary metrics (nDCG always
    uses the grades). ``idcg``: ``"all_judged"`` (trec_eval) or ``"retrieved"`` (the book).

    Every query in ``qrels`` gets a row; one missing from the run scores 0
    and is listed in ``Evaluation.missing``. Unjudged documents have grade 0.
    Query and doc ids are non-empty strings (whole numbers are read as text).
    The work is done with NumPy on flat arrays, whatever shape came in.
    """
    return _evaluate(run, qrels, metrics, thr, idcg)


def _evaluate(run: Any, qrels: Any, metrics: Any, thr: Any, idcg: Any, arg: str = "run") -> Evaluation:
    import pandas as pd

    thr, idcg = check_thr(thr), check_idcg(idcg)
    parsed = [(name, *registry.parse(name, "metrics")) for name in _metric_names(metrics)]
    the_run = "the run" if arg == "run" else arg

    rq, rd, rs, may_repeat = _runs.run_arrays(run, arg)
    jq, jd, jg = _runs.qrels_arrays(qrels)
    nj = len(jq)

    # Integer codes. Query ids are coded through their few distinct values; documents are
    # coded in sorted order so that "doc id descending" becomes "code descending" (tie-break).
    jq, rq = _runs.as_qids(jq, "qrels"), _runs.as_qids(rq, arg)
    code_of: dict[str, int] = {}
    jmap = np.array([code_of.setdefault(str(k), len(code_of)) for k in jq.keys], dtype=np.int64)
    rmap = np.array([code_of.setdefault(str(k), len(code_of)) for k in rq.keys], dtype=np.int64)
    jq_code, rq_code = jmap[jq.idx], rmap[rq.idx]
    q_uniq = np.array(list(code_of), dtype=object)
    d_code, d_uniq = _runs.codes(
        np.concatenate([jd, rd]),
        sort=True,
        where=lambda i: f" for qid {jq[i]!r} in qrels" if i < nj else f" for qid {rq[i - nj]!r} in {the_run}",
    )
    jd_code, rd_code = d_code[:nj], d_code[nj:]
    nq, ndocs = len(q_uniq), max(len(d_uniq), 1)

    jkey = jq_code * ndocs + jd_code
    if (i := _runs.first_duplicate(jkey)) is not None:
        raise ValueError(f"qrels judge qid {jq[i]!r} doc {jd[i]!r} twice: keep one grade per (qid, doc)")
    rkey = rq_code * ndocs + rd_code
    if may_repeat and (i := _runs.first_duplicate(rkey)) is not None:
        raise ValueError(
            f"{arg} lists doc {rd[i]!r} more than once for qid {rq[i]!r}: de-duplicate each ranking first "
            "(fused lists with duplicates push hit rate and recall above their true values)"
        )

    judged = np.zeros(nq, dtype=bool)
    judged[jq_code] = True
    known = judged[rq_code]
    unjudged: list[str] = []
    if not known.all():
        unjudged = sorted({str(x) for x in rq.keys[np.unique(rq.idx[~known])]})
        rq_code, rd_code, rs, rkey = rq_code[known], rd_code[known], rs[known], rkey[known]
    present = np.zeros(nq, dtype=bool)
    present[rq_code] = True

    # Grade of every retrieved row, looked up by its (query, doc) key. Rows with no positive grade
    # add nothing to any metric (thr > 0, so they are never relevant, and their gain is 0): only
    # the ranks of the rows that earn something are needed.
    hit_row = pd.Index(jkey).get_indexer(rkey)
    earns = hit_row >= 0
    earns[earns] = jg[hit_row[earns]] > 0
    rank = _runs.ranks(rq_code, rs, rd_code, earns)
    rq_code, grade = rq_code[earns], jg[hit_row[earns]]
    keep = rank <= max(k for _, _, k in parsed)
    rq_code, rank, grade = rq_code[keep], rank[keep], grade[keep]
    relevant = grade >= thr
    n_rel = per_query(jq_code, jg >= thr, nq)

    retrieved = registry.Retrieved(rq_code, rank, grade, relevant, nq, n_rel, (jq_code, jg), idcg)
    out = {name: found.batch(retrieved, k) for name, found, k in parsed}  # hits are counted once per k

    rows = np.flatnonzero(judged)
    rows = rows[np.argsort(q_uniq[rows].astype(str), kind="stable")]
    qids = [str(x) for x in q_uniq[rows]]
    per_q = pd.DataFrame({n: v[rows] for n, v in out.items()}, index=pd.Index(qids, name="qid"))
    missing = [qid for qid, row in zip(qids, rows, strict=True) if not present[row]]
    return Evaluation(per_query=per_q, mean=per_q.mean(), missing=missing, unjudged=unjudged)


def _check_groups(groups: Any) -> dict:
    if not isinstance(groups, Mapping):
        raise ValueError(f"groups must be a dict {{qid: group name}}, got {type(groups).__name__} {groups!r:.60}")
    return args.by_id("groups", groups)  # qids as text, as the run and the qrels are read


def _by_group(res: Evaluation, groups: dict, total: str | None) -> pd.DataFrame:
    missing = [q for q in res.per_query.index if q not in groups]
    if missing:
        raise ValueError(f"groups has no entry for {len(missing)} judged queries, e.g. {missing[0]!r}")
    for q in res.per_query.index:
        g = groups[q]
        if not isinstance(g, str) or not g:
            raise ValueError(f"groups[{q!r}] must be a group name (a non-empty string), got {g!r}")
        if g == total:
            raise ValueError(
                f"groups puts {q!r} in a group named {g!r}, the name of the overall row (total={total!r}): "
                "rename that group, or pass another total= (or total=None for no overall row)"
            )
    table = res.per_query.groupby(res.per_query.index.map(groups)).mean()
    table.index.name = "group"
    if total is not None:
        table.loc[total] = res.mean
    return table


def evaluate_by_group(
    run: Any,
    qrels: Any,
    groups: Mapping[str, str],
    metrics: Iterable[str] = ("R@10", "nDCG@10"),
    thr: float = 1,
    idcg: str = "all_judged",
    total: str | None = "all",
) -> pd.DataFrame:
    """Mean of each metric per group of queries (e.g. per slice), plus an overall row named ``total``.

    ``groups``: ``{qid: group}`` for every judged query (a query with no group is an error, not
    silently dropped); group names are non-empty strings and none may be ``total``, whose row
    would overwrite it. Recall's NaNs (no relevant document) are left out of each mean.
    """
    groups = _check_groups(groups)
    if total is not None:
        args.text("total", total)
    return _by_group(_evaluate(run, qrels, metrics, thr, idcg), groups, total)


def compare_runs(
    runs: Mapping[str, Any],
    qrels: Any,
    groups: Mapping[str, str],
    metrics: Iterable[str] = ("R@10", "nDCG@10"),
    thr: float = 1,
    idcg: str = "all_judged",
) -> pd.DataFrame:
    """:func:`evaluate_by_group` for several named runs side by side.

    ``runs``: ``{name: run}``, names non-empty strings. ``metrics``: as for :func:`evaluate`
    (one string is one metric). Rows are groups (plus ``all``); columns are ``(metric, run name)``.
    """
    import pandas as pd

    if not isinstance(runs, Mapping) or not runs:
        raise ValueError(f"runs must be a non-empty dict {{name: run}}, got {type(runs).__name__} {runs!r:.60}")
    for name in runs:
        if not isinstance(name, str) or not name:
            raise ValueError(f"runs must be named by non-empty strings, got the name {name!r}")
    metrics = _metric_names(metrics)
    groups = _check_groups(groups)
    tables = {
        name: _by_group(_evaluate(run, qrels, metrics, thr, idcg, f"runs[{name!r}]"), groups, "all")
        for name, run in runs.items()
    }
    out = pd.concat(tables, axis=1).swaplevel(0, 1, axis=1)
    return out[[(m, name) for m in metrics for name in runs]]
