"""data/build_queries.py rebuilds the committed data/queries.jsonl byte for byte from its quote-based sources."""

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _load_script():
    spec = importlib.util.spec_from_file_location("build_queries", ROOT / "data" / "build_queries.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


build_queries = _load_script()


def test_rebuilds_queries_jsonl_byte_for_byte(tmp_path, capsys):
    out = tmp_path / "queries.jsonl"
    assert build_queries.main(["--out", str(out)]) == 0
    assert out.read_bytes() == (ROOT / "data" / "queries.jsonl").read_bytes()
    assert "wrote" in capsys.readouterr().out


def test_a_quote_that_is_not_in_its_document_is_refused(tmp_path):
    source = tmp_path / "bad.jsonl"
    source.write_text(
        '{"qid": "x-1", "question": "q?", "answer": "a", "slice": "easy", "kind": "fact",'
        ' "evidence": [{"doc": "hr-remote-work-2025", "quote": "no such sentence anywhere", "grade": 3}]}\n'
    )
    with pytest.raises(build_queries.SourceError, match="quote not found in hr-remote-work-2025"):
        build_queries.load_sources([source], build_queries.load_handbook())


def test_rebuilds_the_by_type_questions_byte_for_byte(tmp_path):
    out = tmp_path / "synthesis.jsonl"
    assert build_queries.main(["--kinds", "--out", str(out)]) == 0
    assert out.read_bytes() == (ROOT / "data" / "kinds" / "synthesis.jsonl").read_bytes()
    from labkit.data.corpus import load_queries

    rows = load_queries(path=out)
    assert len(rows) >= 30 and {q.kind for q in rows} == {"synthesis"}
    assert any("summarise" in q.question.lower() and "2025" in q.question for q in rows)
