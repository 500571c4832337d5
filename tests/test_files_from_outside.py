"""Files from outside: TREC qrels and runs, JSON-lines label files, and where labkit writes.

Accepted on purpose (documented in labkit.core.files and labkit.data.trec): a UTF-8 byte-order mark, CRLF line ends,
tabs
or runs of spaces between fields, blank lines. Refused with the file and line and the fix: a header row, a torn
or non-JSON line in a label file, a folder, a file larger than labkit reads at once, a path outside the folders
labkit writes to.
"""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labkit.core import files
from labkit.data import trec
from labkit.studies import answers_data

FAST = settings(derandomize=True, deadline=None, max_examples=40, database=None)

QRELS = {"q1": {"d1": 2, "d2": 0}, "q-2": {"d3": 1}}
RUN = {"q1": {"d1": 1.5, "d2": 0.25}, "q-2": {"d3": 3.0}}
SEP = st.lists(st.sampled_from([" ", "\t", "  ", " \t "]), min_size=5, max_size=5)


def _qrels_text(seps, eol):
    return "".join(f"{q}{seps[0]}0{seps[1]}{d}{seps[2]}{g}{eol}" for q, docs in QRELS.items() for d, g in docs.items())


def _run_text(seps, eol):
    return "".join(
        f"{q}{seps[0]}Q0{seps[1]}{d}{seps[2]}{r}{seps[3]}{s!r}{seps[4]}t{eol}"
        for q, docs in RUN.items()
        for r, (d, s) in enumerate(sorted(docs.items(), key=lambda kv: -kv[1]), start=1)
    )


@FAST
@given(SEP, st.sampled_from(["\n", "\r\n"]), st.booleans(), st.sampled_from(["", "\n", "\r\n\r\n"]))
def test_bom_crlf_tabs_and_blank_lines_read_the_same(tmp_path_factory, seps, eol, bom, blank):
    folder = tmp_path_factory.mktemp("trec")
    head = "\ufeff" if bom else ""
    (folder / "x.qrels").write_bytes((head + blank + _qrels_text(seps, eol) + blank).encode())
    (folder / "x.run").write_bytes((head + _run_text(seps, eol) + blank).encode())
    assert trec.read_qrels(folder / "x.qrels") == QRELS
    assert trec.read_run(folder / "x.run") == RUN


@pytest.mark.parametrize(
    "reader, header",
    [
        (trec.read_qrels, "qid iter docno rel"),
        (trec.read_qrels, "query-id\tcorpus-id\tscore"),
        (trec.read_qrels, "\ufeffQID 0 DOCNO RELEVANCE"),
        (trec.read_run, "qid Q0 docno rank score tag"),
    ],
)
def test_a_header_row_is_named_as_one(tmp_path, reader, header):
    body = _qrels_text([" "] * 5, "\n") if reader is trec.read_qrels else _run_text([" "] * 5, "\n")
    path = tmp_path / "x.trec"
    path.write_text(header + "\n" + body, encoding="utf-8")
    with pytest.raises(ValueError, match=r"x.trec:1: .* looks like a header row; .* delete that line"):
        reader(path)


def test_a_file_too_large_is_refused_before_it_is_read(tmp_path, monkeypatch):
    big = tmp_path / "huge.run"
    with open(big, "wb") as f:  # a sparse 1 GiB file: its size, no disk
        f.truncate(2**30)
    with pytest.raises(ValueError, match=r"huge.run is 1,024 MiB, more than labkit reads at once \(256 MiB\)"):
        trec.read_run(big)
    small = tmp_path / "x.qrels"
    small.write_text(_qrels_text([" "] * 5, "\n"), encoding="utf-8")
    monkeypatch.setattr(files, "MAX_BYTES", 10)
    with pytest.raises(ValueError, match="raise labkit.core.files.MAX_BYTES"):
        trec.read_qrels(small)


