"""Cassettes: recorded model responses, replayed offline, keyed by a hash of the request.

A cassette is ``data/llm/<model>.jsonl``, one JSON object a line::

    {"key": "3f1c…", "model": "qwen2.5-coder-1.5b-instruct-q4_k_m", "prompt": "…",
     "options": {"max_tokens": 200},              # only what changes the output; omitted when empty
     "response": "…",
     "provenance": {"runtime": "llama-cpp-python", "runtime_version": "0.3.36",
                    "weights_sha256": "cc32…", "params": {"temperature": 0, "seed": 0, …},
                    "prompt_tokens": 412, "completion_tokens": 38, "seconds": 5.9, "retries": 0},
     "digest": "9b0e…32 hex…"}

The key is the sha256 of (model, prompt, options), so the same prompt asked with a JSON schema and without one
are two recordings. Replay never calls a model: a request with no recording is a :class:`MissingRecording`
that names the key and the command that records it.

The digest (:func:`line_digest`) covers every other field: replay refuses, naming the file and line, a line
whose key is not its prompt's or whose response or provenance no longer matches its digest (edited by hand),
and a line without one, saying to run :data:`DIGEST_COMMAND` (:func:`add_digests`, which adds the field and
changes no other byte). A torn last line, left by a recorder killed mid-write, is dropped with a
:class:`CassetteWarning` and never replayed; the next :class:`Recorder` cuts it off before appending.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import warnings
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from labkit import data_dir
from labkit.llm.usage import LEDGER

try:
    import fcntl
except ImportError:  # Windows: recorders there do not share a cassette
    fcntl = None

__all__ = ["Completion", "MissingRecording", "CassetteWarning", "prompt_key", "cassette_path", "read_cassette",
           "line_digest", "add_digests", "DIGEST_COMMAND", "Replay", "Recorder"]  # fmt: skip

RECORD_HINT = "make record NB=<notebook> (or LABKIT_LLM=record with the local model installed by `make llm`)"


class MissingRecording(LookupError):
    """A request that the cassette has no response for."""


@dataclass(frozen=True)
class Completion:
    """One model response and what it cost."""

    text: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    seconds: float | None = None
    retries: int = 0
    provenance: dict = field(default_factory=dict)


def _options(schema: dict | None = None, max_tokens: int | None = None) -> dict:
    out: dict[str, Any] = {}
    if schema is not None:
        if not isinstance(schema, dict):
            raise ValueError(f"schema must be a JSON-schema dict, got {type(schema).__name__}")
        out["schema"] = schema
    if max_tokens is not None:
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
            raise ValueError(f"max_tokens must be a whole number >= 1, got {max_tokens!r}")
        out["max_tokens"] = max_tokens
    return out


def prompt_key(model: str, prompt: str, **options: Any) -> str:
    """The cassette key of a request: sha256 of (model, prompt[, options]), hex, first 24 characters.

    With no options the key is that of ``f"{model}\\0{prompt}"`` (the original format).
    """
    if not isinstance(prompt, str):  # every client keys its requests here: one check for all of them
        raise ValueError(f"prompt must be the text to send, a string; got {type(prompt).__name__} {prompt!r:.60}")
    opts = _options(**options)
    blob = f"{model}\0{prompt}"
    if opts:
        blob += "\0" + json.dumps(opts, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


def cassette_path(model: str, folder: Path | None = None) -> Path:
    """``data/llm/<model>.jsonl`` (characters other than letters, digits, ``-_.`` become ``_``)."""
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in model)
    return (folder or data_dir() / "llm") / f"{safe}.jsonl"


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


def _parse_line(name: str, n: int, line: bytes, need_digest: bool = True) -> dict:
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


def _split_torn(raw: bytes) -> tuple[bytes, bytes]:
    """``raw`` as (its complete lines, the torn last line without a newline, or b"")."""
    cut = raw.rfind(b"\n") + 1
    return raw[:cut], raw[cut:]


def _torn_message(path: Path, raw: bytes, torn: bytes, done: str) -> str:
    n = raw.count(b"\n") + 1
    return (
        f"{path.name}:{n}: the last line is torn ({len(torn)} bytes and no newline: a recorder was stopped while "
        f"writing it); {done}"
    )


def read_cassette(path: Path, complete_lines_only: bool = False) -> dict[str, dict]:
    """Every recording in ``path`` by key; a missing file is an empty cassette.

    Errors name the file and line: a byte-order mark, bytes that are not UTF-8, a line that is not JSON, a
    line without ``key``/``response``, a response that is not a string, two different responses for one key, a
    key that is not its prompt's, a line without a digest or one that does not match it (edited by hand).
    A torn last line (no newline: a recorder killed mid-write) is dropped with a :class:`CassetteWarning`
    and never replayed. ``complete_lines_only`` drops it without a word: another recorder may be writing it.
    """
    if not path.exists():
        return {}
    if path.is_dir():
        raise ValueError(f"{path} is a directory, not a cassette file (.jsonl)")
    st = path.stat()
    sig = (st.st_ino, st.st_size, st.st_mtime_ns)
    cached = _READ.get(str(path.resolve()))
    if cached is not None and cached[0] == sig:  # checked once per version of the file, not per Replay
        return dict(cached[1])
    raw = path.read_bytes()
    raw, torn = _split_torn(raw)
    if torn.strip() and not complete_lines_only:
        warnings.warn(
            _torn_message(path, raw, torn, "it is left out, not replayed; recording again asks that prompt anew"),
            CassetteWarning,
            stacklevel=3,
        )
    if raw.startswith(b"\xef\xbb\xbf"):
        raise ValueError(f"{path.name}:1: starts with a UTF-8 byte-order mark; save the cassette as UTF-8 without BOM")
    rows: dict[str, dict] = {}
    for n, line in enumerate(raw.split(b"\n"), start=1):
        if not line.strip():
            continue
        row = _parse_line(path.name, n, line)
        old = rows.get(row["key"])
        if old is not None and old["response"] != row["response"]:
            raise ValueError(f"{path.name}:{n}: key {row['key']} was recorded before with a different response")
        rows[row["key"]] = row
    if not torn and len(raw) == st.st_size:
        _READ[str(path.resolve())] = (sig, rows)
    return dict(rows)


_READ: dict[str, tuple[tuple, dict]] = {}


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
    with _locked(path) as fd:
        raw = path.read_bytes()
        complete, torn = _split_torn(raw)
        out, added, had = [], 0, 0
        for n, line in enumerate(complete.split(b"\n")[:-1], start=1):
            if not line.strip():
                out.append(line)
                continue
            row = _parse_line(path.name, n, line, need_digest=False)
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
            print(_torn_message(path, complete, torn, "dropped (a recorder asks that prompt again)"), file=sys.stderr)
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
def _locked(path: Path):
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


def _write_all(fd: int, data: bytes) -> None:
    """``os.write`` until every byte is written (a write may be short)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _repair_torn_tail(fd: int, path: Path) -> None:
    """Cut a torn last line off the locked cassette, with a message: appending after it would glue the next
    line onto it. Only the tail is read, unless there is something to cut."""
    size = os.fstat(fd).st_size
    if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
        return
    raw = os.pread(fd, size, 0)
    complete, torn = _split_torn(raw)
    warnings.warn(
        _torn_message(path, complete, torn, "it was dropped, never replayed, and that prompt is asked again"),
        CassetteWarning,
        stacklevel=4,
    )
    os.ftruncate(fd, len(complete))


