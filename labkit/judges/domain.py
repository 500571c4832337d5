"""Staying in the domain: a model rates whether a question belongs to the help bot's domain (section 7.5).

Taught in 02_synthetic_hard_questions.

Chapter 02's realism rubric (:data:`labkit.generation.synth.REALISM_PROMPT`) rates how an employee would phrase a
question, not whether the question is one the handbook's help bot is for. This is that criterion alone, as a
yes/no judge, so it can be measured against labels known by construction
(:func:`labkit.studies.domain_data.domain_sample`): questions
written for the handbook are in the domain; questions written for another corpus the workbook ships (the Python
documentation's FAQ, chapter 10) are not.
"""

from __future__ import annotations

from typing import Any

from labkit.core import args
from labkit.generation.llm import parse_json

__all__ = ["DOMAIN_PROMPT", "DOMAIN_SCHEMA", "domain_prompt", "judge_domain"]

DOMAIN_PROMPT = """The internal help bot of Quillbridge Software answers employees' questions about the company: its
policies, HR, leave, pay, expenses and travel, IT systems and accounts, offices, security and the company's own
tools and procedures. Is the question below one this help bot is for? Judge the topic only, not how well the
question is written.
Reply with JSON: {{"in_domain": true | false}}

QUESTION: {question}"""
DOMAIN_SCHEMA = {"type": "object", "properties": {"in_domain": {"type": "boolean"}}, "required": ["in_domain"]}
DOMAIN_MAX_TOKENS = 20


def domain_prompt(question: str) -> str:
    return DOMAIN_PROMPT.format(question=args.text("question", question).strip())


def judge_domain(question: str, llm: Any) -> bool | None:
    """The model's verdict (True: in the domain), or None when its reply is malformed (count those)."""
    try:
        value = parse_json(llm(domain_prompt(question), schema=DOMAIN_SCHEMA, max_tokens=DOMAIN_MAX_TOKENS),
                           ["in_domain"])["in_domain"]  # fmt: skip
    except ValueError:
        return None
    return value if isinstance(value, bool) else None
