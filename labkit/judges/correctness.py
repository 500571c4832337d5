"""Is a generated answer right? Two rules against the authored reference answers (chapters 04, 07, 08, 09).

Faithfulness (chapter 06) asks whether an answer sticks to the passages the reader was *given*; correctness
asks whether it agrees with the *truth*: every labelled query has an authored reference answer and gold
evidence spans. Two rules, each with a known bias, so a chapter can print both and their agreement:

- **Reference number** (:func:`reference_check`, no model): the answer states the reference answer's *key
  number*, the first number of the reference that the question does not already contain (``"USD 230 per
  night."`` -> ``230``; ``"ERR-4031 means ..."`` asked about ERR-4031 -> the next number). Variant
  ``rule="all"`` wants every key number. Deterministic and free, but blind to words: ``"1 hour"`` for ``"60
  minutes"`` fails, and a wrong answer that happens to contain the number passes (a number copied from a
  distractor: chapter 04 measures that floor with the gold passage left out). A reference without any key
  number cannot be judged this way: the rule returns None and such questions are left out of its rates,
  never counted as failures.
- **Judge against the gold** (:func:`judged`): chapter 06's claim judge, unchanged (same prompt, schema and
  model), with the context replaced by :func:`gold_context`, the reference answer and the labelled gold spans
  verbatim. PASS when every claim of the answer is supported. It reads meaning, but it is the 1.5B judge
  whose TPR/TNR chapter 06 measured (on faithfulness labels: state them next to every pass rate it gives),
  and it fails a correct answer that adds a true detail from outside the gold spans. An answer that declines
  (``I don't know``) or is empty fails without a judge call.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from labkit.core import args
from labkit.core.files import path_arg, read_jsonl
from labkit.generation.reader import says_dont_know
from labkit.judges import faithfulness
from labkit.text.words import numbers

__all__ = ["key_numbers", "reference_check", "reference_rule", "gold_context", "judge_prompts", "judged",
           "judge_check", "read_answer_labels", "RULES", "ANSWER_LABELS"]  # fmt: skip

RULES = ("first", "all")


def key_numbers(reference: str, question: str = "") -> list[str]:
    """The numbers of ``reference`` that ``question`` does not contain, in order, each once."""
    reference = args.text("reference", reference)
    asked = set(numbers(args.text("question", question, allow_empty=True)))
    return [n for n in dict.fromkeys(numbers(reference)) if n not in asked]


def reference_check(answer: str, reference: str, question: str = "", rule: str = "first") -> bool | None:
    """True when ``answer`` states the reference's key number (``rule="first"``) or all of them (``"all"``).

    None when the reference has no key number: this rule cannot judge the answer.
    """
    answer = args.text("answer", answer, allow_empty=True)
    if rule not in RULES:
        raise ValueError(f"rule must be one of {RULES} ('first': the headline number; 'all': every one), got {rule!r}")
    keys = key_numbers(reference, question)
    if not keys:
        return None
    stated = set(numbers(answer))
    return keys[0] in stated if rule == "first" else all(k in stated for k in keys)


def _query(query: Any, name: str = "query") -> Any:
    for attr in ("qid", "answer", "search_text", "gold"):
        if not hasattr(query, attr):
            raise ValueError(f"{name} must be a Query from load_queries() (it needs .{attr}), got {query!r:.60}")
    return query


def reference_rule(rule: str = "first") -> Callable[[str, Any], bool | None]:
    """``check(answer, query)`` applying :func:`reference_check` with the query's reference and question."""
    if rule not in RULES:
        raise ValueError(f"rule must be one of {RULES}, got {rule!r}")

    def check(answer: str, query: Any) -> bool | None:
        q = _query(query)
        return reference_check(answer, q.answer, q.search_text, rule)

    check.__name__ = f"reference number ({rule})"
    return check