class Replay:
    """Answers from recorded responses only: no network, no model, identical output every run."""

    mode = "replay"

    def __init__(self, model: str, path: str | Path | None = None, must_exist: bool = True):
        """``path``: a cassette other than ``data/llm/<model>.jsonl``; it must exist unless ``must_exist=False``
        (a :class:`Recorder` starting a new cassette)."""
        if not isinstance(model, str) or not model.strip():
            raise ValueError(
                "model must name the model whose recordings to replay, e.g. 'qwen2.5-coder-1.5b-instruct-q4_k_m'"
            )
        self.model = model
        if (
            path and must_exist and not Path(path).is_file()
        ):  # an explicit cassette that is not there is a mistyped path
            raise ValueError(f"path {str(path)!r} is not a cassette file: give an existing .jsonl, or leave path out "
                             f"to replay data/llm/{model}.jsonl")  # fmt: skip
        self.path = Path(path) if path else cassette_path(model)
        self.rows = read_cassette(self.path)

    @property
    def responses(self) -> dict[str, str]:
        return {k: r["response"] for k, r in self.rows.items()}

    def refresh(self) -> None:
        """Re-read the cassette if it grew: another recorder may share it (``tools/record.py --reverse``)."""
        size = self.path.stat().st_size if self.path.exists() else 0
        if size != getattr(self, "_size", None):
            self.rows = read_cassette(self.path, complete_lines_only=True)
            self._size = size

    def __repr__(self) -> str:
        return f"Replay(model={self.model!r}, recordings={len(self.rows)}, cassette={self.path.name!r})"

    def complete(self, prompt: str, schema: dict | None = None, max_tokens: int | None = None) -> Completion:
        key = prompt_key(self.model, prompt, schema=schema, max_tokens=max_tokens)
        row = self.rows.get(key)
        if row is None:
            raise MissingRecording(
                f"no recorded response for this prompt (key {key}, model {self.model!r}) in {self.path.name}: "
                f"record it with {RECORD_HINT}; the prompt starts {prompt[:80]!r}"
            )
        prov = row.get("provenance") or {}
        return Completion(
            row["response"],
            prov.get("prompt_tokens"),
            prov.get("completion_tokens"),
            prov.get("seconds"),
            0,
            prov,
        )

    def __call__(self, prompt: str, schema: dict | None = None, max_tokens: int | None = None) -> str:

        done = self.complete(prompt, schema, max_tokens)
        LEDGER.add(self.model, "replayed", done)
        return done.text


