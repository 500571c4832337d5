"""Where labkit writes what it computes: a user cache directory, never the repository.

Committed files under ``data/`` are read-only inputs. Anything labkit computes and keeps (joined model weights,
new embedding vectors) goes to :func:`cache_dir`:

- ``LABKIT_CACHE`` if set (an empty value is an error, not "the current directory");
- otherwise the platform's user cache folder: ``$XDG_CACHE_HOME/labkit`` or ``~/.cache/labkit`` on Linux,
  ``~/Library/Caches/labkit`` on macOS, ``%LOCALAPPDATA%\\labkit\\Cache`` on Windows.

The folder is created on first use. If it cannot be created (a read-only home), :func:`cache_dir` returns
``None`` and callers keep results in memory only.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

__all__ = ["cache_dir", "default_cache_dir"]


def default_cache_dir() -> Path:
    """The cache folder labkit would use, without creating it."""
    env = os.environ.get("LABKIT_CACHE")
    if env is not None:
        if not env.strip():
            raise ValueError("LABKIT_CACHE is set but empty: unset it, or set it to a folder labkit may write to")
        return Path(env).expanduser()
    home = Path.home()
    if sys.platform == "darwin":
        return home / "Library" / "Caches" / "labkit"
    if os.name == "nt":
        base = os.environ.get("LOCALAPPDATA") or str(home / "AppData" / "Local")
        return Path(base) / "labkit" / "Cache"
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg and Path(xdg).is_absolute() else home / ".cache") / "labkit"


def cache_dir(sub: str = "") -> Path | None:
    """The (created) cache folder, or its sub-folder ``sub``; ``None`` when it cannot be written."""
    path = default_cache_dir() / sub if sub else default_cache_dir()
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    if not os.access(path, os.W_OK):
        return None
    return path
