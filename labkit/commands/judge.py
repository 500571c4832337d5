"""``python -m labkit judge``: pooled relevance judging, the TREC way, in the terminal.

    python -m labkit judge DOCS --queries Q.jsonl --depth 5 [--out JUDGEMENTS.jsonl] [--run NAME=FILE ...]

Gold given as spans judges only the chunks that touch a span; every other passage a retriever ranks counts as not
relevant though nobody looked at it (the report's judged@k says how many). Judging the pool fixes that where it
matters: for every answerable question, the top ``depth`` of every retriever (BM25, dense, hybrid, with
``--rerank`` the learned reranker's (:mod:`labkit.commands.reranker`; not on the dev questions it trains on), and
each outside ``--run``, :mod:`labkit.commands.outside`) are pooled, and each pooled passage that is still unjudged is
shown with its question. One key per grade (:data:`labkit.data.judgements.KEYS`: ``0`` not relevant, ``1`` on
the topic, ``2`` answers in part, ``3`` answers it), ``s`` skips, ``q`` quits. Keys are read from standard input
one character at a time (a terminal needs no Enter; a pipe or a file works too, whitespace between keys
ignored), so a judging session can be scripted.

Each judgement is one JSON line appended to ``--out`` at once, whole and synced
(:func:`labkit.data.labels.append_line`, as the learner's label store writes), so quitting or a killed terminal
loses nothing, and running the command again shows only the passages still unjudged (resumable). A line::

    {"qid": "q4", "passage": "café/leave.txt#1", "doc": "café/leave.txt", "text": "...", "grade": 2,
     "rater": "ana", "time": "2026-12-05T21:00:00+00:00"}

``python -m labkit report ... --judgements JUDGEMENTS.jsonl`` reads them as gold
(:func:`labkit.data.judgements.read_judgements`): a passage is matched by its question and its text
(whitespace-normalised), so a judgement holds for a built-in chunk and for an outside run's passage of the same
text; the newest judgement of a passage counts. Questions marked unanswerable are not pooled (they have no gold
to complete).
"""

from __future__ import annotations

import getpass
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

from labkit.commands import entry, outside
from labkit.core.files import output_path
from labkit.data.judgements import GRADE_WORDS, KEYS, append_judgement, read_judgements
from labkit.data.quotes import normalise_space

__all__ = ["main", "judge", "pool", "Passage", "DEFAULT_DEPTH"]

SKIP, QUIT = "s", "q"
DEFAULT_DEPTH = 5


@dataclass
class Passage:
    """One pooled passage of one question: who ranked it, at which rank (the best)."""

    qid: str
    pid: str
    doc: str
    text: str
    rank: int
    sources: list[str] = field(default_factory=list)


def pool(s, ranked: dict, depth: int, outsiders: list, judged: dict) -> list[Passage]:
    """The unjudged passages of the pool: per answerable question of the setting ``s``, the top ``depth`` of every
    run of ``ranked`` (over the chunks) and of every outside run, less those the gold judges (a chunk touching a
    gold span; an outside passage holding one whole) and those in ``judged``. In question order, then best rank."""
    gold = outside.gold_texts(s.queries, s.corpus)
    out = []
    for q in s.queries:
        if not q.answerable:
            continue
        found: dict[str, Passage] = {}
        sources = [(name, run.get(q.qid, []), s.texts, {}) for name, run in ranked.items()]  # rerank: no dev
        sources += [(o.name, o.ranked[q.qid], o.texts, o.docs) for o in outsiders]
        for name, run, texts, docs in sources:
            for rank, pid in enumerate(run[:depth], start=1):
                text = texts[pid]
                key = normalise_space(text)
                if (q.qid, key) in judged or (texts is s.texts and pid in s.qrels.get(q.qid, {})):
                    continue
                if texts is not s.texts and any(g in key for g, _ in gold[q.qid]):
                    continue  # an outside passage holding a gold span whole: judged by the gold
                p = found.setdefault(key, Passage(q.qid, pid, docs.get(pid) or pid.rsplit("#", 1)[0], text, rank))
                p.rank = min(p.rank, rank)
                p.sources.append(name)
        out += sorted(found.values(), key=lambda p: p.rank)
    return out


