"""labkit.retrieval.grid: remapped gold, costs, and the split rate on real spans."""

from types import SimpleNamespace

import pytest

from labkit.data.corpus import Span, load_corpus, load_queries
from labkit.retrieval.grid import ChunkGrid, _first_found, evidence_recall, gold_split_rate
from labkit.text.chunking import chunk_document


def test_gold_split_rate_hand_worked():
    chunks = chunk_document(
        "d", "one two three four five six seven eight nine ten", 4, 0
    )  # chars [0,19) [19,38) [38,48)
    q = SimpleNamespace(qid="q", gold=[Span("d", 8, 13, 3), Span("d", 14, 23, 3), Span("d", 0, 3, 1)])
    assert gold_split_rate([q], chunks) == 0.5  # "three" is whole, "four five" is cut; grade 1 is not counted
    with pytest.raises(ValueError, match="no gold span has grade >= 3"):
        gold_split_rate([SimpleNamespace(qid="x", gold=[Span("d", 0, 3, 1)])], chunks)


def test_evidence_held_whole_or_covered_by_the_union_of_the_retrieved_chunks():
    chunks = chunk_document("d", "one two three four five six seven eight nine ten", 4, 0)  # d#0 d#1 d#2
    q = SimpleNamespace(qid="q", gold=[Span("d", 8, 13, 3), Span("d", 14, 23, 3)])  # "three"; "four five", cut
    assert evidence_recall({"q": ["d#0"]}, [q], chunks, 1) == {"q": 0.5}
    assert evidence_recall({"q": ["d#0"]}, [q], chunks, 1, held="union") == {"q": 0.5}  # half of "four five"
    assert evidence_recall({"q": ["d#0", "d#1"]}, [q], chunks, 2) == {"q": 0.5}
    assert evidence_recall({"q": ["d#1", "d#0"]}, [q], chunks, 2, held="union") == {"q": 1.0}  # both pieces
    assert evidence_recall({"q": ["d#2", "d#1"]}, [q], chunks, 2, held="union") == {"q": 0.0}
    with pytest.raises(ValueError, match="held must be one of"):
        evidence_recall({"q": []}, [q], chunks, 1, held="any")


def test_first_found_is_the_rank_at_which_a_span_is_first_held():
    chunks = chunk_document("d", "one two three four five six seven eight nine ten", 4, 0)  # d#0 d#1 d#2
    q = SimpleNamespace(qid="q", gold=[Span("d", 8, 13, 3), Span("d", 14, 23, 3), Span("d", 0, 3, 1)])
    run = {"q": ["d#2", "d#1", "d#0"]}  # "three" whole in d#0; "four five" cut: d#0 + d#1 cover it by rank 3
    assert _first_found(run, [q], chunks, "whole") == {"q": [3, None]}  # grade 1 is not counted
    assert _first_found(run, [q], chunks, "union") == {"q": [3, 3]}
    with pytest.raises(ValueError, match="empty gold span"):
        _first_found({"e": ["d#0"]}, [SimpleNamespace(qid="e", gold=[Span("d", 5, 5, 3)])], chunks, "whole")


def test_grid_evidence_columns_are_evidence_recall_averaged_per_slice():
    """evaluate() reads ER@k and EC@k off each span's first rank found: exactly evidence_recall's numbers."""
    import pandas as pd

    grid = ChunkGrid(load_corpus(), load_queries(split="dev"), retrievers=("bm25", "dense"))
    chunks, _, runs = grid._get(64, 16)
    for k in (1, 3, 10, 20):
        table = grid.evaluate(64, 16, k=k, evidence=True)
        for metric, held in (("ER", "whole"), ("EC", "union")):
            for name, run in runs.items():
                er = pd.Series(evidence_recall(run, grid.queries, chunks, k, held=held))
                by_slice = er.groupby(er.index.map(grid.groups)).mean()
                assert table[(f"{metric}@{k}", name)].drop("all").to_dict() == by_slice.to_dict()
                assert table.loc["all", (f"{metric}@{k}", name)] == er.mean()


def test_grid_evaluates_each_chunking_with_remapped_labels():
    grid = ChunkGrid(load_corpus(), load_queries(split="dev"), retrievers=("bm25",))
    table = grid.evaluate(128, 32, k=10)
    assert list(table.index) == ["easy", "hard", "real", "all"]
    assert list(table.columns) == [("R@10", "bm25"), ("nDCG@10", "bm25")]
    assert 0 < table.loc["all", ("R@10", "bm25")] <= 1
    small, big = grid.costs(64, 32), grid.costs(256, 0)
    assert small["cost x"] > 1.4 and big["cost x"] == pytest.approx(1.0)
    assert small["split rate"] < grid.costs(64, 0)["split rate"]  # overlap keeps more answers whole
    assert big["words read at k"] > small["words read at k"]


