"""Write the committed query table: the MiniLM vectors of every query text the chapters search.

    python tools/embed_queries.py            # data/embeddings/all-MiniLM-L6-v2-onnx-int8-queries.npz

The int8 embedding model's output differs in its last digits between CPUs, enough to swap two nearly tied chunks
deep in a ranking and so change a recorded prompt (chapter 04's distractors did, between two machines). With the
query vectors committed, like the chunk vectors, every machine ranks the chapters' queries the same way
(``labkit.retrieval.embeddings.query_vectors``). The texts: every handbook query as searched, as typed, with its
history glued on and as the 1.5B rewrote it (chapter 08's variants), every generated question of chapter 02, the
by-type questions (``data/kinds/``), and chapter 10's bundled questions (the FAQ's and the 1.5B's generated ones).
Run it again after adding queries: texts already in the table keep their vectors, new ones are embedded. A text
missing from the table is embedded live (and may then rank differently on another CPU). The committed table lacks
144 of chapter 02's later generated questions (embedded live where searched); a run of this tool adds them, and
chapter 02 must then be rebuilt and checked.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from labkit import data_dir  # noqa: E402
from labkit.data.corpus import load_queries  # noqa: E402
from labkit.retrieval import embeddings
from labkit.studies import handbook as hb  # noqa: E402
from labkit.studies import synth_data as sd  # noqa: E402


def query_texts() -> list[str]:
    texts = []
    for q in hb.handbook().queries:
        texts += [q.search_text, q.question]
        if q.rewritten:
            texts.append(" ".join([*q.history, q.question]))
    texts += [q.search_text for q in sd.load_sets()]
    texts += [q.search_text for q in load_queries(path=data_dir() / "kinds" / "synthesis.jsonl")]
    texts += model_rewrites()
    return list(dict.fromkeys(texts))


def model_rewrites() -> list[str]:
    """Chapter 08's fourth variant: the 1.5B's recorded rewrites of the follow-ups (plan 08-rewrite)."""
    from labkit.generation import llm, rewriter

    replay, out = llm.Replay(llm.DEFAULT_MODEL), []
    for q in hb.handbook().queries:
        if q.history:
            try:
                text = rewriter.rewrite(q.history, q.question, replay)
            except llm.MissingRecording:
                print(f"{q.qid}: the 1.5B's rewrite is not recorded yet (plan 08-rewrite); it is left out")
                continue
            out += [text] if text else []
    return out


def chapter_10_groups() -> list[list[str]]:
    """Chapter 10's bundled questions as it searches them: the Python FAQ's labelled questions, then the 1.5B's
    recorded generated questions (plan 10-generate), each group in the chapter's order. Each group is embedded in
    its own call, in that order, so its vectors are the ones the chapter's own batched call gives (the int8 model
    quantizes a batch together: a text's last digits depend on its batch-mates)."""
    from labkit.generation import llm
    from labkit.studies import capstone

    s = capstone.setting()
    groups = [[q.search_text for q in s.queries]]
    try:
        kept, _ = capstone.generated(s, llm.Replay(llm.DEFAULT_MODEL), capstone.ABOUT)
    except llm.MissingRecording:
        print("chapter 10's generated questions are not recorded; they are left out")
        return groups
    return [*groups, [q.search_text for q in capstone.generated_queries(kept)]]


def main() -> int:
    path = embeddings.committed_dir() / embeddings.QUERY_TABLE
    texts = query_texts()
    n = embeddings.write_query_table(texts, path)
    for group in chapter_10_groups():  # new texts only are embedded: one call per group
        texts = list(dict.fromkeys([*texts, *group]))
        n = embeddings.write_query_table(texts, path)
    print(f"{path}: {n} query texts, {path.stat().st_size:,} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