def _keys(stream):
    """One key at a time from ``stream``: raw single keypresses on a terminal, else characters, whitespace
    skipped. Ends at end of input."""
    if stream.isatty():
        import termios
        import tty

        fd = stream.fileno()
        old = termios.tcgetattr(fd)
        try:
            tty.setcbreak(fd)
            while True:
                c = stream.read(1)
                if not c or c in ("\x03", "\x04"):  # end of input, Ctrl-C, Ctrl-D
                    return
                yield c
        finally:
            termios.tcsetattr(fd, termios.TCSADRAIN, old)
    while True:
        c = stream.read(1)
        if not c:
            return
        if not c.isspace():
            yield c


def _show(p: Passage, i: int, n: int, question: str, width: int = 100) -> str:
    body = textwrap.fill(" ".join(p.text.split()), width, initial_indent="    ", subsequent_indent="    ")
    keys = ", ".join(f"{k} {GRADE_WORDS[g]}" for k, g in KEYS.items())
    return (f"\n[{i}/{n}] {p.qid}: {question}\n  {p.doc} (rank {p.rank} in {', '.join(p.sources)})\n{body}\n"
            f"  keys: {keys}; {SKIP} skip, {QUIT} quit > ")  # fmt: skip


def judge(
    out: Path,
    s,
    ranked: dict,
    outsiders: list,
    depth: int,
    rater: str,
    judged: dict,
    stdin=None,
    stdout=None,
) -> dict[str, int]:
    """Judge the unjudged passages of :func:`pool` with keys from ``stdin``, appending one line per judgement to
    ``out`` (already checked: :func:`labkit.core.files.output_path`; ``judged``: what it holds,
    :func:`labkit.data.judgements.read_judgements`). Returns the counts (pooled, judged, skipped,
    left). The arguments are checked by :func:`main`, the command's entry."""
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    todo = pool(s, ranked, depth, outsiders, judged)
    asked = {q.qid: q.search_text for q in s.queries}
    print(f"pool: top {depth} of {', '.join([*ranked, *(o.name for o in outsiders)])}; {len(judged)} judged "
          f"already in {out.name}; {len(todo)} passage(s) to judge", file=stdout)  # fmt: skip
    keys = _keys(stdin)
    done = skipped = 0
    stopped = False
    for i, p in enumerate(todo, start=1):
        stdout.write(_show(p, i, len(todo), asked[p.qid]))
        stdout.flush()
        while True:
            key = next(keys, QUIT)
            if key in KEYS or key in (SKIP, QUIT):
                break
            stdout.write(f"\n  {key!r} is not a key: {', '.join(KEYS)}, {SKIP} or {QUIT} > ")
        stdout.write(f"{key}\n")
        if key == QUIT:
            stopped = True
            break
        if key == SKIP:
            skipped += 1
            continue
        append_judgement(out, p.qid, p.pid, p.doc, p.text, KEYS[key], rater)
        done += 1
    left = len(todo) - done - skipped
    print(f"\n{done} judged, {skipped} skipped, {left} left{' (quit)' if stopped else ''}; judgements in {out}",
          file=stdout)  # fmt: skip
    return {"pooled": len(todo), "judged": done, "skipped": skipped, "left": left}


def default_out(questions: str | None) -> Path:
    """``<questions file's stem>.judgements.jsonl`` beside it (``judgements.jsonl`` for the bundled questions)."""
    if questions is None:
        return Path("judgements.jsonl")
    q = Path(questions)
    return q.with_name(f"{q.stem}.judgements.jsonl")


def main(documents, questions, depth, out, rater, run_specs, size, overlap, stdin=None, stdout=None,
         rerank=False) -> dict:  # fmt: skip
    """The command's entry: every argument checked once here, then the setting built and the pool judged
    (``rerank``: the learned reranker's top ``depth`` joins the pool, :mod:`labkit.commands.reranker`)."""
    a = entry.check_args(documents=documents, questions=questions, size=size, overlap=overlap, run_specs=run_specs,
                         rerank=rerank)  # fmt: skip
    depth = entry.whole("--depth", depth, maximum=entry.DEPTH)
    if rater is None:
        rater = getpass.getuser()
    if not isinstance(rater, str) or not rater.strip():
        raise ValueError("--rater must name who judges (default: your user name)")
    out = output_path("--out", default_out(questions) if out is None else out, "judgements file")
    judged = read_judgements(out, a.queries) if out.exists() else {}  # checked before anything is embedded
    s, ranked, outsiders = entry.build(a)
    own = [o for o in outsiders if o.own]  # a TREC run over the chunks is in ranked already
    return judge(out, s, ranked, own, depth, rater.strip(), judged, stdin, stdout)
