"""Benchmark: labkit.measures.metrics.evaluate against pytrec_eval in the same process.

10,000 queries x 100 retrieved documents, ~10 judged per query (seeded).
Prints wall-clock seconds (best of 3) and the ratio to pytrec_eval for
dict input and for a long DataFrame. Targets: <= 1.0x from dicts, <= 0.3x
from a DataFrame. Not a test: timings are printed, never asserted.

    .venv/bin/python bench/metrics_bench.py [--queries N]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd
import pytrec_eval

from labkit.measures.metrics import evaluate

METRICS = ("nDCG@10", "P@10", "R@100", "RR@10", "hit@5")
TREC = {"ndcg_cut_10", "P_10", "recall_100", "recip_rank"}


def make_data(n_queries: int, depth: int = 100, judged: int = 10, seed: int = 42):
    rng = np.random.default_rng(seed)
    n_docs = 50_000
    run, qrels = {}, {}
    for q in range(n_queries):
        qid = f"q{q}"
        docs = rng.choice(n_docs, depth, replace=False)
        scores = np.round(rng.random(depth), 3)  # rounding makes ties
        run[qid] = {f"d{d}": float(s) for d, s in zip(docs, scores, strict=True)}
        pool = np.concatenate([docs[: judged // 2], rng.choice(n_docs, judged - judged // 2)])
        qrels[qid] = {f"d{d}": int(g) for d, g in zip(pool, rng.integers(0, 4, judged), strict=True)}
    frame = pd.DataFrame(
        [(q, d, s) for q, ranking in run.items() for d, s in ranking.items()], columns=["qid", "doc", "score"]
    )
    return run, qrels, frame


def best_of(fn, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=10_000)
    args = parser.parse_args()
    run, qrels, frame = make_data(args.queries)
    print(f"{args.queries} queries x 100 retrieved, ~10 judged each ({len(frame):,} run rows)")

    def trec():
        evaluator = pytrec_eval.RelevanceEvaluator(qrels, TREC)
        return evaluator.evaluate(run)

    t_ref = best_of(trec)
    t_dict = best_of(lambda: evaluate(run, qrels, METRICS))
    t_frame = best_of(lambda: evaluate(frame, qrels, METRICS))
    print(f"{'pytrec_eval (dicts)':28s} {t_ref:7.3f} s   1.00x")
    print(f"{'labkit evaluate (dicts)':28s} {t_dict:7.3f} s   {t_dict / t_ref:.2f}x   target <= 1.0x")
    print(f"{'labkit evaluate (DataFrame)':28s} {t_frame:7.3f} s   {t_frame / t_ref:.2f}x   target <= 0.3x")


if __name__ == "__main__":
    main()
