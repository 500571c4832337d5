"""Build the chapter notebooks from their sources and execute them.

Each chapter is written as a plain Python file in ``notebooks/src/`` in the
"percent" format (``# %%`` starts a code cell, ``# %% [markdown]`` a Markdown
cell whose lines start with ``# ``; ``# %% tags=["solution"]`` tags a cell), read by jupytext.
This script turns each into ``notebooks/NN_name.ipynb``, adds the generated
navigation cells (previous · contents · next) at the top and bottom and the
chapter list of ``00_welcome``, then executes the notebook top to bottom
and stores the outputs. From the same chapter list it writes the chapter table
of ``README.md`` (between the two ``chapters`` marker comments).

    python tools/build_notebooks.py            # build + execute every chapter, write the README table
    python tools/build_notebooks.py 03         # only chapters whose name starts with 03 (and the README table)
    python tools/build_notebooks.py --readme   # only the README table
    python tools/build_notebooks.py --text-only 08  # only the Markdown cells (prose), outputs kept
    python tools/build_notebooks.py --check    # fail if a notebook's cells or the README table are stale

``--check`` compares cell sources and tags only (not outputs), so it is
cheap; a test runs it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import NamedTuple

import nbformat

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "notebooks" / "src"
OUT = ROOT / "notebooks"
README = ROOT / "README.md"


class Chapter(NamedTuple):
    stem: str
    title: str
    summary: str
    """One line, for the navigation and 00's chapter list."""
    does: str
    """What the reader does in it, for the README's table."""
    status: str
    """For the README's table: ready, in progress, coming, with what is still missing."""


