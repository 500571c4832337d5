"""Drawing ahead in the browser: the states an explorer has computed, sent to the page, so that a move to one of
them is drawn there at once, before the kernel has even heard of it.

Each move of an explorer's control goes to the kernel and back (about 20-40 ms on a busy 2-core machine, measured
in tests/browser) before its outputs change. :class:`Ahead` is an invisible widget inside every explorer that
keeps, in the page, the outputs of each state the kernel has computed (the states shown and those computed ahead:
:meth:`labkit.ui.widgets.explorer.Explorer.warm`). When a control changes in the page, it looks the new state up and,
if the kernel has sent it, sets the output widgets' values in the page itself. The kernel's own update follows
with the same values, which changes nothing on screen, so the kernel stays the one source of truth: a state the
page does not hold (a question typed for the first time) waits for the kernel as before.

A state is keyed by the controls' values as the page holds them (:func:`page_key`): the option's index for a
selection (a dropdown, toggle buttons, a selection slider), the value for a slider or a text box.

A widget never calls a model: every state computed ahead is computed inside
:func:`labkit.core.guard.no_model_calls` (:func:`computed_ahead`). A state that would call one (06's judge on a
live or local model) is refused and not kept; it is computed when the learner moves to it, model and all.
Replaying a recorded response is reading data, and is computed ahead as any other state.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import anywidget
import ipywidgets as w
import traitlets

from labkit.core.guard import no_model_calls

__all__ = ["Ahead", "page_key", "reachable", "values_of", "computed_ahead", "SWEEP_MAX", "AHEAD_REASON"]

SWEEP_MAX = 25  # a control with at most this many values has each computed ahead (Explorer.neighbours)
AHEAD_REASON = "an explorer computes the states one move away, before the learner moves (labkit.ui.widgets.ahead)"
T = TypeVar("T")

_ESM = r"""
const keyOf = (controls) => JSON.stringify(controls.map((c) => {
  const i = c.get("index");
  return i === undefined ? c.get("value") : i;
}));

export default {
  async initialize({ model }) {
    const states = new Map();
    let controls = null, outputs = null;
    // setting a value a widget already has changes nothing, so painting the current state again is free
    const paint = () => {
      const values = controls && states.get(keyOf(controls));
      if (values !== undefined) for (const [name, value] of Object.entries(values)) outputs[name].set("value", value);
    };
    model.on("msg:custom", (msg) => {
      if (msg && msg.key !== undefined) {
        states.set(msg.key, msg.values);
        paint();
      }
    });
    const get = (ref) => model.widget_manager.get_model(String(ref).replace("IPY_MODEL_", ""));
    controls = await Promise.all(model.get("controls").map(get));
    const named = model.get("outputs");
    outputs = Object.fromEntries(await Promise.all(Object.keys(named).map(async (n) => [n, await get(named[n])])));
    for (const c of controls) c.on("change", paint);
    model.send({ hello: true });  // the states sent before this page listened: send them again
  },
};
"""


def values_of(control: w.Widget) -> list[Any] | None:
    """Every value a control can take, in order (a selection's options, a slider's steps); None for free input."""
    if hasattr(control, "_options_values"):  # Dropdown, SelectionSlider, ToggleButtons, ...
        return list(control._options_values)
    if isinstance(control, w.IntSlider):
        return list(range(control.min, control.max + 1, control.step))
    if isinstance(control, w.FloatSlider) and control.step > 0:
        n = round((control.max - control.min) / control.step)
        return [round(control.min + i * control.step, 10) for i in range(min(n, 10_000) + 1)]
    return None


def reachable(control: w.Widget) -> list[tuple[int, Any]]:
    """``(distance, value)`` for the values one move of ``control`` reaches, nearest first: all of them for a
    control of at most :data:`SWEEP_MAX` values (a click anywhere on a short slider, any toggle), else the next,
    the previous and the two ends (Home, End); none for free input (a text box) or a locked control."""
    values = values_of(control)
    if values is None or getattr(control, "disabled", False) or control.value not in values:
        return []
    i = values.index(control.value)
    if len(values) > SWEEP_MAX:
        near = {j: abs(j - i) for j in (i + 1, i - 1) if 0 <= j < len(values)}
        near.update({j: len(values) for j in (0, len(values) - 1) if j != i and j not in near})
        return [(d, values[j]) for j, d in near.items()]
    order = sorted((j for j in range(len(values)) if j != i), key=lambda j: (abs(j - i), j < i))
    return [(abs(j - i), values[j]) for j in order]


def computed_ahead(compute: Callable[[], T]) -> T:
    """``compute()`` with every model call refused (:func:`labkit.core.guard.no_model_calls`): what a state computed
    ahead of the learner is computed by. A refused call is raised, even one that ``compute`` caught and turned into
    part of its value (a judge error shown in place), so that the caller never keeps such a state."""
    with no_model_calls(AHEAD_REASON) as block:
        value = compute()
    if block.refused:
        raise block.refused[0]
    return value


def _plain(value: Any) -> Any:
    """A control's value as the page's JSON has it: a whole float as an int (JavaScript writes 2.0 as 2)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    return value


def page_key(controls: Mapping[str, w.Widget], state: Mapping[str, Any]) -> str | None:
    """The page's key of ``state`` (control name -> value): for each control in order, the option's index for a
    selection, else the value; as ``JSON.stringify`` writes it. None when a value is not among a selection's
    options (such a state is never drawn ahead)."""
    parts = []
    for name, control in controls.items():
        value = state[name]
        if hasattr(control, "_options_values"):
            options = list(control._options_values)
            if isinstance(value, tuple):  # a multiple selection: the indices
                if any(v not in options for v in value):
                    return None
                parts.append([options.index(v) for v in value])
                continue
            if value not in options:
                return None
            parts.append(options.index(value))
        else:
            parts.append(_plain(value))
    return json.dumps(parts, separators=(",", ":"), ensure_ascii=False)


class Ahead(anywidget.AnyWidget):
    """The invisible widget that keeps an explorer's computed states in the page (see the module's text).

    ``controls`` and ``outputs`` are the explorer's; :meth:`keep` sends one state's outputs (HTML text by
    output name); ``resend`` is called with no argument when a page starts listening (:attr:`listening`) and
    should send every state kept again.
    """

    _esm = _ESM
    controls = traitlets.List(trait=traitlets.Instance(w.Widget)).tag(sync=True, **w.widget_serialization)
    outputs = traitlets.Dict(value_trait=traitlets.Instance(w.Widget)).tag(sync=True, **w.widget_serialization)

    def __init__(self, controls: Mapping[str, w.Widget], outputs: Mapping[str, w.Widget], resend=None):
        super().__init__(controls=list(controls.values()), outputs=dict(outputs), layout=w.Layout(display="none"))
        self._names = dict(controls)
        self.sent: set[str] = set()
        self.listening = False  # True once a page has said hello: no page (nbval, a script), nothing to draw ahead
        self._resend = resend
        self.on_msg(self._on_page)

    def key_of(self, state: Mapping[str, Any]) -> str | None:
        return page_key(self._names, state)

    def keep(self, state: Mapping[str, Any], shown: Mapping[str, Any]) -> bool:
        """Send ``state``'s outputs to the page (once); False when no page listens yet (the hello will bring them
        all) or the state has no page key."""
        key = self.key_of(state)
        if not self.listening or key is None or key in self.sent:
            return False
        self.send({"key": key, "values": dict(shown)})
        self.sent.add(key)
        return True

    def _on_page(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if isinstance(content, Mapping) and content.get("hello"):
            self.listening = True
            self.sent.clear()
            if self._resend is not None:
                self._resend()
