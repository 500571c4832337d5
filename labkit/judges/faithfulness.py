"""Faithfulness and relevance of a generated answer, judged claim by claim (section 7.8).

Taught in 06_faithfulness.

- :func:`split_claims` cuts an answer into one claim per sentence (the source's simple rule);
  :func:`atomic_claims` asks a model for atomic claims instead, to compare.
- :func:`judge_claim` asks a model whether the context *supports*, *contradicts* or does not settle
  (*unsupported*) one claim, with an evidence quote. ``guard=True`` checks that the quote really occurs in the
  context and overrules a "supported" whose evidence is not there.
- :func:`lexical_judge` is a baseline with no model: supported when every number and most content words of the
  claim occur in the context.
- :func:`faithfulness` gives the continuous score (share of supported claims; for debugging) and the binary
  PASS/FAIL (every claim supported; for reporting rates). A claim the judge could not judge (a malformed reply,
  an unknown verdict) is counted in ``n_errors`` and makes the answer ``ERROR``, never NaN.
- :func:`mentions_entity` is the cheap relevance check in code; :func:`judge_relevance` asks a model.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from labkit.core import args
from labkit.generation.llm import parse_json
from labkit.text.words import fold

__all__ = [
    "VERDICTS",
    "Verdict",
    "Faithfulness",
    "split_claims",
    "judge_prompt",
    "judge_claim",
    "judges_from",
    "model_judge",
    "lexical_judge",
    "quote_in_context",
    "faithfulness",
    "mentions_entity",
    "relevance_prompt",
    "judge_relevance",
    "atomic_claims",
    "always_supported",
]

VERDICTS = ("supported", "unsupported", "contradicted")
MAX_PROMPT_CHARS = 12_000  # ~3,000 tokens at ~4 characters a token: leaves room in a 4,096-token window

JUDGE_PROMPT = """You check whether one claim from a chatbot's answer is backed by the context it was given.
Use only the context, not what you know.
- "supported": the context states the claim, or something that clearly implies it.
- "contradicted": the context states something incompatible with it (another number, name, date or rule).
- "unsupported": the context neither states nor contradicts it.
Reply with JSON: {{"verdict": "supported" | "unsupported" | "contradicted",
"quote": "<the sentence of the context that decides it, copied exactly, or empty>"}}

CONTEXT:
{context}

CLAIM: {claim}"""

JUDGE_SCHEMA = {
    "type": "object",
    "properties": {"verdict": {"type": "string", "enum": list(VERDICTS)}, "quote": {"type": "string"}},
    "required": ["verdict", "quote"],
}
JUDGE_MAX_TOKENS = 200


@dataclass(frozen=True)
class Verdict:
    """One claim's verdict. ``verdict`` is None when the judge failed (``error`` says why)."""

    claim: str
    verdict: str | None
    quote: str = ""
    error: str | None = None
    guarded: bool = False  # True when the quote guard overruled "supported"

    @property
    def supported(self) -> bool:
        return self.verdict == "supported"


@dataclass(frozen=True)
class Faithfulness:
    """An answer's claims with their verdicts, the continuous score and the binary status."""

    verdicts: tuple[Verdict, ...]
    score: float | None  # share of judged claims that are supported; None if no claim could be judged
    status: str  # PASS (every claim supported), FAIL, or ERROR (a claim could not be judged)
    n_errors: int = 0
    claims: tuple[str, ...] = field(default_factory=tuple)


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)")


def split_claims(answer: str) -> list[str]:
    """One claim per sentence: split after ``.``, ``!`` or ``?`` followed by white space.

    Simple on purpose (the source's rule); decimals such as ``1.5`` stay whole because no space follows the dot.
    Production systems ask a model for atomic claims (:func:`atomic_claims`).
    """
    answer = args.text("answer", answer)
    return [s.strip() for s in _SENTENCE_END.split(answer.strip()) if s.strip()]


