"""labkit.exercises.check prints one deterministic line per answer: every exercise accepts its right answer and refuses
a
wrong one.

Right answers are worked by hand (the source's printed figures where it prints them); exercises checked against
a chapter's objects get small stand-ins of those objects with the same shape, so no pipeline is built here.
"""

import ast
import time
from pathlib import Path

import pandas as pd
import pytest

from labkit.data import toys
from labkit.data.corpus import load_corpus
from labkit.exercises import check


def _scan_finding():
    """A member of a declared family of 18 whose interval holds 0: the verdict 8.5 must read."""
    import numpy as np

    from labkit.measures import stats

    rng = np.random.default_rng(42)
    base = rng.random(40)
    pairs = {f"m{i}": (base + rng.normal(0.0, 0.2, 40), base) for i in range(18)}
    return stats.compare_many(pairs).attrs["findings"]["m0"]


def _finding(rule, labels):
    """07's GEN_FAIL share by the rule against by the rater labels, as the chapter decides it: paired 0/1."""
    from labkit.measures import stats

    return stats.Family("GEN_FAIL share", ["rule - labels"]).findings(
        {"rule - labels": (rule, labels)}, kind="paired 0/1"
    )["rule - labels"]


CHECK_PY = Path(check.__file__)


def _by_slice(metric: str, real: dict[str, float]) -> pd.DataFrame:
    """A per-slice table with (metric, retriever) columns, like fusion.hybrid_table and metrics.compare_runs."""
    columns = pd.MultiIndex.from_tuples([(metric, name) for name in real])
    return pd.DataFrame([[0.9] * len(real), list(real.values())], index=["easy", "real"], columns=columns)


TINY_QRELS = {"q1": {"a": 1}, "q2": {"b": 2}, "q3": {"c": 1}}
TINY_RUNS = {  # q1 found by both, q2 and q3 only by dense
    "bm25": {"q1": ["a", "x"], "q2": ["x", "y"], "q3": ["y"]},
    "dense": {"q1": ["a"], "q2": ["y", "b"], "q3": ["c"]},
}
GRID = pd.DataFrame(
    {"ER@k bm25": [0.5, 0.7, 0.6], "ER@k dense": [0.8, 0.1, 0.1]},
    index=pd.MultiIndex.from_tuples([(64, 16), (128, 32), (256, 64)], names=["size", "overlap"]),
)
VERDICTS = pd.DataFrame(
    {
        "label": ["supported", "unsupported", "unsupported", "supported"],
        "always supported": ["supported"] * 4,
        "1.5B + quote guard guarded": [True, False, True, False],
    }
)
SWEEP = pd.DataFrame({"GEN_FAIL": [0, 4, 6, 7, 9], "RET_FAIL": [9, 5, 3, 2, 1]}, index=pd.Index([1, 3, 5, 10, 20]))
POSITION_TABLE = pd.DataFrame(  # run_study's columns; q1 follows a U at 5, q2 is right everywhere, q3 nowhere
    [{"qid": q, "condition": "position", "n_docs": n, "position": p, "correct": right}
     for q, rights in {"q1": (True, False, True), "q2": (True, True, True), "q3": (False, False, False)}.items()
     for n, positions in ((5, (1, 3, 5)), (10, (1, 5, 10)))
     for p, right in zip(positions, rights if n == 5 else (True, True, True), strict=True)]
    + [{"qid": "q1", "condition": "oracle", "n_docs": 1, "position": 1, "correct": True}]
)  # fmt: skip
REWRITES = pd.DataFrame(
    {"hit@10": [0.625, 0.5, 0.9]},
    index=pd.MultiIndex.from_tuples([("follow-up as typed", "hybrid"), ("follow-up as typed", "bm25"),
                                     ("rewritten", "hybrid")]),
)  # fmt: skip
BY_KIND = pd.DataFrame({"kind": ["fact", "multihop", "multihop", "multihop"], "all evidence@10": [1.0, 1.0, 0.0, 0.0]})
BY_K = pd.DataFrame({"share to mini": [0.0, 0.1, 0.4, 0.948, 0.2]}, index=pd.Index([1, 3, 5, 10, 20], name="k"))
REMOTE_WORDS = load_corpus()["hr-remote-work-2025"].n_words
SET_SCORES = pd.DataFrame(  # real beats synthetic-easy for BM25 here, so the right answer is not the usual one
    {"R@10": [0.7, 0.9, 0.8, 0.5]},
    index=pd.MultiIndex.from_tuples([("real", "bm25"), ("real", "dense"), ("synthetic-easy", "dense"),
                                     ("synthetic-easy", "bm25")], names=["set", "retriever"]),
)  # fmt: skip
HELDOUT = pd.DataFrame({"rating": [5, 4, 2, 1, 3], "model": [5, 3, 2, None, 3]})  # 3 of 5 equal; None disagrees
RATED = pd.DataFrame(
    {"qid": [f"syn-{s}-{i:03d}" for s, i in (("easy", 1), ("hard", 2), ("hard", 3), ("hard", 4))] * 2,
     "set": ["synthetic-easy", "synthetic-hard", "synthetic-hard", "synthetic-hard"] * 2,
     "retriever": ["hybrid"] * 4 + ["bm25"] * 4, "method": [None, "jaccard", "embedding", "jaccard"] * 2,
     "realism": [5, 5, 4, 5] * 2, "question": ["q"] * 8, "R@10": [1.0] * 8, "RR@10": [1.0] * 8}
)  # fmt: skip