def _label(**changes):
    row = {"model": "m", "qid": "q1", "label": "right", "why": "the number", "rater": "r", "k": 3}
    return json.dumps({**row, **changes})


@pytest.mark.parametrize(
    "content, words",
    [
        ("model,qid,label\n" + _label() + "\n", "labels.jsonl:1: not JSON .* a header row"),
        (_label() + "\n" + _label(qid="q2")[:25], "labels.jsonl:2: not JSON .* the last line is torn"),
        (_label() + "\n[1, 2]\n", "labels.jsonl:2: a list, not a JSON object"),
        (_label() + "\n{oops}\n" + _label(qid="q3") + "\n", "labels.jsonl:2: not JSON .* each line must be one"),
    ],
)
def test_label_files_name_the_line_that_is_not_a_label(tmp_path, content, words):
    path = tmp_path / "labels.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ValueError, match=words):
        answers_data.correctness_labels(path)


def test_label_files_accept_a_bom_crlf_and_blank_lines(tmp_path):
    path = tmp_path / "labels.jsonl"
    path.write_bytes(("\ufeff" + _label() + "\r\n\r\n" + _label(qid="q2") + "\r\n").encode())
    assert list(answers_data.correctness_labels(path)["qid"]) == ["q1", "q2"]
    with pytest.raises(IsADirectoryError, match="is a folder"):
        answers_data.correctness_labels(tmp_path)


def test_writers_refuse_a_folder_a_missing_folder_and_a_path_outside(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(IsADirectoryError, match="path .* is a folder"):
        trec.write_run(RUN, tmp_path)
    with pytest.raises(FileNotFoundError, match="does not exist; create it"):
        trec.write_qrels(QRELS, tmp_path / "no" / "x.qrels")
    outside = "/proc/labkit-test.run" if os.path.isdir("/proc") else "C:\\Windows\\x.run"
    with pytest.raises(ValueError, match="is outside the folders labkit writes to .* LABKIT_WRITE_DIRS"):
        trec.write_run(RUN, outside)
    trec.write_run(RUN, "ok.run")  # the working folder is allowed
    assert trec.read_run(tmp_path / "ok.run") == RUN
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []  # no temporary file left


@FAST
@given(st.lists(st.sampled_from(["..", "a", "b", "."]), min_size=1, max_size=6))
def test_dot_dot_never_leads_outside_the_allowed_folders(tmp_path_factory, monkeypatch_parts):
    base = tmp_path_factory.mktemp("work")
    (base / "a").mkdir(exist_ok=True)
    (base / "a" / "b").mkdir(exist_ok=True)
    roots = [base.resolve()]
    target = base.joinpath(*monkeypatch_parts, "x.run")
    resolved = target.resolve()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(files, "write_roots", lambda: roots)
        if not resolved.parent.is_dir():
            with pytest.raises(FileNotFoundError):
                files.output_path("path", target)
        elif resolved.is_relative_to(base.resolve()):
            assert files.output_path("path", target) == resolved
        else:
            with pytest.raises(ValueError, match="outside the folders labkit writes to"):
                files.output_path("path", target)


def test_labkit_write_dirs_adds_a_folder(tmp_path, monkeypatch):
    (tmp_path / "cwd").mkdir()
    (tmp_path / "reports").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path / "cwd"))  # the system temp folder, here not a parent
    monkeypatch.setenv("LABKIT_CACHE", str(tmp_path / "cwd"))
    monkeypatch.delenv("LABKIT_WRITE_DIRS", raising=False)
    with pytest.raises(ValueError, match="outside the folders labkit writes to"):
        files.output_path("path", tmp_path / "reports" / "r.run")
    monkeypatch.setenv("LABKIT_WRITE_DIRS", os.pathsep.join(["", str(tmp_path / "reports")]))
    assert files.output_path("path", tmp_path / "reports" / "r.run") == (tmp_path / "reports" / "r.run").resolve()
