"""Widgets never call a model, enforced at run time (labkit.core.guard, labkit.ui.widgets.ahead), and the one call
the model clients share (labkit.generation.llm.base).

Against a real OpenAI-compatible endpoint on 127.0.0.1 that counts the requests it gets: an explorer computing the
states one move away sends none (a state that would call the model is refused and not kept), the learner's own move
to such a state calls the model, and recorded responses are replayed inside the guard as any other data.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import ipywidgets as w
import pytest

from labkit.core.guard import ModelCallRefused, model_calls_allowed, no_model_calls
from labkit.generation import llm
from labkit.generation.llm import local
from labkit.generation.llm.base import Client
from labkit.generation.llm.usage import LEDGER
from labkit.judges import faithfulness
from labkit.ui import widgets
from labkit.ui.widgets import explorer
from labkit.ui.widgets.ahead import AHEAD_REASON, Ahead, computed_ahead

REPLY = json.dumps({"verdict": "supported", "quote": ""})


class Endpoint(BaseHTTPRequestHandler):
    """A chat-completions endpoint: every request is counted (its prompt kept); the reply is a judge's verdict."""

    prompts: list[str] = []

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        Endpoint.prompts.append(body["messages"][0]["content"])
        payload = json.dumps({"choices": [{"message": {"role": "assistant", "content": REPLY}}],
                              "usage": {"prompt_tokens": 7, "completion_tokens": 3}}).encode()  # fmt: skip
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


@pytest.fixture
def chat():
    """An OpenAIChat client of a real HTTP server on loopback; ``Endpoint.prompts`` holds what reached it."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Endpoint)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    Endpoint.prompts = []
    yield llm.OpenAIChat(f"http://127.0.0.1:{httpd.server_address[1]}/v1", "judge-model", timeout=10, max_retries=0)
    httpd.shutdown()
    httpd.server_close()


class _Loop:
    """A stand-in for the kernel's event loop: keeps the callbacks, runs them when told."""

    def __init__(self):
        self.later: list = []

    def call_later(self, delay, fn):
        self.later.append(fn)

    def add_callback(self, fn):
        self.later.append(fn)

    def run(self) -> int:
        """Run callbacks until none is left (the learner looks long enough); how many ran."""
        n = 0
        while self.later:
            self.later.pop(0)()
            n += 1
        return n


class _Sent(Ahead):
    def __init__(self, *a, **kw):
        self.messages: list[dict] = []
        super().__init__(*a, **kw)

    def send(self, content, buffers=None):
        self.messages.append(content)


def _kept(e: explorer.Explorer) -> list[dict]:
    return [state for _, _, state in e._shown.values()]


ROWS = [{"qid": f"q{i}", "question": f"How many days, case {i}?", "answer": f"You get {10 + i} days of leave.",
         "context": f"Employees get {10 + i} days of leave."} for i in range(3)]  # fmt: skip


# ---------------------------------------------------------------- one call for every client


def test_the_model_clients_share_one_call_that_counts_each_request_as_before(chat, tmp_path):
    for cls in (llm.Replay, llm.Recorder, llm.OpenAIChat, local.Local):
        assert "__call__" not in vars(cls) and cls.__call__ is Client.__call__, cls
    assert (llm.Replay.mode, llm.Recorder.mode, llm.OpenAIChat.mode, local.Local.mode) == (
        "replay", "record", "live", "local")  # fmt: skip
    llm.reset_usage()
    try:
        assert chat("a claim") == REPLY
        recorder = llm.Recorder(chat, tmp_path / "judge-model.jsonl")
        assert recorder("a claim") == REPLY and recorder("a claim") == REPLY  # recorded, then replayed
        assert llm.Replay("judge-model", tmp_path / "judge-model.jsonl")("a claim") == REPLY
        row = LEDGER.rows["judge-model"]
        assert (row.calls, row.replayed, row.prompt_tokens, row.completion_tokens) == (4, 2, 28, 12)
        assert len(Endpoint.prompts) == 2
    finally:
        llm.reset_usage()


# ---------------------------------------------------------------- the guard


def test_no_model_calls_refuses_every_client_that_would_run_a_model_and_names_the_reason(chat, tmp_path):
    cassette = tmp_path / "judge-model.jsonl"
    recorder = llm.Recorder(chat, cassette)
    assert chat("before") == REPLY and recorder("recorded before") == REPLY
    assert len(Endpoint.prompts) == 2 and model_calls_allowed()
    llm.reset_usage()
    with no_model_calls("testing the guard") as block:
        assert not model_calls_allowed()
        with pytest.raises(ModelCallRefused, match="testing the guard") as err:
            chat("inside")
        message = str(err.value)
        assert isinstance(err.value, RuntimeError) and message.startswith("OpenAIChat(base_url='http://127.0.0.1:")
        assert "no_model_calls" in message and "LABKIT_LLM=replay" in message  # what to do
        with pytest.raises(ModelCallRefused, match="testing the guard"):
            chat.complete("inside")  # as the pointwise reranker calls it
        with pytest.raises(ModelCallRefused, match=r"^Recorder\(OpenAIChat"):
            recorder("a prompt not recorded yet")  # it would record: refused
        with pytest.raises(ModelCallRefused, match=r"^Local\(model='qwen2.5-coder-0.5b"):
            local.Local(llm.SMALL_MODEL)("inside")  # refused before the model is even loaded
        assert recorder("recorded before") == REPLY  # a recorded response is data: replayed
        assert llm.Replay("judge-model", cassette)("recorded before") == REPLY
        with no_model_calls("an inner block"), pytest.raises(ModelCallRefused, match="an inner block"):
            chat("nested")
    assert len(block.refused) == 5 and all(isinstance(e, ModelCallRefused) for e in block.refused)
    assert len(Endpoint.prompts) == 2  # not one request reached the server inside the block
    assert len(cassette.read_text().splitlines()) == 1  # nothing was recorded
    assert (LEDGER.rows["judge-model"].calls, LEDGER.rows["judge-model"].replayed) == (2, 2)  # refusals not counted
    assert model_calls_allowed() and chat("after") == REPLY and len(Endpoint.prompts) == 3
    with pytest.raises(ValueError, match="reason must not be empty"), no_model_calls(" "):
        pass
    llm.reset_usage()


