"""Exercises of chapter 04b (reranking): expected values from the toy or the chapter's objects."""

from __future__ import annotations

from labkit.data import toys
from labkit.exercises._base import Exercise
from labkit.measures import metrics
from labkit.retrieval import rerank

MODEL = "1.5B yes/no"  # labkit.studies.rerank_study.MODEL (not imported: a check never builds a chapter)


def _toy_shallow() -> float:
    top = rerank.rerank(toys.RERANK_CANDIDATES[:4], toys.RERANK_SCORES[:4], k2=3)
    return float(metrics.evaluate({"q": top}, {"q": toys.RERANK_GRADES}, ("nDCG@3",)).mean["nDCG@3"])


def _deeper(depth) -> str:
    col = "nDCG@3 lambdarank"
    deep, shallow = round(float(depth.loc[100, col]), 3), round(float(depth.loc[20, col]), 3)
    return "higher" if deep > shallow else "lower" if deep < shallow else "same"


EXERCISES: dict[str, Exercise] = {
    "4b.1": Exercise(
        "nDCG@3 of the toy's reranked top 3 when stage 1 passes only k1 = 4 candidates",
        _toy_shallow,
        "rerank D1-D4 by their scores, keep 3, and score them against all three judged chunks (IDCG of 3, 2, 1)",
    ),
    "4b.2": Exercise(
        "predict: the learned reranker's nDCG@3 at k1 = 100 against k1 = 20 (higher, lower or same)",
        _deeper,
        "read the lambdarank column of the depth table at k1 = 20 and 100, to three decimals",
        objects={"depth": "the chapter's depth table (k1 -> ceiling, cut and lambdarank nDCG@3)"},
    ),
    "4b.3": Exercise(
        "how many of the 30 questions the model reranker demotes out of the top 3",
        lambda hurt_by: len(hurt_by[MODEL]),
        "count the questions listed under the model reranker in 'Where the reranker hurts'",
        tol=0,
        objects={"hurt_by": "{reranker: the questions it demotes} from 'Where the reranker hurts'"},
    ),
    "4b.4": Exercise(
        "the learned reranker's nDCG@3 gain over the cut on the dev queries at k1 = 20",
        lambda dev_gains: float(dev_gains.loc[("all", 3, "nDCG"), "difference"]),
        "dev_gains.loc[('all', 3, 'nDCG'), 'difference']",
        objects={"dev_gains": "rs.gains(20, rs.LTR, dev): the learned reranker's gains on the dev queries"},
    ),
}
