"""Your own system beside ours: an outside retriever's run and an outside RAG system's answers, for the report.

Taught with ``python -m labkit report`` (README, "For practitioners"). A practitioner's retriever already runs
somewhere (OpenSearch, Vespa, a vector database, a hosted pipeline); ``--run NAME=FILE`` brings its results in,
``--answers FILE`` its answers. Nothing here calls a model.

**A run** (``--run NAME=FILE``) is one of two formats, told apart by the file's first character:

- a TREC run (``qid Q0 doc rank score tag``) over the report's own chunk ids (``run-hybrid.txt`` shows them; ids
  with whitespace percent-encoded as in ``ids.tsv``). It ranks the report's chunks, so it is measured exactly as
  the built-in retrievers are, on the same qrels. A chunk id the report does not have is an error: the run was
  made with another ``--size``/``--overlap``, or over your own passages (then use the second format);
- JSON lines of ranked passages with their own text, one passage a line::

      {"qid": "q1", "rank": 1, "doc": "guide/reset.html", "text": "The --hard mode resets ...", "id": "p-17"}

  ``qid``, ``doc`` and ``text`` are required; ``rank`` (1, 2, ... per question) is optional, else the file's
  order is the rank; ``id`` is optional, else ``<doc>#<hash of the text>``; ``score`` is allowed and ignored.
  The passages are the system's own chunking, so the report's chunk qrels do not apply: a passage is relevant
  to a question when it contains one of the question's gold spans whole (its quote, or the text its offsets
  cover), whitespace-normalised, at that span's grade (the highest, when it holds several); a passage you judged
  with ``python -m labkit judge`` gets your grade. Any other passage is unjudged. Only the measures that do
  not depend on the chunking are reported for it: hit@k and ER@k (the share of the question's gold spans of
  grade >= 2 held whole by a passage of the top k).

**Answers** (``--answers FILE``) are JSON lines, one per question of the questions file::

      {"qid": "q1", "answer": "It discards them.", "passages": ["The --hard mode resets ...", "..."]}

``passages`` are the texts the system read (strings, or objects with a ``text``), in the order it read them. An
answer is "retrieved" (chapter 07's 2x2) when a passage it read holds a grade-3 gold span whole.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from labkit.core.files import check_file, read_jsonl, read_text
from labkit.data import trec, trec_ids
from labkit.data.quotes import normalise_space

__all__ = ["Outside", "parse_spec", "read_run", "read_answers", "gold_texts", "passage_qrels", "evidence", "RUN_KEYS",
           "ANSWER_KEYS"]  # fmt: skip

RUN_KEYS = {"qid", "rank", "doc", "text", "id", "score"}
ANSWER_KEYS = {"qid", "answer", "passages"}
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


@dataclass
class Outside:
    """An outside system's run: ``ranked`` (``{qid: [passage id, ...]}``, every question, possibly empty);
    ``texts`` (``{passage id: text}``); ``docs`` (``{passage id: doc}``); ``own`` (its own passages, not the
    report's chunks)."""

    name: str
    path: Path
    ranked: dict[str, list[str]]
    texts: dict[str, str]
    docs: dict[str, str]
    own: bool

    @property
    def kind(self) -> str:
        return "its own passages (JSONL)" if self.own else "a TREC run over the report's chunks"


def parse_spec(spec: str, taken: set[str]) -> tuple[str, Path]:
    """``NAME=FILE`` split and checked: NAME letters, digits, ``_.-``, not taken; FILE an existing file."""
    name, eq, file = str(spec).partition("=")
    if not eq or not file.strip():
        raise ValueError(f"--run {spec!r}: give NAME=FILE, e.g. --run opensearch=runs/opensearch.jsonl")
    if not _NAME.fullmatch(name):
        raise ValueError(f"--run {spec!r}: NAME must be letters, digits, '_', '.' or '-' (it names run-NAME.txt)")
    if name in taken:
        raise ValueError(f"--run {spec!r}: the name {name!r} is taken ({sorted(taken)}); give each run its own name")
    return name, check_file(Path(file).expanduser(), "run", "--run NAME=FILE: a TREC run or JSONL passages")


def read_run(name: str, path: Path, qids: list[str], texts: dict[str, str]) -> Outside:
    """The run at ``path`` (already checked: :func:`parse_spec`) for the questions ``qids``; ``texts`` are the
    report's chunks (``{chunk id: text}``), which a TREC run must rank."""
    first = read_text(path, "run").lstrip()[:1]
    return _read_jsonl(name, path, qids) if first == "{" else _read_trec(name, path, qids, texts)


def _read_trec(name: str, path: Path, qids: list[str], texts: dict[str, str]) -> Outside:
    scored = trec.read_run(path)
    unknown_q = sorted(set(scored) - set(qids))
    if unknown_q:
        raise ValueError(f"--run {name}: {path} ranks question(s) not in the questions file: {unknown_q[:5]}")
    ranked: dict[str, list[str]] = {}
    for q, docs in scored.items():
        order = sorted(docs, key=lambda d: (-docs[d], [-ord(c) for c in d]))  # trec_eval's: score, then id desc
        ranked[q] = [trec_ids.original_id(d) for d in order]
    missing = sorted({c for r in ranked.values() for c in r} - set(texts))
    if missing:
        raise ValueError(f"--run {name}: {path} ranks {len(missing)} id(s) that are not chunks of this report "
                         f"(first: {missing[0]!r}): a TREC run must rank the report's chunk ids (same --size and "
                         "--overlap; see run-hybrid.txt); give your own passages as JSONL instead (qid, rank, doc, "
                         "text)")  # fmt: skip
    ranked = {q: ranked.get(q, []) for q in qids}
    return Outside(name, path, ranked, {c: texts[c] for r in ranked.values() for c in r}, {}, own=False)


def _read_jsonl(name: str, path: Path, qids: list[str]) -> Outside:
    rows = read_jsonl(path, "run", "--run NAME=FILE: JSON lines of {qid, rank, doc, text}")
    known = set(qids)
    by_q: dict[str, list[tuple[int, int, str]]] = {}
    texts: dict[str, str] = {}
    docs: dict[str, str] = {}
    with_rank = None
    for n, row in rows:
        where = f"--run {name}: {path.name} line {n}"
        extra = sorted(set(row) - RUN_KEYS)
        if extra:
            raise ValueError(f"{where}: unknown key(s) {extra}; a passage line holds {sorted(RUN_KEYS)}")
        for key in ("qid", "doc", "text"):
            if not isinstance(row.get(key), str) or not row[key].strip():
                raise ValueError(f"{where}: {key} must be a non-empty string, got {row.get(key)!r:.60}")
        if row["qid"] not in known:
            raise ValueError(f"{where}: qid {row['qid']!r} is not in the questions file")
        has = "rank" in row
        if with_rank is None:
            with_rank = has
        if has != with_rank:
            raise ValueError(f"{where}: give rank on every line or on none (then the file's order is the rank)")
        rank = row.get("rank", len(by_q.get(row["qid"], [])) + 1)
        if isinstance(rank, bool) or not isinstance(rank, int) or rank < 1:
            raise ValueError(f"{where}: rank must be a whole number >= 1, got {rank!r:.60}")
        pid = row.get("id")
        if pid is None:
            pid = f"{row['doc']}#{hashlib.sha1(normalise_space(row['text']).encode()).hexdigest()[:10]}"
        elif not isinstance(pid, str) or not pid.strip():
            raise ValueError(f"{where}: id must be a non-empty string, got {pid!r:.60}")
        if pid in texts and normalise_space(texts[pid]) != normalise_space(row["text"]):
            raise ValueError(f"{where}: passage id {pid!r} was given another text before; one id, one text")
        texts[pid], docs[pid] = row["text"], row["doc"]
        got = by_q.setdefault(row["qid"], [])
        if any(r == rank for r, _, _ in got) or any(p == pid for _, _, p in got):
            raise ValueError(f"{where}: question {row['qid']!r} has rank {rank} or passage {pid!r} twice")
        got.append((rank, n, pid))
    if not texts:
        raise ValueError(f"--run {name}: {path} holds no passage")
    ranked = {q: [p for _, _, p in sorted(by_q.get(q, []))] for q in qids}
    return Outside(name, path, ranked, texts, docs, own=True)


def gold_texts(queries: list, corpus: dict) -> dict[str, list[tuple[str, int]]]:
    """``{qid: [(normalised span text, grade), ...]}`` for the answerable questions."""
    return {q.qid: [(normalise_space(g.text(corpus)), g.grade) for g in q.gold] for q in queries if q.answerable}


def passage_qrels(o: Outside, gold: dict, judged: dict) -> dict[str, dict[str, int]]:
    """Qrels for an outside run of its own passages: per answerable question, each ranked passage that holds a gold
    span whole (its grade, the highest of those held) or was judged (``judged``: ``{(qid, normalised text):
    grade}``; the higher of the two counts). Unjudged passages are left out."""
    out: dict[str, dict[str, int]] = {}
    for q, spans in gold.items():
        got = {}
        for p in o.ranked[q]:
            text = normalise_space(o.texts[p])
            grades = [g for s, g in spans if s in text]
            if (q, text) in judged:
                grades.append(judged[(q, text)])
            if grades:
                got[p] = max(grades)
        out[q] = got
    return out


def evidence(passages: list[str], spans: list[tuple[str, int]], min_grade: int = 2) -> float | None:
    """The share of ``spans`` of grade >= ``min_grade`` held whole by one of ``passages`` (None without such
    spans): ER@k over the top k passages, for any chunking."""
    want = [s for s, g in spans if g >= min_grade]
    if not want:
        return None
    texts = [normalise_space(p) for p in passages]
    return sum(any(s in t for t in texts) for s in want) / len(want)


def read_answers(path: Path, queries: list, corpus: dict) -> list[dict]:
    """One row per question (the order of ``queries``), as :func:`labkit.studies.capstone.answers` makes them:
    qid, split, kind, question, reference, chunks (the passages read), answer, retrieved (a passage read holds a
    grade-3 gold span whole), answerable. Every question needs one answer; an unknown qid, a second answer or a
    missing one is an error naming the line or the question."""
    rows = read_jsonl(path, "answers", "--answers FILE: JSON lines of {qid, answer, passages}")
    by_q = {q.qid: q for q in queries}
    got: dict[str, dict] = {}
    for n, row in rows:
        where = f"--answers {path.name} line {n}"
        extra = sorted(set(row) - ANSWER_KEYS)
        if extra:
            raise ValueError(f"{where}: unknown key(s) {extra}; an answer line holds {sorted(ANSWER_KEYS)}")
        if row.get("qid") not in by_q:
            raise ValueError(f"{where}: qid {row.get('qid')!r:.60} is not in the questions file")
        if row["qid"] in got:
            raise ValueError(f"{where}: a second answer for {row['qid']!r}; give one answer per question")
        if not isinstance(row.get("answer"), str):
            raise ValueError(f"{where}: answer must be a string (the system's answer), got {row.get('answer')!r:.60}")
        passages = row.get("passages")
        if not isinstance(passages, list):
            raise ValueError(f"{where}: passages must be a list of the texts the system read, got {passages!r:.60}")
        texts = []
        for i, p in enumerate(passages):
            text = p.get("text") if isinstance(p, dict) else p
            if not isinstance(text, str) or not text.strip():
                raise ValueError(f"{where}: passages[{i}] must be a text (or an object with a text), got {p!r:.60}")
            texts.append(text)
        got[row["qid"]] = {"answer": row["answer"], "passages": texts}
    missing = [q for q in by_q if q not in got]
    if missing:
        raise ValueError(f"--answers {path.name} has no answer for {missing[0]!r} ({len(missing)} question(s) "
                         "unanswered): give one line per question of the questions file")  # fmt: skip
    gold = gold_texts(queries, corpus)
    out = []
    for q in queries:
        read = [normalise_space(t) for t in got[q.qid]["passages"]]
        hit = any(s in t for s, g in gold.get(q.qid, []) if g >= 3 for t in read)
        out.append({"qid": q.qid, "split": q.split, "kind": q.kind, "question": q.search_text, "reference": q.answer,
                    "chunks": got[q.qid]["passages"], "answer": got[q.qid]["answer"], "retrieved": hit,
                    "answerable": q.answerable})  # fmt: skip
    return out
