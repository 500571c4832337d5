"""A language model as a pointwise reranker: how likely it says "yes, this passage answers the question" (04b).

A cross-encoder reads the query and the passage together and returns one relevance score; no PyPI package
ships cross-encoder weights that run without torch (data/llm/README.md says what was searched), so stage 2's
model reranker is the workbook's local model used the same way: one request per (question, passage) with the
question first, asking for one word, yes or no, and returning the log-probabilities of the first token
instead of the word. The score is the log-odds

    score = log P(yes) - log P(no)

summing every spelling of each word among the 20 most likely first tokens ("Yes", "yes", " yes", ...). This
is the pointwise "yes/no" relevance of Nogueira et al. 2020 (monoT5: the probability of the token "true") and
of Zhuang et al. 2023 ("Beyond Yes and No", SIGIR), applied to a chat model with no fine-tuning. A word missing
from the 20 is given the 20th token's log-probability, the most it can have, so the score is then a bound
(:func:`yes_no_score` says when).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from labkit.core import args
from labkit.generation.llm.lines import MAX_LOGPROBS, read_logprobs
from labkit.generation.llm.usage import LEDGER

__all__ = ["PROMPT", "TOP_LOGPROBS", "prompt", "yes_no_score", "Scored", "ModelReranker"]

PROMPT = (
    "You rank passages of the Quillbridge Software employee handbook for a search engine.\n\n"
    "Question: {question}\n\n"
    "Passage:\n{passage}\n\n"
    "Does the passage contain the information needed to answer the question? Answer with one word: yes or no."
)
"""The question comes before the passage, so the requests for one question share their start (llama.cpp reuses
it: a question's 20 passages cost little more than the passages)."""

TOP_LOGPROBS = MAX_LOGPROBS
_HOW = {"replay": "replayed", "record": "recorded"}  # how the usage table counts a call, by the client's mode
YES, NO = "yes", "no"


def prompt(question: str, passage: str) -> str:
    """The request for one (question, passage) pair."""
    return PROMPT.format(
        question=args.text("question", question).strip(), passage=args.text("passage", passage).strip()
    )


@dataclass(frozen=True)
class Scored:
    """One pair's score and what the model's first-token distribution held."""

    score: float  # log P(yes) - log P(no)
    p_yes: float  # P(yes) / (P(yes) + P(no)), the same order as score
    bounded: bool  # yes or no was not among the top tokens: the score is a bound, not a value


def _logsumexp(values: list[float]) -> float:
    top = max(values)
    return top + math.log(sum(math.exp(v - top) for v in values))


def yes_no_score(response: str, where: str = "the response") -> Scored:
    """The log-odds of yes over no in a recorded ``top_logprobs`` response (see the module's docstring)."""
    pairs = read_logprobs(response, where)
    floor = min(lp for _, lp in pairs)
    yes = [lp for t, lp in pairs if t.strip().lower() == YES]
    no = [lp for t, lp in pairs if t.strip().lower() == NO]
    ly = _logsumexp(yes) if yes else floor
    ln = _logsumexp(no) if no else floor
    score = ly - ln
    return Scored(score, 1.0 / (1.0 + math.exp(-score)), not (yes and no))


class ModelReranker:
    """``reranker(question, passages) -> scores``: one model request per passage, replayed or recorded like every
    other request (``llm`` is any labkit.generation.llm client). ``.calls`` keeps each request's tokens and seconds."""

    def __init__(self, llm: Callable):
        if not callable(getattr(llm, "complete", None)) or not isinstance(getattr(llm, "model", None), str):
            raise ValueError(
                f"llm must be a labkit.generation.llm client (llm.from_env(), llm.Replay(model)); got {llm!r:.60}"
            )
        self.llm = llm
        self.name = llm.model
        self.calls: list[tuple[int | None, float | None]] = []  # (prompt tokens, seconds) per request

    def __repr__(self) -> str:
        return f"ModelReranker({self.name!r}, calls={len(self.calls)})"

    def scored(self, question: str, passages: Sequence[str]) -> list[Scored]:
        passages = args.strings("passages", passages, allow_empty=False, example='["a passage", "another"]')
        out = []
        for i, passage in enumerate(passages):
            done = self.llm.complete(prompt(question, passage), max_tokens=1, top_logprobs=TOP_LOGPROBS)
            self.calls.append((done.prompt_tokens, done.seconds))
            LEDGER.add(self.name, _HOW.get(getattr(self.llm, "mode", ""), "live"), done)
            out.append(yes_no_score(done.text, f"{self.name}'s reply for passage {i} of {question[:40]!r}"))
        return out

    def __call__(self, question: str, passages: Sequence[str]) -> list[float]:
        return [s.score for s in self.scored(question, passages)]