# A chapter without a source file has no notebook yet: its name is not a link.
CHAPTERS = [
    Chapter("00_welcome", "Welcome", "the two-stage pipeline, the handbook corpus, sliders and self-checks",
            "the two-stage pipeline, the handbook corpus, sliders and self-checks, the language-model switch with "
            "a recorded answer of the local model", "ready"),
    Chapter("01_rrf_hybrid_retrieval", "RRF and hybrid retrieval", "BM25 vs dense vs Reciprocal Rank Fusion",
            "BM25 (`bm25s`) vs MiniLM embeddings vs Reciprocal Rank Fusion on the handbook, per slice; sliders for "
            "*c* and weights, a question box", "ready"),
    Chapter("02_synthetic_hard_questions", "Synthetic and hard questions", "generate, make hard, filter",
            "generate → make hard → filter with a local 1.5B model: 322 generated questions (164 easy, 158 hard) "
            "located as spans (every drop counted), a rater audit of their labels checked by a second rater (κ), "
            "recall against authored and real-style questions, the realism rater measured on held-out ratings and on "
            "two raters' ratings of generated questions (the prevalence trap of κ); you rate questions yourself; "
            "a threshold × method × retriever explorer", "ready"),
    Chapter("03_metrics_by_hand", "Metrics by hand", "P@k, R@k, RR, DCG, nDCG, thresholds, which metric when",
            "P@k, R@k, RR, DCG, nDCG (two IDCG conventions), thresholds, the X/Y trap, which metric when; a "
            "playground", "ready"),
    Chapter("04_mrr_hit_rate_lost_in_the_middle", "MRR, hit rate, lost in the middle", "position matters",
            "MRR@k and hit rate@k per slice, retriever and question kind; Liu et al.'s published U-curve; a "
            "position harness on the handbook checked with position-blind and truncating control readers; the "
            "local 1.5B in that harness (80 questions, 5 and 10 passages, closed-book, oracle and no-gold "
            "baselines, Wilson intervals beside Liu's curves), what distractors cost, the \"best at both ends\" "
            "reordering, the 0.5B at 10 passages; a question × trial explorer and a k slider", "ready"),
    Chapter("04b_reranking", "Reranking", "the second stage: retrieve wide, rerank, keep a few",
            "the two stages and their metrics (Recall@k1, nDCG@k2); stage 1's ceiling; a learned reranker "
            "(LightGBM lambdarank over ten cheap features, trained on dev, reported on test) and the local 1.5B as "
            "a pointwise yes/no reranker (300 recorded requests); what each buys per slice with paired intervals, "
            "what a deeper stage 1 buys, what the model costs, whether the reader gets more answers right, where "
            "reranking hurts; a k1 × k2 × reranker explorer", "ready"),
    Chapter("05_chunk_grid", "The chunk grid", "size x overlap, split rate, re-indexing with remapped gold",
            "split rate (the seed's table), a 3×3 size × overlap grid re-indexing the handbook with gold remapped "
            "from character offsets, evidence recall at an equal reading budget, the dev choice checked on test "
            "(where it does not hold); "
            "sliders for size, overlap, k", "ready"),
    Chapter("06_faithfulness", "Faithfulness", "claims, a per-claim judge, calibration, context swapping",
            "the source's leave example; a local 1.5B reader's answers to 120 handbook questions, split into claims; "
            "five judges (1.5B, 1.5B + quote guard, 0.5B, lexical, always-supported) against rater labels (an AI "
            "assistant's, a second rater's κ): TPR/TNR with intervals, chosen on dev, reported on test; the "
            "Rogan–Gladen correction checked against the labelled truth; 420 claims labelled by construction and "
            "what each judge cannot see; you label claims and the judge is calibrated on your labels; how many "
            "labels are enough; relevance in code and by a model; context swapping, lenient vs strict prompt; a "
            "question × judge explorer", "ready"),
    Chapter("07_triage", "Triage", "retrieval failure or generation failure: the 2x2",
            "the 2×2 (OK / GEN_FAIL / LUCKY / RET_FAIL) on the seed's traces and on the local 1.5B's answers to "
            "every handbook query, rater-labelled right or wrong (a second rater's κ for both readers); two cheap "
            "correctness rules measured against the labels (TPR/TNR), and against yours after you label answers; "
            "how they move the cells; what LUCKY holds; k = 3 vs 5 for the model and every k "
            "for an extractive control; a reader × check × k explorer with the drill-down", "ready"),
    Chapter("08_case_study", "Case study", "the internal-docs bot end to end: easy vs hard vs real",
            "the internal-docs bot end to end: the 7.12 workflow on the handbook, retrieval per slice at the "
            "reader's k, every pitfall of 7.11 measured (synthetic-vs-real gap, wrong k, hit rate vs all the "
            "evidence for multi-hop questions, follow-ups without query rewriting, chunking), answers scored and "
            "triaged separately with the local 1.5B reader and rater labels, the checklist filled in; a slice × "
            "cell triage explorer", "ready"),
    Chapter("09_router_eval", "Router evaluation", "a model router evaluated as a retriever",
            "a router as a retriever over models (the seed's MRR / Hit@1 / nDCG@3 / cascade-regret table); a real "
            "cascade of the local 0.5B and 1.5B on 120 handbook questions (pass rates, tokens, seconds, hosted "
            "prices, the check's errors, the long-prompt slice); the context-window filter measured with real "
            "token counts vs chars/4, k ↔ routing cost; a request explorer and a k slider", "ready"),
    Chapter("10_your_own_documents", "Your own documents", "the workflow on any folder, proven on a real corpus",
            "the 7.12 workflow on any folder of Markdown, text and HTML (bad files skipped and said), proven on 78 "
            "pages of the Python documentation and the FAQ's own questions (gold by AI raters, a second rater's κ): "
            "60 questions written by the local 1.5B (30 kept) against the FAQ's, retrieval per slice at the "
            "reader's k, hybrid vs each retriever, a learned reranker trained here and one carried over from the "
            "handbook, the 1.5B reader's 80 answers rated by two AI raters (κ) and triaged in the 2×2, chunking by "
            "structure confirmed, k by question type, which of the handbook's findings hold; you label the "
            "retriever's first passages and the reader's answers; `python -m labkit report` for any folder",
            "ready"),
]  # fmt: skip
NAV_TAG = "nav"
RUN_HINT = (
    "*To use this chapter, run it from the top: **Run → Run All Cells**, or Shift+Enter cell by cell. The sliders "
    "and pickers work once their cell has run.*"
)
CHAPTER_LIST_TAG = "chapter-list"
README_START = "<!-- chapters: generated by tools/build_notebooks.py from its CHAPTERS list; edit them there -->"
README_END = "<!-- /chapters -->"


def number(stem: str) -> str:
    """A chapter's number as printed: ``"04"``, ``"04b"`` (the part of the stem before the first underscore)."""
    return stem.split("_", 1)[0]


def exists(stem: str) -> bool:
    return (SRC / f"{stem}.py").is_file()


def parse_source(path: Path) -> list[nbformat.NotebookNode]:
    """Percent-format source -> cells (no outputs), read by jupytext.

    Markdown cells lose their ``# `` prefixes, ``tags=[...]`` on a cell header become the cell's tags, and
    blank lines around a cell are dropped. Only the tags are kept: jupytext's own bookkeeping (such as
    ``lines_to_next_cell``) would otherwise land in every built notebook. A cell type or header metadata the
    workbook does not use is refused, so a typo in a header cannot pass silently.
    """
    import jupytext

    cells: list[nbformat.NotebookNode] = []
    for i, read in enumerate(jupytext.reads(path.read_text(encoding="utf-8"), fmt="py:percent").cells):
        unknown = set(read.metadata) - {"tags", "lines_to_next_cell"}
        if read.cell_type not in ("markdown", "code") or unknown:
            raise ValueError(
                f"{path.name}: cell {i} is a {read.cell_type} cell with header metadata {sorted(unknown)}; "
                "use `# %%`, `# %% [markdown]` and `tags=[...]` only"
            )
        new = nbformat.v4.new_markdown_cell if read.cell_type == "markdown" else nbformat.v4.new_code_cell
        cell = new(read.source)
        if read.metadata.get("tags"):
            cell.metadata["tags"] = list(read.metadata["tags"])
        cells.append(cell)
    return cells