def judge_prompt(context: str, claim: str) -> str:
    """The judge's prompt for one claim (the rules first, then the context, then the claim)."""
    context, claim = args.text("context", context), args.text("claim", claim)
    if len(claim) > len(context) and len(claim) > 2000:
        raise ValueError(
            f"claim is {len(claim)} characters, longer than the context: split the answer into claims first"
        )
    prompt = JUDGE_PROMPT.format(context=context.strip(), claim=claim.strip())
    if len(prompt) > MAX_PROMPT_CHARS:
        raise ValueError(
            f"context + claim are {len(prompt):,} characters (~{len(prompt) // 4:,} tokens), more than the judge's "
            f"window allows ({MAX_PROMPT_CHARS:,}): judge against fewer or shorter passages"
        )
    return prompt


def _norm(s: str) -> str:
    return " ".join(fold(s).replace("’", "'").replace("“", '"').replace("”", '"').split())


def quote_in_context(quote: str, context: str) -> bool:
    """True when ``quote`` occurs in ``context``, ignoring case, Unicode spelling (NFC/NFD), white space and curly
    quotes."""
    q = _norm(quote).strip(" .\"'")
    return bool(q) and q in _norm(context)


def judge_claim(context: str, claim: str, llm: Any, guard: bool = False) -> Verdict:
    """Ask ``llm`` for the verdict on one claim. Malformed replies become a Verdict with ``error`` set."""

    prompt = judge_prompt(context, claim)
    reply = llm(prompt, schema=JUDGE_SCHEMA, max_tokens=JUDGE_MAX_TOKENS)
    try:
        obj = parse_json(reply, ["verdict"])
    except ValueError as err:
        return Verdict(claim, None, error=str(err)[:160])
    verdict = obj.get("verdict")
    quote = obj.get("quote") if isinstance(obj.get("quote"), str) else ""
    if verdict not in VERDICTS:
        return Verdict(claim, None, quote, error=f"unknown verdict {verdict!r}")
    if guard and verdict == "supported" and not quote_in_context(quote, context):
        return Verdict(claim, "unsupported", quote, guarded=True)
    return Verdict(claim, verdict, quote)


def model_judge(llm: Any, guard: bool = False) -> Callable[[str, str], Verdict]:
    """``judge(context, claim) -> Verdict`` backed by a model."""
    if not callable(llm):
        raise ValueError(f"llm must be a labkit.generation.llm client, got {llm!r:.60}")

    def judge(context: str, claim: str) -> Verdict:
        return judge_claim(context, claim, llm, guard=guard)

    judge.__name__ = f"{getattr(llm, 'model', 'model')}{' + quote guard' if guard else ''}"
    return judge


def judges_from(specs: Any, client: Callable[[str], Any]) -> dict[str, Callable[[str, str], Verdict]]:
    """``{name: judge}`` from judge specs (each with ``name``, ``kind``, ``model``, ``guard``: chapter 06's
    manifest lists them), in their order. ``client(model)`` gives the language-model client of a model judge
    (``llm.from_env`` in a chapter, ``llm.Replay`` to replay recordings)."""
    if not callable(client):
        raise ValueError(f"client must be a function model -> llm client (e.g. llm.from_env), got {client!r:.60}")
    out: dict[str, Callable[[str, str], Verdict]] = {}
    for spec in specs:
        if spec.name in out:
            raise ValueError(f"two judges are named {spec.name!r}: give each its own name")
        if spec.kind == "model":
            out[spec.name] = model_judge(client(spec.model), guard=spec.guard)
        elif spec.kind == "lexical":
            out[spec.name] = lexical_judge
        elif spec.kind == "always supported":
            out[spec.name] = always_supported
        else:
            raise ValueError(
                f"judge {spec.name!r} has kind {spec.kind!r}: use 'model', 'lexical' or 'always supported'"
            )
    if not out:
        raise ValueError("specs holds no judge: list at least one")
    return out


_WORD = re.compile(r"[a-z0-9]+(?:[.,:/-][a-z0-9]+)*")
_STOP = frozenset(
    "a an the and or of to in on at for by with from is are was were be been it its this that these those you your "
    "can may will must should do does not no yes if as up per each any all our we they their there than then into "
    "also only more most less has have had get gets".split()
)


