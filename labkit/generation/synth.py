"""Synthetic evaluation questions: generate, make hard with distractors, filter for realism (section 7.2).

Taught in 02_synthetic_hard_questions.

1. :func:`generate_qa` — a model writes one question, its answer and an evidence quote from one chunk; the
   quote is located in the *document* and stored as a character span (exact match first, then with white
   space and curly quotes normalised). A quote that cannot be found is a :class:`Dropped` row with its reason,
   never a guessed span.
2. :func:`similar_chunks` finds the chunks most like a target (word Jaccard, or embedding cosine), and
   :func:`hard_qa` asks for a question only the target answers that borrows the distractors' vocabulary.
3. :func:`rate_realism` rates questions 1–5 with a few-shot prompt built from rater-rated examples, and
   :func:`filter_realistic` keeps those at or above a threshold. A 1–5 scale is fine for culling; a system's
   error *rate* needs binary labels (chapter 06).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from labkit.core import args
from labkit.generation.llm import parse_json
from labkit.text.words import fold_with_offsets, jaccard

__all__ = [
    "Dropped",
    "locate_quote",
    "generate_prompt",
    "HANDBOOK",
    "generate_qa",
    "similar_chunks",
    "hard_prompt",
    "hard_qa",
    "build_hard_set",
    "realism_prompt",
    "rate_realism",
    "filter_realistic",
    "QA_SCHEMA",
    "RATING_SCHEMA",
]


@dataclass(frozen=True)
class Dropped:
    """A generated row that was not kept, and why (counted and shown, never silently lost)."""

    target: str
    reason: str
    reply: str = ""


_QUOTES = str.maketrans({"“": '"', "”": '"', "‘": "'", "’": "'", "–": "-", "—": "-"})


def _normalised(text: str) -> tuple[str, tuple[int, ...], tuple[int, ...]]:
    """``text`` folded (:func:`labkit.text.words.fold`: NFC, case folded) with white-space runs collapsed and curly
    quotes straightened, and for each character of the result the start and end offsets in ``text`` of the
    original characters it came from (an ``e`` + combining accent is one ``é`` that came from two)."""
    folded, starts, ends = fold_with_offsets(text)
    out, start, end = [], [], []
    prev_space = False
    for ch, a, b in zip(folded, starts, ends, strict=True):
        if ch in "*`":  # Markdown emphasis: models quote the words, not the asterisks
            continue
        if ch.isspace():
            if prev_space:
                continue
            out.append(" ")
            prev_space = True
        else:
            out.append(ch.translate(_QUOTES))
            prev_space = False
        start.append(a)
        end.append(b)
    return "".join(out), tuple(start), tuple(end)


@lru_cache(maxsize=64)
def _normalised_document(document: str) -> tuple[str, tuple[int, ...], tuple[int, ...]]:
    """:func:`_normalised`, kept for the last documents seen (not their quotes, which would push them out): every
    quote of a document is located in the same normalised text."""
    return _normalised(document)


def locate_quote(quote: str, document: str, within: tuple[int, int] | None = None) -> tuple[int, int] | None:
    """``(start, end)`` of ``quote`` in ``document`` (preferring the range ``within``), or None.

    Exact match first; then a match that ignores case, Unicode spelling (NFC or NFD), white-space runs, curly
    quotes and trailing punctuation of the quote, and Markdown's ``*``/backticks. The span returned always covers
    the document's own characters, whole: an accent typed as a combining mark is never cut off its letter.
    """
    quote = args.text("quote", quote).strip()
    document = args.text("document", document)
    lo, hi = within if within else (0, len(document))
    for a, b in ((lo, hi), (0, len(document))):
        i = document.find(quote, a, b)
        if i >= 0:
            return i, i + len(quote)
    q, _, _ = _normalised(quote.strip(" .,;:"))
    if not q.strip():
        return None
    d, start, end = _normalised_document(document)
    starts = [m.start() for m in re.finditer(re.escape(q), d)]
    if not starts:
        return None
    inside = [s for s in starts if lo <= start[s] < hi]
    s = (inside or starts)[0]
    return start[s], end[s + len(q) - 1]


QA_SCHEMA = {
    "type": "object",
    "properties": {"question": {"type": "string"}, "answer": {"type": "string"}, "quote": {"type": "string"}},
    "required": ["question", "answer", "quote"],
}
QA_MAX_TOKENS = 200
MIN_QUOTE_WORDS = 4

HANDBOOK = ("the internal handbook of Quillbridge Software", "an employee")
"""(where the passages come from, who asks): what the prompts say by default; another corpus names its own."""

GENERATE_PROMPT = """Below is a passage from {source}.
Write ONE question that {asker} could ask and that this passage answers, the short answer, and the exact
sentence of the passage that contains the answer (copied word for word).
Reply with JSON: {{"question": "...", "answer": "...", "quote": "..."}}

