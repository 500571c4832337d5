"""Re-wrap the Markdown paragraphs of a chapter source (notebooks/src/*.py) whose lines exceed the line length.

    python tools/reflow_src.py notebooks/src/01_rrf_hybrid_retrieval.py [...]

Only paragraphs with a line longer than 120 characters are touched: the paragraph's text is joined and re-wrapped
at 116 columns after its ``# `` prefix (a list item keeps its marker and indents its continuation lines). Code
cells, headings and table rows are never changed. A maintainer's tool: adding a link to a sentence must not mean
re-wrapping a paragraph by hand.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

LIMIT, WIDTH = 120, 118


def _starts_block(line: str) -> bool:
    body = line[2:] if line.startswith("# ") else ""
    return line.strip() == "#" or body.startswith(("#", "|", "* ", "- ", "1. ", "2. ", "3. ", "4. ", "5. ", "```"))


def reflow(text: str) -> str:
    lines = text.split("\n")
    out, i, in_md = [], 0, False
    while i < len(lines):
        line = lines[i]
        if line.startswith("# %%"):
            in_md = "[markdown]" in line
            out.append(line)
            i += 1
            continue
        if not in_md or not line.startswith("# ") or line.startswith(("# #", "# |")):
            out.append(line)
            i += 1
            continue
        j = i + 1  # the paragraph: this line and its continuations
        while j < len(lines) and lines[j].startswith("# ") and not _starts_block(lines[j]):
            j += 1
        para = lines[i:j]
        if any(len(p) > LIMIT for p in para):
            first = para[0][2:]
            marker = next((m for m in ("* ", "- ") if first.startswith(m)), "")
            words = " ".join([first[len(marker) :]] + [p[2:].strip() for p in para[1:]])
            indent = " " * len(marker)
            wrapped = textwrap.wrap(words, WIDTH - 2 - len(marker), break_long_words=False, break_on_hyphens=False)
            para = [f"# {marker}{wrapped[0]}"] + [f"# {indent}{w}" for w in wrapped[1:]]
        out += para
        i = j
    return "\n".join(out)


def main(paths: list[str]) -> int:
    for name in paths:
        path = Path(name)
        old = path.read_text(encoding="utf-8")
        new = reflow(old)
        if new != old:
            path.write_text(new, encoding="utf-8")
            print(f"re-wrapped {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
