"""The source chapter's toy inputs, written once and used by notebooks, exercises and tests.

Each toy names the section of the source it comes from. Where the source prints a model's output (its
judges are canned functions, not models), the toy keeps that output under a name that says so.

They are shared by every importer: treat them as constants, and copy one before you edit it.
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
FAITH_CLAIMS_EN = (
    "You have 15 days of annual leave.",
    "Unused leave carries over to the first quarter of the next year.",
    "If you leave the company, remaining leave is paid out in cash.",
)
"""The English toy answer's three claims, one sentence each (a test checks that ``split_claims`` finds them)."""
FAITH_ANSWER_EN = " ".join(FAITH_CLAIMS_EN)
FAITH_SOURCE_VERDICTS = ("supported", "supported", "unsupported")
"""What the source's canned judge printed for the three claims (a stand-in function, not a model)."""
FAITH_RELEVANCE_TERM_VI = "phép"
FAITH_RELEVANCE_TERM_EN = "leave"
FAITH_ALTERED_EN = "You have 20 days of annual leave."
"""A claim with the number changed (the context says 15 days): chapter 06 asks the judges about it."""


TOY_CLAIMS = (*FAITH_CLAIMS_EN, FAITH_ALTERED_EN)
"""The English toy answer's three claims, then the altered one: what chapter 06 sends each judge."""


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

# ----------------------------------------------------------------------------- 7.1: RRF on two toy rankings (01)

RRF_BM25 = ["D7", "D2", "D9", "D4", "D1"]
"""BM25's top 5 for the source's query: it matched the exact error code "ERR-4031"."""
RRF_DENSE = ["D4", "D3", "D7", "D8", "D2"]
"""Dense retrieval's top 5 for the same query: it matched the meaning "can't log in to the VPN"."""

# ----------------------------------------------------------------------------- 7.3, 7.5, 7.6: grades by hand (03)

RUNNING_GRADES = [0, 2, 0, 3, 1]
"""The running example: grades (0-3) of the documents at ranks 1..5 for one query."""
RUNNING_UNRETRIEVED = [2]
"""The running example's fourth relevant document (grade 2), judged but ranked 8th, outside the top 5."""
TRAP_X = [1, 1, 1, 0, 0]
"""The X/Y trap, system X: three mildly related documents on top."""
TRAP_Y = [0, 0, 0, 3, 0]
"""The X/Y trap, system Y: the one document that answers, buried at rank 4."""
TRAP_JUDGED = [3, 1, 1, 1]
"""Every judged grade of the X/Y query (the grade-3 answer and the three related documents)."""
SALARY_GRADES = {"this year's salary survey": 3, "a labour-market overview": 1, "a public-holiday notice": 0}
"""7.5's graded example, for "Summarise this year's salary trends in the data industry": document -> grade."""

# ----------------------------------------------------------------------------- 7.4: MRR and hit rate (04)

MRR_TOY = {
    "q1": [0, 0, 3, 0, 1],  # first relevant at rank 3
    "q2": [2, 0, 0, 0, 0],  # rank 1
    "q3": [0, 0, 0, 0, 0],  # none in the top 5
    "q4": [0, 1, 0, 0, 0],  # rank 2
}
"""Four queries, each the grades of its top 5 (relevant = grade >= 1)."""

# ----------------------------------------------------------------------------- 7.1, 7.6: the rerank stage (04b)

RERANK_CANDIDATES = ["D1", "D2", "D3", "D4", "D5", "D6", "D7", "D8"]
"""Stage 1's top 8 for one question, best first (made up for the workbook; the source draws the stages only)."""
RERANK_GRADES = {"D2": 2, "D5": 3, "D7": 1}
"""The graded qrels of that question: every other candidate is grade 0."""
RERANK_SCORES = [0.2, 0.7, 0.1, 0.3, 0.9, 0.05, 0.4, 0.3]
"""A reranker's score for each candidate, in stage 1's order (D4 and D8 tie)."""

# ----------------------------------------------------------------------------- 7.7: split rate (05)

SPLIT_GOLD = [(1000, 240, 40), (1000, 500, 60), (800, 120, 30), (1200, 760, 90),
              (600, 250, 20), (900, 380, 70), (1500, 1010, 50), (700, 60, 25)]  # fmt: skip
"""The source's made-up gold set: (document length, answer start, answer length) in tokens, answers placed near
chunk boundaries on purpose."""

# ----------------------------------------------------------------------------- 7.9: triage (07)

TRIAGE_TRACES = [
    {"gold": ["hr-07#2"], "retrieved": ["hr-07#2", "hr-07#5"], "answer_pass": False},
    {"gold": ["adm-04#1"], "retrieved": ["it-09#3", "hr-02#1"], "answer_pass": False},
    {"gold": ["it-03#1"], "retrieved": ["hr-12#3", "hr-12#4"], "answer_pass": True},
    {"gold": ["fin-02#3"], "retrieved": ["fin-02#3", "fin-02#1"], "answer_pass": True},
]
"""The source's four traces: one in each cell of the 2x2 (GEN_FAIL, RET_FAIL, LUCKY, OK)."""

# ----------------------------------------------------------------------------- 7.13: a router as a retriever (09)

ROUTER_COST = {"nano": 0.1, "mini": 0.4, "mid": 1.5, "large": 5.0, "xl": 15.0}
"""$ per 1M tokens (made up, as in the source)."""
ROUTER_PASS = {
    "r1 summarise email": {"nano", "mini", "mid", "large", "xl"},
    "r2 SQL 3-table join": {"mid", "large", "xl"},
    "r3 RAG 80k-token context": {"large", "xl"},
    "r4 intent classification": {"mini", "mid", "large", "xl"},
}
"""Which models pass each request (offline labels, made up)."""
ROUTER_RANKING = {
    "r1 summarise email": ["mini", "nano", "mid", "large", "xl"],
    "r2 SQL 3-table join": ["mini", "mid", "large", "xl", "nano"],
    "r3 RAG 80k-token context": ["xl", "large", "mid", "mini", "nano"],
    "r4 intent classification": ["mini", "mid", "nano", "large", "xl"],
}
"""The router's ranking per request: call the first model, fall back to the next on failure."""
ROUTER_WINDOW = {"nano": 1024, "mini": 2048, "mid": 4096, "large": 16384, "xl": 131072}
"""Context windows in tokens (made up, scaled to the handbook's short prompts; not the source's)."""
