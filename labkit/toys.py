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


# ----------------------------------------------------------------------------- 7.2: synthetic hard questions

SYNTH_CHUNKS_VI = {
    "hr-12#3": "Nhân viên chính thức được làm remote tối đa 2 ngày mỗi tuần, "
    "đăng ký trên HRM trước 17h ngày làm việc liền trước.",
    "hr-12#4": "Nhân viên thử việc không được đăng ký làm remote, trừ khi giám đốc khối phê duyệt bằng email.",
    "it-03#1": "Khi làm remote, bắt buộc bật VPN công ty trước khi truy cập Jira và Git nội bộ.",
    "hr-07#2": "Ngày phép năm của nhân viên chính thức là 15 ngày, đăng ký trên HRM trước 3 ngày làm việc.",
}
SYNTH_CHUNKS_EN = {
    "hr-12#3": "Full-time employees may work remotely up to 2 days a week, registered in HRM before 17:00 on the "
    "previous working day.",
    "hr-12#4": "Employees on probation may not register for remote work unless their division director approves "
    "by email.",
    "it-03#1": "When working remotely, the company VPN must be on before accessing Jira and internal Git.",
    "hr-07#2": "Full-time employees have 15 days of annual leave, registered in HRM 3 working days in advance.",
}
SYNTH_SOURCE_REPLY_VI = {
    "question": "Muốn làm ở nhà thứ Sáu thì hạn chót đăng ký là khi nào?",
    "answer": "17h thứ Năm, trên HRM",
}
"""The source's canned model reply (a fixed stand-in, not a model): "To work from home on Friday, what is the
registration deadline?" — "17:00 Thursday, in HRM"."""
SYNTH_SOURCE_TARGET = "hr-12#3"
SYNTH_SOURCE_SIMILAR = ["hr-07#2", "hr-12#4"]
"""What the source prints for ``similar_chunks("hr-12#3", chunks)``."""
