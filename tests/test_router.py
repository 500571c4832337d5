"""labkit.measures.router: the source chapter's router printout, window filtering, bad input."""

import pytest

from labkit.data.toys import ROUTER_COST as COST
from labkit.data.toys import ROUTER_PASS as PASS
from labkit.data.toys import ROUTER_RANKING as ROUTER
from labkit.measures import router

PRINTOUT = """\
r1 summarise email         grades=[2, 3, 2, 2, 2] RR=1.00 NDCG@3=0.93 regret=$+0.3
r2 SQL 3-table join        grades=[0, 3, 2, 2, 0] RR=0.50 NDCG@3=0.55 regret=$+0.4
r3 RAG 80k-token context   grades=[2, 3, 0, 0, 0] RR=1.00 NDCG@3=0.91 regret=$+10.0
r4 intent classification   grades=[3, 2, 0, 2, 2] RR=1.00 NDCG@3=0.81 regret=$+0.0
MRR=0.875  Hit@1=0.75  NDCG@3=0.801  mean cascade regret=$2.67/1M tok"""


def test_source_chapter_printout():
    table = router.evaluate_router(ROUTER, PASS, COST, k=3)
    lines = [
        f"{req:26} grades={row.grades} RR={row.RR:.2f} NDCG@3={row['nDCG@3']:.2f} regret=${row.regret:+.1f}"
        for req, row in table.iterrows()
    ]
    m = table.attrs["mean"]
    lines.append(
        f"MRR={m.RR:.3f}  Hit@1={m['hit@1']:.2f}  NDCG@3={m['nDCG@3']:.3f}  mean cascade regret=${m.regret:.2f}/1M tok"
    )
    assert "\n".join(lines) == PRINTOUT


def test_window_filter():
    windows = {"small": 100, "big": 1000}
    cost = {"small": 1.0, "big": 5.0}
    assert router.cheapest_fitting(90, windows, cost) == "small"
    assert router.cheapest_fitting(5000, windows, cost) is None
    errors = router.window_filter_errors([110, 90, 500], [95, 120, 500], windows, cost)
    assert errors == {
        "requests": 3,
        "overflow": pytest.approx(1 / 3),  # 110 tokens estimated at 95: "small" kept, the prompt is cut
        "overpay": pytest.approx(1 / 3),  # 90 tokens estimated at 120: "small" dropped, "big" paid for
        "recall": pytest.approx(2 / 3),  # the right model survives for 110 and 500, not for 90
    }


def test_filter_recall_leaves_out_requests_no_model_holds_and_equals_one_minus_overpay():
    windows = {"small": 100, "big": 1000}
    cost = {"small": 1.0, "big": 5.0}
    errors = router.window_filter_errors([5000, 90, 50], [5000, 120, 40], windows, cost)
    assert errors["recall"] == pytest.approx(1 / 2)  # 5000 fits nothing: out of the denominator
    assert router.window_filter_errors([5000], [10], windows, cost)["recall"] is None
    true, est = [80, 95, 99, 101, 120, 900, 990], [70, 101, 99, 99, 130, 1001, 980]
    errors = router.window_filter_errors(true, est, windows, cost)
    assert errors["recall"] == pytest.approx(1 - errors["overpay"])
    row = router.routing_at_k(true, est, windows, cost)
    assert row["filter recall"] == errors["recall"] and row["filter overpay"] == errors["overpay"]


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda: router.evaluate_router({"r": ["nano"]}, {"r": set()}, COST), "no model passes"),
        (lambda: router.evaluate_router({"r": ["nano", "nano"]}, {"r": {"nano"}}, COST), "ranks a model twice"),
        (lambda: router.evaluate_router({"r": ["nano"]}, {"r": {"xl"}}, COST), "never reaches a passing model"),
        (lambda: router.grade("gpt-9", {"nano"}, COST), "has no cost"),
        (lambda: router.window_filter_errors([1], [], COST, COST), "one value per request"),
        (lambda: router.rag_prompts([], {}, {}, 0), "k must be >= 1"),
    ],
)
def test_bad_input(call, words):
    with pytest.raises(ValueError) as info:
        call()
    assert words in str(info.value)


def test_rag_prompts_counted_by_their_parts_equal_the_whole_prompts_counts():
    # 09's explorer counts each k's prompts from cached part counts: exact for the WordPiece tokenizer, which
    # splits at whitespace (every prompt of the handbook at three k, against counting the whole prompt).
    from labkit.retrieval.embeddings import count_tokens, count_tokens_of_parts
    from labkit.retrieval.retrievers import make_run
    from labkit.studies import handbook as hb

    h = hb.handbook()
    queries = h.queries[:60]
    run = make_run(h.hybrid, queries, 20)
    for k in (1, 5, 20):
        parts = router.rag_prompt_parts(queries, run, h.texts, k)
        prompts = router.rag_prompts(queries, run, h.texts, k)
        assert prompts[0].startswith(router.RAG_INSTRUCTION) and len(parts[0]) == k + 1
        assert count_tokens_of_parts(parts) == count_tokens(prompts)
    assert count_tokens_of_parts([["just one part"]]) == count_tokens(["just one part"])
    with pytest.raises(ValueError, match=r"texts\[0\] must be a string"):
        count_tokens_of_parts([[3]])
