"""A client for any OpenAI-compatible ``/chat/completions`` endpoint that fails safely.

Tested against real HTTP servers on 127.0.0.1 that misbehave on purpose (``tests/test_llm_http.py``) and
against llama.cpp's own server (``make llm-server``):

- one **overall deadline** per call, retries and waits included: a server that trickles one byte at a time
  cannot hold a call past ``timeout`` seconds;
- **redirects are not followed** (a 3xx would otherwise carry the ``Authorization`` header to wherever the
  ``Location`` points);
- **429 and 5xx are retried** with exponential backoff, honouring ``Retry-After``, at most ``max_retries``
  times; the retries are counted in the usage table;
- a reply that is not a chat completion (not JSON, ``NaN`` in it, no ``choices``, ``content`` null or not text,
  a truncated body, a bad status line) is an error that names the endpoint and what was wrong.

The API key is sent only in the ``Authorization`` header and never appears in a repr, an error or a cassette.
"""

from __future__ import annotations

import email.utils
import http.client
import json
import math
import socket
import threading
import time
import urllib.parse
from typing import Any

from labkit.core.guard import check_model_call
from labkit.generation.llm.base import Client
from labkit.generation.llm.cassette import Completion
from labkit.generation.llm.lines import logprob_text, request_options

__all__ = ["OpenAIChat", "EndpointError"]

MAX_BODY = 8 * 1024 * 1024


class EndpointError(RuntimeError):
    """The endpoint could not be reached, timed out, or answered with something that is not a completion."""


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _retry_after(value: str | None) -> float | None:
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
        return seconds if math.isfinite(seconds) and seconds >= 0 else None
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


