"""Your own documents: any folder of Markdown, plain text and HTML, loaded as the handbook is.

Taught in ``10_your_own_documents``, the capstone; ``python -m labkit report`` builds on it.

:func:`load_folder` walks a folder (subfolders included), reads every ``.md``, ``.markdown``, ``.txt`` and
``.html``/``.htm`` file, and returns the same ``{doc_id: Document}`` that :func:`labkit.data.corpus.load_corpus` returns
for the handbook, so chunking, indexing, gold spans and every metric work unchanged. A document's id is its
path relative to the folder, with ``/`` separators and its suffix (``tutorial/controlflow.html``): two files of
one name in two subfolders stay two documents.

Markdown and text files are kept as they are, line ends normalised to LF (CRLF and CR become ``\n``) and a
leading byte-order mark dropped. An HTML page becomes Markdown-like text (:func:`html_to_text`,
with selectolax, a fast HTML5 parser): the main content only (a ``<main>``, ``role="main"`` or Sphinx's
``div.body`` when there is one), headings as ``#`` lines, list items as ``- `` lines, table rows as ``| a | b |``
lines with a header separator, code blocks kept line by line. **Gold spans are character offsets into *that*
text**, the extracted text, never the raw file (:data:`labkit.data.quotes.GOLD_RULE`): :func:`read_document` gives
it for one file (``python -m labkit text FILE`` prints it), and a gold ``quote`` is found in it. The extraction is
deterministic, so offsets stay valid as long as the file does. Nothing is written into the folder.

What cannot be loaded is skipped and reported, never silently dropped (:class:`Loaded.skipped`): a file that
is not UTF-8 text, one over ``max_bytes``, an HTML page with no text, a file the user cannot read, a suffix
the loader does not know. A folder that is missing, unreadable, or holds no document at all is an error.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from labkit.core import args
from labkit.core.files import path_arg
from labkit.data.corpus import Document

__all__ = ["SUFFIXES", "MAX_BYTES", "Skipped", "Loaded", "load_folder", "read_document", "html_to_text"]

SUFFIXES = {".md": "markdown", ".markdown": "markdown", ".txt": "text", ".html": "html", ".htm": "html"}
MAX_BYTES = 20_000_000
"""Files larger than this (20 MB) are skipped: a page of documentation is far smaller; raise it to load one."""
PROGRESS_FROM = 200
"""A folder with at least this many files shows a progress bar while it loads."""


@dataclass(frozen=True)
class Skipped:
    """A file :func:`load_folder` did not load, and why (``path`` relative to the folder)."""

    path: str
    reason: str


@dataclass
class Loaded:
    """What :func:`load_folder` found: the documents, what it skipped and why, and the formats it read."""

    folder: Path
    corpus: dict[str, Document]
    skipped: list[Skipped] = field(default_factory=list)
    formats: Counter = field(default_factory=Counter)

    def summary(self) -> str:
        words = sum(d.n_words for d in self.corpus.values())
        kinds = ", ".join(f"{n} {kind}" for kind, n in sorted(self.formats.items()))
        line = f"{len(self.corpus)} documents ({kinds}), {words:,} words"
        if self.skipped:
            why = Counter(s.reason.split(":")[0] for s in self.skipped)
            line += f"; skipped {len(self.skipped)}: " + ", ".join(f"{n} {r}" for r, n in why.most_common())
        return line


def load_folder(folder: str | os.PathLike, max_bytes: int = MAX_BYTES, progress: bool | None = None) -> Loaded:
    """Every document under ``folder`` as ``{doc_id: Document}``, plus what was skipped and why (module docstring).

    ``progress``: show a progress bar (default: when the folder holds :data:`PROGRESS_FROM` files or more).
    """
    root = Path(path_arg("folder", folder))
    max_bytes = args.whole_number("max_bytes", max_bytes, minimum=1)
    if root.is_file():
        raise NotADirectoryError(f"folder {root} is a file: give the folder that holds your documents")
    if not root.is_dir():
        raise FileNotFoundError(f"folder {root} not found: give an existing folder of .md, .txt or .html files")
    errors: list[OSError] = []
    files = []
    for here, dirs, names in os.walk(root, onerror=errors.append):  # symlinked folders are not followed
        dirs.sort()
        files += [Path(here) / n for n in sorted(names)]
    if errors and errors[0].filename and Path(errors[0].filename) == root:
        raise PermissionError(f"cannot read folder {root} ({errors[0].strerror}): check its permissions")
    out = Loaded(root, {})
    out.skipped += [Skipped(_rel(Path(e.filename), root), f"unreadable folder: {e.strerror}") for e in errors]
    bar = None
    if progress or (progress is None and len(files) >= PROGRESS_FROM):
        from tqdm.auto import tqdm

        bar = tqdm(total=len(files), desc=f"reading {len(files)} files", unit="file")
    for path in files:
        rel = _rel(path, root)
        doc, reason = _read(path, rel, max_bytes)
        if doc is None:
            out.skipped.append(Skipped(rel, reason))
        else:
            out.corpus[rel] = doc
            out.formats[SUFFIXES[path.suffix.lower()]] += 1
        if bar is not None:
            bar.update()
    if bar is not None:
        bar.close()
    if not out.corpus:
        seen = f"; skipped {len(out.skipped)} file(s), e.g. {out.skipped[0].path}: {out.skipped[0].reason}" if (
            out.skipped) else ""  # fmt: skip
        raise ValueError(f"folder {root} holds no document to load ({', '.join(sorted(SUFFIXES))}){seen}")
    out.corpus = dict(sorted(out.corpus.items()))
    return out


def read_document(path: str | os.PathLike, doc_id: str | None = None, max_bytes: int = MAX_BYTES) -> Document:
    """One file as :func:`load_folder` reads it: its ``text`` is the extracted text gold offsets count in.

    ``doc_id`` (default: the file's name) is the id it gets; a file :func:`load_folder` would skip is a ValueError
    giving the reason."""
    path = Path(path_arg("path", path))
    max_bytes = args.whole_number("max_bytes", max_bytes, minimum=1)
    if path.is_dir():
        raise IsADirectoryError(f"path {path} is a folder: give one file of it (.md, .txt or .html)")
    if not path.is_file():
        raise FileNotFoundError(f"path {path} not found: give an existing .md, .txt or .html file")
    doc_id = path.name if doc_id is None else args.text("doc_id", doc_id)
    doc, reason = _read(path, doc_id, max_bytes)
    if doc is None:
        raise ValueError(f"{path} is not loaded as a document ({reason})")
    return doc


def _rel(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix()


def _read(path: Path, rel: str, max_bytes: int) -> tuple[Document | None, str]:
    kind = SUFFIXES.get(path.suffix.lower())
    if kind is None:
        return None, f"unsupported type: {path.suffix or 'no suffix'} (loads {', '.join(sorted(SUFFIXES))})"
    try:
        size = path.stat().st_size
        if size > max_bytes:
            return None, f"too large: {size / 1e6:.1f} MB over max_bytes={max_bytes:,}; raise max_bytes to load it"
        raw = path.read_bytes()
    except OSError as err:
        return None, f"unreadable: {err.strerror}"
    if b"\0" in raw[:8192]:
        return None, "binary: not a text file"
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        return None, f"not UTF-8: byte 0x{raw[err.start]:02x} at offset {err.start}; save it as UTF-8"
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if kind == "html":
        title, text = html_to_text(text)
    else:
        first = text.lstrip().split("\n", 1)[0] if text.strip() else ""
        title = first.lstrip("#").strip() if kind == "markdown" and first.startswith("#") else ""
    if not text.strip():
        return None, "no text: the page holds no words" if kind == "html" else "empty: the file holds no words"
    return Document(id=rel, title=title or Path(rel).stem, text=text), ""


# ----------------------------------------------------------------------------- HTML -> Markdown-like text

_DROP = ("script", "style", "noscript", "template", "nav", "header", "footer", "form", "svg", "button")
_MAIN = ("main", "[role=main]", "div.body", "article", "body")
_CONTAINERS = {"div", "section", "article", "main", "body", "ul", "ol", "dl", "blockquote", "figure", "aside",
               "details", "center", "tbody", "thead", "tfoot"}  # fmt: skip
_BLOCKS = {"p", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "table", "li", "dt", "dd", "figcaption", "caption",
           "summary", "hr", "address"}  # fmt: skip
_SPACE = re.compile(r"\s+")


def html_to_text(html: str) -> tuple[str, str]:
    """``(title, text)`` of an HTML page: its main content as Markdown-like text (module docstring).

    Deterministic: the same page always gives the same text, so gold spans stored as offsets into it stay valid.
    """
    from selectolax.lexbor import LexborHTMLParser

    html = args.text("html", html, allow_empty=True)
    tree = LexborHTMLParser(html)
    title_node = tree.css_first("title")
    title = _inline(title_node) if title_node is not None else ""
    for sel in _DROP + ("a.headerlink", ".sphinxsidebar", ".related", "div.footer"):
        for node in tree.css(sel):
            node.decompose()
    main = next((n for n in (tree.css_first(s) for s in _MAIN) if n is not None), None)
    blocks: list[str] = []
    if main is not None:
        _walk(main, blocks)
    text = "\n\n".join(b for b in blocks if b.strip())
    h1 = next((b[2:] for b in blocks if b.startswith("# ")), "")
    return (h1 or title).strip(), (text + "\n") if text else ""


def _inline(node: Any) -> str:
    return _SPACE.sub(" ", node.text(deep=True, separator="")).replace("\u00b6", "").strip()


def _walk(node: Any, blocks: list[str], bullet: str = "") -> None:
    loose: list[str] = []  # inline text directly inside a container (text between blocks)

    def flush() -> None:
        words = _SPACE.sub(" ", "".join(loose)).strip()
        if words:
            blocks.append(bullet + words)
        loose.clear()

    for child in node.iter(include_text=True):
        tag = child.tag
        if tag == "-text":
            loose.append(child.text_content or "")
        elif tag in _CONTAINERS:
            flush()
            _walk(child, blocks, "- " if tag == "li" else "")
        elif tag in _BLOCKS:
            flush()
            _block(child, blocks)
        elif tag in ("br",):
            loose.append(" ")
        else:
            inner = child.css_first(",".join(sorted(_BLOCKS | _CONTAINERS - {"body"})))
            if inner is not None:  # an inline element wrapping blocks (e.g. <a><div>...</div></a>)
                flush()
                _walk(child, blocks)
            else:
                loose.append(child.text(deep=True, separator=""))
    flush()


def _block(node: Any, blocks: list[str]) -> None:
    tag = node.tag
    if tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
        blocks.append("#" * int(tag[1]) + " " + _inline(node))
    elif tag == "pre":
        blocks.append("\n".join(line.rstrip() for line in node.text(deep=True, separator="").strip("\n").split("\n")))
    elif tag == "table":
        blocks.append(_table(node))
    elif tag == "li" and node.css_first(",".join(sorted(_BLOCKS | {"ul", "ol", "dl", "div"}))) is not None:
        _walk(node, blocks, "- ")
    elif tag == "hr":
        return
    elif tag in ("dd",) and node.css_first("p,pre,table,ul,ol,dl,div") is not None:
        _walk(node, blocks)
    else:
        blocks.append(("- " if tag == "li" else "") + _inline(node))


def _table(node: Any) -> str:
    rows = []
    for tr in node.css("tr"):
        cells = [_inline(c).replace("|", "\\|") for c in tr.iter() if c.tag in ("td", "th")]
        if cells:
            rows.append("| " + " | ".join(cells) + " |")
    if not rows:
        return ""
    width = rows[0].count(" | ") + 1
    return "\n".join([rows[0], "|" + "---|" * width] + rows[1:])
