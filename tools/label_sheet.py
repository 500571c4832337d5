"""Write the rows a rater labels for correctness: one JSON line per recorded reader answer.

    python tools/label_sheet.py 1.5b > build/sheet-1.5b.jsonl     # chapter 07's answers (every handbook query)
    python tools/label_sheet.py 0.5b > build/sheet-0.5b.jsonl     # chapter 09's small model (the reader sample)
    python tools/label_sheet.py 1.5b-k5 > build/sheet-k5.jsonl    # chapter 07's k = 5 answers (sweep questions)
    python tools/label_sheet.py 04b > build/sheet-04b.jsonl        # 04b: answers over a reranked top 3 (blind)
    python tools/label_sheet.py 04b-join build/rated-04b.jsonl     # -> data/correctness/reranked.jsonl
    python tools/label_sheet.py 04b-all > build/sheet-04b-all.jsonl  # every answer of the 30, for one rater
    python tools/label_sheet.py 04b-all-join build/rated-04b-all.jsonl  # -> data/correctness/reranked_check.jsonl
    python tools/label_sheet.py checks > build/sheet-checks.jsonl  # 07's prompt fixes, 08's swaps (blind, with before)
    python tools/label_sheet.py checks-join build/rated-checks.jsonl  # -> data/correctness/checks.jsonl
    python tools/label_sheet.py pydocs > build/sheet-pydocs.jsonl  # chapter 10: every answer on the Python docs
    python tools/label_sheet.py pydocs-second > build/sheet-pydocs-2.jsonl  # a seeded 60 of them, shuffled

The 04b sheet holds only the answers that differ, word for word, from the hybrid top 3's answer (chapter 07
labelled those), each once, under an opaque ``item`` id in a seeded shuffled order: the rater never sees which
ranker produced an answer. The key (item -> qid and rerankers) is written to build/04b-key.json; ``04b-join``
reads the rater's rows (``item``, ``label``, ``why``, ``rater``) and writes the labels file.

Each row: model, qid, k, slice, kind, question, gold (reference answer + gold spans, what the rater checks
against) and answer. The labels go to data/correctness/labels.jsonl (rubric in data/correctness/README.md).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from labkit import SEED, data_dir  # noqa: E402
from labkit.generation import llm
from labkit.studies import answers_data  # noqa: E402
from labkit.studies import rerank_answers as ra  # noqa: E402
from labkit.studies import rerank_study as rs  # noqa: E402

KEY_04B = Path(__file__).resolve().parent.parent / "build" / "04b-key.json"


def _blind_sheet(items: dict[tuple[str, str], list[str]], seed: int, key_path: Path, questions=None) -> list[dict]:
    """Each distinct (qid, answer) once, under an opaque item id, in a seeded shuffled order, with what the rater
    reads; the key (item -> qid and rankings) goes to ``key_path``, never to the rater."""
    import random

    questions = rs.model_questions() if questions is None else questions
    sheet = {row["qid"]: row for row in answers_data.label_sheet(llm.DEFAULT_MODEL, questions)}
    keys = sorted(items)
    random.Random(seed).shuffle(keys)
    rows, key = [], {}
    for i, (qid, answer) in enumerate(keys, 1):
        item = f"item-{i:03d}"
        key[item] = {"qid": qid, "rerankers": items[(qid, answer)]}
        base = sheet[qid]
        rows.append({"item": item, "slice": base["slice"], "kind": base["kind"], "question": base["question"],
                     "gold": base["gold"], "answer": answer})  # fmt: skip
    key_path.parent.mkdir(exist_ok=True)
    key_path.write_text(json.dumps(key, indent=1))
    return rows


def _answers_by_ranker() -> dict[str, dict[str, str]]:
    cut = answers_data.recorded_answers(llm.DEFAULT_MODEL, rs.model_questions()).set_index("qid")["answer"]
    return {ra.CUT: cut.to_dict(), **{name: ra.reranked_answers(name) for name in rs.RERANKERS}}


def _sheet_04b() -> list[dict]:
    """The reranked answers that differ from the hybrid top 3's answer (chapter 07 labelled those that do not)."""
    by_ranker = _answers_by_ranker()
    items: dict[tuple[str, str], list[str]] = {}
    for name in rs.RERANKERS:
        for qid, answer in by_ranker[name].items():
            if answer != by_ranker[ra.CUT][qid]:
                items.setdefault((qid, answer), []).append(name)
    return _blind_sheet(items, SEED, KEY_04B)


KEY_04B_ALL = KEY_04B.with_name("04b-all-key.json")
CHECK_04B = ra.CHECK_LABELS


def _sheet_04b_all() -> list[dict]:
    """Every distinct answer of the 30 questions, over the hybrid's top 3 and over each reranker's, once each, blind
    and shuffled: one rater labels all of them, so the rankers can be compared within one rater."""
    items: dict[tuple[str, str], list[str]] = {}
    for name, answers in _answers_by_ranker().items():
        for qid, answer in answers.items():
            items.setdefault((qid, answer), []).append(name)
    return _blind_sheet(items, SEED + 1, KEY_04B_ALL)