class OpenAIChat(Client):
    """A live OpenAI-compatible chat endpoint: one user message per prompt, temperature 0, a fixed seed.

    ``extra_body`` adds fields to every request, as the OpenAI SDK's argument of that name does (llama.cpp's
    server applies ``repeat_penalty`` 1.1 unless told ``{"repeat_penalty": 1.0}``, which the local backend uses).
    """

    mode = "live"

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout: float = 120.0,
        max_retries: int = 3,
        backoff: float = 0.5,
        seed: int = 0,
        extra_body: dict | None = None,
    ):
        if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
            raise ValueError(
                f"base_url must be an http:// or https:// address such as http://127.0.0.1:8080/v1, got {base_url!r}"
            )
        parts = urllib.parse.urlsplit(base_url)
        if not parts.hostname:
            raise ValueError(f"base_url has no host name: {base_url!r}")
        if not isinstance(model, str) or not model.strip():
            raise ValueError("model must name the endpoint's model (LABKIT_LLM_MODEL), got an empty value")
        if (
            isinstance(timeout, bool)
            or not isinstance(timeout, int | float)
            or not math.isfinite(timeout)
            or timeout <= 0
        ):
            raise ValueError(f"timeout must be a finite number of seconds > 0, got {timeout!r}")
        if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
            raise ValueError(f"max_retries must be a whole number >= 0, got {max_retries!r}")
        if not isinstance(backoff, int | float) or not math.isfinite(backoff) or backoff < 0:
            raise ValueError(f"backoff must be a finite number of seconds >= 0, got {backoff!r}")
        if api_key is not None and (not isinstance(api_key, str) or any(c in api_key for c in "\r\n")):
            raise ValueError("api_key must be a single-line string")
        self.base_url = base_url.rstrip("/")
        self._parts = urllib.parse.urlsplit(self.base_url)
        self.model, self.timeout, self.max_retries, self.backoff, self.seed = (
            model,
            float(timeout),
            max_retries,
            backoff,
            seed,
        )
        if extra_body is not None and not isinstance(extra_body, dict):
            raise ValueError(f"extra_body must be a dict of extra request fields, got {type(extra_body).__name__}")
        self.extra_body = dict(extra_body or {})
        self._api_key = api_key or None

    def __repr__(self) -> str:  # never show the key
        return f"OpenAIChat(base_url={self.base_url!r}, model={self.model!r})"

    # ------------------------------------------------------------------ one HTTP exchange

    def _post(self, body: bytes, deadline: float) -> tuple[int, dict[str, str], bytes]:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError
        cls = http.client.HTTPSConnection if self._parts.scheme == "https" else http.client.HTTPConnection
        conn = cls(self._parts.hostname, self._parts.port, timeout=remaining)
        fired = threading.Event()

        def abort() -> None:  # the overall deadline: unblock whatever read is waiting
            fired.set()
            sock = conn.sock
            if sock is not None:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

        timer = threading.Timer(remaining, abort)
        timer.daemon = True
        timer.start()
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        try:
            conn.request("POST", f"{self._parts.path}/chat/completions", body=body, headers=headers)
            resp = conn.getresponse()
            chunks, size = [], 0
            while True:
                if fired.is_set():
                    raise TimeoutError
                if conn.sock is not None:
                    conn.sock.settimeout(max(0.01, deadline - time.monotonic()))
                chunk = resp.read(65536)
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
                if size > MAX_BODY:
                    raise EndpointError(f"the LLM endpoint at {self.base_url} sent more than {MAX_BODY} bytes; refused")
            if fired.is_set():
                raise TimeoutError
            if resp.length:  # Content-Length promised more than arrived
                raise http.client.IncompleteRead(b"".join(chunks), resp.length)
            return resp.status, {k.lower(): v for k, v in resp.getheaders()}, b"".join(chunks)
        except TimeoutError:
            raise TimeoutError from None
        except http.client.IncompleteRead:
            if fired.is_set():
                raise TimeoutError from None
            raise EndpointError(
                f"the LLM endpoint at {self.base_url} closed the connection mid-reply (truncated body)"
            ) from None
        except http.client.HTTPException as err:
            if fired.is_set():
                raise TimeoutError from None
            raise EndpointError(
                f"the LLM endpoint at {self.base_url} sent a malformed HTTP response "
                f"({type(err).__name__}: {str(err)[:80]})"
            ) from None
        except OSError as err:
            if fired.is_set():
                raise TimeoutError from None
            raise EndpointError(f"cannot reach the LLM endpoint at {self.base_url}: {err.strerror or err}") from None
        finally:
            timer.cancel()
            conn.close()

    # ------------------------------------------------------------------ the call

    def _parse(self, raw: bytes, logprobs: bool = False) -> tuple[str, dict]:
        where = f"the LLM endpoint at {self.base_url}"
        try:
            obj = json.loads(raw.decode("utf-8"), parse_constant=_reject_constant)
        except (UnicodeDecodeError, ValueError, RecursionError):
            raise EndpointError(f"{where} replied with something that is not JSON: {raw[:120]!r}") from None
        if not isinstance(obj, dict):
            raise EndpointError(f"{where} replied with JSON that is not an object: {raw[:120]!r}")
        choices = obj.get("choices")
        if not isinstance(choices, list) or not choices:
            raise EndpointError(f"{where} replied without choices (not an OpenAI chat completion): {raw[:120]!r}")
        message = choices[0].get("message") if isinstance(choices[0], dict) else None
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, str):
            raise EndpointError(
                f"{where} replied with choices[0].message.content = {type(content).__name__}, not text "
                "(a refusal, a tool call or a broken server); nothing was recorded"
            )
        usage = obj.get("usage") if isinstance(obj.get("usage"), dict) else {}
        if logprobs:
            try:
                first = choices[0]["logprobs"]["content"][0]
                content = logprob_text(first["token"], [(t["token"], t["logprob"]) for t in first["top_logprobs"]])
            except (KeyError, IndexError, TypeError):
                raise EndpointError(
                    f"{where} replied without choices[0].logprobs.content[0].top_logprobs; it does not return "
                    "log-probabilities (llama.cpp's server and OpenAI do): use another endpoint"
                ) from None
        return content, usage

    def complete(
        self,
        prompt: str,
        schema: dict | None = None,
        max_tokens: int | None = None,
        top_logprobs: int | None = None,
    ) -> Completion:
        check_model_call(self)  # also when called as .complete() (a Recorder recording, the pointwise reranker)
        if not isinstance(prompt, str) or not prompt.strip():
            raise ValueError("prompt must be a non-empty string")
        opts = request_options(schema, max_tokens, top_logprobs)
        payload: dict[str, Any] = {
            "model": self.model,
            "temperature": 0,
            "seed": self.seed,
            "messages": [{"role": "user", "content": prompt}],
        }
        if "max_tokens" in opts:
            payload["max_tokens"] = opts["max_tokens"]
        if "schema" in opts:
            payload["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "reply", "schema": opts["schema"], "strict": True},
            }
        if "top_logprobs" in opts:
            payload.update(logprobs=True, top_logprobs=opts["top_logprobs"])
        payload.update(self.extra_body)  # e.g. llama.cpp's {"repeat_penalty": 1.0}
        body = json.dumps(payload).encode()
        start = time.monotonic()
        deadline = start + self.timeout
        retries = 0
        while True:
            try:
                status, headers, raw = self._post(body, deadline)
            except TimeoutError:
                raise EndpointError(
                    f"the LLM endpoint at {self.base_url} did not answer within timeout={self.timeout:g} s "
                    f"(retries: {retries})"
                ) from None
            if status == 429 or 500 <= status < 600:
                if retries >= self.max_retries:
                    raise EndpointError(
                        f"the LLM endpoint at {self.base_url} answered HTTP {status} for model {self.model!r} "
                        f"after {retries} retries"
                    )
                wait = _retry_after(headers.get("retry-after"))
                wait = self.backoff * 2**retries if wait is None else wait
                if time.monotonic() + wait >= deadline:
                    raise EndpointError(
                        f"the LLM endpoint at {self.base_url} answered HTTP {status} and asked to retry after "
                        f"{wait:.1f} s, beyond timeout={self.timeout:g} s"
                    )
                time.sleep(wait)
                retries += 1
                continue
            if 300 <= status < 400:
                raise EndpointError(
                    f"the LLM endpoint at {self.base_url} answered HTTP {status} (a redirect to "
                    f"{headers.get('location', '?')!r}); redirects are not followed: set LABKIT_LLM_BASE_URL to the "
                    "final address"
                )
            if status != 200:
                detail = raw[:160].decode("utf-8", "replace")
                raise EndpointError(
                    f"the LLM endpoint at {self.base_url} answered HTTP {status} for model {self.model!r}: {detail!r}"
                )
            text, usage = self._parse(raw, top_logprobs is not None)
            pt, ct = usage.get("prompt_tokens"), usage.get("completion_tokens")
            return Completion(
                text,
                pt if isinstance(pt, int) else None,
                ct if isinstance(ct, int) else None,
                time.monotonic() - start,
                retries,
                {
                    "runtime": "openai-compatible endpoint",
                    "params": {"temperature": 0, "seed": self.seed, **opts, **self.extra_body},
                },
            )
