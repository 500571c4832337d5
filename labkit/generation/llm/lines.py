"""A cassette's lines on disk: the key of a request, the digest of a line, one line read with every check,
one line appended whole under a lock, a torn last line cut off, and the digest migration.

:mod:`labkit.generation.llm.cassette` replays and records with these; ``tools/record.py --add-digests`` runs
:func:`add_digests`. Every error names the file and the line, and says what to do.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import warnings
from contextlib import contextmanager
from pathlib import Path
from typing import Any

try:
    import fcntl
except ImportError:  # Windows: recorders there do not share a cassette
    fcntl = None

__all__ = ["prompt_key", "request_options", "logprob_text", "read_logprobs", "MAX_LOGPROBS", "line_digest",
           "parse_line", "split_torn", "torn_message", "add_digests",
           "locked", "write_all", "repair_torn_tail", "CassetteWarning", "DIGEST_COMMAND"]  # fmt: skip


def request_options(schema: dict | None = None, max_tokens: int | None = None, top_logprobs: int | None = None) -> dict:
    """The options that change a response, checked: the JSON ``schema``, ``max_tokens``, and ``top_logprobs``
    (ask for the first generated token's ``n`` most likely tokens with their log-probabilities; the response is
    then :func:`logprob_text`'s JSON, see :func:`read_logprobs`)."""
    out: dict[str, Any] = {}
    if schema is not None:
        if not isinstance(schema, dict):
            raise ValueError(f"schema must be a JSON-schema dict, got {type(schema).__name__}")
        out["schema"] = schema
    if max_tokens is not None:
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
            raise ValueError(f"max_tokens must be a whole number >= 1, got {max_tokens!r}")
        out["max_tokens"] = max_tokens
    if top_logprobs is not None:
        if isinstance(top_logprobs, bool) or not isinstance(top_logprobs, int) or not 1 <= top_logprobs <= MAX_LOGPROBS:
            raise ValueError(f"top_logprobs must be a whole number in [1, {MAX_LOGPROBS}], got {top_logprobs!r}")
        out["top_logprobs"] = top_logprobs
    return out


MAX_LOGPROBS = 20  # what OpenAI-compatible endpoints accept


def logprob_text(token: str, top: list[tuple[str, float]]) -> str:
    """The recorded response of a ``top_logprobs`` request: the generated token and the most likely first tokens
    with their natural-log probabilities (rounded to 1e-5), as one JSON object."""
    return json.dumps({"token": token, "top_logprobs": [[t, round(float(lp), 5)] for t, lp in top]}, ensure_ascii=False)


def read_logprobs(text: str, where: str = "the response") -> list[tuple[str, float]]:
    """``[(token, logprob), ...]`` from :func:`logprob_text`'s JSON; a clear error for anything else."""
    if not isinstance(text, str):
        raise ValueError(f"{where} must be the recorded response text (a JSON string), got {type(text).__name__}")
    try:
        obj = json.loads(text)
        top = obj["top_logprobs"]
        pairs = [(str(t), float(lp)) for t, lp in top]
    except (ValueError, TypeError, KeyError):
        raise ValueError(
            f"{where} is not a top_logprobs response (JSON with a 'top_logprobs' list of [token, logprob]): "
            f"{text[:80]!r}; ask with top_logprobs=n"
        ) from None
    if not pairs or any(lp != lp or lp > 1e-6 for _, lp in pairs):
        raise ValueError(f"{where} has no log-probabilities, or a NaN or positive one: {text[:80]!r}")
    return pairs


def prompt_key(model: str, prompt: str, **options: Any) -> str:
    """The cassette key of a request: sha256 of (model, prompt[, options]), hex, first 24 characters.

    With no options the key is that of ``f"{model}\\0{prompt}"`` (the original format).
    """
    if not isinstance(prompt, str):  # every client keys its requests here: one check for all of them
        raise ValueError(f"prompt must be the text to send, a string; got {type(prompt).__name__} {prompt!r:.60}")
    opts = request_options(**options)
    blob = f"{model}\0{prompt}"
    if opts:
        blob += "\0" + json.dumps(opts, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


DIGEST_COMMAND = "python tools/record.py --add-digests"
"""Gives every cassette line its digest (``data/llm/*.jsonl``, or the files named), adding that field only."""


class CassetteWarning(UserWarning):
    """Something in a cassette was left out, and said so: a torn last line."""


def line_digest(row: dict) -> str:
    """The digest a cassette line carries: sha256 of the line's other fields (key, model, prompt, options,
    response, provenance) as canonical JSON (sorted keys, ASCII, no spaces), first 32 hex digits.

    It is not a signature: it tells a line edited after recording (a response or a figure of its provenance
    changed by hand) from one written by the recorder, which computes it as it writes.
    """
    body = {k: v for k, v in row.items() if k != "digest"}
    blob = json.dumps(body, sort_keys=True, ensure_ascii=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode("ascii")).hexdigest()[:32]


def parse_line(name: str, n: int, line: bytes, need_digest: bool = True) -> dict:
    """One cassette line, checked; every error names ``name:n`` and what to do."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ValueError(f"{name}:{n}: not UTF-8 (byte {line[err.start]:#04x} at column {err.start + 1})") from None
    try:
        row = json.loads(text)
    except json.JSONDecodeError as err:
        raise ValueError(f"{name}:{n}: not a JSON object ({err.msg})") from None
    if not isinstance(row, dict) or not isinstance(row.get("key"), str) or "response" not in row:
        raise ValueError(f"{name}:{n}: not a cassette line (needs a string key and a response)")
    if not isinstance(row["response"], str):
        raise ValueError(f"{name}:{n}: response is {type(row['response']).__name__}, not text")
    if not isinstance(row.get("model"), str) or not isinstance(row.get("prompt"), str):
        raise ValueError(f"{name}:{n}: not a cassette line (needs the model and the prompt as text)")
    opts = row.get("options") or {}
    try:
        key = prompt_key(row["model"], row["prompt"], **opts) if isinstance(opts, dict) else None
    except (TypeError, ValueError):
        key = None
    if key != row["key"]:
        raise ValueError(
            f"{name}:{n}: key {row['key']} is not the key of the line's model, prompt and options: the line was "
            "edited after recording; restore it (git checkout) or delete it and record it again"
        )
    if "digest" not in row:
        if need_digest:
            raise ValueError(
                f"{name}:{n}: the line has no digest (it was recorded before cassettes carried one): run "
                f"`{DIGEST_COMMAND}`, which adds the digest to every line and changes nothing else"
            )
    elif row["digest"] != line_digest(row):
        raise ValueError(
            f"{name}:{n}: the line does not match its digest: its response or provenance was edited after "
            "recording; restore it (git checkout) or delete the line and record it again"
        )
    return row


def split_torn(raw: bytes) -> tuple[bytes, bytes]:
    """``raw`` as (its complete lines, the torn last line without a newline, or b"")."""
    cut = raw.rfind(b"\n") + 1
    return raw[:cut], raw[cut:]


def torn_message(path: Path, raw: bytes, torn: bytes, done: str) -> str:
    n = raw.count(b"\n") + 1
    return (
        f"{path.name}:{n}: the last line is torn ({len(torn)} bytes and no newline: a recorder was stopped while "
        f"writing it); {done}"
    )


def add_digests(path: str | Path) -> tuple[int, int]:
    """Give every line of the cassette ``path`` its digest; returns (lines given one, lines that had one).

    Only the ``"digest"`` field is added, as the last field of the line: every other byte stays as it was, so
    responses are unchanged byte for byte. Idempotent (a second run changes nothing and does not rewrite the
    file) and deterministic (the digest depends on the line alone). A line whose digest does not match, or
    whose key is not its prompt's, is refused with its file and line, never blessed; a torn last line is
    dropped with a message. The file is replaced atomically, holding the recorders' lock: stop recorders of
    an older labkit (which do not take the lock) first.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path} is not a cassette file: give a data/llm/<model>.jsonl")
    with locked(path) as fd:
        raw = path.read_bytes()
        complete, torn = split_torn(raw)
        out, added, had = [], 0, 0
        for n, line in enumerate(complete.split(b"\n")[:-1], start=1):
            if not line.strip():
                out.append(line)
                continue
            row = parse_line(path.name, n, line, need_digest=False)
            if "digest" in row:
                had += 1
                out.append(line)
                continue
            body = line.rstrip(b" \t\r")
            if not body.endswith(b"}"):
                raise ValueError(f"{path.name}:{n}: the line does not end with '}}': not a cassette line")
            digest = line_digest(row)
            new = body[:-1] + b', "digest": "' + digest.encode("ascii") + b'"}' + line[len(body) :]
            if json.loads(new) != {**row, "digest": digest}:  # the field landed in the top-level object
                raise ValueError(f"{path.name}:{n}: could not add the digest without changing the line")
            out.append(new)
            added += 1
        if torn.strip():
            print(torn_message(path, complete, torn, "dropped (a recorder asks that prompt again)"), file=sys.stderr)
        if added or torn:
            tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
            data = b"".join(line + b"\n" for line in out)
            with open(tmp, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.chmod(tmp, os.fstat(fd).st_mode & 0o777)
            os.replace(tmp, path)
    return added, had


@contextmanager
def locked(path: Path):
    """An exclusive lock on the cassette ``path`` (created if missing), held by every writer: recorders
    appending, the torn-line repair, :func:`add_digests`. A killed process's lock is released by the system.
    Yields the open file descriptor, of the file that is at ``path`` now (re-opened if it was replaced)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    while True:
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_EX)
            if os.path.exists(path) and os.fstat(fd).st_ino == os.stat(path).st_ino:
                yield fd
                return
        finally:
            os.close(fd)  # closing releases the lock


def write_all(fd: int, data: bytes) -> None:
    """``os.write`` until every byte is written (a write may be short)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def repair_torn_tail(fd: int, path: Path) -> None:
    """Cut a torn last line off the locked cassette, with a message: appending after it would glue the next
    line onto it. Only the tail is read, unless there is something to cut."""
    size = os.fstat(fd).st_size
    if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
        return
    raw = os.pread(fd, size, 0)
    complete, torn = split_torn(raw)
    warnings.warn(
        torn_message(path, complete, torn, "it was dropped, never replayed, and that prompt is asked again"),
        CassetteWarning,
        stacklevel=4,
    )
    os.ftruncate(fd, len(complete))
