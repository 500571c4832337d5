"""04b's study: stage 1's candidates, the two rerankers on the handbook, and the reranked answers' labels."""

from __future__ import annotations

import json

import pytest

from labkit.retrieval import rerank
from labkit.studies import handbook as hb
from labkit.studies import rerank_answers as ra
from labkit.studies import rerank_study as rs


def test_candidates_are_the_hybrid_top_k1_and_the_model_questions_are_fixed_by_id():
    h = hb.handbook()
    q = h.queries[0]
    assert list(rs.candidates(20)[q.qid]) == [c for c, _ in h.hybrid.search(q.search_text, 20)]
    assert rs.candidates(10)[q.qid] == rs.candidates(100)[q.qid][:10]
    qs = rs.model_questions()
    assert len(qs) == 30 and {q.split for q in qs} == {"test"}
    assert [sum(q.slice == s for q in qs) for s in ("easy", "hard", "real")] == [10, 10, 10]
    with pytest.raises(ValueError, match="k1 must be <= 100"):
        rs.candidates(101)


def test_rerankers_only_reorder_stage_one_and_refuse_what_was_not_recorded():
    q = rs.model_questions()[0]
    for name in rs.RERANKERS:
        assert sorted(rs.ranking(q.qid, name, 10)) == sorted(rs.candidates(10)[q.qid])
    assert sorted(rs.ranking(q.qid, rs.LTR, 100)) == sorted(rs.candidates(100)[q.qid])
    with pytest.raises(ValueError, match="k1 must be <= 10 for the model reranker"):
        rs.ranking(q.qid, rs.MODEL, 20)
    other = next(x for x in rs.test_questions() if x not in rs.model_questions())
    with pytest.raises(ValueError, match="not among the model reranker's questions"):
        rs.ranking(other.qid, rs.MODEL, 10)
    with pytest.raises(ValueError, match="reranker must be None"):
        rs.ranking(q.qid, "bm25", 10)


def test_the_learned_reranker_is_trained_on_dev_with_the_chapter_s_features():
    model = rs.learned()
    assert model.feature_names == rerank.FEATURES and model.booster.num_trees() == rerank.ROUNDS
    rows, names = rs.feature_rows()
    dev = [q.qid for q in hb.handbook().queries if q.split == "dev"]
    assert model.booster.num_feature() == len(names) and all(len(rows[qid]) == 100 for qid in dev)


def test_gains_give_paired_intervals_that_never_collapse():
    table = rs.gains(rs.MODEL_K1, rs.LTR)
    assert set(table.index.get_level_values("slice")) == {"easy", "hard", "real", "all"}
    hit = table.xs("hit", level="metric")
    assert ((hit["high"] - hit["low"]) > 0).all()
    row = table.loc[("all", 3, "nDCG")]
    assert row["difference"] == pytest.approx(row[rs.LTR] - row["cut at k2"])
    assert row["low"] <= row["difference"] <= row["high"]


def test_reranked_labels_are_validated_line_by_line(tmp_path):
    good = {"qid": "x", "reranker": rs.LTR, "label": "right", "why": "ok", "rater": "r"}
    path = tmp_path / "labels.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps(good | {"label": "great"}) + "\n")
    with pytest.raises(ValueError, match="line 2: label must be one of"):
        ra.reranked_labels(path)
    path.write_text(json.dumps(good) + "\n" + json.dumps(good) + "\n")
    with pytest.raises(ValueError, match="line 2: x with lambdarank is labelled twice"):
        ra.reranked_labels(path)
    path.write_text(json.dumps({k: v for k, v in good.items() if k != "why"}) + "\n")
    with pytest.raises(ValueError, match="line 1: no 'why'"):
        ra.reranked_labels(path)


def test_every_reranked_answer_the_chapter_reads_has_a_label():
    table = ra.reader_table()
    assert len(table) == 3 * 30 and table["label"].notna().all()
    assert (table[table["same answer as the cut"]]["label from"] == "07").all()


def test_separation_counts_pairs_within_each_question():
    table, split = rs.separation()
    assert list(table.index) == ["stage 1 (RRF score)", rs.LTR, rs.MODEL]
    n = sum(len(v[0]) + len(v[1]) for v in [split[rs.LTR]])
    assert n == len(rs.model_questions()) * rs.MODEL_K1
    assert split[rs.LTR][0] and split[rs.MODEL][1]


def test_separation_gives_each_scorer_auc_per_question_on_the_same_questions_for_a_paired_comparison():
    table, _ = rs.separation()
    per_question = table.attrs["per question"]
    assert set(per_question) == set(table.index)
    assert {len(v) for v in per_question.values()} == set(table["questions"])  # one list each, the same questions
    assert all(0 <= x <= 1 for v in per_question.values() for x in v)
