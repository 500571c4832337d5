"""A model as the query-rewriting step of a conversation (section 7.12's "forgetting the query-rewriting step").

Taught in 08_case_study.

In a conversation the user's follow-up ("which one fits 8 ppl w video") means nothing on its own. A rewriting
step turns the turns before it and the follow-up into one standalone search query; the retriever then searches
with that query. :func:`rewrite_prompt` is the prompt, :func:`rewrite` asks a model (any callable with the
``llm(prompt, schema=..., max_tokens=...)`` signature, such as a recorded ``Replay``) and returns its query, or
``None`` when the reply cannot be read (count those: a failed rewrite is a failure of the step).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from labkit.core import args
from labkit.generation.llm import parse_json

__all__ = ["REWRITE_PROMPT", "REWRITE_SCHEMA", "REWRITE_MAX_TOKENS", "rewrite_prompt", "rewrite"]

REWRITE_PROMPT = """You turn the last message of a conversation with the internal help bot of Quillbridge Software
into ONE standalone search query. The query must make sense without the conversation: replace words such as
"it", "there", "that one" or "also" by what they refer to in the earlier messages, and keep every part of what
the user asks. Keep the user's meaning; add no facts and no answer.
Reply with JSON: {{"query": "..."}}

EARLIER MESSAGES FROM THE USER:
{history}

LAST MESSAGE: {follow_up}"""
REWRITE_SCHEMA = {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}
REWRITE_MAX_TOKENS = 80


def rewrite_prompt(history: Sequence[str], follow_up: str) -> str:
    """The rewriting prompt for the user's earlier ``history`` (oldest first) and the ``follow_up`` as typed."""
    turns = args.strings("history", history, allow_empty=False, example='["can i go into the hanoi office on sat"]')
    follow_up = args.text("follow_up", follow_up).strip()
    return REWRITE_PROMPT.format(history="\n".join(f"- {t.strip()}" for t in turns), follow_up=follow_up)


def rewrite(history: Sequence[str], follow_up: str, llm: Any) -> str | None:
    """The model's standalone query for ``follow_up`` after ``history``; None when its reply is malformed or empty."""
    reply = llm(rewrite_prompt(history, follow_up), schema=REWRITE_SCHEMA, max_tokens=REWRITE_MAX_TOKENS)
    try:
        query = parse_json(reply, ["query"])["query"]
    except ValueError:
        return None
    return query.strip() if isinstance(query, str) and query.strip() else None