def gold_context(query: Any, corpus_texts: Mapping[str, str], min_grade: int = 2) -> str:
    """What the correctness judge reads: the reference answer, then the gold spans graded ``>= min_grade``.

    Spans are copied verbatim from the documents, in document order, each once.
    """
    q = _query(query)
    args.mapping("corpus_texts", corpus_texts, example="{doc_id: doc.text for doc_id, doc in corpus.items()}")
    min_grade = args.whole_number("min_grade", min_grade, minimum=1, maximum=3)
    spans = []
    for s in sorted((s for s in q.gold if s.grade >= min_grade), key=lambda s: (s.doc, s.start)):
        if s.doc not in corpus_texts:
            raise ValueError(f"corpus_texts has no document {s.doc!r} (gold of {q.qid!r})")
        spans.append(corpus_texts[s.doc][s.start : s.end].strip())
    block = "\n\n".join(dict.fromkeys(spans)) or "(no labelled span)"
    return f"Reference answer: {q.answer.strip()}\n\nFrom the handbook:\n{block}"


def _declines(answer: str) -> bool:

    return not answer.strip() or says_dont_know(answer)


def judge_prompts(answer: str, query: Any, corpus_texts: Mapping[str, str]) -> list[str]:
    """The judge prompts :func:`judged` sends for ``answer`` (none for a declined or empty answer)."""

    answer = args.text("answer", answer, allow_empty=True)
    if _declines(answer):
        return []
    context = gold_context(query, corpus_texts)
    return [faithfulness.judge_prompt(context, claim) for claim in faithfulness.split_claims(answer)]


def judged(answer: str, query: Any, corpus_texts: Mapping[str, str], judge: Callable) -> Any:
    """Chapter 06's :func:`labkit.judges.faithfulness.faithfulness` of ``answer`` against :func:`gold_context`.

    A declined or empty answer is ``FAIL`` with no claim judged (and no judge call).
    """

    answer = args.text("answer", answer, allow_empty=True)
    if not callable(judge):
        raise ValueError(
            "judge must be a function judge(context, claim) -> Verdict, e.g. faithfulness.model_judge(llm)"
        )
    if _declines(answer):
        return faithfulness.Faithfulness((), None, "FAIL", 0, ())
    return faithfulness.faithfulness(answer, gold_context(query, corpus_texts), judge)


def judge_check(judge: Callable, corpus_texts: Mapping[str, str]) -> Callable[[str, Any], bool]:
    """``check(answer, query)``: True when :func:`judged` says PASS (a judge ERROR counts as not passing)."""
    if not callable(judge):
        raise ValueError(
            "judge must be a function judge(context, claim) -> Verdict, e.g. faithfulness.model_judge(llm)"
        )
    args.mapping("corpus_texts", corpus_texts, example="{doc_id: doc.text for doc_id, doc in corpus.items()}")

    def check(answer: str, query: Any) -> bool:
        return judged(answer, query, corpus_texts, judge).status == "PASS"

    check.__name__ = f"judge against the gold ({getattr(judge, '__name__', 'judge')})"
    return check


ANSWER_LABELS = ("right", "partly", "wrong", "declined")


def read_answer_labels(path: str | Path, known: set[str]) -> dict[str, dict]:
    """``{qid: row}`` from a JSONL file of ``{"qid": ..., "label": ...}`` rows (more fields are kept): a label of
    :data:`ANSWER_LABELS` (the rubric of ``data/correctness/README.md``) for answers to the questions ``known``.
    Each qid once."""
    path = Path(path_arg("path", path))
    out = {}
    for n, row in read_jsonl(path, "answer labels file"):
        where = f"{path.name} line {n}"
        qid, label = row.get("qid"), row.get("label")
        if qid not in known:
            raise ValueError(f"{where}: unknown qid {qid!r}: use the qid of a question in the questions file")
        if label not in ANSWER_LABELS:
            raise ValueError(f"{where}: label {label!r} must be one of {ANSWER_LABELS}")
        if qid in out:
            raise ValueError(f"{where}: qid {qid!r} is labelled twice")
        out[qid] = row
    if not out:
        raise ValueError(f'{path} holds no label: one JSON object per line, e.g. {{"qid": "q1", "label": "right"}}')
    return out
