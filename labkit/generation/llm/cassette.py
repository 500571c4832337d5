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

import json
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from labkit import data_dir
from labkit.generation.llm.base import REPLAYED, Client
from labkit.generation.llm.lines import (
    DIGEST_COMMAND,
    CassetteWarning,
    add_digests,
    line_digest,
    locked,
    parse_line,
    prompt_key,
    read_logprobs,
    repair_torn_tail,
    request_options,
    split_torn,
    torn_message,
    write_all,
)

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


def cassette_path(model: str, folder: Path | None = None) -> Path:
    """``data/llm/<model>.jsonl`` (characters other than letters, digits, ``-_.`` become ``_``)."""
    if not isinstance(model, str) or not model.strip():
        raise ValueError(f"model must name a model, e.g. 'qwen2.5-coder-1.5b-instruct-q4_k_m'; got {model!r:.60}")
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in model)
    return (folder or data_dir() / "llm") / f"{safe}.jsonl"


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
    raw, torn = split_torn(raw)
    if torn.strip() and not complete_lines_only:
        warnings.warn(
            torn_message(path, raw, torn, "it is left out, not replayed; recording again asks that prompt anew"),
            CassetteWarning,
            stacklevel=3,
        )
    if raw.startswith(b"\xef\xbb\xbf"):
        raise ValueError(f"{path.name}:1: starts with a UTF-8 byte-order mark; save the cassette as UTF-8 without BOM")
    rows: dict[str, dict] = {}
    for n, line in enumerate(raw.split(b"\n"), start=1):
        if not line.strip():
            continue
        row = parse_line(path.name, n, line)
        old = rows.get(row["key"])
        if old is not None and old["response"] != row["response"]:
            raise ValueError(f"{path.name}:{n}: key {row['key']} was recorded before with a different response")
        rows[row["key"]] = row
    if not torn and len(raw) == st.st_size:
        _READ[str(path.resolve())] = (sig, rows)
    return dict(rows)


_READ: dict[str, tuple[tuple, dict]] = {}


class Replay(Client):
    """Answers from recorded responses only: no network, no model, identical output every run."""

    mode = "replay"
    counted = REPLAYED

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

    def complete(
        self,
        prompt: str,
        schema: dict | None = None,
        max_tokens: int | None = None,
        top_logprobs: int | None = None,
    ) -> Completion:
        key = prompt_key(self.model, prompt, schema=schema, max_tokens=max_tokens, top_logprobs=top_logprobs)
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


class Recorder(Client):
    """Replays what the cassette has; asks ``client`` for the rest and appends each new response at once.

    Appending one line per response makes a long recording resumable: stop it at any point and run it again,
    and only the missing requests reach the model. A response that is not text is never written.

    Killed at any moment (``kill -9`` included), it loses at most the response it was writing: each line is
    appended whole, holding an exclusive lock on the cassette, and carries its digest (:func:`line_digest`); a
    line torn by a kill mid-write is cut off, with a :class:`CassetteWarning`, before anything else is
    appended, so it is never replayed and its prompt is asked again. Two recorders sharing a cassette (forward
    and ``--reverse``) never write the same key twice: the check and the append happen under the lock.

    Inside :func:`labkit.core.guard.no_model_calls` it still replays, and refuses only what it would record.
    """

    mode = "record"

    def __init__(self, client: Any, path: str | Path | None = None):
        if not isinstance(getattr(client, "model", None), str) or not callable(getattr(client, "complete", None)):
            raise ValueError(f"client must be a model client with .model and .complete(), e.g. llm.Local(...); got "
                             f"{type(client).__name__} {client!r:.60}")  # fmt: skip
        self.client = client
        self.model = client.model
        target = Path(path) if path else cassette_path(client.model)
        if target.is_file():
            with locked(target) as fd:
                repair_torn_tail(fd, target)
        self.replay = Replay(client.model, path, must_exist=False)

    def __repr__(self) -> str:
        return f"Recorder({self.client!r}, recordings={len(self.replay.rows)}, cassette={self.replay.path.name!r})"

    def complete(
        self,
        prompt: str,
        schema: dict | None = None,
        max_tokens: int | None = None,
        top_logprobs: int | None = None,
    ) -> Completion:
        key = prompt_key(self.model, prompt, schema=schema, max_tokens=max_tokens, top_logprobs=top_logprobs)
        if key in self.replay.rows:
            return self.replay.complete(prompt, schema, max_tokens, top_logprobs)
        extra = {} if top_logprobs is None else {"top_logprobs": top_logprobs}  # older clients never see it
        done = self.client.complete(prompt, schema=schema, max_tokens=max_tokens, **extra)
        if not isinstance(done.text, str):
            raise ValueError(f"{self.model!r} returned {type(done.text).__name__}, not text; nothing was recorded")
        if top_logprobs is not None:
            read_logprobs(done.text, f"{self.model!r}'s reply to a top_logprobs request (nothing was recorded)")
        row = {"key": key, "model": self.model, "prompt": prompt}
        opts = request_options(schema, max_tokens, top_logprobs)
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
        with locked(self.replay.path) as fd:  # O_APPEND under the lock: whole lines, never interleaved
            repair_torn_tail(fd, self.replay.path)
            self.replay.refresh()
            if key in self.replay.rows:  # a recorder sharing the cassette wrote it meanwhile: keep the first one
                return self.replay.complete(prompt, schema, max_tokens, top_logprobs)
            write_all(fd, line)
        self.replay.rows[key] = row
        return Completion(done.text, done.prompt_tokens, done.completion_tokens, done.seconds, done.retries, prov)

    def counted_as(
        self,
        prompt: str,
        schema: dict | None = None,
        max_tokens: int | None = None,
        top_logprobs: int | None = None,
    ) -> str:
        """``"replayed"`` when the cassette has this request, else ``"recorded"`` (the client will be asked)."""
        key = prompt_key(self.model, prompt, schema=schema, max_tokens=max_tokens, top_logprobs=top_logprobs)
        return REPLAYED if key in self.replay.rows else "recorded"