def nav_text(stem: str) -> str:
    stems = [c.stem for c in CHAPTERS]
    i = stems.index(stem)
    parts = []
    if i > 0:
        prev, title = CHAPTERS[i - 1].stem, CHAPTERS[i - 1].title
        parts.append(
            f"[← {number(prev)} · {title}]({prev}.ipynb)" if exists(prev) else f"← {number(prev)} · {title} (coming)"
        )
    parts.append("[contents](00_welcome.ipynb#Chapters)" if stem != "00_welcome" else "contents")
    parts.append("[glossary](00_welcome.ipynb#Glossary)" if stem != "00_welcome" else "[glossary](#Glossary)")
    if i + 1 < len(CHAPTERS):
        nxt, title = CHAPTERS[i + 1].stem, CHAPTERS[i + 1].title
        parts.append(
            f"[{number(nxt)} · {title} →]({nxt}.ipynb)" if exists(nxt) else f"{number(nxt)} · {title} → (coming)"
        )
    return " · ".join(parts)


def chapter_list_text() -> str:
    rows = ["| # | chapter | what you do |", "|---|---|---|"]
    for c in CHAPTERS:
        link = f"[{c.title}]({c.stem}.ipynb)" if exists(c.stem) else f"{c.title} *(coming)*"
        rows.append(f"| {number(c.stem)} | {link} | {c.summary} |")
    return "\n".join(rows)


def readme_table() -> str:
    """The README's chapter table: number, notebook (a link once it has a source), what you do, status."""
    rows = ["| # | notebook | what you do | status |", "|---|---|---|---|"]
    for c in CHAPTERS:
        name = c.stem.split("_", 1)[1]
        link = f"[{name}](notebooks/{c.stem}.ipynb)" if exists(c.stem) else name
        rows.append(f"| {number(c.stem)} | {link} | {c.does} | {c.status} |")
    return "\n".join(rows)


def readme_with_table(text: str) -> str:
    """``text`` (the README) with the chapter table between its marker comments replaced by :func:`readme_table`."""
    start, end = text.find(README_START), text.find(README_END)
    if start < 0 or end < start:
        raise ValueError(f"README.md needs the marker lines {README_START!r} and {README_END!r}, in that order")
    return text[: start + len(README_START)] + "\n\n" + readme_table() + "\n\n" + text[end:]


def write_readme() -> bool:
    """Write the README's chapter table; ``True`` if it changed."""
    text = README.read_text(encoding="utf-8")
    new = readme_with_table(text)
    if new != text:
        README.write_text(new, encoding="utf-8")
    return new != text


def build_cells(stem: str) -> list[nbformat.NotebookNode]:
    cells = parse_source(SRC / f"{stem}.py")
    for cell in cells:
        if CHAPTER_LIST_TAG in cell.metadata.get("tags", []):
            cell.source = chapter_list_text()
    nav = nav_text(stem)
    top = nbformat.v4.new_markdown_cell(f"{nav}\n\n{RUN_HINT}", metadata={"tags": [NAV_TAG]})
    bottom = nbformat.v4.new_markdown_cell(nav, metadata={"tags": [NAV_TAG]})
    cells = [top, *cells, bottom]
    for i, cell in enumerate(cells):
        cell.id = f"{number(stem)}-{i:03d}"
    return cells


def new_notebook(stem: str) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.cells = build_cells(stem)
    nb.metadata = {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    }
    return nb


def execute(nb: nbformat.NotebookNode) -> None:
    import os
    import tempfile

    from nbclient import NotebookClient

    client = NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(OUT)}}, store_widget_state=True
    )
    # The stored outputs are a fresh learner's: no labels of the maintainer's own (user cache) may reach them.
    with tempfile.TemporaryDirectory() as no_labels:
        before = os.environ.get("LABKIT_LABELS")
        os.environ["LABKIT_LABELS"] = no_labels  # the kernel inherits it
        try:
            client.execute()
        finally:
            if before is None:
                os.environ.pop("LABKIT_LABELS", None)
            else:
                os.environ["LABKIT_LABELS"] = before
    for cell in nb.cells:  # nbclient stamps run times; they would churn every rebuild
        cell.metadata.pop("execution", None)


