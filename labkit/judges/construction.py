"""Claims whose label is known because we made them: the one ground truth with no rater in it (section 7.8).

Taught in 06_faithfulness.

A judge is measured against labels, and every label set in this workbook was written by a rater (an AI assistant
following a rubric) who can be wrong. This module makes claims whose verdict is fixed by how they were built,
from the very passages a judge will read:

- ``kept``: a sentence of the context, copied (markdown emphasis dropped) -> **supported**, since the context
  states it word for word;
- ``table-kept``: one cell of a table row in the context, written as a sentence ("For Singapore, the cap per
  night is USD 230.") -> **supported**;
- ``number``: a kept sentence with one number or date changed to a value that occurs nowhere in the context
  -> **contradicted**;
- ``unit``: a kept sentence with the unit after a number changed (days -> weeks, hours -> minutes, USD -> EUR)
  -> **contradicted**;
- ``swap``: a table sentence whose value is taken from the neighbouring row of the same column (the failure
  chapter 06 found in the 1.5B reader) -> **contradicted**;
- ``negation``: a kept sentence with its verb negated, or its negation removed -> **contradicted**;
- ``added``: a kept sentence with a clause appended from a document the context does not include, holding a
  number the context does not hold -> **unsupported** (one part has no basis);
- ``reference-number``: a question's reference answer with one number changed to a value absent from the
  context -> **unsupported** (whatever the rest of the answer says, that number has no basis).

Binary use (TPR/TNR) needs only *supported* vs *not supported*, which construction guarantees. The finer
*contradicted* / *unsupported* split is the usual reading of each operation, not checked sentence by sentence.

Everything is deterministic for a given seed: the same contexts give the same claims on every machine.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from functools import lru_cache

from labkit.core import args
from labkit.text.words import numbers, terms

__all__ = ["OPERATIONS", "LABEL_OF", "Claim", "sentences", "table_facts", "claims_for_context", "balanced"]

LABEL_OF = {
    "kept": "supported",
    "table-kept": "supported",
    "number": "contradicted",
    "unit": "contradicted",
    "swap": "contradicted",
    "negation": "contradicted",
    "added": "unsupported",
    "reference-number": "unsupported",
}
"""The label each operation gives its claim, by construction."""
OPERATIONS = tuple(LABEL_OF)
MIN_REFERENCE_WORDS = 6
"""A reference answer shorter than this ("45 days.") makes no claim a judge can read without its question."""

_EMPHASIS = re.compile(r"\*\*|__|(?<!\w)\*(?!\s)|(?<!\s)\*(?!\w)|`")
_LIST_MARK = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'(])")
_NUMBER_TOKEN = re.compile(r"(?<![\w\-/.:,])(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(?![\w\-/]|[.,:]\d)")
_UNITS = {
    "working days": "calendar days",
    "calendar days": "working days",
    "business days": "calendar days",
    "days": "weeks",
    "day": "week",
    "weeks": "months",
    "week": "month",
    "months": "weeks",
    "month": "week",
    "years": "months",
    "year": "month",
    "hours": "minutes",
    "hour": "minute",
    "minutes": "hours",
    "minute": "hour",
    "seconds": "minutes",
    "per cent": "per mille",
}
_UNIT = re.compile(r"(?<![\w\-])(\d+(?:\.\d+)?)\s+(" + "|".join(sorted(_UNITS, key=len, reverse=True)) + r")\b")
_CURRENCY = re.compile(r"\b(USD|EUR|VND|GBP|SGD)(\s?)(?=\d)")
_CURRENCY_SWAP = {"USD": "EUR", "EUR": "USD", "VND": "USD", "GBP": "EUR", "SGD": "USD"}
_NEGATED = re.compile(r"\b(do|does|did|must|will|should|may|is|are|was|were|has|have) not\b|\bcannot\b|\bnever\b")
_CONDITION = re.compile(r"(If|When|Unless|Once|After|Before|Until|While|Where|For|Since|Because|Although)\b")
_NEGATABLE = re.compile(r"\b(must|will|should|may|can|is|are|was|were)\b")


@dataclass(frozen=True)
class Claim:
    """One claim made by an operation from a context; ``label`` follows from ``operation``."""

    claim: str
    operation: str
    label: str
    source: str
    """The context sentence, table row or reference answer it was made from (what a reader checks it against)."""
    detail: str = ""
    """What was changed, e.g. ``30 -> 45`` or ``Singapore row <- Other Asia row``."""

    def as_dict(self) -> dict:
        return asdict(self)


def _clean(line: str) -> str:
    return " ".join(_EMPHASIS.sub("", _LIST_MARK.sub("", line)).split())


def sentences(passage: str, min_words: int = 6, max_words: int = 40) -> list[str]:
    """The whole prose sentences of one passage, markdown emphasis dropped: no headings, no table rows, and not
    the fragments a chunk border cut, and no questions (a sentence must start with a capital and end with ``.``;
    the first sentence of the passage's first line counts only if the passage starts a line of the document)."""
    passage = args.text("passage", passage, allow_empty=True)
    out = []
    lines = passage.split("\n")
    for i, line in enumerate(lines):
        if not line.strip() or line.lstrip().startswith(("#", "|", ">")):
            continue
        parts = _SENTENCE.split(_clean(line))
        if i == 0 and not line[:1].isupper() and not _LIST_MARK.match(line):
            parts = parts[1:]  # cut by the chunk border: the line's first sentence began in the previous chunk
        for s in parts:
            words = len(s.split())
            if s[:1].isupper() and s.endswith(".") and min_words <= words <= max_words:
                out.append(s)
    return out


def _cells(row: str) -> list[str]:
    return [_clean(c) for c in row.strip().strip("|").split("|")]


def table_facts(passage: str) -> list[tuple[str, str, str, list[str]]]:
    """``(key, header, value, neighbour values)`` for every cell of every whole table row in ``passage`` whose
    table header is in the passage too: ``key`` is the row's first cell, ``header`` the column's name, and the
    neighbour values are the same column's cells in the rows just above and below (for swaps)."""
    passage = args.text("passage", passage, allow_empty=True)
    lines = passage.split("\n")
    facts = []
    i = 0
    while i < len(lines) - 1:
        sep = lines[i + 1].strip()
        if lines[i].strip().startswith("|") and re.fullmatch(r"\|?\s*:?-{3,}.*", sep) and "-|-" in sep.replace(" ", ""):
            header = _cells(lines[i])
            rows = []
            j = i + 2
            while j < len(lines) and lines[j].strip().startswith("|") and lines[j].strip().endswith("|"):
                cells = _cells(lines[j])
                if len(cells) == len(header):
                    rows.append(cells)
                j += 1
            for r, cells in enumerate(rows):
                for c in range(1, len(header)):
                    neighbours = [rows[n][c] for n in (r - 1, r + 1) if 0 <= n < len(rows)]
                    if cells[0] and cells[c] and header[c] and len(cells[c]) <= 60 and len(cells[0]) <= 60:
                        facts.append((cells[0], header[c], cells[c], neighbours))
            i = j
        else:
            i += 1
    return facts


def _table_sentence(key: str, header: str, value: str) -> str:
    """One table cell as a sentence that names its row and column, so that it means exactly what the cell does."""
    return f'The table row "{key}" gives "{value.rstrip(".")}" under "{header}".'


def _new_number(old: str, context_numbers: set[str], rng) -> str | None:
    """A different value for ``old`` that the context never states (a year moves by one or two)."""
    plain = old.replace(",", "")
    value = float(plain)
    if "." in plain:
        candidates = [value + 0.5, value * 2, value + 1]
    elif 1990 <= value <= 2100:
        candidates = [value + 1, value - 1, value + 2]
    else:
        candidates = [value + 1, value * 2, value + 5, value + 10, value * 3]
        if value > 1:
            candidates.insert(1, value - 1)
    rng.shuffle(candidates)
    for c in candidates:
        text = f"{c:g}" if "." in plain else str(int(c))
        if "," in old and int(c) >= 1000:
            text = f"{int(c):,}"
        if text.replace(",", "") not in context_numbers and text != old:
            return text
    return None


def _change_number(sentence: str, context_numbers: set[str], rng) -> tuple[str, str] | None:
    spots = list(_NUMBER_TOKEN.finditer(sentence))
    if not spots:
        return None
    m = spots[int(rng.integers(len(spots)))]
    new = _new_number(m.group(1), context_numbers, rng)
    if new is None:
        return None
    return sentence[: m.start(1)] + new + sentence[m.end(1) :], f"{m.group(1)} -> {new}"


def _change_unit(sentence: str, context: str) -> tuple[str, str] | None:
    m = _UNIT.search(sentence)
    if m:
        new = f"{m.group(1)} {_UNITS[m.group(2)]}"
        if new.lower() not in context.lower():
            return sentence[: m.start()] + new + sentence[m.end() :], f"{m.group(0)} -> {new}"
    m = _CURRENCY.search(sentence)
    if m:
        new = _CURRENCY_SWAP[m.group(1)]
        return sentence[: m.start(1)] + new + sentence[m.end(1) :], f"{m.group(1)} -> {new}"
    return None


def _negate(sentence: str) -> tuple[str, str] | None:
    """Negate the main clause: in a sentence that opens with a condition ("If ..., you must ..."), only what
    follows the condition's comma is touched, so the rule is negated and not the case it applies to."""
    start = 0
    if _CONDITION.match(sentence):
        if ", " not in sentence:
            return None
        start = sentence.index(", ") + 2
    head, sentence = sentence[:start], sentence[start:]
    made = _negate_clause(sentence)
    return None if made is None else (head + made[0], made[1])


def _negate_clause(sentence: str) -> tuple[str, str] | None:
    m = _NEGATED.search(sentence)
    if m:
        word = m.group(0)
        new = {"cannot": "can", "never": "always"}.get(word.lower(), m.group(1) if m.group(1) else word)
        if word[:1].isupper():
            new = new[:1].upper() + new[1:]
        return sentence[: m.start()] + new + sentence[m.end() :], f"{word!r} -> {new!r}"
    m = _NEGATABLE.search(sentence)
    if m:
        word = m.group(1)
        new = "cannot" if word.lower() == "can" else f"{word} not"
        if word[:1].isupper():
            new = new[:1].upper() + new[1:]
        return sentence[: m.start()] + new + sentence[m.end() :], f"{word!r} -> {new!r}"
    return None


def _addable(elsewhere: Sequence[str], context: str, context_numbers: set[str]) -> list[str]:
    """The sentences from elsewhere that can be appended as an unsupported clause: each holds a number the
    context does not hold, shares under half its terms with the context, and is short."""
    terms_of_context = set(terms(context))
    out = []
    for other in elsewhere:
        nums, words = _features(other)
        if nums and not nums & context_numbers and len(other.split()) <= 25 and other.endswith("."):
            if len(words & terms_of_context) < 0.5 * len(words):
                out.append(other)
    return out


@lru_cache(maxsize=20_000)
def _features(sentence: str) -> tuple[frozenset[str], frozenset[str]]:
    return frozenset(numbers(sentence)), frozenset(terms(sentence))


def _add_clause(sentence: str, addable: Sequence[str], rng) -> tuple[str, str] | None:
    if not addable:
        return None
    other = addable[int(rng.integers(len(addable)))]
    return f"{sentence.rstrip('.!?')}; {other}", f"added from elsewhere: {other}"


def claims_for_context(
    passages: Sequence[str],
    rng,
    elsewhere: Sequence[str] = (),
    reference: str | None = None,
) -> list[Claim]:
    """Every claim each operation can make from one context (the passages a judge reads), before balancing.

    ``elsewhere`` holds sentences from documents the context does not include (for ``added``, tried in the
    order given); ``reference`` is the question's reference answer (for ``reference-number``). ``rng`` is a
    ``numpy.random.Generator``; the same generator state gives the same claims.
    """
    passages = args.strings("passages", passages, allow_empty=False)
    context = "\n\n".join(p.strip() for p in passages)
    context_numbers = set(numbers(context))
    addable = _addable(elsewhere, context, context_numbers)
    out: list[Claim] = []
    for passage in passages:
        for s in sentences(passage):
            made = [
                Claim(m[0], op, LABEL_OF[op], s, m[1])
                for op, m in (
                    ("number", _change_number(s, context_numbers, rng)),
                    ("unit", _change_unit(s, context)),
                    ("negation", _negate(s)),
                    ("added", _add_clause(s, addable, rng)),
                )
                if m is not None
            ]
            if made:  # kept sentences come from the same sentences as the altered ones: one population
                out.append(Claim(s, "kept", LABEL_OF["kept"], s))
                out.extend(made)
        for key, header, value, neighbours in table_facts(passage):
            kept = _table_sentence(key, header, value)
            out.append(Claim(kept, "table-kept", LABEL_OF["table-kept"], kept))
            for other in neighbours:
                if other.lower() != value.lower() and other.lower() not in key.lower():
                    out.append(Claim(_table_sentence(key, header, other), "swap", LABEL_OF["swap"], kept,
                                     f"{value!r} <- {other!r} (the neighbouring row)"))  # fmt: skip
                    break
    if reference and len(reference.split()) >= MIN_REFERENCE_WORDS:
        made = _change_number(" ".join(reference.split()), context_numbers, rng)
        if made is not None:
            out.append(Claim(made[0], "reference-number", LABEL_OF["reference-number"], reference, made[1]))
    return out


def balanced(
    candidates: Mapping[str, Iterable[Claim]],
    quotas: Mapping[str, int],
    rng,
    per_context: int = 2,
) -> list[tuple[str, Claim]]:
    """Pick ``quotas[operation]`` claims of each operation, at most ``per_context`` of one operation from one
    context (so no single passage dominates), contexts visited in a seeded order. Returns ``(context id,
    claim)`` pairs in context order; raises if a quota cannot be met, rather than returning fewer."""
    candidates = args.mapping("candidates", candidates, example="{qid: claims_for_context(...)}")
    if not hasattr(rng, "permutation") or not hasattr(rng, "integers"):
        raise ValueError(f"rng must be a numpy.random.Generator (np.random.default_rng(seed)), got {rng!r:.40}")
    quotas = args.mapping("quotas", quotas, example='{"kept": 130, "number": 45}')
    quotas = {op: args.whole_number(f"quotas[{op!r}]", n, minimum=0) for op, n in quotas.items()}
    unknown = set(quotas) - set(OPERATIONS)
    if unknown:
        raise ValueError(f"quotas has unknown operations {sorted(unknown)}; choose from {OPERATIONS}")
    ids = list(candidates)
    order = [ids[i] for i in rng.permutation(len(ids))]
    pools = {cid: list(candidates[cid]) for cid in ids}
    taken: dict[str, list[Claim]] = {cid: [] for cid in ids}
    counts = dict.fromkeys(quotas, 0)
    for round_ in range(per_context):
        for cid in order:
            for op, quota in quotas.items():
                if counts[op] >= quota:
                    continue
                have = [c for c in taken[cid] if c.operation == op]
                if len(have) > round_:
                    continue
                used = {c.claim for c in taken[cid]}
                pool = [c for c in pools[cid] if c.operation == op and c.claim not in used]
                if pool:
                    taken[cid].append(pool[int(rng.integers(len(pool)))])
                    counts[op] += 1
    short = {op: (counts[op], q) for op, q in quotas.items() if counts[op] < q}
    if short:
        raise ValueError(f"not enough candidates for quotas (made, asked): {short}; lower them or add contexts")
    return [(cid, c) for cid in ids for c in taken[cid]]
