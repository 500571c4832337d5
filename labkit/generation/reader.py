"""The generator of the RAG pipeline: a language model that reads the retrieved passages and answers.

Taught in 06_faithfulness. Two prompts, because the prompt is where grounding is fixed (section 7.8):

- ``lenient``: "answer the question using the passages" — the model may fill gaps from what it already knows;
- ``strict``: "use only the passages; if they do not contain the answer, say you don't know".

Chapter 07 tries two more as rounds of prompt fixes: ``cite`` (quote the evidence, then answer) and ``careful``
(copy numbers and names exactly).

:func:`llm_reader` turns a client (``labkit.generation.llm.from_env()``) into ``reader(question, passages) -> answer``,
the
signature the triage and position harnesses take, so the model and the extractive control reader are
interchangeable. Given no passages at all, that reader answers *closed-book* (:func:`closed_book_prompt`): the
baseline of chapter 04's position study, what the model knows without retrieval.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from labkit.core import args
from labkit.text.words import fold

__all__ = ["PROMPTS", "HEAD", "DONT_KNOW", "reader_prompt", "closed_book_prompt", "llm_reader", "says_dont_know"]

DONT_KNOW = "I don't know."

HEAD = "You are the internal help bot of Quillbridge Software. An employee asked a question. "
PROMPTS = {
    "lenient": HEAD + "Answer it using the passages below, in one to three short sentences.\n\n{passages}\n\n"
    "Question: {question}\nAnswer:",
    "strict": HEAD + "Answer it using ONLY the passages below, in one to three short sentences. Do not use "
    "anything you know from elsewhere. If the passages do not contain the answer, reply exactly: "
    f"{DONT_KNOW}\n\n{{passages}}\n\nQuestion: {{question}}\nAnswer:",
}
PROMPTS["cite"] = HEAD + (
    "First copy, word for word and in quotes, the sentence of the passages below that answers the question; then "
    "answer it in one short sentence.\n\n{passages}\n\nQuestion: {question}\nAnswer:"
)
PROMPTS["careful"] = HEAD + (
    "Read every passage below before answering. Copy numbers, names, codes and dates exactly as the passages "
    "write them, and answer in one to three short sentences.\n\n{passages}\n\nQuestion: {question}\nAnswer:"
)
"""Two more rounds of the prompt fixes of chapter 07 (after ``strict``): quote the evidence first; copy exactly."""
CLOSED_BOOK = HEAD + "Answer it in one to three short sentences.\n\nQuestion: {question}\nAnswer:"
MAX_TOKENS = 160


def reader_prompt(question: str, passages: Sequence[str], prompt: str = "lenient", head: str | None = None) -> str:
    """The prompt the reader sends: numbered passages, then the question. ``head`` replaces the first sentences
    (the handbook's bot, :data:`HEAD`) for another corpus, e.g. "You are a help bot for the Python
    documentation. A programmer asked a question. "."""
    args.text("question", question)
    passages = args.sequence("passages", passages, allow_empty=False, example='["first passage", "second"]')
    for i, p in enumerate(passages):
        args.text(f"passages[{i}]", p)
    if prompt not in PROMPTS:
        raise ValueError(f"prompt must be one of {sorted(PROMPTS)}, got {prompt!r}")
    block = "\n\n".join(f"[{i}] {p.strip()}" for i, p in enumerate(passages, start=1))
    template = PROMPTS[prompt] if head is None else _head(head) + PROMPTS[prompt][len(HEAD) :]
    return template.format(passages=block, question=question.strip())


def _head(head: str) -> str:
    head = args.text("head", head).strip()
    if "{" in head or "}" in head:
        raise ValueError(f"head must be plain sentences without braces, got {head!r:.80}")
    return head + " "


def closed_book_prompt(question: str) -> str:
    """The prompt with no passages: the same bot and question, answered from what the model already knows."""
    return CLOSED_BOOK.format(question=args.text("question", question).strip())


def llm_reader(llm: Any, prompt: str = "lenient", head: str | None = None) -> Callable[[str, Sequence[str]], str]:
    """``reader(question, passages) -> answer`` backed by ``llm`` (any labkit.generation.llm client).

    An empty ``passages`` asks the closed-book prompt (:func:`closed_book_prompt`), whatever ``prompt`` says.
    """
    if not callable(llm):
        raise ValueError(
            f"llm must be a labkit.generation.llm client such as labkit.generation.llm.from_env(), got {llm!r:.60}"
        )
    if prompt not in PROMPTS:
        raise ValueError(f"prompt must be one of {sorted(PROMPTS)}, got {prompt!r}")

    def reader(question: str, passages: Sequence[str]) -> str:
        if isinstance(passages, list | tuple) and not passages:
            return llm(closed_book_prompt(question), max_tokens=MAX_TOKENS).strip()
        return llm(reader_prompt(question, passages, prompt, head), max_tokens=MAX_TOKENS).strip()

    reader.__name__ = f"llm_reader[{getattr(llm, 'model', '?')}, {prompt}]"
    return reader


def says_dont_know(answer: str) -> bool:
    """True when the answer declines (``I don't know`` and close variants)."""
    a = fold(args.text("answer", answer, allow_empty=True)).strip().replace("’", "'")
    return a.startswith(("i don't know", "i do not know", "i dont know")) or "passages do not contain" in a