class Recorder:
    """Replays what the cassette has; asks ``client`` for the rest and appends each new response at once.

    Appending one line per response makes a long recording resumable: stop it at any point and run it again,
    and only the missing requests reach the model. A response that is not text is never written.

    Killed at any moment (``kill -9`` included), it loses at most the response it was writing: each line is
    appended whole, holding an exclusive lock on the cassette, and carries its digest (:func:`line_digest`); a
    line torn by a kill mid-write is cut off, with a :class:`CassetteWarning`, before anything else is
    appended, so it is never replayed and its prompt is asked again. Two recorders sharing a cassette (forward
    and ``--reverse``) never write the same key twice: the check and the append happen under the lock.
    """

    mode = "record"

    def __init__(self, client: Any, path: str | Path | None = None):
        self.client = client
        self.model = client.model
        target = Path(path) if path else cassette_path(client.model)
        if target.is_file():
            with _locked(target) as fd:
                _repair_torn_tail(fd, target)
        self.replay = Replay(client.model, path, must_exist=False)

    def __repr__(self) -> str:
        return f"Recorder({self.client!r}, recordings={len(self.replay.rows)}, cassette={self.replay.path.name!r})"

    def complete(self, prompt: str, schema: dict | None = None, max_tokens: int | None = None) -> Completion:
        key = prompt_key(self.model, prompt, schema=schema, max_tokens=max_tokens)
        if key in self.replay.rows:
            return self.replay.complete(prompt, schema, max_tokens)
        done = self.client.complete(prompt, schema=schema, max_tokens=max_tokens)
        if not isinstance(done.text, str):
            raise ValueError(f"{self.model!r} returned {type(done.text).__name__}, not text; nothing was recorded")
        row = {"key": key, "model": self.model, "prompt": prompt}
        opts = _options(schema, max_tokens)
        if opts:
            row["options"] = opts
        prov = dict(done.provenance)
        prov.update(
            prompt_tokens=done.prompt_tokens,
            completion_tokens=done.completion_tokens,
            seconds=None if done.seconds is None else round(done.seconds, 3),
            retries=done.retries,
        )
        row["response"] = done.text
        row["provenance"] = prov
        row["digest"] = line_digest(row)  # the last field, as add_digests puts it
        line = (json.dumps(row, ensure_ascii=False) + "\n").encode("utf-8")
        with _locked(self.replay.path) as fd:  # O_APPEND under the lock: whole lines, never interleaved
            _repair_torn_tail(fd, self.replay.path)
            self.replay.refresh()
            if key in self.replay.rows:  # a recorder sharing the cassette wrote it meanwhile: keep the first one
                return self.replay.complete(prompt, schema, max_tokens)
            _write_all(fd, line)
        self.replay.rows[key] = row
        return Completion(done.text, done.prompt_tokens, done.completion_tokens, done.seconds, done.retries, prov)

    def __call__(self, prompt: str, schema: dict | None = None, max_tokens: int | None = None) -> str:

        key = prompt_key(self.model, prompt, schema=schema, max_tokens=max_tokens)
        how = "replayed" if key in self.replay.rows else "recorded"
        done = self.complete(prompt, schema, max_tokens)
        LEDGER.add(self.model, how, done)
        return done.text
