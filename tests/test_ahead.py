"""The states an explorer sends to the page to be drawn there at once (labkit.ui.widgets.ahead): their keys match
what the page computes from its controls, each state is sent once, and a page that starts listening gets them all
again. What the page does with them is proven in the browser (tests/browser: every move's outputs are checked)."""

from __future__ import annotations

import json

import ipywidgets as w

from labkit.ui.widgets.ahead import Ahead, page_key
from labkit.ui.widgets.explorer import Explorer


def test_page_key_is_the_index_of_a_selection_and_the_value_of_anything_else_as_json_writes_it():
    controls = {"k": w.IntSlider(value=3), "share": w.FloatSlider(value=0.5), "who": w.Dropdown(options=["a", "b"]),
                "pick": w.SelectMultiple(options=["x", "y", "z"]), "text": w.Text()}  # fmt: skip
    key = page_key(controls, {"k": 3, "share": 2.0, "who": "b", "pick": ("x", "z"), "text": "é"})
    assert key == '[3,2,1,[0,2],"é"]'  # 2.0 as JavaScript writes it; no ASCII escapes, as JSON.stringify
    assert json.loads(key) == [3, 2, 1, [0, 2], "é"]
    assert page_key(controls, {"k": 3, "share": 0.25, "who": "c", "pick": (), "text": ""}) is None  # not an option
    pairs = {"c": w.SelectionSlider(options=[("one", 1), ("ten", 10)], value=10)}  # labelled options: the index
    assert page_key(pairs, {"c": 10}) == "[1]"


class _Sent(Ahead):
    def __init__(self, *a, **kw):
        self.messages: list[dict] = []
        super().__init__(*a, **kw)

    def send(self, content, buffers=None):
        self.messages.append(content)


def test_an_explorer_sends_each_state_it_computes_once_and_all_again_when_a_page_starts_listening(monkeypatch):
    from labkit.ui.widgets import explorer

    monkeypatch.setattr(explorer, "Ahead", _Sent)
    e = Explorer({"n": w.IntSlider(value=1, max=5), "who": w.ToggleButtons(options=["a", "b"])},
                 lambda n, who: f"{who}{n}", lambda v: f"<b>{v}</b>")  # fmt: skip
    assert e.page in e.children and e.page.layout.display == "none"
    assert e.page.messages == []  # no page listens yet (nbval, a script): nothing is sent
    e.page._on_page(e.page, {"hello": True}, [])
    assert e.page.messages == [{"key": "[1,0]", "values": {"output": "<b>a1</b>"}}]
    e.controls["who"].value = "b"
    e.warm()  # n 2, 0, 3, 4, 5 with b; a1 was sent already
    e.controls["who"].value = "a"  # a revisit: nothing new to send
    keys = ["[1,0]", "[1,1]", "[2,1]", "[0,1]", "[3,1]", "[4,1]", "[5,1]"]
    assert [m["key"] for m in e.page.messages] == keys
    assert e.page.messages[2]["values"] == {"output": "<b>b2</b>"}
    e.page._on_page(e.page, {"hello": True}, [])  # a page reloaded: every state kept, again
    assert sorted(m["key"] for m in e.page.messages[7:]) == sorted(keys)
    e.page._on_page(e.page, {"other": 1}, [])  # anything else from the page is ignored
    assert len(e.page.messages) == 14


def test_an_explorer_with_a_picture_output_draws_nothing_ahead():
    e = Explorer({"n": w.IntSlider(value=1)}, lambda n: n, lambda v: b"", outputs={"png": w.Image()})
    assert e.page is None and len(e.children) == 3  # the control, the picture, the error line
