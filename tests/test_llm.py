"""labkit.llm against a real HTTP server on loopback: live calls, recording, replay, and failures."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from labkit import llm


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
    with pytest.raises(llm.MissingRecording, match="LABKIT_LLM=record"):
        llm.Replay("tiny", tmp_path / "none.jsonl")("never recorded")


def test_endpoint_failures_are_clear_and_do_not_hang(server):
    with pytest.raises(RuntimeError, match="HTTP 503"):
        llm.OpenAIChat(server, "m")("fail")
    with pytest.raises(ValueError, match="not an OpenAI chat completion"):
        llm.OpenAIChat(server, "m")("garbage")
    with pytest.raises(RuntimeError, match="cannot reach"):
        llm.OpenAIChat("http://127.0.0.1:9/v1", "m", timeout=2)("hello")


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
    with pytest.raises(ValueError, match="must be replay, live or record"):
        llm.from_env()
    monkeypatch.setenv("LABKIT_LLM", "replay")
    assert isinstance(llm.from_env(), llm.Replay)
