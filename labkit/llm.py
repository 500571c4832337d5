"""One interface for language models: ``llm(prompt) -> text``, replayed offline by default.

For the chapters that call a model (02, 06, 08; not yet written). Three modes, chosen by
:func:`from_env` from ``LABKIT_LLM``:

- ``replay`` (default): answers come from a *cassette*, ``data/llm/<model>.jsonl``, one
  ``{"key", "model", "prompt", "response"}`` object a line, keyed by a hash of (model, prompt).
  No network, identical output every run. A prompt with no recording is an error that says how
  to record it; nothing is made up.
- ``live``: an OpenAI-compatible ``/chat/completions`` endpoint (``LABKIT_LLM_BASE_URL``,
  ``LABKIT_LLM_MODEL``, optional ``LABKIT_LLM_API_KEY``), temperature 0.
- ``record``: live, and every new response is appended to the cassette, so the next run can
  replay it.

The API key is read from the environment, sent only in the ``Authorization`` header, and never
printed, stored in a cassette or put in an error message.
"""

from __future__ import annotations

import hashlib
import json
import os
import urllib.error
import urllib.request
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from labkit import data_dir

__all__ = ["Replay", "OpenAIChat", "Recorder", "from_env", "parse_json", "prompt_key", "MissingRecording"]


class MissingRecording(LookupError):
    """A prompt that the cassette has no response for."""


def prompt_key(model: str, prompt: str) -> str:
    """The cassette key of a (model, prompt) pair: sha256 of both, hex, first 24 characters."""
    return hashlib.sha256(f"{model}\0{prompt}".encode()).hexdigest()[:24]


def _cassette_path(model: str, folder: Path | None = None) -> Path:
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in model)
    return (folder or data_dir() / "llm") / f"{safe}.jsonl"


class Replay:
    """Answers from recorded responses only."""

    def __init__(self, model: str, path: str | Path | None = None):
        if not model:
            raise ValueError("model must name the model whose recordings to replay, e.g. 'gpt-4o-mini'")
        self.model = model
        self.path = Path(path) if path else _cassette_path(model)
        self.responses: dict[str, str] = {}
        if self.path.is_file():
            for n, line in enumerate(self.path.read_text(encoding="utf-8").splitlines(), start=1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                    self.responses[row["key"]] = row["response"]
                except (json.JSONDecodeError, KeyError, TypeError):
                    raise ValueError(f"{self.path.name}:{n}: not a cassette line (needs key and response)") from None

    def __repr__(self) -> str:
        return f"Replay(model={self.model!r}, recordings={len(self.responses)}, cassette={self.path.name!r})"

    def __call__(self, prompt: str) -> str:
        key = prompt_key(self.model, prompt)
        if key not in self.responses:
            raise MissingRecording(
                f"no recorded response for this prompt (key {key}, model {self.model!r}) in {self.path.name}: "
                "run once with LABKIT_LLM=record and a live endpoint (LABKIT_LLM_BASE_URL, LABKIT_LLM_MODEL) "
                "to record it"
            )
        return self.responses[key]


class OpenAIChat:
    """A live OpenAI-compatible chat endpoint, one user message per prompt, temperature 0."""

    def __init__(self, base_url: str, model: str, api_key: str | None = None, timeout: float = 60.0):
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(f"base_url must start with http:// or https://, got {base_url!r}")
        if not model:
            raise ValueError("model must be set (LABKIT_LLM_MODEL)")
        if timeout <= 0:
            raise ValueError(f"timeout must be > 0 seconds, got {timeout}")
        self.base_url, self.model, self.timeout = base_url.rstrip("/"), model, timeout
        self._api_key = api_key

    def __repr__(self) -> str:  # never show the key
        return f"OpenAIChat(base_url={self.base_url!r}, model={self.model!r})"

    def __call__(self, prompt: str) -> str:
        body = json.dumps(
            {"model": self.model, "temperature": 0, "messages": [{"role": "user", "content": prompt}]}
        ).encode()
        headers = {"Content-Type": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        request = urllib.request.Request(f"{self.base_url}/chat/completions", data=body, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                raw = response.read()
        except urllib.error.HTTPError as err:
            raise RuntimeError(
                f"the LLM endpoint answered HTTP {err.code} ({err.reason}) for model {self.model!r}"
            ) from None
        except (urllib.error.URLError, TimeoutError) as err:
            reason = getattr(err, "reason", err)
            raise RuntimeError(f"cannot reach the LLM endpoint at {self.base_url}: {reason}") from None
        try:
            return json.loads(raw)["choices"][0]["message"]["content"]
        except (json.JSONDecodeError, KeyError, IndexError, TypeError):
            raise ValueError(f"the LLM endpoint's reply is not an OpenAI chat completion: {raw[:120]!r}") from None


class Recorder:
    """Call ``client`` for prompts the cassette lacks, append them to it, replay the rest."""

    def __init__(self, client: OpenAIChat, path: str | Path | None = None):
        self.client = client
        self.replay = Replay(client.model, path)

    def __call__(self, prompt: str) -> str:
        key = prompt_key(self.client.model, prompt)
        if key in self.replay.responses:
            return self.replay.responses[key]
        response = self.client(prompt)
        self.replay.path.parent.mkdir(parents=True, exist_ok=True)
        row = {"key": key, "model": self.client.model, "prompt": prompt, "response": response}
        with open(self.replay.path, "a", encoding="utf-8") as f:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
        self.replay.responses[key] = response
        return response


def from_env(default_model: str = "recorded") -> Any:
    """The model the notebooks use: replay unless ``LABKIT_LLM`` says ``live`` or ``record``."""
    mode = os.environ.get("LABKIT_LLM", "replay")
    model = os.environ.get("LABKIT_LLM_MODEL", default_model)
    if mode == "replay":
        return Replay(model)
    if mode not in ("live", "record"):
        raise ValueError(f"LABKIT_LLM must be replay, live or record, got {mode!r}")
    base_url = os.environ.get("LABKIT_LLM_BASE_URL")
    if not base_url:
        raise ValueError(f"LABKIT_LLM={mode} needs LABKIT_LLM_BASE_URL (an OpenAI-compatible endpoint)")
    client = OpenAIChat(base_url, model, os.environ.get("LABKIT_LLM_API_KEY"))
    return client if mode == "live" else Recorder(client)


def parse_json(text: str, required: Iterable[str] = ()) -> dict:
    """The JSON object in a model's reply (code fences allowed), with ``required`` keys checked."""
    s = text.strip()
    if s.startswith("```"):
        s = s.split("\n", 1)[1] if "\n" in s else ""
        s = s.rsplit("```", 1)[0]
    try:
        obj = json.loads(s)
    except json.JSONDecodeError as err:
        raise ValueError(f"malformed LLM JSON ({err.msg} at column {err.colno}): {text[:120]!r}") from None
    if not isinstance(obj, dict):
        raise ValueError(f"the LLM returned JSON that is not an object: {text[:120]!r}")
    missing = [k for k in required if k not in obj]
    if missing:
        raise ValueError(f"the LLM JSON lacks required key(s) {missing}: {text[:120]!r}")
    return obj
