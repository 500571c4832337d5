"""04b's explorer: its pure view, its HTML, and a control that offers only the k1 a reranker has."""

from __future__ import annotations

import pandas as pd
import pytest

from labkit.ui import widgets
from labkit.ui.widgets.explorer import html_cells, html_text

K1S, K2S = (10, 20), (3, 5, 10)
QIDS = ["q1", "q2", "q3", "q4"]
SLICES = {"q1": "easy", "q2": "hard", "q3": "real", "q4": "easy"}


def _metrics(shift: float) -> pd.DataFrame:
    cols = {f"{m}@{k}": [min(1.0, 0.2 * i + shift) for i in range(4)] for k in K2S for m in ("nDCG", "RR")}
    cols |= {f"hit@{k}": [float(i % 2) for i in range(4)] for k in K2S}
    return pd.DataFrame({"slice": [SLICES[q] for q in QIDS], **cols}, index=QIDS)


def fake_data() -> dict:
    rankers = {"cut at k": K1S, "lambdarank": K1S, "1.5B yes/no": (10,)}
    metrics = {(name, k1): _metrics(0.1 * i) for i, (name, ks) in enumerate(rankers.items()) for k1 in ks}
    chunks = [f"c{i}" for i in range(20)]
    rankings = {(name, k1): {q: (chunks[::-1] if name != "cut at k" else chunks)[:k1] for q in QIDS}
                for name, ks in rankers.items() for k1 in ks}  # fmt: skip
    cost = pd.DataFrame({"requests per query": [10, 20], "prompt tokens per query": [2800.0, 5600.0],
                         "seconds per query": [90.0, 180.0], "how": ["measured", "estimated"]},
                        index=pd.Index(K1S, name="k1"))  # fmt: skip
    return {"metrics": metrics, "rankings": rankings, "k1s": rankers, "k2s": K2S,
            "ceiling": {k1: pd.Series([0.5, 0.75, 1.0, 1.0], index=QIDS, name=f"R@{k1}") for k1 in K1S},
            "questions": {q: f"question {q}?" for q in QIDS}, "slices": SLICES,
            "qrels": {q: {"c19": 2} for q in QIDS}, "snippets": {c: f"text of {c}" for c in chunks},
            "cost": cost}  # fmt: skip


def test_the_view_is_per_slice_means_cut_against_reranked():
    view = widgets.rerank_view(fake_data(), 20, 3, "lambdarank", "q1")
    t = view["table"]
    assert t["nDCG@3 cut"]["easy"] == pytest.approx((0.0 + 0.6) / 2)
    assert t["nDCG@3 lambdarank"]["all"] == pytest.approx((0.1 + 0.3 + 0.5 + 0.7) / 4)
    assert t["R@20 (stage 1)"]["all"] == pytest.approx(0.8125)
    assert view["curve"]["1.5B yes/no"] == [pytest.approx(0.5), None]  # recorded at k1 = 10 only
    assert view["after"][0] == "c19" and view["model_cost"] is not None


@pytest.mark.parametrize(
    ("k1", "k2", "reranker", "qid", "message"),
    [
        (20, 3, "1.5B yes/no", "q1", r"k1 must be one of \[10\] for 1.5B yes/no"),
        (10, 3, "cut at k", "q1", "reranker must be one of"),
        (10, 4, "lambdarank", "q1", "k2 must be one of"),
        (10, 3, "lambdarank", "q9", "qid 'q9' is not among"),
    ],
)
def test_the_view_refuses_states_it_has_no_data_for(k1, k2, reranker, qid, message):
    with pytest.raises(ValueError, match=message):
        widgets.rerank_view(fake_data(), k1, k2, reranker, qid)


def test_the_html_shows_the_gold_the_cut_and_the_cost():
    out = widgets.rerank_html(widgets.rerank_view(fake_data(), 10, 3, "1.5B yes/no", "q2"))
    assert "gold, grade 2" in out["ranks"] and "question q2?" in html_text(out["ranks"])
    assert ("requests", "10") in html_cells(out["cost"], "cost") and "measured" in out["cost"]
    assert "nDCG@3 against k1" in out["chart"]
    lt = widgets.rerank_html(widgets.rerank_view(fake_data(), 20, 5, "lambdarank", "q2"))
    assert ("requests", "0") in html_cells(lt["cost"], "cost")


def test_the_model_reranker_locks_k1_at_the_one_it_was_recorded_at():
    ex = widgets.RerankExplorer(fake_data(), k1=20, k2=3, reranker="lambdarank")
    assert list(ex.k1.options) == [10, 20] and ex.result["k1"] == 20 and not ex.k1.disabled
    ex.reranker.value = "1.5B yes/no"
    assert ex.k1.value == 10 and ex.k1.disabled and ex.result["k1"] == 10 and "error" not in ex.result
    assert ex.message.value == ""
    ex.reranker.value = "lambdarank"
    assert not ex.k1.disabled and ex.result["reranker"] == "lambdarank"
    ex.k1.value = 20
    assert ex.result["k1"] == 20
    opened = widgets.RerankExplorer(fake_data(), k1=20, k2=3, reranker="1.5B yes/no")  # locked from the start
    assert opened.k1.value == 10 and opened.k1.disabled and "error" not in opened.result
    ex.k2.value = 10
    assert ex.result["k2"] == 10 and len(ex.result["after"]) == 10
    bundle = ex._repr_mimebundle_()
    assert "Run this cell" in bundle["text/html"]
