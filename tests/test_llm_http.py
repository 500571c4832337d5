"""labkit.generation.llm.OpenAIChat against real, misbehaving HTTP servers on 127.0.0.1.

Each server is a raw TCP socket that answers one way (a script of bytes, with pauses), so a test can send
exactly what a broken or hostile endpoint would: a null content, a truncated body, a bad status line, a
redirect, a trickle of bytes, a 429 with Retry-After.
"""

from __future__ import annotations

import json
import socket
import threading
import time

import pytest

from labkit.generation import llm


def completion(content, usage=True) -> bytes:
    obj = {"choices": [{"message": {"role": "assistant", "content": content}}]}
    if usage:
        obj["usage"] = {"prompt_tokens": 11, "completion_tokens": 3}
    return json.dumps(obj).encode()


def http_reply(body: bytes, status: str = "200 OK", headers: dict | None = None, length: int | None = None) -> bytes:
    head = [
        f"HTTP/1.1 {status}",
        "Content-Type: application/json",
        f"Content-Length: {len(body) if length is None else length}",
    ]
    head += [f"{k}: {v}" for k, v in (headers or {}).items()]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


class ScriptedServer:
    """A TCP server on 127.0.0.1: the n-th connection gets ``replies[min(n, last)]``.

    A reply is bytes, or a list of (bytes, pause_seconds) pieces sent one after another. Requests are kept
    (raw bytes) so tests can check what the client sent.
    """

    def __init__(self, replies):
        self.replies = replies
        self.requests: list[bytes] = []
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _read_request(self, conn) -> bytes:
        data = b""
        conn.settimeout(5)
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                return data
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n"):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        while len(body) < length:
            body += conn.recv(65536)
        return head + b"\r\n\r\n" + body

    def _serve(self):
        n = 0
        self.sock.settimeout(0.2)
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            with conn:
                try:
                    self.requests.append(self._read_request(conn))
                    reply = self.replies[min(n, len(self.replies) - 1)]
                    n += 1
                    pieces = [(reply, 0)] if isinstance(reply, bytes) else reply
                    for piece, pause in pieces:
                        if self.stop.is_set():
                            break
                        conn.sendall(piece)
                        time.sleep(pause)
                except OSError:
                    pass

    def close(self):
        self.stop.set()
        self.sock.close()
        self.thread.join(timeout=5)


@pytest.fixture
def serve():
    servers = []

    def start(*replies):
        s = ScriptedServer(list(replies))
        servers.append(s)
        return s

    yield start
    for s in servers:
        s.close()


def test_a_good_reply_and_what_was_sent(serve):
    srv = serve(http_reply(completion("15 days")))
    client = llm.OpenAIChat(srv.url, "m", api_key="sk-test-not-real-123")
    done = client.complete("how many days?")
    assert done.text == "15 days" and (done.prompt_tokens, done.completion_tokens, done.retries) == (11, 3, 0)
    head, _, body = srv.requests[0].partition(b"\r\n\r\n")
    assert head.startswith(b"POST /v1/chat/completions ")
    assert b"Authorization: Bearer sk-test-not-real-123" in head
    sent = json.loads(body)
    assert sent["temperature"] == 0 and sent["messages"] == [{"role": "user", "content": "how many days?"}]
    assert "sk-test" not in repr(client)


def test_a_json_schema_is_sent_as_response_format(serve):
    srv = serve(http_reply(completion('{"verdict": "supported"}')))
    schema = {"type": "object", "properties": {"verdict": {"type": "string"}}, "required": ["verdict"]}
    llm.OpenAIChat(srv.url, "m").complete("judge", schema=schema, max_tokens=50)
    sent = json.loads(srv.requests[0].partition(b"\r\n\r\n")[2])
    assert sent["response_format"]["json_schema"]["schema"] == schema and sent["max_tokens"] == 50


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        (http_reply(completion(None)), "content = NoneType, not text"),
        (http_reply(completion(["a", "b"])), "content = list, not text"),
        (http_reply(b'{"id": "x"}'), "without choices"),
        (http_reply(b'{"choices": []}'), "without choices"),
        (http_reply(b"<html>502 Bad Gateway</html>"), "not JSON"),
        (http_reply(b'{"choices": [{"message": {"content": NaN}}]}'), "not JSON"),
        (http_reply(b'{"choices": [{"mess', length=200), "truncated"),
        (b"HTTP/1.1 OK-ish\r\n\r\n", "malformed HTTP response"),
        (b"garbage with no status line\r\n\r\n", "malformed HTTP response"),
        (http_reply(b'{"error": "no such model"}', status="404 Not Found"), "HTTP 404"),
    ],
)
def test_a_broken_reply_is_a_clear_error_naming_the_endpoint(serve, reply, message):
    srv = serve(reply)
    with pytest.raises(llm.EndpointError, match=message) as err:
        llm.OpenAIChat(srv.url, "m", timeout=5)("hi")
    assert srv.url in str(err.value)


def test_a_null_content_is_never_recorded(serve, tmp_path):
    srv = serve(http_reply(completion(None)))
    cassette = tmp_path / "m.jsonl"
    with pytest.raises(llm.EndpointError):
        llm.Recorder(llm.OpenAIChat(srv.url, "m", timeout=5), cassette)("hi")
    assert not cassette.exists() or cassette.read_text() == ""


def test_redirects_are_not_followed_and_the_key_stays_home(serve):
    elsewhere = serve(http_reply(completion("stolen")))
    srv = serve(http_reply(b"", status="302 Found", headers={"Location": f"{elsewhere.url}/chat/completions"}))
    with pytest.raises(llm.EndpointError, match="redirects are not followed"):
        llm.OpenAIChat(srv.url, "m", api_key="sk-secret-abc", timeout=5)("hi")
    time.sleep(0.3)
    assert elsewhere.requests == []


