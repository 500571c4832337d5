"""Write the rows a rater labels for correctness: one JSON line per recorded reader answer.

    python tools/label_sheet.py 1.5b > build/sheet-1.5b.jsonl     # chapter 07's answers (every handbook query)
    python tools/label_sheet.py 0.5b > build/sheet-0.5b.jsonl     # chapter 09's small model (the reader sample)
    python tools/label_sheet.py 1.5b-k5 > build/sheet-k5.jsonl    # chapter 07's k = 5 answers (sweep questions)

Each row: model, qid, k, slice, kind, question, gold (reference answer + gold spans, what the rater checks
against) and answer. The labels go to data/correctness/labels.jsonl (rubric in data/correctness/README.md).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from labkit import llm  # noqa: E402
from labkit.studies import answers_data


def _sheet(name: str) -> list[dict]:
    if name == "1.5b":
        return answers_data.label_sheet(llm.DEFAULT_MODEL)
    if name == "0.5b":
        return answers_data.label_sheet(llm.SMALL_MODEL)
    return answers_data.label_sheet(llm.DEFAULT_MODEL, answers_data.sweep_questions(), answers_data.SWEEP_K)


SHEETS = ("1.5b", "0.5b", "1.5b-k5")


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0] not in SHEETS:
        print(f"usage: {Path(__file__).name} {{{','.join(SHEETS)}}}", file=sys.stderr)
        return 2
    for row in _sheet(argv[0]):
        print(json.dumps(row, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
