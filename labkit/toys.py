"""The source chapter's toy inputs, written once and used by notebooks, exercises and tests.

Each toy names the section of the source it comes from. Where the source prints a model's output (its
judges are canned functions, not models), the toy keeps that output under a name that says so.
"""

from __future__ import annotations

# ----------------------------------------------------------------------------- 00: the model switch

WELCOME_PROMPT = (
    "In two sentences, explain to a new employee why a chatbot that answers from company documents should "
    "show which document each answer came from."
)

# ----------------------------------------------------------------------------- 7.8: faithfulness

FAITH_CONTEXT_VI = "Nhân viên chính thức có 15 ngày phép năm. Phép chưa dùng được chuyển sang quý 1 năm sau."
FAITH_CONTEXT_EN = (
    "Full-time employees have 15 days of annual leave. Unused leave carries over to the first quarter of the next year."
)
FAITH_ANSWER_VI = (
    "Bạn có 15 ngày phép năm. Phép chưa dùng được chuyển sang quý 1 năm sau. "
    "Nếu nghỉ việc, phép còn lại được trả bằng tiền."
)
FAITH_ANSWER_EN = (
    "You have 15 days of annual leave. Unused leave carries over to the first quarter of the next year. "
    "If you leave the company, remaining leave is paid out in cash."
)
FAITH_SOURCE_VERDICTS = ("supported", "supported", "unsupported")
"""What the source's canned judge printed for the three claims (a stand-in function, not a model)."""
FAITH_RELEVANCE_TERM_VI = "phép"
FAITH_RELEVANCE_TERM_EN = "leave"
FAITH_ALTERED_EN = "You have 20 days of annual leave."
"""A claim with the number changed: FIELD-NOTES measured the 1.5B judge calling this supported."""


def toy_claims() -> list[str]:
    """The English toy answer's three claims, then the altered one."""
    from labkit.faithfulness import split_claims

    return [*split_claims(FAITH_ANSWER_EN), FAITH_ALTERED_EN]
