"""Chapters — one manifest per chapter (``chNN.py``), read by everything that needs a list of chapters.

:data:`CHAPTERS` holds every chapter found in this folder, in chapter order; :func:`chapter` finds one by number
or stem. A new chapter is its source (``notebooks/src/NN_slug.py``), its manifest (``labkit/chapters/chNN.py``)
and its modules: nothing else lists it.

- ``chapters.manifest``      :class:`Chapter`, :class:`Explorer` and :class:`Judge`: what a chapter is made of
- ``chapters.chNN``          one chapter's manifest (``CHAPTER``) and its explorers' input builders: what its notebook
                             passes each explorer, built by the function the notebook, the browser tests and the
                             bench all call
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path

from labkit.chapters.manifest import Bench, Chapter, Explorer, Judge

__all__ = ["CHAPTERS", "Bench", "Chapter", "Explorer", "Judge", "chapter", "discover"]


def discover(folder: Path = Path(__file__).parent, package: str = __name__) -> tuple[Chapter, ...]:
    """Every ``chNN.py`` manifest in ``folder`` (its ``CHAPTER``), in chapter order, checked: its file name
    matches its number, and no two chapters share a number or a slug."""
    found = []
    for info in pkgutil.iter_modules([str(folder)]):
        if not re.fullmatch(r"ch\d\d[a-z]?", info.name):
            continue
        module = importlib.import_module(f"{package}.{info.name}")
        manifest = getattr(module, "CHAPTER", None)
        if not isinstance(manifest, Chapter):
            raise TypeError(f"{package}.{info.name} must define CHAPTER = Chapter(...)")
        if info.name != f"ch{manifest.number}":
            raise ValueError(
                f"{package}.{info.name} holds chapter {manifest.number}: name the file ch{manifest.number}.py"
            )
        found.append(manifest)
    for attr in ("number", "slug"):
        values = [getattr(c, attr) for c in found]
        twice = sorted({v for v in values if values.count(v) > 1})
        if twice:
            raise ValueError(f"two chapters share the {attr} {twice}")
    return tuple(sorted(found, key=Chapter.sort_key))


CHAPTERS: tuple[Chapter, ...] = discover()
"""Every chapter, in order."""


def chapter(key: str) -> Chapter:
    """The chapter whose number (``"04b"``) or stem (``"04b_reranking"``) is ``key``."""
    for c in CHAPTERS:
        if key in (c.number, c.stem):
            return c
    raise ValueError(f"no chapter {key!r}: chapters are {', '.join(c.number for c in CHAPTERS)}")
