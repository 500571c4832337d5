"""``--rerank``: the report's learned reranker, 04b's, over the hybrid's top :data:`K1`.

Used by :mod:`labkit.commands.entry` (``report --rerank``, ``judge --rerank``). The reranker is chapter 04b's
(:class:`labkit.retrieval.rerank.LambdaRanker`: LightGBM lambdarank over ten cheap features of each (question,
chunk) pair, :data:`labkit.retrieval.rerank.FEATURES`; seeded, one thread, deterministic). It reorders each
question's hybrid top :data:`K1` (04b's k1 for the learned reranker); the hybrid's ranks below ``K1`` follow
unchanged, so the run :data:`NAME` is as deep as the hybrid's. Where it learns from:

- **your dev questions**, when the questions file marks any ``"split": "dev"``: it is fitted on their hybrid top
  :data:`TRAIN_K1` and their graded qrels (your gold, and your judgements with ``--judgements``), as 04b fits it on
  the handbook's dev questions; it is then measured only on the questions *not* marked dev: the run holds no dev
  question, so no figure is ever given on a question it was trained on. It needs at least :data:`MIN_DEV` dev
  questions with gold, and some answerable question outside dev;
- **the handbook**, when no question is marked dev: the model 04b trains (:func:`labkit.studies.rerank_study.learned`,
  the handbook's dev questions on its 128/32-word chunks) is carried over unchanged and measured on every
  question: it was not trained on yours.

:func:`plan` is called where the arguments are checked (nothing embedded yet); :func:`run` makes the reranked run.
"""

from __future__ import annotations

from types import SimpleNamespace

from labkit.retrieval import rerank
from labkit.studies import rerank_study as rs

__all__ = ["plan", "run", "describe", "NAME", "K1", "TRAIN_K1", "MIN_DEV"]

NAME = "hybrid+rerank"
"""The reranked run's name in the report (its TREC file is ``run-hybrid+rerank.txt``)."""
K1 = rs.LTR_READER_K1
"""How many of the hybrid's candidates are reordered: 04b's k1 for the learned reranker (its knee: a deeper stage 1
changed no top 3 on the handbook)."""
TRAIN_K1 = rs.TRAIN_K1
"""How many of each dev question's hybrid candidates it is fitted on (04b's)."""
MIN_DEV = 10
"""Fewest dev questions with gold to train on: fewer give a model of a handful of questions' quirks."""
FIX = ('mark at least {n} answerable questions "split": "dev" to train the reranker on them (it is then measured on '
       'the others), or mark none "dev" to carry over the reranker trained on the handbook')  # fmt: skip


def plan(queries: list) -> SimpleNamespace:
    """Which reranker ``--rerank`` gives for these (checked) questions, refused when it cannot be trained:
    ``mode`` (``"dev"`` or ``"handbook"``), ``train`` (the dev questions with gold), ``measured`` (the qids the
    reranked run holds: every question but the dev ones), ``n_measured`` (of them, those with gold)."""
    dev = [q for q in queries if q.split == "dev"]
    if not dev:
        measured = [q.qid for q in queries]
        return SimpleNamespace(mode="handbook", train=[], measured=measured,
                               n_measured=sum(q.answerable for q in queries))  # fmt: skip
    train = [q for q in dev if q.answerable]
    if len(train) < MIN_DEV:
        raise ValueError(f'--rerank: {len(train)} question(s) marked "split": "dev" have gold; training the '
                         f"reranker on your questions needs at least {MIN_DEV}: " + FIX.format(n=MIN_DEV))  # fmt: skip
    measured = [q for q in queries if q.split != "dev"]
    if not any(q.answerable for q in measured):
        raise ValueError(f'--rerank: every question with gold is marked "split": "dev" ({len(train)}), so none is '
                         'left to measure the reranker on: mark some "split": "test" (never measure it on the '
                         "questions it was trained on)")  # fmt: skip
    return SimpleNamespace(mode="dev", train=train, measured=[q.qid for q in measured],
                           n_measured=sum(q.answerable for q in measured))  # fmt: skip


def describe(p: SimpleNamespace) -> str:
    """One sentence: what reranked, trained on what, measured on which questions."""
    head = f"{NAME}: the hybrid's top {K1} reordered by 04b's learned reranker (LightGBM lambdarank), "
    if p.mode == "dev":
        return head + (f'trained on your {len(p.train)} questions marked "split": "dev" (their hybrid top '
                       f"{TRAIN_K1}); measured only on the {p.n_measured} other answerable question(s), never on "
                       "those it was trained on")  # fmt: skip
    return head + ("carried over from the handbook, not trained on your questions (04b's model, fitted on the "
                   "handbook's dev questions, in 128/32-word chunks: a chunk's length is one of its features, so at "
                   "another --size it may rank worse than it would; mark dev questions to train it on yours); "
                   f"measured on all {p.n_measured} answerable questions")  # fmt: skip


def run(p: SimpleNamespace, s: SimpleNamespace, hybrid: dict[str, list[str]]) -> dict[str, list[str]]:
    """``{qid: ranked chunk ids}`` for the questions of ``p.measured`` that ``hybrid`` holds: the hybrid's top
    :data:`K1` reordered by the reranker ``p`` names (trained on ``p.train`` with the setting's qrels the first time,
    then kept as ``p.model``, or the handbook's), then the hybrid's lower ranks unchanged. ``s`` is the report's
    setting (its questions, as searched), ``hybrid`` the hybrid's run over them: a second call with the follow-ups
    as typed reorders them by the same model."""
    by_qid = {q.qid: q for q in s.queries}
    if getattr(p, "model", None) is None:
        p.model = rs.learned() if p.mode == "handbook" else _fit(p, s, hybrid)
    model = p.model
    held = [q for q in p.measured if q in hybrid]
    qids = [q for q in held if hybrid[q]]  # a question with nothing retrieved keeps its empty ranking
    rows, names = rerank.features([by_qid[q].search_text for q in qids], [hybrid[q][:K1] for q in qids], s)
    out = {q: [] for q in held}
    for q, r in zip(qids, rows, strict=True):
        out[q] = rerank.rerank(hybrid[q][:K1], model.scores(r, names)) + list(hybrid[q][K1:])
    return out


def _fit(p: SimpleNamespace, s: SimpleNamespace, hybrid: dict[str, list[str]]) -> rerank.LambdaRanker:
    train = [q for q in p.train if hybrid[q.qid]]
    grades = [[s.qrels.get(q.qid, {}).get(c, 0) for c in hybrid[q.qid][:TRAIN_K1]] for q in train]
    if not any(g for row in grades for g in row):
        raise ValueError(f"--rerank: no dev question has a relevant chunk in the hybrid's top {TRAIN_K1}, so there "
                         "is nothing to learn an order from: " + FIX.format(n=MIN_DEV))  # fmt: skip
    rows, names = rerank.features([q.search_text for q in train], [hybrid[q.qid][:TRAIN_K1] for q in train], s)
    return rerank.LambdaRanker().fit(rows, grades, names)
