"""07, 08: two checks a trace's cell calls for, recorded: prompt fixes on failed traces, a context swap on lucky ones.

Taught in ``07_triage`` (the source's 7.11, "three rounds of prompt fixes and no movement") and ``08_case_study``
(7.12, "swap the context on suspicious traces").

The traces are chapter 07's: the local 1.5B with the lenient prompt over the hybrid's top 3, every answer
rater-labelled (:func:`labkit.studies.answers_data.label_check`).

- **Prompt fixes.** A seeded :data:`PER_CELL` of the ``RET_FAIL`` traces (gold not retrieved, answer wrong) and
  as many ``GEN_FAIL`` ones (gold retrieved, answer wrong) are answered again, same passages, with each of three
  prompts a team would try in turn (:data:`FIXES`: the strict prompt of chapter 06, a prompt that makes the
  model quote its evidence first, a prompt that asks it to copy numbers and names exactly). If the evidence never
  reached the prompt, no wording can put it there: the ``RET_FAIL`` rows should not move, the ``GEN_FAIL`` ones
  may.
- **Context swap.** Every ``LUCKY`` trace (right without the gold) and a seeded sample of as many ``OK`` traces
  (right with it) are answered again with the passages of *another* question (the top 3 of a question from
  another department, seeded). An answer that stays right without its context did not come from it: a guess, a
  yes/no coin, or a fact stated in the question. ``OK`` traces are the control: their answers should fall.

Answers are replayed from the recordings (plans ``07-fixes`` and ``08-swap``); their correctness labels are in
``data/correctness/checks.jsonl`` (rater and rubric in ``data/correctness/README.md``).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from labkit import SEED, data_dir
from labkit.core.files import read_jsonl
from labkit.generation import llm
from labkit.generation import reader as rd
from labkit.measures import triage
from labkit.retrieval.retrievers import make_run
from labkit.studies import answers_data
from labkit.studies import handbook as hb

__all__ = ["FIXES", "PER_CELL", "traces", "fix_sample", "swap_sample", "requests", "answers", "labels", "CHECKS_FILE",
           "stage_cells", "stage_gap_findings"]  # fmt: skip

FIXES = ("strict", "cite", "careful")
"""The three rounds of prompt fixes, in the order a team would try them (:data:`labkit.generation.reader.PROMPTS`)."""
PER_CELL = 30
CHECKS_FILE = "correctness/checks.jsonl"


@lru_cache(maxsize=1)
def traces() -> tuple[dict, ...]:
    """Chapter 07's traces of the 1.5B at k = 3, ``answer_pass`` from the rater labels, each with its ``cell``."""
    h = hb.handbook()
    run = make_run(h.hybrid, h.queries, 20)
    reader = rd.llm_reader(llm.Replay(llm.DEFAULT_MODEL))
    corpus_texts = {d: doc.text for d, doc in h.corpus.items()}
    out = triage.reader_traces(
        h.queries, run, h.texts, h.qrels, reader, answers_data.label_check(), corpus_texts, hb.READER_K
    )
    for t in out:
        t["cell"] = triage.quadrant(t, hb.READER_K)
    return tuple(out)


def _draw(cell: str, n: int, seed: int) -> list[str]:
    import numpy as np

    qids = sorted(t["qid"] for t in traces() if t["cell"] == cell)
    pick = np.random.default_rng(seed).choice(len(qids), size=min(n, len(qids)), replace=False)
    return [qids[i] for i in sorted(pick)]


def fix_sample(per_cell: int = PER_CELL, seed: int = SEED) -> dict[str, list[str]]:
    """``{"RET_FAIL": [qid, ...], "GEN_FAIL": [...]}``: ``per_cell`` traces of each, seeded."""
    return {cell: _draw(cell, per_cell, seed + i) for i, cell in enumerate(("RET_FAIL", "GEN_FAIL"))}


def swap_sample(seed: int = SEED) -> list[tuple[str, str, str]]:
    """``(qid, cell, donor qid)``: every LUCKY trace and as many OK ones (seeded); each gets the top 3 of a donor
    question from another department (seeded), whose passages replace its own."""
    import numpy as np

    lucky = sorted(t["qid"] for t in traces() if t["cell"] == "LUCKY")
    chosen = [(q, "LUCKY") for q in lucky] + [(q, "OK") for q in _draw("OK", len(lucky), seed + 7)]
    all_qids = sorted(t["qid"] for t in traces())
    rng = np.random.default_rng(seed + 11)
    out = []
    for qid, cell in chosen:
        others = [q for q in all_qids if q.split("-")[0] != qid.split("-")[0]]
        out.append((qid, cell, others[int(rng.integers(len(others)))]))
    return out


