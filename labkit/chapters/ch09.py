"""Chapter 09's manifest: what the chapter is made of, read by the build, the tests, the bench and the navigation."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from labkit.chapters.manifest import Bench, Chapter, Explorer
from labkit.data.toys import ROUTER_COST, ROUTER_WINDOW
from labkit.generation import llm
from labkit.measures import router
from labkit.retrieval.embeddings import count_tokens_of_parts
from labkit.retrieval.retrievers import make_run
from labkit.studies import answers_data, cascade
from labkit.studies import handbook as hb


@lru_cache(maxsize=1)
def _run():
    h = hb.handbook()
    return make_run(h.hybrid, h.queries, 20)


@lru_cache(maxsize=32)
def routing_stats(k: int) -> dict[str, float]:
    """The notebook's ``routing_stats(k)``: every handbook query's RAG prompt with the hybrid top k (of a top 20),
    its real token count and its chars/4 estimate, routed by the context-window filter over the made-up line-up
    of ``data.toys`` (windows, $ per 1M tokens)."""
    h, run = hb.handbook(), _run()
    tokens = count_tokens_of_parts(router.rag_prompt_parts(h.queries, run, h.texts, k))
    estimate = [router.chars_over_4(p) for p in router.rag_prompts(h.queries, run, h.texts, k)]
    return router.routing_at_k(tokens, estimate, ROUTER_WINDOW, ROUTER_COST)


def routing_inputs(stats=None) -> dict[str, Any]:
    """What the RoutingExplorer is given: a function of k returning the routing figures (the notebook passes its
    ``routing_stats``; with none, :func:`routing_stats`), opened at k = 5."""
    return {"stats": routing_stats if stats is None else stats, "k": 5}


def cascade_inputs(table=None, sample=None) -> dict[str, Any]:
    """What the CascadeExplorer is given: the cascade's outcome per request (``table``: the 0.5B first, the 1.5B
    when the rater labels fail its answer), the requests' questions, opened on the first request the check kept
    although its answer is not right. The notebook passes its ``outcomes`` and ``sample``; with none, they are made
    as the notebook makes them (the models ``LABKIT_LLM`` chooses: their recorded answers by default)."""
    if (table is None) != (sample is None):
        raise ValueError("give both table and sample (the notebook's outcomes and sample), or neither")
    if table is None:
        h = hb.handbook()
        sample = hb.reader_sample()
        contexts = {qid: [h.texts[c] for c in ids] for qid, ids in hb.reader_contexts(sample).items()}
        small = cascade.model_answers(sample, contexts, llm.from_env(llm.SMALL_MODEL))
        large = cascade.model_answers(sample, contexts, llm.from_env(llm.DEFAULT_MODEL))
        check = answers_data.label_check([llm.SMALL_MODEL, llm.DEFAULT_MODEL], sample)
        table = cascade.cascade_table(small, large, sample, contexts, check)
    first = next(qid for qid, r in table.iterrows() if cascade.outcome_label(r) == "kept, not right")
    return {"table": table, "questions": {q.qid: q.search_text for q in sample}, "qid": first}


CHAPTER = Chapter(
    number="09",
    slug="router_eval",
    title="Router evaluation",
    summary="a model router evaluated as a retriever",
    does=(
        "a router as a retriever over models (the seed's MRR / Hit@1 / nDCG@3 / cascade-regret table); a real cascade "
        "of the local 0.5B and 1.5B on 120 handbook questions (pass rates, tokens, seconds, hosted prices, the "
        "check's errors, the long-prompt slice); the context-window filter measured with real token counts vs "
        "chars/4, k ↔ routing cost; a request explorer and a k slider"
    ),
    status="ready",
    explorers=(
        Explorer("CascadeExplorer", cascade_inputs),
        # each k is computed once, every query's prompt tokenized (~2 s per k)
        Explorer("RoutingExplorer", routing_inputs, bench=Bench("k", (5, 6, 7, 8, 7, 6, 5)), timeout=60),
    ),
    label_sets=(),
    plans=("09-answers", "09-judge"),
    probe=("studies.cascade",),
)