# number: (right answer, wrong answer, chapter objects)
CASES = {
    "0.1": (len(load_corpus()), len(load_corpus()) + 1, {}),
    "0.2": ("1/4", 0.3, {}),  # 1 / log2(16), given as a fraction
    "0.3": (4, 3, {}),  # rank 3 keeps exactly one half
    "2.1": (
        list(toys.SYNTH_SOURCE_SIMILAR),
        toys.SYNTH_SOURCE_SIMILAR[::-1],
        {},
    ),  # the order matters: most similar first
    "2.2": ("real", "synthetic-easy", {"scores": SET_SCORES}),
    "2.3": (0.6, 0.75, {"heldout": HELDOUT}),  # 0.75 would drop the unreadable reply instead of counting it
    "2.4": (2, 3, {"frame": RATED}),  # two hard questions rated 5, counted once (one retriever)
    "1.1": ("C", "A", {"lists": [["A", "B", "C", "D", "E"], ["F", "C", "G", "H", "A"]]}),  # rank sums 5 vs 6
    "1.2": (
        "no",
        "yes",
        {"test_table": pd.DataFrame({"low": [0.01, -0.007]}, index=["easy · nDCG@10: a - b", "all · nDCG@10: a - b"])},
    ),
    "1.3": (0.65, 0.72, {"dev_table": _by_slice("R@10", {"bm25": 0.65, "dense": 0.6, "hybrid": 0.72})}),
    "1.4": (0.03151, 0.03227, {}),  # 1/62 + 1/65; the wrong one is D7's score
    "1.5": ("D4", "D7", {}),  # 1/61 + 0.2/64 beats 0.2/61 + 1/63
    "1.6": (
        "dense",
        "hybrid",
        {
            "by_slice": pd.DataFrame(
                {"R@10": [0.9, 0.3, 0.6, 0.5]},
                index=pd.MultiIndex.from_tuples(
                    [("easy", "hybrid"), ("real", "bm25"), ("real", "dense"), ("real", "hybrid")]
                ),
            )
        },
    ),
    "1.7": (2, 3, {"runs": TINY_RUNS, "qrels": TINY_QRELS}),
    "3.1": (1 / 3, 0.5, {}),  # one relevant in the top 3, divided by k=3, not by 2
    "3.2": (1.0, 0.25, {}),
    "3.3": (0.8212, 0.5, {}),  # (2 + 3/2) / (3 + 2/log2(3))
    "3.4": ([3, 2, 1, 0, 0], [3, 2, 0, 1, 0], {}),
    "3.5": (" MRR ", "recall@k", {}),
    "3.6": (0.2832, 0.4307, {}),  # the chapter's printed figure; 0.4307 is the book IDCG's
    "3.7": (1, 2, {}),  # only at rank 1 does 3 beat X's 1 + 1/log2(3) + 1/2; at rank 2, 3/log2(3) = 1.89 does not
    "3.8": ("up", "down", {"by_thr": pd.DataFrame({"R@10": [0.97, 0.98]}, index=[1, 3])}),
    "3.9": ("same", "down", {}),  # nDCG reads the grades, not the threshold
    "4.1": (0.4583, 0.6111, {}),  # (1/3 + 1 + 0 + 1/2) / 4; the wrong one forgets q3
    "4.2": (0.25, 0.5, {}),
    "4.3": (22.0, 20.4, {}),  # 75.8 - 53.8 in Liu et al.'s table
    "4.4": ("Hit rate@k", "MRR", {"runs": {"hybrid": {"q1": ["a"], "q2": list("vwxyzb")}}, "qrels": TINY_QRELS}),
    "4.5": ("lower", "higher", {"narrow": {1: 0.3353, 10: 0.0}, "wide": {1: 0.2857}}),
    "4.6": (1, 2, {"table": POSITION_TABLE}),  # q1 is right at 1 and 5 only; q2 also at 3; q3 never
    "5.1": (0.25, 0.375, {}),  # two of eight answers split at 256/64
    "5.2": (-(-REMOTE_WORDS // 64), REMOTE_WORDS // 64 - 1, {}),  # a new chunk every 64 words
    "5.3": ((128, 32), (64, 16), {"table": GRID}),
    "4b.1": (0.42, 1.0, {}),  # D2, D4, D1: grades 2, 0, 0; DCG 2 over IDCG 3 + 2/log2(3) + 1/2
    "4b.2": ("same", "higher", {"depth": pd.DataFrame({"nDCG@3 lambdarank": [0.5881, 0.5884]}, index=[20, 100])}),
    "4b.3": (2, 3, {"hurt_by": {"1.5B yes/no": [{"qid": "a"}, {"qid": "b"}], "lambdarank": []}}),
    "4b.4": (
        0.061,
        0.038,
        {
            "dev_gains": pd.DataFrame(
                {"difference": [0.0612]},
                index=pd.MultiIndex.from_tuples([("all", 3, "nDCG")], names=["slice", "k2", "metric"]),
            )
        },
    ),
    "5.4": (False, True, {}),  # at size 160 a boundary falls between the header and the Tokyo row
    "5.5": (False, True, {"table": GRID, "double": GRID.assign(**{"ER@k dense": [0.1, 0.9, 0.1]})}),
    "6.1": (0.67, 0.5, {}),
    "6.2": (0.0, 1.0, {"table": VERDICTS}),
    "6.3": (0.8, 0.72, {}),  # (0.8 + 0.6 - 1) / (0.9 + 0.6 - 1)
    "6.4": (2, 4, {"table": VERDICTS}),
    "7.1": ("a tie - read the traces to decide", "retrieval", {}),
    "7.2": (7, 6, {"sweep": SWEEP}),
    "7.3": (0, 1, {}),  # every toy's gold chunk is at rank 1 or absent: k=1 changes no cell
    "7.4": ("Hard", "easy", {"definition_gap": pd.Series({"easy": 1, "hard": 21, "real": 5})}),
    "7.5": (
        "cannot tell",
        "higher",
        {"gen_fail_finding": _finding([1] * 20 + [0] * 253, [0] * 20 + [1] * 10 + [0] * 243)},
    ),
    "8.1": (0.454, 0.9, {"scorecard": _by_slice("R@3", {"bm25": 0.31, "hybrid": 0.4541})}),
    "8.2": (0.625, 0.9, {"rewrite_table": REWRITES}),
    "8.3": (0.333, 0.5, {"by_kind": BY_KIND}),
    "8.4": ("Tell", "down", {"change_by_slice": {"hard": (0.1, 0.01, 0.2), "real": (-0.17, -0.36, 0.03)}}),
    "8.5": ("cannot tell", "yes", {"found": _scan_finding()}),  # a declared member that is not shown
    "9.1": (0.55, 0.6, {}),  # (3/log2(3) + 2/2) / (3 + 2/log2(3) + 2/2)
    "9.2": (0.175, 2.675, {}),  # regrets 0.3, 0.4, 0 and 0 once r3 tries large first (10 before)
    "9.3": (0.948, 0.4, {"by_k": BY_K}),
    "9.4": (1.0, 0.81, {}),  # nano last: r4's top 3 are mini, mid, large (3, 2, 2), the ideal; 0.81 is before
    "9.5": ("lower", "same", {"by_k": pd.DataFrame({"filter recall": [1.0]}, [10]), "at_11": {"filter recall": 0.77}}),
    "10.1": (2, 3, {"rows": [{"answerable": True}, {"answerable": False}, {"answerable": True}]}),
    "10.2": (0.25, 0.3, {"at": {3: pd.DataFrame({"nDCG@k hybrid": [0.5, 0.0]})}}),
    "10.3": (
        1,
        2,
        {
            "answers": pd.DataFrame({"qid": ["a", "b", "c"], "retrieved": [False, False, True]}),
            "labels": {"a": "right", "b": "partly", "c": "wrong"},
        },
    ),  # b only: c was retrieved, a right
}


def test_every_exercise_has_a_case():
    assert sorted(CASES) == sorted(check.EXERCISES)


@pytest.mark.parametrize("number", sorted(CASES))
def test_right_answer_is_accepted_and_wrong_one_refused(number, capsys):
    right, wrong, objects = CASES[number]
    start = time.perf_counter()
    check.exercise(number, right, **objects)
    check.exercise(number, wrong, **objects)
    check.exercise(number, None, **objects)
    elapsed = time.perf_counter() - start
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"Exercise {number}: correct."
    assert out[1].startswith(f"Exercise {number}: not yet") and ". Hint: " in out[1]
    assert (
        out[2] == check.not_answered(number) == f"Exercise {number}: not answered yet - replace None with your answer."
    )
    assert elapsed < 0.5, f"exercise {number} took {elapsed:.2f} s to check"


def test_checks_never_rebuild_a_chapter():
    """check reads toys, small data files and the chapter's objects: it imports no retriever, index or model."""
    heavy = {"retrieval", "embeddings", "grid", "handbook", "positions", "llm", "reader", "widgets", "plots"}
    imported = set()
    for node in ast.walk(ast.parse(CHECK_PY.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("labkit"):
            imported.add(node.module.removeprefix("labkit").lstrip(".").split(".")[0])
            if node.module == "labkit":
                imported.update(alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            imported.update(
                a.name.removeprefix("labkit.").split(".")[0] for a in node.names if a.name.startswith("labkit.")
            )
    assert not imported & heavy, sorted(imported & heavy)


def test_numpy_and_pandas_answers_count_as_plain_values(capsys):
    import numpy as np

    check.exercise("3.4", np.array([3, 2, 1, 0, 0]))
    check.exercise("7.2", np.int64(7), sweep=SWEEP)
    check.exercise("3.5", " MRR ")
    assert capsys.readouterr().out.count("correct.") == 3


def test_a_missing_chapter_object_is_named():
    with pytest.raises(ValueError, match=r"table \(the dev grid.*check.exercise\('5.3', answer, table=table\)"):
        check.exercise("5.3", (128, 32))


def test_a_wrong_or_misspelt_chapter_object_is_a_clear_error():
    with pytest.raises(ValueError, match="exercise 5.3 takes only table; got tabel"):
        check.exercise("5.3", (128, 32), tabel=GRID)
    with pytest.raises(ValueError, match="exercise 3.1 takes no chapter object; got table"):
        check.exercise("3.1", 1 / 3, table=GRID)
    with pytest.raises(ValueError, match="could not read its value from sweep"):
        check.exercise("7.2", 7, sweep=BY_K)


def test_unknown_exercise():
    with pytest.raises(ValueError, match="unknown exercise"):
        check.exercise("9.9", 1)


@pytest.mark.parametrize("answer", [1 / 3, 0.33, 0.334, "1/3", " 0.33 ", "33%", "33.3 %"])
def test_equivalent_number_formats_are_accepted(answer, capsys):
    check.exercise("3.1", answer)  # P@3 of the running example: 1/3
    assert capsys.readouterr().out.strip() == "Exercise 3.1: correct."


@pytest.mark.parametrize("answer", [0.3, 0.34, "1/4", "one third", "1/0", [1 / 3]])
def test_near_misses_and_non_numbers_are_refused_with_the_tolerance(answer, capsys):
    check.exercise("3.1", answer)
    assert capsys.readouterr().out.startswith("Exercise 3.1: not yet (anything within ±0.005 of the expected value")


@pytest.mark.parametrize("answer", ["MRR", "mrr@k", " MRR@3 ", "Mrr"])
def test_words_ignore_case_spaces_and_at_k(answer, capsys):
    check.exercise("3.5", answer)
    assert capsys.readouterr().out.strip() == "Exercise 3.5: correct."


def test_counts_must_be_exact_and_say_so(capsys):
    check.exercise("5.2", 10_000)
    assert "(a whole number, exactly)" in capsys.readouterr().out