def _join_04b(rated_path: str, key_path: Path = KEY_04B, target_name: str = ra.RERANKED_LABELS) -> int:
    key = json.loads(key_path.read_text())
    out = []
    for line in Path(rated_path).read_text().splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        for name in key[row["item"]]["rerankers"]:
            out.append({"model": llm.DEFAULT_MODEL, "qid": key[row["item"]]["qid"], "reranker": name,
                        "label": row["label"], "why": row["why"], "rater": row["rater"]})  # fmt: skip
    missing = set(key) - {json.loads(x)["item"] for x in Path(rated_path).read_text().splitlines() if x.strip()}
    if missing:
        raise SystemExit(f"{rated_path}: no label for {sorted(missing)[:5]} ({len(missing)} items)")
    out.sort(key=lambda r: (r["reranker"], r["qid"]))
    target = data_dir() / target_name
    target.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in out))
    print(f"{target}: {len(out)} labels")
    return 0


KEY_CHECKS = KEY_04B.with_name("checks-key.json")


def _sheet_checks() -> list[dict]:
    """07-fixes and 08-swap: every distinct answer, before (chapter 07's) and after each fix or swap, blind and
    shuffled, so one rubric labels both sides; the "before" answers also measure the rater against 07's labels."""
    from labkit.studies import handbook as hb
    from labkit.studies import trace_checks

    items: dict[tuple[str, str], list[str]] = {}
    for plan in ("07-fixes", "08-swap"):
        for row in trace_checks.answers(plan).to_dict("records"):
            items.setdefault((row["qid"], row["before"]), []).append("before")
            items.setdefault((row["qid"], row["answer"]), []).append(row["variant"])
    items = {k: sorted(set(v)) for k, v in items.items()}
    qids = {q for q, _ in items}
    return _blind_sheet(items, SEED + 2, KEY_CHECKS, [q for q in hb.handbook().queries if q.qid in qids])


def _join_checks(rated_path: str) -> int:
    key = json.loads(KEY_CHECKS.read_text())
    rated = [json.loads(x) for x in Path(rated_path).read_text().splitlines() if x.strip()]
    missing = set(key) - {r["item"] for r in rated}
    if missing:
        raise SystemExit(f"{rated_path}: no label for {sorted(missing)[:5]} ({len(missing)} items)")
    out = [{"model": llm.DEFAULT_MODEL, "qid": key[r["item"]]["qid"], "variant": name, "label": r["label"],
            "why": r["why"], "rater": r["rater"]} for r in rated for name in key[r["item"]]["rerankers"]]  # fmt: skip
    out.sort(key=lambda r: (r["variant"], r["qid"]))
    target = data_dir() / "correctness" / "checks.jsonl"
    target.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in out))
    print(f"{target}: {len(out)} labels")
    return 0


def _sheet_pydocs(second: bool = False) -> list[dict]:
    """Chapter 10's answers on the Python documentation: question, the FAQ's own answer, the gold quotes (grade
    >= 2) and the reader's answer; ``second``: a seeded 60, shuffled, for the second rater."""
    import random

    from labkit.studies import capstone

    s = capstone.setting()
    table = capstone.answers(s, llm.Replay(llm.DEFAULT_MODEL))
    rows = []
    for r in table.to_dict("records"):
        q = s.by_qid[r["qid"]]
        gold = [s.corpus[g.doc].text[g.start : g.end] for g in q.gold if g.grade >= 2]
        rows.append({"qid": r["qid"], "question": r["question"], "reference": r["reference"], "gold": gold,
                     "answer": r["answer"]})  # fmt: skip
    if second:
        rows = random.Random(SEED + 10).sample(rows, 60)
    return rows


def _sheet(name: str) -> list[dict]:
    if name in ("pydocs", "pydocs-second"):
        return _sheet_pydocs(name == "pydocs-second")
    if name == "1.5b":
        return answers_data.label_sheet(llm.DEFAULT_MODEL)
    if name == "0.5b":
        return answers_data.label_sheet(llm.SMALL_MODEL)
    if name == "04b":
        return _sheet_04b()
    if name == "04b-all":
        return _sheet_04b_all()
    if name == "checks":
        return _sheet_checks()
    return answers_data.label_sheet(llm.DEFAULT_MODEL, answers_data.sweep_questions(), answers_data.SWEEP_K)


SHEETS = ("1.5b", "0.5b", "1.5b-k5", "04b", "04b-all", "checks", "pydocs", "pydocs-second")


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "04b-join":
        return _join_04b(argv[1])
    if len(argv) == 2 and argv[0] == "04b-all-join":
        return _join_04b(argv[1], KEY_04B_ALL, CHECK_04B)
    if len(argv) == 2 and argv[0] == "checks-join":
        return _join_checks(argv[1])
    if len(argv) != 1 or argv[0] not in SHEETS:
        print(f"usage: {Path(__file__).name} {{{','.join(SHEETS)}}}", file=sys.stderr)
        return 2
    for row in _sheet(argv[0]):
        print(json.dumps(row, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
