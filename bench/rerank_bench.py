"""Benchmark: what stage 2 costs a query on the handbook (chapter 04b), against k1.

The learned reranker's two steps, timed here: computing its ten features for one query's top k1 (BM25 and dense
scores for every chunk, the fused list, term overlaps) and scoring them with the fitted trees; and its training on
the dev queries. The model reranker is not re-run: its seconds per request are read from the recordings' provenance
(plan 04b-rerank), which say how they were measured. Printed, never asserted.

    .venv/bin/python bench/rerank_bench.py
"""

from __future__ import annotations

import statistics
import time

from labkit.generation import llm
from labkit.judges import pointwise
from labkit.retrieval import rerank
from labkit.studies import handbook as hb
from labkit.studies import rerank_study as rs


def main() -> None:
    h = hb.handbook()
    qs = rs.test_questions()[:40]
    print(f"the learned reranker, one query at a time ({len(qs)} test queries), ms per query")
    print(f"{'k1':>5} {'features p50':>13} {'max':>8} {'score p50':>10} {'max':>8}")
    model = rs.learned()
    for k1 in rs.K1S:
        cands = rs.candidates(k1)
        feats, scores = [], []
        for q in qs:
            t0 = time.perf_counter()
            rows, names = rerank.features([q.search_text], [cands[q.qid]], h)
            t1 = time.perf_counter()
            rerank.rerank(list(cands[q.qid]), model.scores(rows[0], names))
            t2 = time.perf_counter()
            feats.append(t1 - t0)
            scores.append(t2 - t1)
        print(f"{k1:5d} {1000 * statistics.median(feats):13.1f} {1000 * max(feats):8.1f} "
              f"{1000 * statistics.median(scores):10.2f} {1000 * max(scores):8.2f}")  # fmt: skip
    rows, names = rs.feature_rows()
    dev = [q.qid for q in h.queries if q.split == "dev"]
    grades = [[h.qrels.get(qid, {}).get(c, 0) for c in rs.candidates(rs.TRAIN_K1)[qid]] for qid in dev]
    t0 = time.perf_counter()
    rerank.LambdaRanker().fit([rows[qid] for qid in dev], grades, names)
    print(f"training on {len(dev)} dev queries x {rs.TRAIN_K1} candidates: {time.perf_counter() - t0:.2f} s")
    replay = llm.Replay(llm.DEFAULT_MODEL)
    seconds, tokens = [], []
    for p in rs.model_prompts():
        row = replay.rows.get(llm.prompt_key(llm.DEFAULT_MODEL, p, max_tokens=1, top_logprobs=pointwise.TOP_LOGPROBS))
        if row:
            seconds.append(row["provenance"]["seconds"])
            tokens.append(row["provenance"]["prompt_tokens"])
    if seconds:
        threads = {
            r["provenance"].get("n_threads") for r in replay.rows.values() if r["prompt"] in set(rs.model_prompts())
        }
        print(f"the model reranker, recorded: {len(seconds)} requests, {statistics.median(tokens):.0f} prompt tokens "
              f"and {statistics.median(seconds):.1f} s a request at the median (threads {sorted(threads)}); "
              f"{rs.MODEL_K1} requests a query at k1 = {rs.MODEL_K1}")  # fmt: skip


if __name__ == "__main__":
    main()
