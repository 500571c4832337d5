"""labkit.data.folder: any folder of Markdown, text and HTML, loaded as the handbook is; bad files skipped and said."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from labkit.data import folder
from labkit.text import chunking

PAGE = """<!DOCTYPE html><html><head><title>Copy - Python docs</title><script>var x = 1;</script></head>
<body><nav>Home | Next</nav><div class="sphinxsidebar">Quick search</div>
<div class="body" role="main"><section><h1>copy — Shallow and deep copy<a class="headerlink" href="#x">¶</a></h1>
<p>Assignment statements in Python do not <em>copy</em> objects, they create bindings.</p>
<ul><li>A shallow copy constructs a new compound object.</li><li>A deep copy copies recursively.</li></ul>
<table><thead><tr><th>Function</th><th>Result</th></tr></thead>
<tbody><tr><td>copy(x)</td><td>a shallow copy</td></tr><tr><td>deepcopy(x)</td><td>a deep copy</td></tr></tbody></table>
<pre>&gt;&gt;&gt; import copy
&gt;&gt;&gt; copy.deepcopy([1, [2]])</pre>
<h2>Notes</h2><p>Classes can define <code>__copy__()</code>.</p></section></div>
<footer>© Copyright</footer></body></html>"""


def tree(base: Path, files: dict) -> Path:
    for name, content in files.items():
        path = base / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return base


def listing(base: Path) -> dict:
    return {p: (p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(base.rglob("*"))}


def test_html_becomes_markdown_like_text_of_the_main_content_only():
    title, text = folder.html_to_text(PAGE)
    assert title == "copy — Shallow and deep copy"
    assert text.startswith("# copy — Shallow and deep copy\n\nAssignment statements in Python do not copy objects")
    assert "- A shallow copy constructs a new compound object.\n\n- A deep copy copies recursively." in text
    assert "| Function | Result |\n|---|---|\n| copy(x) | a shallow copy |\n| deepcopy(x) | a deep copy |" in text
    assert ">>> import copy\n>>> copy.deepcopy([1, [2]])" in text
    assert "## Notes\n\nClasses can define __copy__()." in text
    for noise in ("var x", "Home | Next", "Quick search", "©", "¶"):
        assert noise not in text
    assert folder.html_to_text(PAGE) == (title, text)  # deterministic: offsets into it stay valid


def test_a_folder_of_mixed_documents_loads_with_relative_ids_and_chunks_like_the_handbook(tmp_path):
    base = tree(tmp_path, {"guide/setup.md": "# Setup\n\nInstall the tool.\n", "notes.txt": "Plain notes here.\n",
                           "api/copy.html": PAGE, "guide/copy.html": PAGE})  # fmt: skip
    before = listing(base)
    loaded = folder.load_folder(base)
    assert list(loaded.corpus) == ["api/copy.html", "guide/copy.html", "guide/setup.md", "notes.txt"]
    assert loaded.corpus["guide/setup.md"].title == "Setup" and loaded.corpus["notes.txt"].title == "notes"
    assert loaded.corpus["api/copy.html"].text == loaded.corpus["guide/copy.html"].text  # same name, two documents
    assert loaded.formats == {"html": 2, "markdown": 1, "text": 1} and loaded.skipped == []
    assert "4 documents (2 html, 1 markdown, 1 text)" in loaded.summary()
    chunks = chunking.chunk_corpus(loaded.corpus, 8, 2)
    assert {c.doc for c in chunks} == set(loaded.corpus)
    assert listing(base) == before  # nothing written into the user's folder


def test_bad_files_are_skipped_with_a_reason_and_counted(tmp_path):
    files = {"ok.md": "# Fine\n\nwords here\n", "image.png": b"\x89PNG\r\n\x1a\n\0\0", "blob.txt": b"abc\0def",
             "latin1.txt": "caf\u00e9".encode("latin-1"), "blank.md": "  \n",
             "empty.html": "<html><body><script>x()</script></body></html>"}  # fmt: skip
    base = tree(tmp_path, files)
    with open(base / "huge.txt", "wb") as f:  # a 200 MB file, sparse: nothing is read
        f.truncate(200_000_000)
    loaded = folder.load_folder(base)
    assert list(loaded.corpus) == ["ok.md"]
    reasons = {s.path: s.reason for s in loaded.skipped}
    assert reasons["image.png"].startswith("unsupported type: .png")
    assert reasons["blob.txt"] == "binary: not a text file"
    assert reasons["latin1.txt"].startswith("not UTF-8: byte 0xe9 at offset 3")
    assert reasons["empty.html"] == "no text: the page holds no words"
    assert reasons["blank.md"] == "empty: the file holds no words"
    assert reasons["huge.txt"].startswith("too large: 200.0 MB over max_bytes=20,000,000")
    assert "skipped 6" in loaded.summary()


def test_an_unreadable_file_is_skipped_and_an_unreadable_folder_is_an_error(tmp_path, monkeypatch):
    base = tree(tmp_path, {"a.md": "# A\n\ntext\n", "secret.md": "# S\n\nhidden\n"})
    real = Path.read_bytes

    def read_bytes(self):
        if self.name == "secret.md":
            raise PermissionError(13, "Permission denied", str(self))
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    loaded = folder.load_folder(base)
    assert [(s.path, s.reason) for s in loaded.skipped] == [("secret.md", "unreadable: Permission denied")]

    def walk(top, onerror=None, **kwargs):
        onerror(PermissionError(13, "Permission denied", str(top)))
        return iter(())

    monkeypatch.setattr(os, "walk", walk)
    with pytest.raises(PermissionError, match="cannot read folder .* check its permissions"):
        folder.load_folder(base)


def test_crlf_files_are_read_with_lf_so_offsets_are_portable(tmp_path):
    base = tree(tmp_path, {"w.txt": b"line one\r\nline two\r\n"})
    assert folder.load_folder(base).corpus["w.txt"].text == "line one\nline two\n"


@pytest.mark.parametrize(
    ("make", "error", "words"),
    [
        (lambda p: p / "missing", FileNotFoundError, "not found: give an existing folder"),
        (lambda p: tree(p, {"f.md": "x"}) / "f.md", NotADirectoryError, "is a file"),
        (lambda p: p, ValueError, "holds no document to load"),
        (lambda p: tree(p, {"a.pdf": b"%PDF"}), ValueError, "skipped 1 file(s), e.g. a.pdf: unsupported type"),
    ],
)
def test_bad_folders(tmp_path, make, error, words):
    with pytest.raises(error) as info:
        folder.load_folder(make(tmp_path))
    assert words in str(info.value)


def test_max_bytes_is_checked(tmp_path):
    with pytest.raises(ValueError, match="max_bytes"):
        folder.load_folder(tmp_path, max_bytes=0)
