"""The local model: weights checked by hash, answers reproduced byte for byte, and llama.cpp's own server.

Tests marked ``llm`` need ``make llm`` (llama-cpp-python and the weights); ``.ci/run`` installs it and runs them
with ``make test-llm``. The hash check runs everywhere, on fake chunk packages.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from labkit import data_dir
from labkit.generation import llm
from labkit.generation.llm import local

# --------------------------------------------------------------------------- everywhere: the hash check


@pytest.fixture
def fake_parts(tmp_path, monkeypatch):
    """Two importable chunk packages holding b'hello ' and b'world'."""
    for i, payload in enumerate([b"hello ", b"world"], start=1):
        pkg = tmp_path / f"fakepart{i}"
        pkg.mkdir()
        (pkg / "part.bin").write_bytes(payload)
        (pkg / "__init__.py").write_text(
            "import os\ndef get_part_path():\n    return os.path.join(os.path.dirname(__file__), 'part.bin')\n"
        )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("LABKIT_CACHE", str(tmp_path / "cache"))
    return tmp_path


def _fake_spec(sha: str, size: int = 11) -> local.ModelSpec:
    return local.ModelSpec("fake-model", ("fakepart1", "fakepart2"), size, sha, "test")


def test_install_joins_parts_and_checks_the_hash(fake_parts, monkeypatch):
    good = hashlib.sha256(b"hello world").hexdigest()
    monkeypatch.setitem(local.MODELS, "fake-model", _fake_spec(good))
    path = local.install("fake-model", quiet=True)
    assert path.read_bytes() == b"hello world"
    assert path.parent == fake_parts / "cache" / "models"
    assert local.install("fake-model", quiet=True) == path  # already verified: kept


def test_install_refuses_a_file_whose_hash_differs(fake_parts, monkeypatch):
    monkeypatch.setitem(local.MODELS, "fake-model", _fake_spec("0" * 64))
    with pytest.raises(ValueError, match="refused fake-model: the joined parts are 11 bytes with sha256"):
        local.install("fake-model", quiet=True)
    assert list((fake_parts / "cache" / "models").iterdir()) == []  # nothing half-trusted is left behind


def test_a_tampered_joined_file_is_rejoined(fake_parts, monkeypatch):
    monkeypatch.setitem(local.MODELS, "fake-model", _fake_spec(hashlib.sha256(b"hello world").hexdigest()))
    path = local.install("fake-model", quiet=True)
    path.write_bytes(b"hello WORLD")  # same size, other bytes: the stamp no longer matches the file
    assert local.install("fake-model", quiet=True).read_bytes() == b"hello world"


def test_missing_parts_say_how_to_install(fake_parts, monkeypatch):
    monkeypatch.setitem(
        local.MODELS, "fake-model", local.ModelSpec("fake-model", ("no_such_part_pkg",), 1, "0" * 64, "t")
    )
    with pytest.raises(ImportError, match="make llm"):
        local.install("fake-model", quiet=True)


def test_unknown_model_and_bad_n_ctx():
    with pytest.raises(ValueError, match="model must be one of"):
        local.Local("gpt-5")
    with pytest.raises(ValueError, match="n_ctx must be"):
        local.Local(n_ctx=10)


# --------------------------------------------------------------------------- with the real model

llm_installed = pytest.mark.skipif(
    not os.environ.get("LABKIT_REQUIRE_LLM") and subprocess.run(
        [sys.executable, "-c", "import llama_cpp"], capture_output=True
    ).returncode != 0,
    reason="the local model is not installed (make llm)",
)  # fmt: skip


def _recorded(model: str, n: int) -> list[dict]:
    """The ``n`` recordings of ``model`` with the shortest prompts (cheap to re-generate)."""
    path = llm.cassette_path(model)
    if not path.is_file():
        return []
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows = [
        r
        for r in rows
        if (r.get("provenance") or {}).get("runtime") == "llama-cpp-python"
        and not r["provenance"]["params"].get("prefix_reuse")  # those depend on the call before them
    ]
    return sorted(rows, key=lambda r: len(r["prompt"]) + (r["provenance"].get("completion_tokens") or 0) * 20)[:n]


@pytest.mark.llm
@llm_installed
@pytest.mark.parametrize("model", [llm.DEFAULT_MODEL, llm.SMALL_MODEL])
def test_recorded_responses_are_reproduced_byte_for_byte(model):
    rows = _recorded(model, 3)
    assert rows, f"no recordings of {model} in {data_dir() / 'llm'}"
    client = local.Local(model)
    for row in rows:
        opts = row.get("options", {})
        done = client.complete(row["prompt"], schema=opts.get("schema"), max_tokens=opts.get("max_tokens"))
        assert done.text == row["response"], f"key {row['key']}: the local model no longer gives the recorded bytes"
        assert done.completion_tokens == row["provenance"]["completion_tokens"]
        assert row["provenance"]["weights_sha256"] == local.spec(model).sha256


@pytest.mark.llm
@llm_installed
def test_from_env_local_answers_a_prompt(monkeypatch):
    monkeypatch.setenv("LABKIT_LLM", "local-small")
    client = llm.from_env()
    answer = client("Reply with the single word: yes", max_tokens=5)
    assert isinstance(answer, str) and answer.strip()
    assert client.count_tokens("hello world") == 2


@pytest.mark.llm
@llm_installed
def test_json_schema_output_is_valid_json():
    schema = {
        "type": "object",
        "properties": {"verdict": {"enum": ["supported", "unsupported"]}},
        "required": ["verdict"],
    }
    text = local.Local(llm.SMALL_MODEL)("Context: leave is 15 days.\nClaim: leave is 15 days.\nVerdict?", schema=schema)
    assert llm.parse_json(text, ["verdict"])["verdict"] in {"supported", "unsupported"}


@pytest.mark.llm
@llm_installed
def test_prompt_longer_than_the_window_is_refused_before_running():
    with pytest.raises(ValueError, match="does not fit the context window"):
        local.Local(llm.SMALL_MODEL, n_ctx=256)("word " * 400)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.llm
@llm_installed
def test_llama_cpp_server_answers_like_the_in_process_model(tmp_path):
    """``make llm-server`` as a hosted endpoint would be used: the live client against llama.cpp's server."""
    port = _free_port()
    log = open(tmp_path / "server.log", "w")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        [sys.executable, "-m", "labkit", "llm", "serve", "--model", llm.SMALL_MODEL, "--port", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        client = llm.OpenAIChat(
            f"http://127.0.0.1:{port}/v1", llm.SMALL_MODEL, timeout=60, extra_body={"repeat_penalty": 1.0}
        )
        deadline = time.monotonic() + 120
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    pytest.fail(
                        "llama.cpp's server did not start:\n" + Path(tmp_path / "server.log").read_text()[-2000:]
                    )
                time.sleep(0.5)
        prompt = "In one short sentence: what is a VPN?"
        served = client.complete(prompt, max_tokens=40)
        in_process = local.Local(llm.SMALL_MODEL).complete(prompt, max_tokens=40)
        assert served.text == in_process.text
        assert served.prompt_tokens == in_process.prompt_tokens
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.close()


@pytest.mark.llm
@llm_installed
def test_top_logprobs_are_reproduced_by_the_local_model():
    # chapter 04b's reranker requests were recorded with prefix reuse, so their floats may differ in the last
    # digits from a fresh computation; the first token and every listed log-probability must agree closely
    from labkit.generation.llm.lines import read_logprobs

    path = llm.cassette_path(llm.DEFAULT_MODEL)
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows = [r for r in rows if r.get("options", {}).get("top_logprobs")][:2]
    assert rows, "no top_logprobs recordings (plan 04b-rerank)"
    client = local.Local(llm.DEFAULT_MODEL)
    for row in rows:
        done = client.complete(row["prompt"], max_tokens=1, top_logprobs=row["options"]["top_logprobs"])
        got, want = read_logprobs(done.text), read_logprobs(row["response"])
        assert json.loads(done.text)["token"] == json.loads(row["response"])["token"]
        assert got[0][0] == want[0][0] and abs(got[0][1] - want[0][1]) < 0.05, (got[:3], want[:3])
        assert done.provenance["params"]["top_logprobs"] == row["options"]["top_logprobs"]