PASSAGE:
{passage}"""

HARD_PROMPT = """Below is a TARGET passage from the internal handbook of Quillbridge Software, and
DISTRACTOR passages that look similar but do not contain the answer.
Write ONE question that an employee could really ask, that ONLY the target passage answers, but that reuses some
keywords of the distractor passages. Do not copy sentences of the target passage. Give the short answer and the
exact sentence of the TARGET passage that contains it (copied word for word).
Reply with JSON: {{"question": "...", "answer": "...", "quote": "..."}}

TARGET:
{target}

DISTRACTORS:
{distractors}"""


def generate_prompt(passage: str, about: tuple[str, str] = HANDBOOK) -> str:
    """The prompt asking for one question about ``passage``; ``about`` is (where it comes from, who asks)."""
    source, asker = _about(about)
    return GENERATE_PROMPT.format(passage=args.text("passage", passage).strip(), source=source, asker=asker)


def _about(about: tuple[str, str]) -> tuple[str, str]:
    if not (
        isinstance(about, tuple | list) and len(about) == 2 and all(isinstance(a, str) and a.strip() for a in about)
    ):
        raise ValueError(f"about must be (source, asker), e.g. ('the Python documentation', 'a programmer'), got "
                         f"{about!r:.80}")  # fmt: skip
    return about[0].strip(), about[1].strip()


def hard_prompt(target: str, distractors: Sequence[str]) -> str:
    distractors = args.strings("distractors", distractors, allow_empty=False)
    return HARD_PROMPT.format(target=args.text("target", target).strip(), distractors="\n---\n".join(distractors))


def _qa_row(reply: str, chunk: Any, document: str) -> dict | Dropped:

    try:
        obj = parse_json(reply, ["question", "answer", "quote"])
    except ValueError as err:
        return Dropped(chunk.id, f"malformed reply: {str(err)[:80]}", reply)
    fields = {k: obj[k].strip() if isinstance(obj[k], str) else "" for k in ("question", "answer", "quote")}
    empty = [k for k, v in fields.items() if not v]
    if empty:
        return Dropped(chunk.id, f"empty {empty[0]}", reply)
    if len(fields["quote"].split()) < MIN_QUOTE_WORDS:
        return Dropped(chunk.id, f"quote shorter than {MIN_QUOTE_WORDS} words: not evidence", reply)
    span = locate_quote(fields["quote"], document, (chunk.start_char, chunk.end_char))
    if span is None:
        return Dropped(chunk.id, "quote not found in the document", reply)
    if not (chunk.start_char <= span[0] and span[1] <= chunk.end_char):
        return Dropped(chunk.id, "quote found outside the target chunk", reply)
    return {**fields, "doc": chunk.doc, "start": span[0], "end": span[1], "target": chunk.id}


def generate_qa(chunk: Any, document: str, llm: Any, about: tuple[str, str] = HANDBOOK) -> dict | Dropped:
    """One question/answer/evidence-span row from ``chunk`` (a :class:`labkit.text.chunking.Chunk` of ``document``);
    ``about`` as in :func:`generate_prompt`."""
    reply = llm(generate_prompt(_chunk_text(chunk, document), about), schema=QA_SCHEMA, max_tokens=QA_MAX_TOKENS)
    return _qa_row(reply, chunk, document)


def _chunk_text(chunk: Any, document: str) -> str:
    if not all(hasattr(chunk, a) for a in ("id", "start_char", "end_char")):
        raise ValueError(f"chunk must be a Chunk (from chunk_corpus), got {type(chunk).__name__} {chunk!r:.60}")
    document = args.text("document", document)
    text = document[chunk.start_char : chunk.end_char]
    if not text.strip():
        raise ValueError(f"chunk {chunk.id!r} is empty: nothing to write a question from")
    return text


def similar_chunks(
    target: str,
    chunks: Mapping[str, str],
    n: int = 2,
    by: str = "jaccard",
    vectors: Mapping[str, Any] | None = None,
) -> list[str]:
    """The ``n`` chunk ids most similar to ``target`` (never the target itself), most similar first.

    ``by="jaccard"``: word-set overlap of the texts (the source's stand-in for an embedding search);
    ``by="embedding"``: cosine of ``vectors[id]`` (unit vectors, e.g. ``labkit.retrieval.embeddings``). Ties break by
    id.
    """
    args.mapping("chunks", chunks)
    target = args.text("target", target)
    if target not in chunks:
        raise ValueError(f"target {target!r} is not a chunk id of chunks (e.g. {next(iter(chunks), '?')!r})")
    n = args.whole_number("n", n, maximum=max(1, len(chunks) - 1), hint="there are not that many other chunks")
    if by == "jaccard":
        scores = {cid: jaccard(chunks[target], text) for cid, text in chunks.items() if cid != target}
    elif by == "embedding":
        import numpy as np

        if vectors is None:
            raise ValueError('by="embedding" needs vectors={chunk id: unit vector}')
        missing = [cid for cid in chunks if cid not in vectors]
        if missing:
            raise ValueError(f"vectors has no vector for chunk {missing[0]!r}")
        t = np.asarray(vectors[target], dtype=float)
        scores = {cid: float(np.dot(t, np.asarray(vectors[cid], dtype=float))) for cid in chunks if cid != target}
    else:
        raise ValueError(f'by must be "jaccard" or "embedding", got {by!r}')
    return [cid for cid, _ in sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:n]]


def hard_qa(chunk: Any, document: str, distractors: Sequence[Any], corpus_texts: Mapping[str, str], llm: Any):
    """A hard row: the target chunk plus distractor chunks in the prompt; ``distractors`` kept as spans."""
    distractors = args.sequence("distractors", distractors, allow_empty=False, example="[chunk, chunk]")
    args.mapping("corpus_texts", corpus_texts, example="{doc_id: doc.text}")
    missing = [d for d in distractors if getattr(d, "doc", None) not in corpus_texts]
    if missing:
        raise ValueError(f"corpus_texts has no document for distractor {missing[0]!r:.60}: pass every document")
    d_texts = [_chunk_text(d, corpus_texts[d.doc]) for d in distractors]
    prompt = hard_prompt(_chunk_text(chunk, document), d_texts)
    row = _qa_row(llm(prompt, schema=QA_SCHEMA, max_tokens=QA_MAX_TOKENS), chunk, document)
    if isinstance(row, Dropped):
        return row
    row["distractors"] = [{"doc": d.doc, "start": d.start_char, "end": d.end_char, "chunk": d.id} for d in distractors]
    return row


def build_hard_set(
    targets: Sequence[Any],
    corpus_texts: Mapping[str, str],
    llm: Any,
    distractors: Callable[[Any], Sequence[Any]],
) -> tuple[list[dict], list[Dropped]]:
    """``(rows, dropped)``: one hard row per target chunk, each kept with its distractors as spans.

    ``distractors(target)`` returns the look-alike chunks for a target (for instance the :func:`similar_chunks`
    of the target from other documents); ``corpus_texts`` maps a document id to its text. A reply that cannot be
    used becomes a :class:`Dropped` row with its reason: counted, never silently lost, never a guessed span.
    """
    targets = args.sequence("targets", targets, allow_empty=False)
    rows: list[dict] = []
    dropped: list[Dropped] = []
    for t in targets:
        if t.doc not in corpus_texts:
            raise ValueError(f"target {t.id!r} is in document {t.doc!r}, which corpus_texts does not hold")
        ds = list(distractors(t))
        if not ds:
            raise ValueError(f"distractors({t.id!r}) returned no chunk: a hard question needs look-alikes")
        if any(d.id == t.id for d in ds):
            raise ValueError(f"distractors({t.id!r}) returned the target itself: it would contain the answer")
        row = hard_qa(t, corpus_texts[t.doc], ds, corpus_texts, llm)
        (dropped if isinstance(row, Dropped) else rows).append(row)
    return rows, dropped


RATING_SCHEMA = {
    "type": "object",
    "properties": {"rating": {"type": "integer", "minimum": 1, "maximum": 5}},
    "required": ["rating"],
}

REALISM_PROMPT = """You rate how realistic a question to a company's internal help bot is, from 1 to 5:
5 = exactly what an employee would type (natural, their own situation, may be short, informal, with typos);
4 = natural but slightly polished; 3 = plausible but reads like a paraphrase of the document;
2 = unnatural: exam-style, quotes the document, or asks what no employee would ask;
1 = not a usable question (answer inside it, refers to "the passage", several questions at once, nonsense).
Rate realism only, not difficulty or correctness.

Examples:
{examples}

Reply with JSON: {{"rating": <1-5>}}
QUESTION: {question}"""


def realism_prompt(question: str, examples: Sequence[Mapping[str, Any]]) -> str:
    """The few-shot rating prompt: the rubric, the rater-rated ``examples`` (question, rating), the question."""
    question = args.text("question", question)
    examples = args.sequence("examples", examples, allow_empty=False)
    lines = []
    for i, ex in enumerate(examples):
        if not isinstance(ex, Mapping) or "question" not in ex or "rating" not in ex:
            raise ValueError(f"examples[{i}] needs a question and a rating")
        rating = args.whole_number(f"examples[{i}]['rating']", ex["rating"], minimum=1, maximum=5)
        lines.append(f"QUESTION: {ex['question']}\nRATING: {rating}")
    return REALISM_PROMPT.format(examples="\n\n".join(lines), question=question.strip())


def rate_realism(questions: Sequence[str], llm: Any, examples: Sequence[Mapping[str, Any]]) -> list[int | None]:
    """The model's 1–5 realism rating of each question (None where its reply could not be read)."""

    questions = args.strings("questions", questions)
    out: list[int | None] = []
    for q in questions:
        try:
            r = parse_json(llm(realism_prompt(q, examples), schema=RATING_SCHEMA, max_tokens=20), ["rating"])["rating"]
        except ValueError:
            out.append(None)
            continue
        out.append(r if isinstance(r, int) and not isinstance(r, bool) and 1 <= r <= 5 else None)
    return out


def filter_realistic(rows: Sequence[Mapping[str, Any]], threshold: float, key: str = "realism") -> tuple[list, list]:
    """``(kept, dropped)``: rows whose ``key`` rating is at least ``threshold``; unrated rows are dropped."""
    threshold = args.finite_number("threshold", threshold, minimum=1, maximum=5, hint="ratings run from 1 to 5")
    rows = args.sequence("rows", rows)
    kept, dropped = [], []
    for row in rows:
        r = row.get(key)
        (kept if r is not None and r >= threshold else dropped).append(row)
    return kept, dropped
