"""labkit.generation.llm against a real HTTP server on loopback: live calls, recording, replay, and failures."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from labkit.generation import llm


class FakeOpenAI(BaseHTTPRequestHandler):
    """A tiny OpenAI-compatible endpoint: echoes the prompt upper-cased; special prompts misbehave."""

    seen: list = []

    def log_message(self, *args):  # keep pytest output clean
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        FakeOpenAI.seen.append({"body": body, "auth": self.headers.get("Authorization")})
        prompt = body["messages"][0]["content"]
        if prompt == "fail":
            self.send_response(503)
            self.end_headers()
            return
        payload = (
            b"not json"
            if prompt == "garbage"
            else json.dumps({"choices": [{"message": {"role": "assistant", "content": prompt.upper()}}]}).encode()
        )
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


@pytest.fixture
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), FakeOpenAI)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    FakeOpenAI.seen = []
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()
    httpd.server_close()


def test_live_call_sends_an_openai_request(server):
    client = llm.OpenAIChat(server, "tiny-model", api_key="sk-test-not-a-real-key-123456")
    assert client("hello") == "HELLO"
    sent = FakeOpenAI.seen[0]
    assert sent["body"]["model"] == "tiny-model" and sent["body"]["temperature"] == 0
    assert sent["auth"] == "Bearer sk-test-not-a-real-key-123456"
    assert "sk-test" not in repr(client)


def test_record_then_replay_offline(server, tmp_path):
    cassette = tmp_path / "tiny.jsonl"
    recorder = llm.Recorder(llm.OpenAIChat(server, "tiny"), cassette)
    assert recorder("judge this claim") == "JUDGE THIS CLAIM"
    assert recorder("judge this claim") == "JUDGE THIS CLAIM"
    assert len(FakeOpenAI.seen) == 1  # the second call was replayed
    text = cassette.read_text()
    assert "sk-" not in text and json.loads(text)["key"] == llm.prompt_key("tiny", "judge this claim")
    assert llm.Replay("tiny", cassette)("judge this claim") == "JUDGE THIS CLAIM"


def test_missing_recording_says_how_to_record(tmp_path):
    (tmp_path / "none.jsonl").touch()  # an empty cassette: nothing recorded yet
    with pytest.raises(llm.MissingRecording, match="LABKIT_LLM=record"):
        llm.Replay("tiny", tmp_path / "none.jsonl")("never recorded")


def test_parse_json():
    assert llm.parse_json('```json\n{"verdict": "supported"}\n```', ["verdict"]) == {"verdict": "supported"}
    with pytest.raises(ValueError, match="malformed LLM JSON"):
        llm.parse_json('{"verdict": supported}')
    with pytest.raises(ValueError, match="lacks required key"):
        llm.parse_json('{"answer": 1}', ["verdict"])


def test_from_env(monkeypatch, tmp_path):
    monkeypatch.setenv("LABKIT_LLM", "live")
    monkeypatch.delenv("LABKIT_LLM_BASE_URL", raising=False)
    with pytest.raises(ValueError, match="needs LABKIT_LLM_BASE_URL"):
        llm.from_env()
    monkeypatch.setenv("LABKIT_LLM", "sometimes")
    with pytest.raises(ValueError, match="must be one of replay, local, local-small, live, record"):
        llm.from_env()
    monkeypatch.setenv("LABKIT_LLM", "replay")
    assert isinstance(llm.from_env(), llm.Replay)


def test_parse_json_rejects_nan_and_deep_nesting_cleanly():
    with pytest.raises(ValueError, match="NaN is not a JSON number"):
        llm.parse_json('{"score": NaN}')
    with pytest.raises(ValueError, match="nested deeper than 20"):
        llm.parse_json('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(ValueError, match="not an object"):
        llm.parse_json("[1, 2]")
    with pytest.raises(ValueError, match="text must be"):
        llm.parse_json(None)


def test_recording_keeps_provenance_and_resumes(server, tmp_path):
    cassette = tmp_path / "tiny.jsonl"
    rec = llm.Recorder(llm.OpenAIChat(server, "tiny"), cassette)
    rec("first")
    # a new recorder (a re-run after a stop) replays what is there and records only what is missing
    rec2 = llm.Recorder(llm.OpenAIChat(server, "tiny"), cassette)
    assert rec2("first") == "FIRST" and rec2("second") == "SECOND"
    assert len(FakeOpenAI.seen) == 2
    rows = [json.loads(line) for line in cassette.read_text().splitlines()]
    assert [r["prompt"] for r in rows] == ["first", "second"]
    prov = rows[0]["provenance"]
    assert {"runtime", "params", "prompt_tokens", "completion_tokens", "seconds", "retries"} <= set(prov)
    assert prov["params"]["temperature"] == 0


def test_options_are_part_of_the_key(tmp_path):
    plain = llm.prompt_key("m", "p")
    assert plain == llm.prompt_key("m", "p", schema=None, max_tokens=None)
    assert (
        len({plain, llm.prompt_key("m", "p", max_tokens=10), llm.prompt_key("m", "p", schema={"type": "object"})}) == 3
    )
    with pytest.raises(ValueError, match="max_tokens must be"):
        llm.prompt_key("m", "p", max_tokens=0)


def line(prompt: str, response: str, /, **extra) -> bytes:
    """A cassette line as the recorder writes it (key, digest), then changed by ``extra``."""
    row = {"key": llm.prompt_key("tiny", prompt), "model": "tiny", "prompt": prompt, "response": response,
           "provenance": {"seconds": 1.0}}  # fmt: skip
    row["digest"] = llm.cassette.line_digest(row)
    return (json.dumps({**row, **extra}, ensure_ascii=False) + "\n").encode()


KEY_A = llm.prompt_key("tiny", "a")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"\xef\xbb\xbf" + line("a", "r"), "tiny.jsonl:1: starts with a UTF-8 byte-order mark"),
        (line("a", "r") + line("b", "caf").replace(b"caf", b"caf\xe9"), "tiny.jsonl:2: not UTF-8"),
        (b'{"key": "a", "response": null}\n', "tiny.jsonl:1: response is NoneType"),
        (b'{"key": "a"}\n', "tiny.jsonl:1: not a cassette line"),
        (b"not json\n", "tiny.jsonl:1: not a JSON object"),
        (line("a", "x") + line("a", "y", digest=None), "tiny.jsonl:2: the line does not match its digest"),
        (line("a", "x") + line("a", "y"), f"tiny.jsonl:2: key {KEY_A} was recorded before"),
        (line("a", "x") + line("b", "y", response="edited"), "tiny.jsonl:2: the line does not match its digest"),
        (line("a", "x", provenance={"seconds": 0.5}), "tiny.jsonl:1: the line does not match its digest"),
        (line("a", "x", prompt="b"), f"tiny.jsonl:1: key {KEY_A} is not the key of the line's model, prompt"),
        (line("a", "x", digest="0" * 32), "tiny.jsonl:1: the line does not match its digest"),
        (line("a", "x") + b'{"key": "k", "model": "tiny", "prompt": "b", "response": "r"}\n', "tiny.jsonl:2: key k"),
        (json.dumps({"key": llm.prompt_key("tiny", "b"), "model": "tiny", "prompt": "b", "response": "r"}).encode()
         + b"\n", "tiny.jsonl:1: the line has no digest .* run `python tools/record.py --add-digests`"),
    ],
)  # fmt: skip
def test_a_damaged_cassette_names_file_and_line(tmp_path, content, message):
    path = tmp_path / "tiny.jsonl"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=message):
        llm.Replay("tiny", path)


def test_a_missing_recording_names_key_and_command(tmp_path):
    (tmp_path / "none.jsonl").touch()
    with pytest.raises(llm.MissingRecording, match=r"key [0-9a-f]{24}.*make record NB="):
        llm.Replay("tiny", tmp_path / "none.jsonl")("never recorded", max_tokens=5)


def test_from_env_modes(monkeypatch, server):
    for var in ("LABKIT_LLM", "LABKIT_LLM_BASE_URL", "LABKIT_LLM_MODEL"):
        monkeypatch.delenv(var, raising=False)
    assert llm.from_env().model == llm.DEFAULT_MODEL
    assert llm.from_env(llm.SMALL_MODEL).model == llm.SMALL_MODEL
    monkeypatch.setenv("LABKIT_LLM", "local-small")
    assert repr(llm.from_env()).startswith(f"Local(model='{llm.SMALL_MODEL}'")
    monkeypatch.setenv("LABKIT_LLM", "record")
    assert isinstance(llm.from_env(), llm.Recorder)
    monkeypatch.setenv("LABKIT_LLM_BASE_URL", server)
    monkeypatch.setenv("LABKIT_LLM_MODEL", "tiny")
    rec = llm.from_env()
    assert isinstance(rec.client, llm.OpenAIChat) and rec.model == "tiny"
    monkeypatch.setenv("LABKIT_LLM", "live")
    assert llm.from_env()("hi") == "HI"
    with pytest.raises(ValueError, match="model must be a model name"):
        llm.from_env("")


def test_usage_table_counts_replayed_calls_with_recorded_cost(tmp_path):
    path = tmp_path / "tiny.jsonl"
    row = {"key": llm.prompt_key("tiny", "q"), "model": "tiny", "prompt": "q", "response": "a",
           "provenance": {"prompt_tokens": 1000, "completion_tokens": 500, "seconds": 2.5}}  # fmt: skip
    row["digest"] = llm.cassette.line_digest(row)
    path.write_text(json.dumps(row) + "\n")
    llm.reset_usage()
    replay = llm.Replay("tiny", path)
    replay("q")
    replay("q")
    t = llm.usage_table()
    assert t.loc["tiny"].to_dict() == {
        "calls": 2, "replayed": 2, "prompt tokens": 2000, "completion tokens": 1000,
        "seconds (as recorded)": 5.0, "retries": 0, "USD at gpt-4o-mini prices": 0.0009,
    }  # fmt: skip
    with pytest.raises(ValueError, match="price_model must be one of"):
        llm.usage_table("gpt-99")