def lexical_judge(context: str, claim: str, min_share: float = 0.75) -> Verdict:
    """A baseline judge without a model: supported when every number of the claim occurs in the context and at
    least ``min_share`` of its other content words do. It never says "contradicted"."""
    context, claim = args.text("context", context), args.text("claim", claim)
    min_share = args.finite_number("min_share", min_share, minimum=0, maximum=1)
    ctx = set(_WORD.findall(_norm(context)))
    words = [w for w in _WORD.findall(_norm(claim)) if w not in _STOP]
    numbers = [w for w in words if any(ch.isdigit() for ch in w)]
    others = [w for w in words if w not in numbers]
    share = sum(w in ctx for w in others) / len(others) if others else 1.0
    ok = all(n in ctx for n in numbers) and share >= min_share
    return Verdict(claim, "supported" if ok else "unsupported")


def faithfulness(
    answer: str, context: str, judge: Callable[[str, str], Verdict], claims: Sequence[str] | None = None
) -> Faithfulness:
    """Judge every claim of ``answer`` against ``context``: continuous score, PASS/FAIL/ERROR, judge errors."""
    args.text("context", context)
    claims = split_claims(answer) if claims is None else args.strings("claims", claims, allow_empty=False)
    if not callable(judge):
        raise ValueError(
            "judge must be a function judge(context, claim) -> Verdict, e.g. faithfulness.model_judge(llm)"
        )
    verdicts = tuple(judge(context, c) for c in claims)
    judged = [v for v in verdicts if v.verdict is not None]
    n_errors = len(verdicts) - len(judged)
    score = sum(v.supported for v in judged) / len(judged) if judged else None
    status = "ERROR" if n_errors else ("PASS" if all(v.supported for v in verdicts) else "FAIL")
    return Faithfulness(verdicts, score, status, n_errors, tuple(claims))


def mentions_entity(answer: str, required_terms: Sequence[str]) -> bool:
    """The cheap relevance check in code: does the answer name every term the question is about?"""
    answer = fold(args.text("answer", answer, allow_empty=True))
    terms = args.strings("required_terms", required_terms, allow_empty=False, example='["annual leave"]')
    return all(fold(t) in answer for t in terms)


RELEVANCE_PROMPT = """Does the answer address the question that was asked? Judge relevance only, not correctness:
an answer that responds to the question with wrong facts is still relevant; an answer about something else, or
one that declines to answer, is not.
Reply with JSON: {{"relevant": true | false}}

QUESTION: {question}
ANSWER: {answer}"""
RELEVANCE_SCHEMA = {"type": "object", "properties": {"relevant": {"type": "boolean"}}, "required": ["relevant"]}


def relevance_prompt(question: str, answer: str) -> str:
    return RELEVANCE_PROMPT.format(
        question=args.text("question", question).strip(), answer=args.text("answer", answer).strip()
    )


def judge_relevance(question: str, answer: str, llm: Any) -> bool | None:
    """The model's relevance verdict, or None when its reply is malformed (count those)."""

    try:
        value = parse_json(
            llm(relevance_prompt(question, answer), schema=RELEVANCE_SCHEMA, max_tokens=20), ["relevant"]
        )["relevant"]
    except ValueError:
        return None
    return value if isinstance(value, bool) else None


ATOMIC_PROMPT = """Split the answer below into atomic claims: short standalone statements, each stating exactly one
fact, with pronouns replaced by what they refer to. Keep the answer's wording where you can. Do not add facts.
Reply with JSON: {{"claims": ["...", "..."]}}

ANSWER: {answer}"""
ATOMIC_MAX_TOKENS = 300
ATOMIC_SCHEMA = {
    "type": "object",
    "properties": {"claims": {"type": "array", "items": {"type": "string"}}},
    "required": ["claims"],
}


def atomic_claims(answer: str, llm: Any) -> list[str] | None:
    """The model's atomic claims for ``answer``, or None when its reply is malformed."""

    prompt = ATOMIC_PROMPT.format(answer=args.text("answer", answer).strip())
    reply = llm(prompt, schema=ATOMIC_SCHEMA, max_tokens=ATOMIC_MAX_TOKENS)
    try:
        claims = parse_json(reply, ["claims"])["claims"]
    except ValueError:
        return None
    if not isinstance(claims, list) or not all(isinstance(c, str) for c in claims):
        return None
    return [c.strip() for c in claims if c.strip()]


def always_supported(context: str, claim: str) -> Verdict:
    """The judge that says "supported" to everything: what accuracy alone would reward."""
    return Verdict(claim, "supported")