def test_grid_bad_input():
    with pytest.raises(ValueError, match="unknown retriever"):
        ChunkGrid(load_corpus(), load_queries(), retrievers=("tfidf",))
    with pytest.raises(ValueError, match="queries is empty"):
        ChunkGrid(load_corpus(), [])
    with pytest.raises(ValueError, match="must be smaller than size"):
        ChunkGrid(load_corpus(), load_queries(), retrievers=("bm25",)).evaluate(64, 64)


def test_per_query_keeps_what_evaluate_averages():
    grid = ChunkGrid(load_corpus(), load_queries(split="dev"), retrievers=("bm25",))
    frame = grid.per_query(128, 32, k=10)
    assert list(frame.columns) == ["slice", "R@k bm25", "nDCG@k bm25", "ER@k bm25", "EC@k bm25"]
    assert (frame["EC@k bm25"] >= frame["ER@k bm25"]).all()  # a span held whole is covered too
    assert len(frame) == len(grid.queries) and set(frame["slice"]) == {"easy", "hard", "real"}
    means = grid.evaluate(128, 32, k=10, evidence=True)
    for slice_name, group in frame.groupby("slice"):
        assert group["R@k bm25"].mean() == pytest.approx(means.loc[slice_name, ("R@10", "bm25")])
        assert group["ER@k bm25"].mean() == pytest.approx(means.loc[slice_name, ("ER@10", "bm25")])
        assert group["EC@k bm25"].mean() == pytest.approx(means.loc[slice_name, ("EC@10", "bm25")])
    cells = grid.by_slice((128,), (0.25,), column="ER@k bm25", k=10)
    assert list(cells.index) == [(128, 32)] and list(cells.columns) == ["easy", "hard", "real"]
    assert cells.loc[(128, 32), "hard"] == pytest.approx(frame.groupby("slice")["ER@k bm25"].mean()["hard"])


def test_per_query_and_by_slice_bad_input():
    grid = ChunkGrid(load_corpus(), load_queries(split="dev"), retrievers=("bm25",))
    with pytest.raises(ValueError, match="k must be"):
        grid.per_query(128, 32, k=0)
    with pytest.raises(ValueError, match=r"column must be one of the per-query columns \['R@k bm25'"):
        grid.by_slice((128,), (0.25,), column="ER@k dense")
    with pytest.raises(ValueError, match="overlap_shares"):
        grid.by_slice((128,), (1.0,))


def test_evidence_curve_is_evidence_recall_at_every_k_in_one_pass():
    grid = ChunkGrid(load_corpus(), load_queries(split="dev"), retrievers=("bm25",))
    curve = grid.evidence_curve(128, 32, "bm25", max_k=12)
    chunks, _, runs = grid._get(128, 32)
    for k in (1, 2, 5, 12):
        er = evidence_recall(runs["bm25"], grid.queries, chunks, k)
        assert curve[k - 1] == pytest.approx(sum(er.values()) / len(er), abs=1e-12)
    assert curve == sorted(curve)  # more chunks read never lose evidence
    with pytest.raises(ValueError, match="retriever must be one of"):
        grid.evidence_curve(128, 32, "dense")


def test_budget_k_reads_about_the_same_words_at_every_size():
    from labkit.retrieval.grid import budget_k

    assert [budget_k(size, 1280) for size in (64, 128, 256)] == [20, 10, 5]  # 05's equal budget
    assert budget_k(256, 300) == 1 and budget_k(512, 100) == 1  # a budget below one chunk still reads one
    assert all(budget_k(s, b) * s <= b or budget_k(s, b) == 1 for s in (32, 64, 100, 256) for b in (50, 640, 999))
    with pytest.raises(ValueError, match="budget"):
        budget_k(128, 0)
    with pytest.raises(ValueError, match="size"):
        budget_k(12.5, 640)


def test_runs_are_copies_of_each_retrievers_ranking():
    grid = ChunkGrid(load_corpus(), load_queries(split="dev")[:5], retrievers=("bm25",))
    runs = grid.runs(128, 32)
    qid = grid.queries[0].qid
    assert list(runs) == ["bm25"] and len(runs["bm25"][qid]) == 100
    runs["bm25"][qid].clear()
    assert len(grid.runs(128, 32)["bm25"][qid]) == 100