def test_one_deadline_per_call_even_for_a_trickling_server(serve):
    reply = http_reply(completion("slow answer"))
    srv = serve([(reply[i : i + 1], 0.2) for i in range(len(reply))])  # a byte every 0.2 s: ~40 s in all
    t0 = time.monotonic()
    with pytest.raises(llm.EndpointError, match="did not answer within timeout=1 s"):
        llm.OpenAIChat(srv.url, "m", timeout=1)("hi")
    assert time.monotonic() - t0 < 3


def test_429_and_5xx_are_retried_with_backoff_honouring_retry_after(serve):
    srv = serve(
        http_reply(b"{}", status="429 Too Many Requests", headers={"Retry-After": "0.3"}),
        http_reply(b"{}", status="503 Service Unavailable"),
        http_reply(completion("finally")),
    )
    llm.reset_usage()
    client = llm.OpenAIChat(srv.url, "m", timeout=10, backoff=0.1)
    t0 = time.monotonic()
    assert client("hi") == "finally"
    assert time.monotonic() - t0 >= 0.4  # 0.3 s asked by Retry-After + 0.2 s backoff
    assert len(srv.requests) == 3
    table = llm.usage_table()
    assert table.loc["m", "retries"] == 2 and table.loc["m", "calls"] == 1


def test_retries_are_bounded(serve):
    srv = serve(http_reply(b"{}", status="500 Internal Server Error"))
    with pytest.raises(llm.EndpointError, match="HTTP 500 .* after 2 retries"):
        llm.OpenAIChat(srv.url, "m", timeout=10, max_retries=2, backoff=0.01)("hi")
    assert len(srv.requests) == 3


def test_a_retry_after_beyond_the_deadline_is_not_waited_for(serve):
    srv = serve(http_reply(b"{}", status="429 Too Many Requests", headers={"Retry-After": "3600"}))
    t0 = time.monotonic()
    with pytest.raises(llm.EndpointError, match="retry after 3600.0 s, beyond timeout"):
        llm.OpenAIChat(srv.url, "m", timeout=5)("hi")
    assert time.monotonic() - t0 < 1


def test_an_unreachable_endpoint_is_a_clear_error():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens here
    with pytest.raises(llm.EndpointError, match="cannot reach"):
        llm.OpenAIChat(f"http://127.0.0.1:{port}/v1", "m", timeout=2)("hi")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"base_url": None}, "base_url must be"),
        ({"base_url": "ftp://x"}, "base_url must be"),
        ({"base_url": "http://"}, "no host name"),
        ({"model": ""}, "model must name"),
        ({"model": None}, "model must name"),
        ({"timeout": None}, "timeout must be"),
        ({"timeout": float("nan")}, "timeout must be"),
        ({"timeout": 0}, "timeout must be"),
        ({"timeout": -1}, "timeout must be"),
        ({"max_retries": -1}, "max_retries"),
        ({"api_key": "sk\nInjected: 1"}, "api_key"),
    ],
)
def test_bad_arguments_are_refused_up_front(kwargs, message):
    args = {"base_url": "http://127.0.0.1:1/v1", "model": "m", **kwargs}
    with pytest.raises(ValueError, match=message):
        llm.OpenAIChat(**args)


def test_an_empty_prompt_is_refused():
    with pytest.raises(ValueError, match="prompt must be a non-empty string"):
        llm.OpenAIChat("http://127.0.0.1:1/v1", "m")("   ")


def _with_logprobs(token: str, top: list[tuple[str, float]]) -> bytes:
    obj = json.loads(completion(token))
    obj["choices"][0]["logprobs"] = {
        "content": [
            {"token": token, "logprob": top[0][1], "top_logprobs": [{"token": t, "logprob": lp} for t, lp in top]}
        ]
    }
    return json.dumps(obj).encode()


def test_top_logprobs_are_asked_for_and_kept_as_the_response(serve, tmp_path):
    srv = serve(http_reply(_with_logprobs("yes", [("yes", -0.2), ("no", -1.9), ("Yes", -3.0)])))
    cassette = tmp_path / "m.jsonl"
    text = llm.Recorder(llm.OpenAIChat(srv.url, "m"), cassette)("relevant?", max_tokens=1, top_logprobs=3)
    sent = json.loads(srv.requests[0].partition(b"\r\n\r\n")[2])
    assert sent["logprobs"] is True and sent["top_logprobs"] == 3 and sent["max_tokens"] == 1
    assert json.loads(text) == {"token": "yes", "top_logprobs": [["yes", -0.2], ["no", -1.9], ["Yes", -3.0]]}
    replayed = llm.Replay("m", cassette).complete("relevant?", max_tokens=1, top_logprobs=3)
    assert replayed.text == text
    with pytest.raises(llm.MissingRecording):  # the same prompt without top_logprobs is another request
        llm.Replay("m", cassette)("relevant?", max_tokens=1)


def test_an_endpoint_without_logprobs_is_a_clear_error_and_nothing_is_recorded(serve, tmp_path):
    srv = serve(http_reply(completion("yes")))
    cassette = tmp_path / "m.jsonl"
    with pytest.raises(llm.EndpointError, match="does not return log-probabilities"):
        llm.Recorder(llm.OpenAIChat(srv.url, "m", timeout=5), cassette)("relevant?", top_logprobs=5)
    assert not cassette.exists() or cassette.read_text() == ""
