"""Reading the files a learner or a practitioner hands labkit: a path argument checked, text decoded once.

Core: every loader (``labkit.data``, ``labkit.trec``) reads through :func:`read_text`, so a folder passed as a
file, a missing file or a file that is not UTF-8 gives the same clear error everywhere, naming the file (and
the line, for bytes that do not decode).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["path_arg", "check_file", "read_text"]


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
    raw = check_file(path, what, hint).read_bytes()
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = raw[: err.start].count(b"\n") + 1
        raise ValueError(
            f"{path}:{line}: byte {raw[err.start]:#04x} is not UTF-8 (the file looks saved as Latin-1 or "
            "Windows-1252): re-save it as UTF-8"
        ) from None
