"""Take the bundled real corpus: a snapshot of the Python 3.11 documentation from Debian's ``python3.11-doc``.

Usage (from the repository root, on Debian 12 with ``apt-get install python3.11-doc``)::

    python tools/take_pydocs.py              # (re)write data/pydocs/ from /usr/share/doc/python3.11/html
    python tools/take_pydocs.py --check      # compare data/pydocs/ with the installed package, write nothing

What is taken, by a rule anyone can re-run:

- ``data/pydocs/faq/*.html``: the FAQ pages, as shipped. Their questions are the question set (written by the
  documentation's own authors); the FAQ pages are *not* part of the corpus, so the answers must be found in
  the rest of the documentation.
- ``data/pydocs/corpus/``: every page the FAQ answers link to (the links of ``div.body`` in ``faq/*.html``),
  as shipped, except the FAQ pages themselves and index pages (``index.html``, ``genindex*``,
  ``py-modindex.html``): the pages the FAQ's authors point a reader to.
- ``data/pydocs/MANIFEST.tsv``: path, bytes and sha256 of every file taken, and the package's name and version.
- ``data/pydocs/COPYING``: the package's ``copyright`` file (the PSF licence and its history), as shipped.

Pages are copied byte for byte; nothing is edited. ``labkit.data.folder`` extracts their text.
"""

from __future__ import annotations

import argparse
import hashlib
import posixpath
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "data" / "pydocs"
SOURCE = Path("/usr/share/doc/python3.11/html")
PACKAGE = "python3.11-doc"
COPYRIGHT = Path("/usr/share/doc/python3.11-doc/copyright")


def linked_pages(source: Path) -> list[str]:
    """Pages (relative paths) linked from the FAQ answers, minus FAQ and index pages, that exist."""
    from selectolax.lexbor import LexborHTMLParser

    pages = set()
    for faq in sorted((source / "faq").glob("*.html")):
        body = LexborHTMLParser(faq.read_text(encoding="utf-8")).css_first("div.body")
        for a in body.css("a[href]") if body is not None else []:
            href = a.attributes.get("href") or ""
            target = href.split("#", 1)[0]
            if not target or "://" in target or target.startswith("mailto:"):
                continue
            page = posixpath.normpath(posixpath.join("faq", target))
            name = posixpath.basename(page)
            if (
                page.startswith(("faq/", "../"))
                or name in ("index.html", "py-modindex.html")
                or name.startswith("genindex")
            ):
                continue
            if (source / page).is_file():
                pages.add(page)
    return sorted(pages)


def version() -> str:
    try:
        out = subprocess.run(["dpkg-query", "-W", "-f=${Version}", PACKAGE], capture_output=True, text=True)
    except FileNotFoundError:
        return "unknown"
    return out.stdout.strip() or "unknown"


def plan(source: Path) -> list[tuple[Path, str]]:
    """``(source file, destination relative to data/pydocs)`` for everything taken."""
    faq = [(p, f"faq/{p.name}") for p in sorted((source / "faq").glob("*.html"))]
    return faq + [(source / page, f"corpus/{page}") for page in linked_pages(source)]


def manifest(files: list[tuple[Path, str]]) -> str:
    lines = [f"# {PACKAGE} {version()}: {len(files)} files taken by tools/take_pydocs.py from {SOURCE}",
             "path\tbytes\tsha256"]  # fmt: skip
    for src, dest in files:
        data = src.read_bytes()
        lines.append(f"{dest}\t{len(data)}\t{hashlib.sha256(data).hexdigest()}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the installed package; write nothing")
    parser.add_argument("--source", type=Path, default=SOURCE, help=f"the HTML folder (default {SOURCE})")
    opts = parser.parse_args(argv)
    if not (opts.source / "faq").is_dir():
        print(f"error: {opts.source}/faq not found: apt-get install {PACKAGE} (Debian 12)", file=sys.stderr)
        return 1
    files = plan(opts.source)
    text = manifest(files)
    if opts.check:
        have = (OUT / "MANIFEST.tsv").read_text(encoding="utf-8") if (OUT / "MANIFEST.tsv").exists() else ""
        same = have.splitlines()[1:] == text.splitlines()[1:]
        print("data/pydocs matches the installed package" if same else "data/pydocs differs: re-take it")
        return 0 if same else 1
    for sub in ("faq", "corpus"):
        shutil.rmtree(OUT / sub, ignore_errors=True)
    for src, dest in files:
        (OUT / dest).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, OUT / dest)
    (OUT / "MANIFEST.tsv").write_text(text, encoding="utf-8")
    if COPYRIGHT.is_file():
        shutil.copyfile(COPYRIGHT, OUT / "COPYING")
    size = sum(src.stat().st_size for src, _ in files)
    print(f"took {len(files)} files ({size / 1e6:.1f} MB) into {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
