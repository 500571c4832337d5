"""One interface for language models: ``llm(prompt) -> text``, replayed offline by default.

Taught in 00_welcome; used by 02 (question writer, realism rater), 06 (reader and judges) and later chapters.
Every client is a callable ``llm(prompt, schema=None, max_tokens=None) -> str`` with a ``.model`` name.
:func:`from_env` picks one from ``LABKIT_LLM``:

- ``replay`` (default): answers come from the cassette ``data/llm/<model>.jsonl`` (see
  :mod:`labkit.generation.llm.cassette`), recorded from the local model with provenance. No network, no model, identical
  output every run; a request with no recording is an error that names its key and how to record it.
- ``local`` / ``local-small``: Qwen2.5-Coder-1.5B / 0.5B Instruct in-process through llama.cpp
  (:mod:`labkit.generation.llm.local`; install it with ``make llm``).
- ``live``: any OpenAI-compatible endpoint (``LABKIT_LLM_BASE_URL``, ``LABKIT_LLM_MODEL``, optional
  ``LABKIT_LLM_API_KEY``), e.g. ``make llm-server`` on 127.0.0.1 or a hosted model (:mod:`labkit.generation.llm.http`).
- ``record``: like ``local`` (or ``live`` when ``LABKIT_LLM_BASE_URL`` is set), and each new response is
  appended to the cassette, so the next run can replay it. Stopping and re-running resumes.

The API key is read from the environment, sent only in the ``Authorization`` header, and never printed,
stored in a cassette or put in an error message. :func:`usage_table` says what the calls cost.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from typing import Any

from labkit.generation.llm import local
from labkit.generation.llm.cassette import Completion, MissingRecording, Recorder, Replay, cassette_path, prompt_key
from labkit.generation.llm.http import EndpointError, OpenAIChat
from labkit.generation.llm.usage import HOSTED_PRICES, reset_usage, usage_table

__all__ = [
    "Replay",
    "Recorder",
    "OpenAIChat",
    "Local",
    "client",
    "Completion",
    "EndpointError",
    "MissingRecording",
    "from_env",
    "parse_json",
    "prompt_key",
    "cassette_path",
    "usage_table",
    "reset_usage",
    "HOSTED_PRICES",
    "DEFAULT_MODEL",
    "SMALL_MODEL",
]

DEFAULT_MODEL = "qwen2.5-coder-1.5b-instruct-q4_k_m"
SMALL_MODEL = "qwen2.5-coder-0.5b-instruct-q4_k_m"
MODES = ("replay", "local", "local-small", "live", "record")


def Local(model: str = DEFAULT_MODEL, **kwargs: Any):  # noqa: N802 - a class to the reader; imported lazily
    """The local model in-process (see :class:`labkit.generation.llm.local.Local`); needs ``make llm``."""

    return local.Local(model, **kwargs)


def from_env(model: str | None = None) -> Any:
    """The client a chapter uses for ``model`` (default: the 1.5B), chosen by ``LABKIT_LLM``.

    ``LABKIT_LLM=local-small`` makes the 0.5B the default model; a chapter that names a model gets that model.
    """
    return client(os.environ.get("LABKIT_LLM", "replay").strip() or "replay", model, "LABKIT_LLM")


def client(mode: str, model: str | None = None, what: str = "mode") -> Any:
    """The client of ``mode`` (one of :data:`MODES`, as ``LABKIT_LLM`` names them) for ``model``; ``live`` reads
    its endpoint from ``LABKIT_LLM_BASE_URL``, ``LABKIT_LLM_MODEL`` and ``LABKIT_LLM_API_KEY``."""
    if mode not in MODES:
        raise ValueError(f"{what} must be one of {', '.join(MODES)}; got {mode!r}")
    if model is not None and (not isinstance(model, str) or not model.strip()):
        raise ValueError(f"model must be a model name such as {DEFAULT_MODEL!r}, got {model!r}")
    base_url = os.environ.get("LABKIT_LLM_BASE_URL", "").strip()
    if mode == "live" or (mode == "record" and base_url):
        if not base_url:
            raise ValueError(f"LABKIT_LLM={mode} needs LABKIT_LLM_BASE_URL (an OpenAI-compatible endpoint)")
        name = os.environ.get("LABKIT_LLM_MODEL", "").strip() or model or DEFAULT_MODEL
        timeout = float(os.environ.get("LABKIT_LLM_TIMEOUT", "120"))
        chat = OpenAIChat(base_url, name, os.environ.get("LABKIT_LLM_API_KEY") or None, timeout=timeout)
        return chat if mode == "live" else Recorder(chat)
    name = model or (SMALL_MODEL if mode == "local-small" else DEFAULT_MODEL)
    if mode == "replay":
        return Replay(name)
    local_model = Local(name)
    return Recorder(local_model) if mode == "record" else local_model


_MAX_DEPTH = 20


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def parse_json(text: str, required: Iterable[str] = ()) -> dict:
    """The JSON object in a model's reply (code fences allowed), with ``required`` keys checked.

    Malformed JSON, ``NaN``/``Infinity``, nesting deeper than 20 levels, or a reply that is not an object are
    ``ValueError``s that quote the start of the reply.
    """
    if not isinstance(text, str):
        raise ValueError(f"text must be the model's reply as a string, got {type(text).__name__}")
    s = text.strip()
    if s.startswith("```"):
        s = s.split("\n", 1)[1] if "\n" in s else ""
        s = s.rsplit("```", 1)[0]
    if _depth_of_text(s) > _MAX_DEPTH:  # checked before json.loads, which would recurse
        raise ValueError(f"malformed LLM JSON (nested deeper than {_MAX_DEPTH} levels): {text[:120]!r}")
    try:
        obj = json.loads(s, parse_constant=_no_constants)
    except json.JSONDecodeError as err:
        raise ValueError(f"malformed LLM JSON ({err.msg} at column {err.colno}): {text[:120]!r}") from None
    except ValueError as err:
        raise ValueError(f"malformed LLM JSON ({err}): {text[:120]!r}") from None
    except RecursionError:
        raise ValueError(f"malformed LLM JSON (nested too deeply): {text[:120]!r}") from None
    if not isinstance(obj, dict):
        raise ValueError(f"the LLM returned JSON that is not an object: {text[:120]!r}")
    missing = [k for k in required if k not in obj]
    if missing:
        raise ValueError(f"the LLM JSON lacks required key(s) {missing}: {text[:120]!r}")
    return obj


def _depth_of_text(s: str) -> int:
    """Maximum bracket nesting of ``s`` outside strings (a cheap pre-check before json.loads recurses)."""
    depth = best = 0
    in_str = esc = False
    for ch in s:
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "[{":
            depth += 1
            best = max(best, depth)
        elif ch in "]}":
            depth -= 1
    return best
