"""Ids TREC files can hold, for documents of any file name.

Taught in ``10_your_own_documents`` (``python -m labkit report``). A TREC qrels or run line is split on
whitespace, so a chunk id such as ``git reset notes.html#9`` (a file name with a space) cannot be written as it
is. :func:`safe_id` percent-encodes whitespace and ``%`` (``git%20reset%20notes.html#9``), leaving every other
character as it is (non-ASCII letters included: TREC files are read as UTF-8 here, by trec_eval and by
pytrec_eval); :func:`original_id` reverses it exactly. The alternative, replacing spaces with ``_``, can make two
files one id (``a b.md`` and ``a_b.md``). The ids that changed are listed in ``ids.tsv`` beside the TREC files
(:func:`id_map_text`), so a reader of a run file can go back to the file name.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from labkit.core import args

__all__ = ["safe_id", "original_id", "safe_run", "safe_qrels", "id_map", "id_map_text"]

_UNSAFE = re.compile(r"[\s%]")


def safe_id(doc_id: str) -> str:
    """``doc_id`` with whitespace and ``%`` percent-encoded (UTF-8 bytes): an id a TREC file can hold."""
    return _encode(args.text("doc_id", doc_id))


def _encode(doc_id: str) -> str:
    return _UNSAFE.sub(lambda m: "".join(f"%{b:02X}" for b in m.group().encode("utf-8")), doc_id)


def original_id(trec_id: str) -> str:
    """The id :func:`safe_id` encoded (its exact inverse: every ``%`` of a safe id starts an encoded byte)."""
    from urllib.parse import unquote

    return unquote(args.text("trec_id", trec_id), errors="strict")


def id_map(ids: Iterable[str]) -> dict[str, str]:
    """``{id: safe id}`` for the ``ids`` that :func:`safe_id` changes. No two ids share a safe id: a changed id
    always holds a ``%`` and an unchanged one never does, and the encoding is reversible."""
    return {i: s for i in args.strings("ids", ids) if (s := _encode(i)) != i}  # strings checked them all


def safe_run(run: Mapping[str, list[str]], mapping: Mapping[str, str]) -> dict[str, list[str]]:
    """A new run with every chunk id of ``mapping`` replaced by its safe id (the run itself is not changed)."""
    args.mapping("run", run, example='{"q1": ["doc#0", ...]}')
    args.mapping("mapping", mapping, example="id_map(chunk ids)")
    return {q: [mapping.get(c, c) for c in args.sequence(f"run[{q!r}]", r)] for q, r in run.items()}


def safe_qrels(qrels: Mapping[str, Mapping[str, int]], mapping: Mapping[str, str]) -> dict[str, dict[str, int]]:
    """New qrels with every chunk id of ``mapping`` replaced by its safe id."""
    args.mapping("qrels", qrels, example='{"q1": {"doc#0": 3}}')
    args.mapping("mapping", mapping, example="id_map(chunk ids)")
    return {q: {mapping.get(c, c): g for c, g in args.mapping(f"qrels[{q!r}]", j).items()} for q, j in qrels.items()}


def id_map_text(mapping: Mapping[str, str]) -> str:
    """``ids.tsv``: a header, then per mapped id its TREC id, a tab, and the id (the rest of the line)."""
    args.mapping("mapping", mapping, example="id_map(chunk ids)")
    rows = [f"{s}\t{i}" for i, s in sorted(mapping.items(), key=lambda kv: kv[1])]
    return "".join(line + "\n" for line in ["trec_id\tid", *rows])
