"""00's glossary: every term it defines is linked from the chapter that first uses it, and every chapter links it."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

import build_notebooks as bn  # noqa: E402

TERMS = {  # the glossary heading's anchor: how a chapter's prose uses the term
    "Gold": r"(?i)\bgold\b",
    "Recall": r"Recall@|\bR@\d",
    "Hit-rate": r"(?i)\bhit@|hit rate",
    "RR-and-MRR": r"\bRR@|\bMRR\b|reciprocal rank",
    "nDCG-and-IDCG": r"nDCG|IDCG",
    "Evidence-recall": r"(?i)evidence recall|\bER@",
    "Bootstrap-interval": r"(?i)bootstrap",
    "Wilson-interval": r"Wilson",
    "Paired-interval": r"\bpaired\b",
    "TPR-and-TNR": r"\bTPR\b|\bTNR\b",
    "Kappa": r"κ|(?i:kappa)",
    "Evidence-coverage": r"\bEC@|(?i:evidence coverage)",
    "Holm": r"\bHolm\b",
    "Simultaneous-interval": r"(?i)\bsimultaneous\b",
    "Family-and-lead": r"\bstats\.Family\b|(?i:\bfamily of comparisons\b)",
}


def _markdown(stem: str) -> str:
    return "\n\n".join(c.source for c in bn.parse_source(bn.SRC / f"{stem}.py") if c.cell_type == "markdown")


def _anchor(heading: str) -> str:
    """JupyterLab's id for a Markdown heading: its text with spaces as hyphens."""
    return heading.strip().replace(" ", "-")


def test_the_glossary_defines_every_term_under_its_own_heading():
    headings = {_anchor(h) for h in re.findall(r"^#### (.+)$", _markdown("00_welcome"), re.M)}
    assert set(TERMS) == headings
    assert "## Glossary" in _markdown("00_welcome") and "### What every reported number carries" in _markdown(
        "00_welcome"
    )


@pytest.mark.parametrize("anchor", sorted(TERMS))
def test_the_chapter_that_first_uses_a_term_links_its_definition(anchor):
    stems = [c.stem for c in bn.CHAPTERS if bn.exists(c.stem)][1:]  # 00 holds the glossary itself
    first = next((s for s in stems if re.search(TERMS[anchor], _markdown(s))), None)
    assert first is not None, f"no chapter uses {anchor}: drop it from the glossary"
    assert f"(00_welcome.ipynb#{anchor})" in _markdown(first), (
        f"{first} is the first chapter to use {anchor!r} ({TERMS[anchor]}): link it to 00_welcome.ipynb#{anchor}"
    )


def test_every_chapter_links_the_glossary_from_its_navigation():
    for c in bn.CHAPTERS[1:]:
        assert "[glossary](00_welcome.ipynb#Glossary)" in bn.nav_text(c.stem)
