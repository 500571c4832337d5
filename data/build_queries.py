"""Build data/queries.jsonl from the quote-based sources in data/sources/queries/.

Query authors never type character offsets. They quote the evidence exactly
as it appears in a handbook document, and this script finds each quote,
checks that it occurs exactly once, and writes ``{doc, start, end, grade}``
spans. It also assigns the dev/test split, stratified by slice and seeded,
so the same sources always give the same file.

Usage (from the repository root)::

    python data/build_queries.py                 # rebuild data/queries.jsonl
    python data/build_queries.py --out FILE      # write somewhere else (a test rebuilds into a tmp folder)
    python data/build_queries.py --check FILE... # validate sources only
    python data/build_queries.py --kinds         # rebuild data/kinds/synthesis.jsonl from data/sources/kinds/

Standard library and labkit's own ``labkit.data.corpus`` only (found from this file, no install needed), so it runs
before anything is installed. Each query it builds is checked by ``labkit.data.corpus.parse_query``, the function that
loads the file, so what a query must hold is written once.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

DATA = Path(__file__).resolve().parent
sys.path.insert(0, str(DATA.parent))  # labkit.data.corpus is standard library only: no install needed

from labkit.data.corpus import HANDBOOK_SLICES, Document, parse_query  # noqa: E402

HANDBOOK = DATA / "handbook"
SOURCES = DATA / "sources" / "queries"
OUT = DATA / "queries.jsonl"
KIND_SOURCES = DATA / "sources" / "kinds"
KIND_OUT = DATA / "kinds" / "synthesis.jsonl"

SLICES = HANDBOOK_SLICES
GRADES = (1, 2, 3)
REQUIRED = ("qid", "question", "answer", "slice", "kind", "evidence")
OPTIONAL = ("distractors", "history", "rewritten", "note")
SPLIT_SEED = 20241


class SourceError(ValueError):
    """A problem in a query source file, with file and line number."""


def read_doc(path: Path) -> str:
    # newline="" keeps the raw characters, so offsets match the file exactly.
    with open(path, encoding="utf-8", newline="") as f:
        return f.read()


def load_handbook() -> dict[str, str]:
    return {p.stem: read_doc(p) for p in sorted(HANDBOOK.glob("*.md"))}


def locate(docs: dict[str, str], doc: str, quote: str, where: str) -> tuple[int, int]:
    if doc not in docs:
        raise SourceError(f"{where}: unknown doc id {doc!r} (no data/handbook/{doc}.md)")
    if not quote or not quote.strip():
        raise SourceError(f"{where}: empty quote for doc {doc!r}")
    text = docs[doc]
    n = text.count(quote)
    if n == 0:
        raise SourceError(f"{where}: quote not found in {doc}: {quote[:80]!r}")
    if n > 1:
        raise SourceError(f"{where}: quote occurs {n} times in {doc}, make it longer: {quote[:80]!r}")
    start = text.index(quote)
    return start, start + len(quote)


def parse_line(docs: dict[str, str], line: str, where: str) -> dict:
    try:
        src = json.loads(line)
    except json.JSONDecodeError as err:
        raise SourceError(f"{where}: malformed JSON ({err.msg} at column {err.colno})") from None
    if not isinstance(src, dict):
        raise SourceError(f"{where}: expected a JSON object")
    missing = [k for k in REQUIRED if k not in src]
    unknown = [k for k in src if k not in REQUIRED + OPTIONAL]
    if missing:
        raise SourceError(f"{where}: missing field(s) {missing}")
    if unknown:
        raise SourceError(f"{where}: unknown field(s) {unknown}")
    if src["slice"] not in SLICES:  # queries.jsonl holds the handbook's slices only; the rest is parse_query's
        raise SourceError(f"{where}: slice {src['slice']!r} must be one of {SLICES}")
    if not src["evidence"]:
        raise SourceError(f"{where}: evidence must list at least one quote")
    gold = []
    for ev in src["evidence"]:
        if ev.get("grade") not in GRADES:
            raise SourceError(f"{where}: grade {ev.get('grade')!r} must be one of {GRADES}")
        start, end = locate(docs, ev.get("doc"), ev.get("quote", ""), where)
        gold.append({"doc": ev["doc"], "start": start, "end": end, "grade": ev["grade"]})
    if max(g["grade"] for g in gold) < 3 and src["kind"] != "synthesis":
        raise SourceError(f"{where}: no grade-3 evidence (the span that states the answer)")
    out = {k: src[k] for k in ("qid", "question", "answer", "slice", "kind")}
    out["gold"] = gold
    if src.get("distractors"):
        dis = []
        for d in src["distractors"]:
            if "quote" in d:
                start, end = locate(docs, d.get("doc"), d["quote"], where)
                dis.append({"doc": d["doc"], "start": start, "end": end})
            elif d.get("doc") in docs:
                dis.append({"doc": d["doc"]})
            else:
                raise SourceError(f"{where}: unknown distractor doc {d.get('doc')!r}")
        out["distractors"] = dis
    for key in ("history", "rewritten"):
        if key in src:
            out[key] = src[key]
    out["where"] = where
    return out


def check_rows(rows: list[dict], docs: dict[str, str]) -> None:
    """Every built query through ``labkit.data.corpus.parse_query`` (once splits are assigned), errors at its source
    line."""
    corpus = {doc: Document(doc, doc, text) for doc, text in docs.items()}
    for row in rows:
        try:
            parse_query({k: v for k, v in row.items() if k != "where"}, row["where"], corpus)
        except ValueError as err:
            raise SourceError(str(err)) from None


def load_sources(paths: list[Path], docs: dict[str, str]) -> list[dict]:
    rows, seen = [], {}
    for path in paths:
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            where = f"{path.relative_to(DATA.parent) if path.is_relative_to(DATA.parent) else path}:{n}"
            row = parse_line(docs, line, where)
            if row["qid"] in seen:
                raise SourceError(f"{where}: duplicate qid {row['qid']!r} (first at {seen[row['qid']]})")
            seen[row["qid"]] = where
            rows.append(row)
    return rows


def assign_splits(rows: list[dict]) -> None:
    """Half of each slice goes to dev, half to test (seeded, stable order)."""
    rng = random.Random(SPLIT_SEED)
    for sl in SLICES:
        qids = sorted(r["qid"] for r in rows if r["slice"] == sl)
        rng.shuffle(qids)
        dev = set(qids[: (len(qids) + 1) // 2])
        for r in rows:
            if r["slice"] == sl:
                r["split"] = "dev" if r["qid"] in dev else "test"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", nargs="+", type=Path, help="validate these source files only")
    parser.add_argument("--out", type=Path, default=None, help="where to write (default: data/queries.jsonl)")
    parser.add_argument("--kinds", action="store_true", help="build the by-type questions (data/sources/kinds/)")
    args = parser.parse_args(argv)
    docs = load_handbook()
    sources = sorted((KIND_SOURCES if args.kinds else SOURCES).glob("*.jsonl"))
    args.out = args.out or (KIND_OUT if args.kinds else OUT)
    try:
        rows = load_sources(args.check or sources, docs)
        assign_splits(rows)
        check_rows(rows, docs)
    except SourceError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    if args.check:
        print(f"ok: {len(rows)} queries in {len(args.check)} file(s)")
        return 0
    order = ("qid", "question", "answer", "slice", "kind", "split", "gold", "distractors", "history", "rewritten")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w", encoding="utf-8", newline="\n") as f:
        for r in sorted(rows, key=lambda r: r["qid"]):
            f.write(json.dumps({k: r[k] for k in order if k in r}, ensure_ascii=False) + "\n")
    where = args.out.resolve()
    shown = where.relative_to(DATA.parent) if where.is_relative_to(DATA.parent) else where
    print(f"wrote {len(rows)} queries to {shown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
