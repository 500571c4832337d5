"""Benchmark: how long each explorer takes to answer a control move, in the kernel (compute + render).

Builds the explorers of chapters 01, 03, 04, 04b, 05, 07 and 09 on the handbook (05's builds its nine chunkings, as
the chapter has by then: the slowest part of this script), then moves one control through a fixed path and times
each update (``Explorer._update``: the pure function, its HTML and SVG pictures, the widgets' new values), and
within it the pure function and the render apart (a revisit is served from the explorer's cache). Prints the median
and the slowest move per explorer. Then, per explorer, the work of computing ahead every state one move reaches:
what the kernel does between a learner's moves, so that the page can draw those states itself
(labkit.ui.widgets.ahead). The latency targets are for the whole key-to-screen path in the browser (p50 <= 50 ms,
max <= 100 ms); the browser tests print that figure. Not a test: timings are printed, never asserted.

    .venv/bin/python bench/explorer_bench.py
"""

from __future__ import annotations

import statistics
import time

from labkit.data.toys import ROUTER_COST, ROUTER_WINDOW
from labkit.measures import router
from labkit.measures.triage import extractive_traces
from labkit.retrieval.embeddings import count_tokens_of_parts
from labkit.retrieval.grid import ChunkGrid
from labkit.retrieval.retrievers import make_run
from labkit.studies import handbook as hb
from labkit.studies import rerank_study as rs
from labkit.ui import widgets


def instrument(explorer) -> dict[str, list[float]]:
    """Time the explorer's two steps on every update from now on: ``compute`` (the pure function, with the
    explorer's caches) and ``render`` (its value to HTML, pictures included)."""
    times: dict[str, list[float]] = {"compute": [], "render": []}
    for name in times:
        step = getattr(explorer, name)

        def timed(*a, _step=step, _name=name, **kw):
            start = time.perf_counter()
            out = _step(*a, **kw)
            times[_name].append(time.perf_counter() - start)
            return out

        setattr(explorer, name, timed)
    return times


def timed_moves(explorer, control: str, values, repeat: int = 3) -> tuple[list[float], list[float]]:
    """Seconds per move of ``explorer.controls[control]`` through ``values``: the first visit of each value
    (cold: nothing cached yet for it, as a learner's first move) and ``repeat`` revisits (warm)."""
    box = explorer.controls[control]
    cold, warm, seen = [], [], {box.value}
    for _ in range(1 + repeat):
        for v in values:
            start = time.perf_counter()
            box.value = v
            (warm if v in seen else cold).append(time.perf_counter() - start)
            seen.add(v)
        box.value = values[0]
    assert not explorer.message.value, f"{type(explorer).__name__}: {explorer.message.value}"
    return cold, warm


def ms(times: list[float], how) -> str:
    return f"{1000 * how(times):8.1f}" if times else f"{'-':>8}"


def main() -> None:
    h = hb.handbook()
    queries, texts = h.queries, h.texts
    dev = [q for q in queries if q.split == "dev"]
    runs = {"bm25": make_run(h.bm25, dev, 100), "dense": make_run(h.dense, dev, 100)}
    groups = {q.qid: q.slice for q in queries}
    deep = make_run(h.hybrid, queries, 20)

    def routing_stats(k):
        tokens = count_tokens_of_parts(router.rag_prompt_parts(queries, deep, texts, k))
        est = [router.chars_over_4(p) for p in router.rag_prompts(queries, deep, texts, k)]
        return router.routing_at_k(tokens, est, ROUTER_WINDOW, ROUTER_COST)

    def extractive_at(k):
        def reader(question, passages):
            return passages[0] if passages else ""

        return extractive_traces(queries, deep, texts, h.qrels, reader, {d: doc.text for d, doc in h.corpus.items()}, k)

    questions = {q.qid: q.search_text for q in dev}
    cases = {
        "01 FusionExplorer (c)": (widgets.FusionExplorer(runs, h.qrels, groups, questions, texts=texts), "c",
                                  [60, 100, 200, 100, 60, 30, 10]),
        "03 metrics_playground (k)": (widgets.metrics_playground(), "k", [5, 6, 7, 6, 5, 4, 3]),
        "04 CutoffExplorer (k)": (widgets.CutoffExplorer({"hybrid": deep}, h.qrels, groups), "k",
                                  [5, 6, 7, 8, 7, 6, 5]),
        "04b RerankExplorer (k1)": (widgets.RerankExplorer(rs.explorer_data(), k1=20, k2=3, reranker=rs.LTR), "k1",
                                    [20, 50, 100, 50, 20, 10]),
        "05 ChunkGridExplorer (size)": (widgets.ChunkGridExplorer(ChunkGrid(h.corpus, dev, ("bm25", "dense"))),
                                        "size", [128, 256, 128, 64, 128]),
        "07 TriageExplorer (k)": (widgets.TriageExplorer(extractive_at, k=3), "k", [3, 4, 5, 4, 3, 2, 1]),
        "09 RoutingExplorer (k)": (widgets.RoutingExplorer(routing_stats, k=5), "k", [5, 6, 7, 8, 7, 6, 5]),
    }  # fmt: skip
    print("kernel side of one control move, ms (the browser targets for the whole path: p50 <= 50, max <= 100)")
    print(f"{'explorer (control)':30} {'first visits':>22} {'revisits':>22} {'pure function':>17} {'render':>17}")
    print(f"{'':30} {'n':>4} {'p50':>8} {'max':>8} {'n':>4} {'p50':>8} {'max':>8}" + f" {'p50':>8} {'max':>8}" * 2)
    for name, (explorer, control, values) in cases.items():
        steps = instrument(explorer)
        cold, warm = timed_moves(explorer, control, values)
        split = " ".join(f"{ms(steps[s], statistics.median)} {ms(steps[s], max)}" for s in ("compute", "render"))
        print(f"{name:30} {len(cold):4d} {ms(cold, statistics.median)} {ms(cold, max)} "
              f"{len(warm):4d} {ms(warm, statistics.median)} {ms(warm, max)} {split}")  # fmt: skip
    print()
    print("computed ahead after a move (Explorer.warm, in the kernel's idle turns; each state is then drawn by the")
    print("page itself): how many states one move reaches, the time for all, and the longest one, which is the")
    print("most a key press for a state the page does not hold yet can wait behind")
    print(f"{'explorer':30} {'states':>7} {'all, ms':>9} {'longest, ms':>12}")
    for name, (explorer, _, _) in cases.items():
        explorer._shown.clear()  # as if nothing had been computed around the current state yet
        each = []
        for state in explorer.neighbours():
            start = time.perf_counter()
            explorer.warm([state])
            each.append(time.perf_counter() - start)
        print(f"{name.split(' (')[0]:30} {len(each):7d} {ms(each, sum)} {ms(each, max):>12}")


if __name__ == "__main__":
    main()
