"""labkit.data.corpus and labkit.data.trec: TREC files round-trip and fail loudly; the shipped corpus and queries
validate."""

import json

import pytest

from labkit import data_dir
from labkit.data.corpus import _parse_query, load_corpus, load_queries
from labkit.data.trec import read_qrels, read_run, write_qrels, write_run


def test_trec_round_trip(tmp_path):
    qrels = {"q1": {"a": 2, "b": 0}, "q2": {"c": 1}}
    run = {"q1": {"a": 0.5, "b": 0.5, "c": 0.1}, "q2": ["c", "a"]}
    write_qrels(qrels, tmp_path / "x.qrels")
    write_run(run, tmp_path / "x.run", tag="t")
    assert read_qrels(tmp_path / "x.qrels") == qrels
    back = read_run(tmp_path / "x.run")
    assert list(back["q1"]) == ["b", "a", "c"]  # tie: doc id descending, as trec_eval
    assert list(back["q2"]) == ["c", "a"]
    first = (tmp_path / "x.run").read_text().splitlines()[0]
    assert first == "q1 Q0 b 1 0.5 t"


@pytest.mark.parametrize(
    "text, reader, words",
    [
        ("q1 0 a 1\nq1 0 a\n", read_qrels, "x.txt:2: a qrels line has 4 fields"),
        ("q1 0 a high\n", read_qrels, "grade 'high' is not a whole number"),
        ("q1 0 a 1\nq1 0 a 2\n", read_qrels, "judges doc a twice"),
        ("q1 Q0 a 1 nan t\n", read_run, "score is NaN"),
        ("q1 Q0 a 1 0.3 t\nq1 Q0 a 2 0.2 t\n", read_run, "retrieves doc a twice"),
    ],
)
def test_trec_errors_name_file_and_line(tmp_path, text, reader, words):
    (tmp_path / "x.txt").write_text(text)
    with pytest.raises(ValueError) as info:
        reader(tmp_path / "x.txt")
    assert words in str(info.value)


def test_write_run_rejects_duplicates_and_spaces(tmp_path):
    with pytest.raises(ValueError, match="twice"):
        write_run({"q": ["a", "a"]}, tmp_path / "r")
    with pytest.raises(ValueError, match="whitespace"):
        write_run({"q": ["a b"]}, tmp_path / "r")


def test_corpus_loads():
    corpus = load_corpus()
    assert len(corpus) >= 40
    assert all(doc.text.startswith("# ") for doc in corpus.values())


def test_every_query_validates_and_quotes_match():
    corpus = load_corpus()
    queries = load_queries()
    assert len(queries) >= 250
    for q in queries:
        for span in q.gold:
            assert 0 <= span.start < span.end <= len(corpus[span.doc].text)
            assert span.text(corpus).strip()


def test_load_queries_filters():
    dev_easy = load_queries(slice="easy", split="dev")
    assert dev_easy and all(q.slice == "easy" and q.split == "dev" for q in dev_easy)
    with pytest.raises(ValueError, match="slice must be one of"):
        load_queries(slice="medium")


@pytest.mark.parametrize(
    "obj, words",
    [
        ("{not json", "malformed JSON"),
        ({"qid": "x"}, "missing field 'question'"),
        (
            {
                "qid": "x",
                "question": "?",
                "answer": "a",
                "slice": "easy",
                "kind": "fact",
                "split": "dev",
                "gold": [{"doc": "nope", "start": 0, "end": 5, "grade": 3}],
            },
            "unknown doc id 'nope'",
        ),
        (
            {
                "qid": "x",
                "question": "?",
                "answer": "a",
                "slice": "easy",
                "kind": "fact",
                "split": "dev",
                "gold": [{"doc": "hr-annual-leave", "start": 0, "end": 10**7, "grade": 3}],
            },
            "is outside hr-annual-leave",
        ),
    ],
)
def test_malformed_query_lines_are_reported_with_location(obj, words):
    line = obj if isinstance(obj, str) else json.dumps(obj)
    with pytest.raises(ValueError) as info:
        _parse_query(line, "queries.jsonl:7", load_corpus())
    assert "queries.jsonl:7" in str(info.value) and words in str(info.value)


def test_data_dir_is_found_from_anywhere(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert (data_dir() / "handbook").is_dir()
