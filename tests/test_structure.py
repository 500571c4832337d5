"""Structure-aware chunking (labkit.text.structure): sections, table headers carried along, context prefixes."""

from __future__ import annotations

import pytest

from labkit.data.corpus import load_corpus, load_queries
from labkit.retrieval.grid import ChunkGrid
from labkit.text import chunking, structure

DOC = """# Travel policy

Intro line of the policy with several words in it.

## 1. Per diems

The table below lists the caps.

| City | Lodging cap | Meals |
|---|---|---|
| Hanoi | 90 | 30 |
| Tokyo | 220 | 60 |
| Paris | 180 | 55 |

## 2. Claims

Claim within 30 days of the trip.
"""


def test_sections_tile_the_text_and_carry_their_heading_path():
    parts = structure.sections(DOC)
    assert parts[0].start == 0 and parts[-1].end == len(DOC)
    assert all(a.end == b.start for a, b in zip(parts, parts[1:], strict=False))
    top = "Travel policy"
    assert [p.path for p in parts] == [(top,), (top, "1. Per diems"), (top, "2. Claims")]


def test_a_table_is_found_with_its_header_and_separator():
    [(start, end, header)] = structure.tables(DOC)
    assert DOC[start:end].startswith("| City") and DOC[start:end].rstrip().endswith("| Paris | 180 | 55 |")
    assert header == "| City | Lodging cap | Meals |\n|---|---|---|\n"
    assert structure.tables("| not | a table |\nplain line\n") == []


def test_with_every_switch_off_it_is_the_word_window_chunker():
    corpus = load_corpus()
    doc = corpus["fin-travel-policy-2025"]
    plain = structure.chunk_document(doc.id, doc.text, doc.title, 64, 16, headings=False)
    assert plain == chunking.chunk_document(doc.id, doc.text, 64, 16)


def test_section_chunks_never_cross_a_heading_and_keep_their_spans():
    chunks = structure.chunk_document("d", DOC, "Travel policy", 8, 2)
    for c in chunks:
        assert c.text == DOC[c.start_char : c.end_char]
        assert DOC[c.start_char : c.end_char].count("\n#") == 0  # a heading only ever leads a chunk
    assert {c.start_char for c in chunks} >= {p.start for p in structure.sections(DOC)}


def test_a_table_chunk_without_its_header_gets_it_in_front_and_the_span_stays_the_body():
    chunks = structure.chunk_document("d", DOC, "Travel policy", 8, 2, table_header=True)
    tokyo = next(c for c in chunks if "| Tokyo" in DOC[c.start_char : c.end_char] and "| City" not in
                 DOC[c.start_char : c.end_char])  # fmt: skip
    assert tokyo.text.startswith("| City | Lodging cap | Meals |\n|---|---|---|\n")
    assert tokyo.text.endswith(DOC[tokyo.start_char : tokyo.end_char])
    assert structure.added_words(chunks) > 0
    plain = structure.chunk_document("d", DOC, "Travel policy", 8, 2)
    assert [(c.start_char, c.end_char) for c in plain] == [(c.start_char, c.end_char) for c in chunks]


def test_the_prefix_names_title_and_section_but_not_the_heading_a_chunk_starts_with():
    chunks = structure.chunk_document("d", DOC, "Travel policy", 8, 2, prefix=True)
    first_of_claims = next(c for c in chunks if DOC[c.start_char :].startswith("## 2. Claims"))
    assert first_of_claims.text.startswith("Travel policy\n## 2. Claims")
    inside = next(c for c in chunks if "| Paris" in c.text)
    assert inside.text.startswith("Travel policy › 1. Per diems\n")


def test_gold_spans_map_onto_structure_chunks_and_the_grid_takes_a_chunker():
    import functools

    corpus = load_corpus()
    queries = load_queries(split="dev")[:20]
    chunker = functools.partial(structure.chunk_corpus, **structure.VARIANTS["sections + header + prefix"])
    grid = ChunkGrid(corpus, queries, ("bm25",), chunker=chunker)
    chunks = grid.chunks(128, 32)
    assert structure.added_words(chunks) > 0 and len(chunks) != len(chunking.chunk_corpus(corpus, 128, 32))
    qrels = chunking.spans_to_qrels(queries, chunks)
    assert all(qrels[q.qid] for q in queries if q.gold)
    assert 0 < grid.per_query(128, 32, structure.budget_k(chunks))["ER@k bm25"].mean() <= 1


def test_budget_k_counts_what_the_reader_reads():
    assert structure.budget_k(chunking.chunk_corpus(load_corpus(), 128, 32)) == 10
    body = " ".join(["word"] * 100)
    plain = [chunking.Chunk(f"d#{i}", "d", i, 0, len(body), body, 100) for i in range(3)]
    padded = [chunking.Chunk(c.id, "d", c.index, 0, len(body), body + " " + body, 100) for c in plain]
    assert structure.budget_k(plain, 1280) == 13 and structure.budget_k(padded, 1280) == 6
    assert structure.budget_k(plain, 10) == 1


def test_table_questions_are_those_with_evidence_in_a_table():
    corpus = load_corpus()
    queries = load_queries()
    tokyo = [q for q in queries if q.qid in ("fin-h01", "cross-h02")]  # the per-diem table
    assert len(tokyo) == 2 and all(structure.in_table(q, corpus) for q in tokyo)
    assert 0 < sum(structure.in_table(q, corpus) for q in queries) < len(queries)


@pytest.mark.parametrize(
    ("call", "words"),
    [
        (lambda: structure.chunk_document("d", DOC, "t", 8, 8), "overlap (8) must be smaller than size"),
        (lambda: structure.chunk_document("d", "   ", "t"), "is empty"),
        (lambda: structure.chunk_document("d", DOC, "t", headings="yes"), "headings must be True or False"),
        (lambda: structure.chunk_corpus({}), "corpus is empty"),
        (lambda: structure.budget_k([]), "chunks is empty"),
        (lambda: ChunkGrid(load_corpus(), load_queries()[:2], chunker="sections"), "chunker must be a function"),
    ],
)
def test_bad_input(call, words):
    with pytest.raises(ValueError) as info:
        call()
    assert words in str(info.value)