def renavigate(stem: str) -> bool:
    """Rewrite only the navigation cells and 00's chapter list of a built notebook, keeping every output.

    Cheap: nothing is executed. Refuses (returns False) when any other cell differs from the source, because
    then the notebook must be rebuilt and executed.
    """
    path = OUT / f"{stem}.ipynb"
    stored = nbformat.read(path, as_version=4)
    fresh = build_cells(stem)
    generated = (NAV_TAG, CHAPTER_LIST_TAG)
    if len(stored.cells) != len(fresh):
        return False
    for old, new in zip(stored.cells, fresh, strict=True):
        tags = new.metadata.get("tags", [])
        if any(t in tags for t in generated):
            old.source = new.source
        elif (old.cell_type, old.source, old.metadata.get("tags", [])) != (new.cell_type, new.source, tags):
            return False
    nbformat.write(stored, path)
    return True


def retext(stem: str) -> bool:
    """Rewrite the Markdown cells of a built notebook from its source, keeping every output: prose cannot change
    what a code cell prints. Refuses (returns False) when a code cell, a tag or the cell order differs."""
    path = OUT / f"{stem}.ipynb"
    stored = nbformat.read(path, as_version=4)
    fresh = build_cells(stem)
    if len(stored.cells) != len(fresh):
        return False
    for old, new in zip(stored.cells, fresh, strict=True):
        tags = new.metadata.get("tags", [])
        if old.cell_type != new.cell_type or (old.cell_type == "code" and (old.source, old.metadata.get("tags", []))
                                               != (new.source, tags)):  # fmt: skip
            return False
        if old.cell_type == "markdown":
            old.source = new.source
            old.metadata["tags"] = tags
            if not tags:
                old.metadata.pop("tags")
    nbformat.write(stored, path)
    return True


def signature(nb: nbformat.NotebookNode) -> list[tuple[str, str, tuple[str, ...]]]:
    return [(c.cell_type, c.source, tuple(c.metadata.get("tags", []))) for c in nb.cells]


def check() -> list[str]:
    problems = []
    if readme_with_table(README.read_text(encoding="utf-8")) != README.read_text(encoding="utf-8"):
        problems.append("README.md: the chapter table is stale; run `python tools/build_notebooks.py --readme`")
    for stem in (c.stem for c in CHAPTERS):
        path = OUT / f"{stem}.ipynb"
        if not exists(stem):
            if path.exists():
                problems.append(f"{path.name}: has no source in notebooks/src")
            continue
        if not path.exists():
            problems.append(f"{path.name}: missing; run `python tools/build_notebooks.py {number(stem)}`")
            continue
        stored = nbformat.read(path, as_version=4)
        if signature(stored) != signature(new_notebook(stem)):
            problems.append(
                f"{path.name}: cells differ from notebooks/src/{stem}.py or navigation is stale; rebuild it"
            )
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("only", nargs="*", help="chapter prefixes such as 03")
    parser.add_argument("--check", action="store_true", help="only check that notebooks are up to date")
    parser.add_argument("--no-execute", action="store_true", help="write cells without running them")
    parser.add_argument("--readme", action="store_true", help="only write the README's chapter table")
    parser.add_argument("--nav-only", action="store_true", help="only rewrite navigation cells, keep outputs")
    parser.add_argument("--text-only", action="store_true",
                        help="only rewrite Markdown cells (code cells unchanged), keep outputs")  # fmt: skip
    args = parser.parse_args(argv)
    if args.check:
        problems = check()
        print("\n".join(problems) or "notebooks and the README's chapter table are up to date")
        return 1 if problems else 0
    if write_readme():
        print("wrote the chapter table of README.md")
    if args.readme:
        return 0
    if args.nav_only or args.text_only:
        for stem in (c.stem for c in CHAPTERS):
            if exists(stem) and (OUT / f"{stem}.ipynb").exists():
                if args.only and not any(stem.startswith(p) for p in args.only):
                    continue
                done = retext(stem) if args.text_only else renavigate(stem)
                print(f"{'rewritten' if done else 'NOT rewritten (code cells differ: rebuild it)'} {stem}")
        return 0
    for stem in (c.stem for c in CHAPTERS):
        if not exists(stem) or (args.only and not any(stem.startswith(p) for p in args.only)):
            continue
        nb = new_notebook(stem)
        if not args.no_execute:
            print(f"executing {stem} ...", flush=True)
            execute(nb)
        nbformat.write(nb, OUT / f"{stem}.ipynb")
        print(f"wrote notebooks/{stem}.ipynb")
    return 0


if __name__ == "__main__":
    sys.exit(main())
