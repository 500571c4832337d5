"""Fact-first question generation: one self-contained fact, then a question only that fact answers (section 7.5).

Taught in 02_synthetic_hard_questions.

Chapter 02's generator (:func:`labkit.generation.synth.generate_prompt`) asks for the question first and the
evidence sentence last, so the model picks the sentence after it has written the question, and the audit finds
many spans that do not answer their question. The source's remedy reverses the order: first copy ONE sentence of
the passage that states a fact on its own, then write a question that this sentence answers. The reply's JSON
schema lists ``fact`` first, so the constrained decoder makes the model write it first.

A row is kept or dropped by the same rules as chapter 02's (:func:`labkit.generation.synth._qa_row`: the quote
has at least four words and is found in the target chunk); the fact is the quote.
"""

from __future__ import annotations

import json
from typing import Any

from labkit.core import args
from labkit.generation import synth
from labkit.generation.llm import parse_json

__all__ = ["FACT_FIRST_PROMPT", "FACT_SCHEMA", "fact_first_prompt", "generate_fact_first", "N_FACT_FIRST"]

N_FACT_FIRST = 40
"""Targets given the fact-first prompt: the first 40 of chapter 02's seeded target order (all have an easy question)."""

FACT_FIRST_PROMPT = """Below is a passage from the internal handbook of Quillbridge Software.
Step 1: copy, word for word, ONE sentence of the passage that states a single fact on its own (a reader needs no
other sentence to understand it).
Step 2: write ONE question that an employee could ask and that this sentence alone answers.
Step 3: give the short answer, taken from that sentence.
Reply with JSON: {{"fact": "...", "question": "...", "answer": "..."}}

PASSAGE:
{passage}"""
FACT_SCHEMA = {
    "type": "object",
    "properties": {"fact": {"type": "string"}, "question": {"type": "string"}, "answer": {"type": "string"}},
    "required": ["fact", "question", "answer"],
}


def fact_first_prompt(passage: str) -> str:
    return FACT_FIRST_PROMPT.format(passage=args.text("passage", passage).strip())


def generate_fact_first(chunk: Any, document: str, llm: Any) -> dict | synth.Dropped:
    """One row (question, answer, quote = the fact, doc, start, end, target) from ``chunk`` of ``document``, or a
    :class:`labkit.generation.synth.Dropped` naming why it was dropped (chapter 02's rules)."""
    text = synth._chunk_text(chunk, document)
    reply = llm(fact_first_prompt(text), schema=FACT_SCHEMA, max_tokens=synth.QA_MAX_TOKENS)
    try:
        obj = parse_json(reply, ["fact", "question", "answer"])
    except ValueError as err:
        return synth.Dropped(chunk.id, f"malformed reply: {str(err)[:80]}", reply)
    as_qa = {"question": obj["question"], "answer": obj["answer"], "quote": obj["fact"]}
    return synth._qa_row(json.dumps(as_qa), chunk, document)
