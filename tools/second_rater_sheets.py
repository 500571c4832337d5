"""Write what a second, independent rater reads: a seeded random sample of each label set, without its labels.

    python tools/second_rater_sheets.py --out build/second-rater

One JSONL sheet per label set (faithfulness claims, the audit of the generated questions, realism ratings, the
0.5B's answers for correctness). A row holds what the first rater read and nothing they wrote: no label, no
`why`. The second rater's labels are joined back on the row's key (`id`, `qid`, or `model` + `qid` + `k`) and
chapters 02, 06 and 07 print the agreement (Cohen's kappa). The samples are fixed by ``SEED`` so that a re-run
writes the same rows.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from labkit.generation import llm  # noqa: E402
from labkit.studies import answers_data  # noqa: E402
from labkit.studies import faithfulness_data as fdata  # noqa: E402
from labkit.studies import handbook as hb  # noqa: E402
from labkit.studies import synth_data as sd  # noqa: E402

SEED = 20261202
SIZES = {"faithfulness": 80, "audit": 70, "realism": 60, "correctness-0.5b": 60, "realism-generated": 60}
"""How many items each sheet samples (realism: the whole set of 60)."""
AROUND = 700
"""Characters of the document shown on each side of a generated question's evidence span (the audit)."""


def _first_draw(queries: list) -> list:
    """The generated questions of the first draw's 150 targets: the rows there were when the second raters read
    (the sets grew later), so that a re-run draws the same sample."""
    return [q for q in queries if int(q.qid.rsplit("-", 1)[1]) <= sd.N_TARGETS]


def _sample(rows: list, n: int, seed: int) -> list:
    """A seeded random ``n`` of ``rows``, kept in file order (so nothing about the sample's order is a hint)."""
    if n >= len(rows):
        return list(rows)
    keep = sorted(np.random.default_rng(seed).choice(len(rows), size=n, replace=False).tolist())
    return [rows[i] for i in keep]


def faithfulness_sheet() -> list[dict]:
    """Claims under opaque item names, shuffled: the file's ids and order tell which claims were written altered
    (``fl-0001`` to ``fl-0095`` come first), so the rater sees neither; ``faithfulness_key`` maps them back."""
    questions = hb.handbook().by_qid
    return [
        {"item": item, "question": questions[r["qid"]].question, "claim": r["claim"], "context": r["context"]}
        for item, r in _faithfulness_items()
    ]


def _faithfulness_items() -> list[tuple[str, dict]]:
    rows = _sample(fdata.labelled_claims(), SIZES["faithfulness"], SEED)
    order = np.random.default_rng(SEED + 3).permutation(len(rows)).tolist()
    return [(f"item-{i + 1:03d}", rows[j]) for i, j in enumerate(order)]


def faithfulness_key() -> dict[str, str]:
    """Sheet item -> claim id in ``data/faithfulness/labels.jsonl``."""
    return {item: r["id"] for item, r in _faithfulness_items()}


def audit_sheet() -> list[dict]:
    corpus = hb.handbook().corpus
    out = []
    for q in _sample(_first_draw(sd.load_sets()), SIZES["audit"], SEED + 1):
        span = q.gold[0]
        text = corpus[span.doc].text
        out.append({
            "qid": q.qid, "question": q.question, "model_answer": q.answer, "doc": span.doc,
            "evidence": text[span.start:span.end],
            "before": text[max(0, span.start - AROUND):span.start], "after": text[span.end:span.end + AROUND],
        })  # fmt: skip
    return out


def realism_sheet() -> list[dict]:
    rows = sd.realism_labels()
    return [{"id": r["id"], "question": r["question"], "doc": r["doc"]} for r in _sample(rows, SIZES["realism"], SEED)]


def realism_generated_sheet() -> list[dict]:
    """Generated questions (chapter 02's kept rows) to rate for realism: the rated set holds exemplars written
    for each level, which say little about how raters agree on what a model really writes."""
    rows = _sample(_first_draw(sd.load_sets()), SIZES["realism-generated"], SEED + 4)
    return [{"id": q.qid, "question": q.question, "doc": q.gold[0].doc} for q in rows]


def correctness_sheet() -> list[dict]:
    return _sample(answers_data.label_sheet(llm.SMALL_MODEL), SIZES["correctness-0.5b"], SEED + 2)


SHEETS = {"faithfulness": faithfulness_sheet, "audit": audit_sheet, "realism": realism_sheet,
          "correctness-0.5b": correctness_sheet, "realism-generated": realism_generated_sheet}  # fmt: skip


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("build/second-rater"))
    ns = parser.parse_args(argv)
    ns.out.mkdir(parents=True, exist_ok=True)
    for name, make in SHEETS.items():
        rows = make()
        path = ns.out / f"{name}.jsonl"
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
        print(f"{path}: {len(rows)} rows")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
