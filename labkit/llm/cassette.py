"""Cassettes: recorded model responses, replayed offline, keyed by a hash of the request.

A cassette is ``data/llm/<model>.jsonl``, one JSON object a line::

    {"key": "3f1c…", "model": "qwen2.5-coder-1.5b-instruct-q4_k_m", "prompt": "…",
     "options": {"max_tokens": 200},              # only what changes the output; omitted when empty
     "response": "…",
     "provenance": {"runtime": "llama-cpp-python", "runtime_version": "0.3.36",
                    "weights_sha256": "cc32…", "params": {"temperature": 0, "seed": 0, …},
                    "prompt_tokens": 412, "completion_tokens": 38, "seconds": 5.9, "retries": 0}}

The key is the sha256 of (model, prompt, options), so the same prompt asked with a JSON schema and without one
are two recordings. Replay never calls a model: a request with no recording is a :class:`MissingRecording`
that names the key and the command that records it.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from labkit import data_dir
from labkit.llm.usage import LEDGER

__all__ = ["Completion", "MissingRecording", "prompt_key", "cassette_path", "read_cassette", "Replay", "Recorder"]

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


def read_cassette(path: Path, complete_lines_only: bool = False) -> dict[str, dict]:
    """Every recording in ``path`` by key; a missing file is an empty cassette.

    Errors name the file and line: a byte-order mark, bytes that are not UTF-8, a line that is not JSON, a
    line without ``key``/``response``, a response that is not a string, two different responses for one key.
    ``complete_lines_only`` ignores a last line without its newline: another recorder may be writing it.
    """
    if not path.exists():
        return {}
    if path.is_dir():
        raise ValueError(f"{path} is a directory, not a cassette file (.jsonl)")
    raw = path.read_bytes()
    if complete_lines_only:
        raw = raw[: raw.rfind(b"\n") + 1]
    if raw.startswith(b"\xef\xbb\xbf"):
        raise ValueError(f"{path.name}:1: starts with a UTF-8 byte-order mark; save the cassette as UTF-8 without BOM")
    rows: dict[str, dict] = {}
    for n, line in enumerate(raw.split(b"\n"), start=1):
        if not line.strip():
            continue
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as err:
            raise ValueError(
                f"{path.name}:{n}: not UTF-8 (byte {line[err.start]:#04x} at column {err.start + 1})"
            ) from None
        try:
            row = json.loads(text)
        except json.JSONDecodeError as err:
            raise ValueError(f"{path.name}:{n}: not a JSON object ({err.msg})") from None
        if not isinstance(row, dict) or not isinstance(row.get("key"), str) or "response" not in row:
            raise ValueError(f"{path.name}:{n}: not a cassette line (needs a string key and a response)")
        if not isinstance(row["response"], str):
            raise ValueError(f"{path.name}:{n}: response is {type(row['response']).__name__}, not text")
        old = rows.get(row["key"])
        if old is not None and old["response"] != row["response"]:
            raise ValueError(f"{path.name}:{n}: key {row['key']} was recorded before with a different response")
        rows[row["key"]] = row
    return rows


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
    """

    mode = "record"

    def __init__(self, client: Any, path: str | Path | None = None):
        self.client = client
        self.model = client.model
        self.replay = Replay(client.model, path, must_exist=False)

    def __repr__(self) -> str:
        return f"Recorder({self.client!r}, recordings={len(self.replay.rows)}, cassette={self.replay.path.name!r})"

    def complete(self, prompt: str, schema: dict | None = None, max_tokens: int | None = None) -> Completion:
        key = prompt_key(self.model, prompt, schema=schema, max_tokens=max_tokens)
        if key in self.replay.rows:
            return self.replay.complete(prompt, schema, max_tokens)
        done = self.client.complete(prompt, schema=schema, max_tokens=max_tokens)
        self.replay.refresh()
        if key in self.replay.rows:  # a recorder sharing the cassette wrote it meanwhile: keep the first one
            return self.replay.complete(prompt, schema, max_tokens)
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
        self.replay.path.parent.mkdir(parents=True, exist_ok=True)
        # one write() on an O_APPEND file: two recorders sharing a cassette never interleave their lines
        line = (json.dumps(row, ensure_ascii=False) + "\n").encode("utf-8")
        fd = os.open(self.replay.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)
        self.replay.rows[key] = row
        return Completion(done.text, done.prompt_tokens, done.completion_tokens, done.seconds, done.retries, prov)

    def __call__(self, prompt: str, schema: dict | None = None, max_tokens: int | None = None) -> str:

        key = prompt_key(self.model, prompt, schema=schema, max_tokens=max_tokens)
        how = "replayed" if key in self.replay.rows else "recorded"
        done = self.complete(prompt, schema, max_tokens)
        LEDGER.add(self.model, how, done)
        return done.text
