"""Does the position of the evidence in the context matter? A harness for "lost in the middle".

Taught in ``04_mrr_hit_rate_lost_in_the_middle``.

The experiment of Liu et al. ("Lost in the Middle: How Language Models Use Long
Contexts", TACL 2024, arXiv 2307.03172), rebuilt on the handbook: for each
question, put its gold chunk at position ``p`` among ``n_docs - 1`` distractors
(the retriever's best-ranked chunks that hold no gold evidence, in decreasing
relevance), hand the passages to a *reader*, and score whether the answer
contains the gold evidence. Accuracy by ``p`` is the curve.

A reader is any callable ``reader(question, passages) -> answer text``. Two
deterministic readers ship here as **controls, not as language models**:

- :class:`LexicalReader` answers with the passage sharing the most terms with
  the question: it has no notion of position, so its curve must be flat. A
  curve that is not flat would be a bug in the harness.
- :class:`TruncatingReader` does the same but only sees the first
  ``window_words`` words of the context, like a model whose context window
  cuts the prompt: a cliff, not a U.

Plug a language model in by passing a callable that prompts it with the
question and the numbered passages; :mod:`labkit.studies.position_study` runs the
chapter's study with one (closed-book and oracle baselines, a no-gold floor,
the "best at both ends" reordering, Wilson intervals).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from numbers import Real
from typing import Any

from labkit.core import args
from labkit.text.chunking import Chunk, chunks_by_doc
from labkit.text.words import jaccard

__all__ = ["LexicalReader", "TruncatingReader", "visible_passages", "build_contexts", "position_accuracy"]

Reader = Callable[[str, Sequence[str]], str]


def _check_passages(passages: Any) -> list[str]:
    items = args.sequence("passages", passages, example='["first passage", "second passage"]')
    for i, p in enumerate(items):
        if not isinstance(p, str):
            raise ValueError(f"passages[{i}] must be a string, got {type(p).__name__} {p!r:.60}")
    return items


class LexicalReader:
    """Answers with the passage of highest term overlap (Jaccard) with the question.

    Ties are broken by the passage text, never by position, so the reader is exactly position-blind.
    """

    name = "lexical (position-blind control)"

    def __call__(self, question: str, passages: Sequence[str]) -> str:
        args.text("question", question, allow_empty=True)
        passages = _check_passages(passages)
        if not passages:
            raise ValueError("passages is empty: the reader needs at least one passage")
        # texts, not term sets: jaccard keeps each text's terms, so a passage met again is not split again
        scores = [jaccard(question, p) for p in passages]
        return passages[max(range(len(passages)), key=lambda i: (scores[i], passages[i]))]


def visible_passages(passages: Sequence[str], window_words: int) -> list[str]:
    """The leading passages that fit whole in the first ``window_words`` words (words split on whitespace).

    What a reader whose context window holds ``window_words`` words gets to see: passages are taken in order
    while their running word count stays within the window; the first one that does not fit, and every later
    one, is cut. A first passage longer than the window leaves nothing visible (an empty list).
    """
    window_words = args.whole_number("window_words", window_words)
    passages = _check_passages(passages)
    visible, used = [], 0
    for p in passages:
        used += len(p.split())
        if used > window_words:
            break
        visible.append(p)
    return visible


class TruncatingReader(LexicalReader):
    """A :class:`LexicalReader` that only sees the passages that fit whole in its first ``window_words`` words.

    The visible passages are :func:`visible_passages`; with fewer passages it also faces fewer distractors.
    """

    def __init__(self, window_words: int = 1000):
        window_words = args.whole_number("window_words", window_words)
        self.window_words = window_words
        self.name = f"truncating at {window_words} words (control)"

    def __call__(self, question: str, passages: Sequence[str]) -> str:
        args.text("question", question, allow_empty=True)
        passages = _check_passages(passages)
        if not passages:
            raise ValueError("passages is empty: the reader needs at least one passage")
        visible = visible_passages(passages, self.window_words)
        if not visible:
            return ""
        return super().__call__(question, visible)


def build_contexts(
    queries: Iterable[Any],
    chunks: Sequence[Chunk],
    qrels: Mapping[str, Mapping[str, int]],
    run: Mapping[str, Sequence[str]],
    n_docs: int = 20,
) -> list[dict]:
    """For each query with a grade-3 chunk: its gold chunk and ``n_docs - 1`` distractors.

    Distractors are the query's best-ranked chunks in ``run`` that are not judged relevant at all
    (grade 0), in rank order, as in Liu et al. Queries without a grade-3 chunk or without enough
    distractors in the run are skipped (and counted by the caller). Each context also says where the
    retriever put its gold chunk: ``nonrelevant_above`` counts the grade-0 chunks ranked above it (all of the
    run's grade-0 chunks when the gold is not in the run), so among the gold and its first ``m`` distractors
    the retriever ranks the gold at ``min(1 + nonrelevant_above, m + 1)``.
    """

    n_docs = args.whole_number("n_docs", n_docs, minimum=2)
    queries = args.queries("queries", queries, example="labkit.data.corpus.load_queries()", gold=True)
    by_id = {c.id: c for doc_chunks in chunks_by_doc(chunks).values() for c in doc_chunks}
    qrels = args.by_id("qrels", qrels, example="spans_to_qrels(queries, chunks)")  # by qid as text, as in TREC
    run = args.by_id("run", run, example="make_run(retriever, queries, 60)")
    out = []
    for q in queries:
        judged = args.mapping(f"qrels[{q.qid!r}]", qrels.get(str(q.qid), {}))
        unknown = [cid for cid in judged if cid not in by_id]
        if unknown:
            raise ValueError(f"qrels[{q.qid!r}] judges chunk {unknown[0]!r}, which is not in chunks: same chunking?")
        gold = sorted((cid for cid, g in judged.items() if g >= 3), key=lambda cid: (by_id[cid].doc, by_id[cid].index))
        if not gold:
            continue
        ranked = args.ranking(f"run[{q.qid!r}]", run.get(str(q.qid), []))
        unknown = [cid for cid in ranked if cid not in by_id]
        if unknown:
            raise ValueError(f"run[{q.qid!r}] ranks chunk {unknown[0]!r}, which is not in chunks: same chunking?")
        distractors = [cid for cid in ranked if judged.get(cid, 0) == 0][: n_docs - 1]
        if len(distractors) < n_docs - 1:
            continue
        gold_spans = [s for s in q.gold if s.grade >= 3]
        above = ranked.index(gold[0]) if gold[0] in ranked else len(ranked)
        out.append(
            {
                "qid": q.qid,
                "question": q.search_text,
                "gold": by_id[gold[0]].text,
                "evidence": [s for s in gold_spans if by_id[gold[0]].doc == s.doc],
                "distractors": [by_id[c].text for c in distractors],
                "gold_id": gold[0],
                "distractor_ids": distractors,
                "nonrelevant_above": sum(judged.get(cid, 0) == 0 for cid in ranked[:above]),
            }
        )
    return out


def _correct(answer: str, context: dict, corpus_texts: Mapping[str, str]) -> bool:
    return any(corpus_texts[s.doc][s.start : s.end] in answer for s in context["evidence"])


def position_accuracy(
    contexts: Sequence[dict],
    reader: Reader,
    positions: Sequence[int],
    corpus_texts: Mapping[str, str],
) -> dict[int, float]:
    """Accuracy of ``reader`` when the gold passage sits at each 1-based position.

    An answer is correct when it contains a grade-3 gold span verbatim (a passage-returning
    reader is right when it returns a passage holding the evidence).
    """
    contexts = args.sequence("contexts", contexts, example="build_contexts(...)")
    if not contexts:
        raise ValueError("contexts is empty: build them with build_contexts(...)")
    for i, ctx in enumerate(contexts):
        if not isinstance(ctx, Mapping) or not {"question", "gold", "distractors", "evidence"} <= set(ctx):
            raise ValueError(f"contexts[{i}] must be a dict from build_contexts(...), got {ctx!r:.60}")
    n_docs = len(contexts[0]["distractors"]) + 1
    for i, ctx in enumerate(contexts):
        if len(ctx["distractors"]) + 1 != n_docs:
            raise ValueError(
                f"contexts[{i}] has {len(ctx['distractors'])} distractors, contexts[0] has {n_docs - 1}: "
                "a position means the same only if every context holds the same number of passages"
            )
    if not callable(reader):
        raise ValueError(f"reader must be a function reader(question, passages) -> answer, got {reader!r:.60}")
    args.mapping("corpus_texts", corpus_texts, example="{doc_id: doc.text for doc_id, doc in corpus.items()}")
    for ctx in contexts:
        for s in ctx["evidence"]:
            if s.doc not in corpus_texts:
                raise ValueError(f"corpus_texts has no document {s.doc!r} (evidence of {ctx.get('qid', '?')!r})")
    positions = args.sequence("positions", positions, example="[1, 5, 10]")
    if not positions:
        raise ValueError("positions is empty: give the 1-based positions to test, e.g. [1, 5, 10]")
    checked = []
    for p in positions:
        if (
            isinstance(p, bool)
            or not isinstance(p, Real)
            or not math.isfinite(p)
            or p != int(p)
            or not 1 <= p <= n_docs
        ):
            raise ValueError(f"position {p!r} must be a whole number from 1 to {n_docs}")
        checked.append(int(p))
    acc = {}
    for p in dict.fromkeys(checked):  # a repeated position is measured once
        right = 0
        for ctx in contexts:
            passages = list(ctx["distractors"])
            passages.insert(p - 1, ctx["gold"])
            answer = reader(ctx["question"], passages)
            if not isinstance(answer, str):
                raise ValueError(f"reader must return the answer as a string, got {type(answer).__name__}")
            right += _correct(answer, ctx, corpus_texts)
        acc[p] = right / len(contexts)
    return acc
