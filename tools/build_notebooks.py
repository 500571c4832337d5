"""Build the chapter notebooks from their sources and execute them.

Each chapter is written as a plain Python file in ``notebooks/src/`` in the
"percent" format (``# %%`` starts a code cell, ``# %% [markdown]`` a Markdown
cell whose lines start with ``# ``; ``# %% tags=["solution"]`` tags a cell).
This script turns each into ``notebooks/NN_name.ipynb``, adds the generated
navigation cells (previous · contents · next) at the top and bottom and the
chapter list of ``00_welcome``, then executes the notebook top to bottom
and stores the outputs.

    python tools/build_notebooks.py            # build + execute every chapter
    python tools/build_notebooks.py 03         # only chapters whose name starts with 03
    python tools/build_notebooks.py --check    # fail if a notebook's cells are stale

``--check`` compares cell sources and tags only (not outputs), so it is
cheap; a test runs it.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "notebooks" / "src"
OUT = ROOT / "notebooks"

# (file stem, title, one-line summary). A chapter without a source file is "coming".
CHAPTERS = [
    ("00_welcome", "Welcome", "the two-stage pipeline, the handbook corpus, sliders and self-checks"),
    ("01_rrf_hybrid_retrieval", "RRF and hybrid retrieval", "BM25 vs dense vs Reciprocal Rank Fusion"),
    ("02_synthetic_hard_questions", "Synthetic and hard questions", "generate, make hard, filter"),
    ("03_metrics_by_hand", "Metrics by hand", "P@k, R@k, RR, DCG, nDCG, thresholds, which metric when"),
    ("04_mrr_hit_rate_lost_in_the_middle", "MRR, hit rate, lost in the middle", "position matters"),
    ("05_chunk_grid", "The chunk grid", "size x overlap, split rate, re-indexing with remapped gold"),
    ("06_faithfulness", "Faithfulness", "claims, a per-claim judge, calibration, context swapping"),
    ("07_triage", "Triage", "retrieval failure or generation failure: the 2x2"),
    ("08_case_study", "Case study", "the internal-docs bot end to end: easy vs hard vs real"),
    ("09_router_eval", "Router evaluation", "a model router evaluated as a retriever"),
]
NAV_TAG = "nav"
CHAPTER_LIST_TAG = "chapter-list"


def exists(stem: str) -> bool:
    return (SRC / f"{stem}.py").is_file()


def parse_source(path: Path) -> list[nbformat.NotebookNode]:
    """Percent-format source -> cells (no outputs)."""
    cells: list[nbformat.NotebookNode] = []
    header: str | None = None
    lines: list[str] = []

    def flush() -> None:
        if header is None:
            return
        m = re.match(r"# %%\s*(\[markdown\])?\s*(tags=(\[.*\]))?\s*$", header)
        if not m:
            raise ValueError(f"{path.name}: cannot read cell header {header!r}")
        body = list(lines)
        while body and not body[-1].strip():
            body.pop()
        while body and not body[0].strip():
            body.pop(0)
        tags = json.loads(m.group(3)) if m.group(3) else []
        if m.group(1):
            text = "\n".join(line[2:] if line.startswith("# ") else line.lstrip("#") for line in body)
            cell = nbformat.v4.new_markdown_cell(text)
        else:
            cell = nbformat.v4.new_code_cell("\n".join(body))
        if tags:
            cell.metadata["tags"] = tags
        cells.append(cell)

    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# %%"):
            flush()
            header, lines = line, []
        elif header is not None:
            lines.append(line)
    flush()
    return cells


def nav_text(stem: str) -> str:
    stems = [s for s, _, _ in CHAPTERS]
    i = stems.index(stem)
    parts = []
    if i > 0:
        prev, title, _ = CHAPTERS[i - 1]
        parts.append(f"[← {prev[:2]} · {title}]({prev}.ipynb)" if exists(prev) else f"← {prev[:2]} · {title} (coming)")
    parts.append("[contents](00_welcome.ipynb#Chapters)" if stem != "00_welcome" else "contents")
    if i + 1 < len(CHAPTERS):
        nxt, title, _ = CHAPTERS[i + 1]
        parts.append(f"[{nxt[:2]} · {title} →]({nxt}.ipynb)" if exists(nxt) else f"{nxt[:2]} · {title} → (coming)")
    return " · ".join(parts)


def chapter_list_text() -> str:
    rows = ["| # | chapter | what you do |", "|---|---|---|"]
    for stem, title, summary in CHAPTERS:
        link = f"[{title}]({stem}.ipynb)" if exists(stem) else f"{title} *(coming)*"
        rows.append(f"| {stem[:2]} | {link} | {summary} |")
    return "\n".join(rows)


def build_cells(stem: str) -> list[nbformat.NotebookNode]:
    cells = parse_source(SRC / f"{stem}.py")
    for cell in cells:
        if CHAPTER_LIST_TAG in cell.metadata.get("tags", []):
            cell.source = chapter_list_text()
    nav = nav_text(stem)
    top = nbformat.v4.new_markdown_cell(nav, metadata={"tags": [NAV_TAG]})
    bottom = nbformat.v4.new_markdown_cell(nav, metadata={"tags": [NAV_TAG]})
    cells = [top, *cells, bottom]
    for i, cell in enumerate(cells):
        cell.id = f"{stem[:2]}-{i:03d}"
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
    from nbclient import NotebookClient

    client = NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(OUT)}}, store_widget_state=True
    )
    client.execute()
    for cell in nb.cells:  # nbclient stamps run times; they would churn every rebuild
        cell.metadata.pop("execution", None)


def signature(nb: nbformat.NotebookNode) -> list[tuple[str, str, tuple[str, ...]]]:
    return [(c.cell_type, c.source, tuple(c.metadata.get("tags", []))) for c in nb.cells]


def check() -> list[str]:
    problems = []
    for stem, _, _ in CHAPTERS:
        path = OUT / f"{stem}.ipynb"
        if not exists(stem):
            if path.exists():
                problems.append(f"{path.name}: has no source in notebooks/src")
            continue
        if not path.exists():
            problems.append(f"{path.name}: missing; run `python tools/build_notebooks.py {stem[:2]}`")
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
    args = parser.parse_args(argv)
    if args.check:
        problems = check()
        print("\n".join(problems) or "notebooks are up to date")
        return 1 if problems else 0
    for stem, _, _ in CHAPTERS:
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