def test_computed_ahead_refuses_a_model_call_even_one_the_computation_caught(chat):
    with pytest.raises(ModelCallRefused) as err:
        computed_ahead(lambda: chat("ahead"))
    assert AHEAD_REASON in str(err.value)

    def swallowed():
        try:
            return chat("ahead")
        except RuntimeError as caught:
            return f"error: {caught}"

    with pytest.raises(ModelCallRefused, match="before the learner moves"):
        computed_ahead(swallowed)
    assert computed_ahead(lambda: "no model") == "no model"
    assert Endpoint.prompts == [] and chat("the learner's move") == REPLY and len(Endpoint.prompts) == 1


# ---------------------------------------------------------------- explorers computing ahead


def test_an_explorer_computes_ahead_without_calling_a_live_judge_and_the_learners_move_calls_it(chat, monkeypatch):
    loop = _Loop()
    monkeypatch.setattr(explorer, "_kernel_loop", lambda: loop)
    monkeypatch.setattr(explorer, "Ahead", _Sent)
    judges = {"lexical": faithfulness.lexical_judge, "model": faithfulness.model_judge(chat)}
    fx = widgets.FaithfulnessExplorer(ROWS, judges)
    assert fx.result["judge"] == "lexical" and Endpoint.prompts == []
    fx.page._on_page(fx.page, {"hello": True}, [])  # a page listens: the neighbours are computed ahead
    assert loop.run() == 4  # q1, q2, the model judge, the score: one per turn
    assert Endpoint.prompts == []  # computing ahead sent no request: the model judge's state was refused
    kept = _kept(fx)
    assert len(kept) == 4 and {s["judge"] for s in kept} == {"lexical"}  # the current state and three neighbours
    assert sorted(m["key"] for m in fx.page.messages) == ["[0,0,0]", "[0,0,1]", "[1,0,0]", "[2,0,0]"]  # none: model

    fx.judge.value = "model"  # the learner's own move: computed now, model and all
    assert len(Endpoint.prompts) == 1 and "You get 10 days of leave." in Endpoint.prompts[0]
    assert fx.result == {"qid": "q0", "judge": "model", "verdicts": ["supported"], "score": 1.0, "status": "PASS"}
    assert fx.message.value == "" and 'data-status="PASS"' in fx.view.value
    loop.run()  # around the new state: q1 and q2 with the model, its score view (refused), lexical (kept already)
    assert len(Endpoint.prompts) == 1
    assert [s for s in _kept(fx) if s["judge"] == "model"] == [
        {"question": "q0", "judge": "model", "mode": "PASS/FAIL"}
    ]

    fx.question.value = "q2"  # another move of the learner's
    assert len(Endpoint.prompts) == 2 and fx.result["qid"] == "q2" and fx.result["verdicts"] == ["supported"]


def test_a_state_whose_model_call_was_caught_and_shown_in_place_is_not_kept(chat):
    def answer(n, who):  # shows any error in place, as a careless explorer might
        try:
            return chat(f"claim {n}") if who == "model" else f"{who} {n}"
        except RuntimeError as err:
            return f"error: {err}"

    e = explorer.Explorer({"n": w.IntSlider(value=0, max=2), "who": w.ToggleButtons(options=["plain", "model"])},
                          answer, str)  # fmt: skip
    assert e.warm() == 2  # n 1 and n 2; the model state was refused though `answer` caught the refusal
    assert Endpoint.prompts == [] and {s["who"] for s in _kept(e)} == {"plain"}
    e.controls["who"].value = "model"
    assert Endpoint.prompts == ["claim 0"] and e.output.value == REPLY


def test_recorded_judge_answers_are_computed_ahead_as_any_other_state(chat, tmp_path):
    cassette = tmp_path / "judge-model.jsonl"
    recorder = llm.Recorder(chat, cassette)
    for row in ROWS:  # record the model judge's verdicts once, as `make record` does
        faithfulness.faithfulness(row["answer"], row["context"], faithfulness.model_judge(recorder))
    assert len(Endpoint.prompts) == 3
    replayed = faithfulness.model_judge(llm.Replay("judge-model", cassette))
    fx = widgets.FaithfulnessExplorer(ROWS, {"recorded": replayed, "lexical": faithfulness.lexical_judge})
    assert fx.warm() == 4  # q1, q2 replayed, the lexical judge, the score view
    fx.question.value = "q1"
    assert fx.warm() == 2  # from q1: its lexical and score states (q0 and q2 were kept already)
    assert len(Endpoint.prompts) == 3 and {s["judge"] for s in _kept(fx)} == {"recorded", "lexical"}
    recording = faithfulness.model_judge(recorder)  # a recorder replays its recordings ahead too
    fx = widgets.FaithfulnessExplorer(ROWS, {"recording": recording})
    assert fx.warm() == 3 and len(Endpoint.prompts) == 3