def requests() -> dict[str, list[tuple[str, str, str, str]]]:
    """What the plans record: ``{"07-fixes": [(qid, cell, variant, prompt)], "08-swap": [(qid, cell, donor,
    prompt)]}``, each prompt the reader's over the same question (its search text)."""
    h = hb.handbook()
    by_qid = {t["qid"]: t for t in traces()}
    question = {q.qid: q.search_text for q in h.queries}
    fixes = []
    for cell, qids in fix_sample().items():
        for qid in qids:
            passages = [h.texts[c] for c in by_qid[qid]["retrieved"][: hb.READER_K]]
            fixes += [(qid, cell, v, rd.reader_prompt(question[qid], passages, v)) for v in FIXES]
    swaps = []
    for qid, cell, donor in swap_sample():
        passages = [h.texts[c] for c in by_qid[donor]["retrieved"][: hb.READER_K]]
        swaps.append((qid, cell, donor, rd.reader_prompt(question[qid], passages, "lenient")))
    return {"07-fixes": fixes, "08-swap": swaps}


def answers(plan: str):
    """One row per recorded answer of ``plan`` (``"07-fixes"`` or ``"08-swap"``): qid, cell, variant (or
    ``swap``), donor, the original answer and its label, the new answer. Raises
    :class:`labkit.generation.llm.MissingRecording` (naming the plan) for a prompt not recorded yet."""
    import pandas as pd

    if plan not in ("07-fixes", "08-swap"):
        raise ValueError(f'plan must be "07-fixes" or "08-swap", got {plan!r}')
    by_qid = {t["qid"]: t for t in traces()}
    replay = llm.Replay(llm.DEFAULT_MODEL)
    rows = []
    for qid, cell, what, prompt in requests()[plan]:
        variant, donor = (what, None) if plan == "07-fixes" else ("swap", what)
        done = replay.complete(prompt, max_tokens=rd.MAX_TOKENS)
        rows.append({"qid": qid, "cell": cell, "variant": variant, "donor": donor,
                     "before": by_qid[qid]["answer"], "before right": by_qid[qid]["answer_pass"],
                     "answer": done.text.strip(), "reference": by_qid[qid]["reference"]})  # fmt: skip
    return pd.DataFrame(rows)


def labels(path=None) -> dict[tuple[str, str], dict]:
    """The rater labels of the new answers: ``{(qid, variant): row}`` (``variant`` is a fix or ``swap``)."""
    path = path or data_dir() / CHECKS_FILE
    out = {}
    for n, row in read_jsonl(path, "trace-check labels"):
        key = (row.get("qid"), row.get("variant"))
        if row.get("label") not in answers_data.LABELS or key in out:
            raise ValueError(f"{path.name} line {n}: label must be one of {answers_data.LABELS}, once per answer")
        out[key] = row
    return out


def stage_cells(traces: Any, k: int) -> tuple[list[int], list[int]]:
    """``(is GEN_FAIL, is RET_FAIL)``, 0/1 per trace at ``k``: the data of the stage gap ``(GEN_FAIL - RET_FAIL) /
    traces``. The two are cells of one multinomial (a trace sits in one cell), so their difference is paired:
    ``stats`` kind ``"paired 0/1"`` (paired Newcombe, exact McNemar p beside it) is its interval; a trace in
    ``OK`` or ``LUCKY`` is a pair of zeros, and the ``GEN_FAIL`` and ``RET_FAIL`` traces are the discordant pairs."""
    cells = [triage.quadrant(t, k) for t in traces]
    return [int(c == "GEN_FAIL") for c in cells], [int(c == "RET_FAIL") for c in cells]


def stage_gap_findings(groups: Any, k: int, family: Any) -> dict[str, Any]:
    """Which stage fails more, decided for each group of traces by one rule: ``{name: Finding}`` of GEN_FAIL -
    RET_FAIL per trace (:func:`stage_cells`, kind ``"paired 0/1"``), in ``family`` (a :class:`stats.Family`
    declared before the traces are read; each name of ``groups`` must be one of its members). A positive gap
    points at generation, a negative one at retrieval; "not shown" means these traces cannot tell the two apart.

    The one computation of this quantity for chapters 07, 08 and 10: the same traces in a family of one give the
    same interval in every chapter (``stage_gap_findings({"all": traces}, 3, stats.Family(name, ["all"]))``).
    ``triage.stage_gap`` prints the counts and ``fix first``; its bootstrap interval is not this one.
    """
    groups = dict(groups)
    return family.findings({name: stage_cells(ts, k) for name, ts in groups.items()}, kind="paired 0/1")
