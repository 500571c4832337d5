"""The learner labels: one item at a time, one key per label, every label saved the moment it is given (02, 06, 07).

:class:`Labeller` shows an item as a rater needs it (a claim with its context, the claim's numbers and names
marked where the context has them; a question with the answer and the reference; a question to rate) and takes
one key per label, shown on its buttons (``s`` supported, ``u`` unsupported, ...), plus ``z`` undo, ``n`` next
(skip) and ``b`` back. Each label is appended to the learner's :class:`labkit.data.labels.LabelStore` (the user cache,
never the repository) before the next item appears, so closing the tab loses nothing. The keys are read by a
text box: JupyterLab's own one-key shortcuts (``b`` inserts a cell, ``z`` undoes one) are off while it has focus.

With a class folder (``LABKIT_CLASS_DIR``, :mod:`labkit.data.class_folder`) the widget shows one more line: a
box to tick to share the labels with the instructor (opt-in; the labels given so far are sent, then each new one
after it is saved in the learner's own store), which then says "your labels are shared with the instructor";
unticking removes the shared file. Without a class folder nothing changes.

The renderers (:func:`claim_html`, :func:`answer_html`, :func:`passage_html`, :func:`question_html`) are plain
functions, and :meth:`Labeller.press` is what a key does, so the chapters and the unit tests use them without a
browser.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable

import anywidget
import traitlets

from labkit.core import args
from labkit.data.class_folder import LabelDrop, open_class
from labkit.data.labels import RESERVED_KEYS, LabelSet, LabelStore

__all__ = ["Labeller", "claim_html", "answer_html", "passage_html", "question_html"]

_ESM = """
function render({ model, el }) {
  el.classList.add("lk-labeller");
  const top = document.createElement("div");
  top.className = "lk-lab-top";
  const progress = document.createElement("span");
  progress.className = "lk-lab-progress";
  const input = document.createElement("input");
  input.className = "lk-lab-keys";
  input.placeholder = "click here, then press a key";
  input.setAttribute("aria-label", "label keys");
  top.append(progress, input);
  const buttons = document.createElement("div");
  buttons.className = "lk-lab-buttons";
  const message = document.createElement("div");
  message.className = "lk-lab-message";
  const view = document.createElement("div");
  view.className = "lk-lab-item";
  const share = document.createElement("label");
  share.className = "lk-lab-share";
  const tick = document.createElement("input");
  tick.type = "checkbox";
  tick.addEventListener("change", () => model.send({ share: tick.checked }));
  const said = document.createElement("span");
  share.append(tick, said);
  el.append(top, share, buttons, message, view);
  const press = (key) => model.send({ key: key });
  input.addEventListener("keydown", (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey || e.key === "Tab") return;
    e.preventDefault();
    e.stopPropagation();
    if (e.key.length === 1) press(e.key.toLowerCase());
    input.value = "";
  });
  const draw = () => {
    share.style.display = model.get("share") ? "" : "none";
    tick.checked = model.get("shared");
    said.textContent = " " + model.get("share");
    progress.textContent = model.get("progress");
    message.textContent = model.get("message");
    view.innerHTML = model.get("view");
    buttons.replaceChildren(...model.get("buttons").map(([key, name]) => {
      const b = document.createElement("button");
      b.className = "lk-lab-button";
      b.dataset.key = key;
      b.textContent = `${name} [${key}]`;
      b.addEventListener("click", () => { press(key); input.focus(); });
      return b;
    }));
  };
  for (const name of ["progress", "message", "view", "buttons", "share", "shared"]) model.on(`change:${name}`, draw);
  draw();
}
export default { render };
"""

_CSS = """
.lk-labeller { border: 1px solid #ccc; padding: 8px; max-width: 900px; }
.lk-lab-top { display: flex; gap: 1em; align-items: center; }
.lk-lab-progress { font-weight: bold; }
.lk-lab-keys { width: 16em; }
.lk-lab-buttons { margin: 6px 0; display: flex; gap: 6px; flex-wrap: wrap; }
.lk-lab-message { color: #555; min-height: 1.2em; }
.lk-lab-share { display: block; margin-top: 4px; color: #333; }
.lk-lab-item { max-height: 420px; overflow: auto; }
.lk-lab-item pre { white-space: pre-wrap; font-size: 12px; }
.lk-lab-item mark { background: #ffe58a; }
"""

_MARKABLE = re.compile(r"\d+(?:[.,:]\d+)*|[A-Z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)+|\b[A-Z]{2,}\b")


def _marked(context: str, claim: str) -> str:
    """``context`` escaped, with every number, code or acronym that the claim states marked where it occurs."""
    wanted = {m.group(0) for m in _MARKABLE.finditer(claim)}
    out, last = [], 0
    for m in _MARKABLE.finditer(context):
        if m.group(0) in wanted:
            out += [html.escape(context[last : m.start()]), f"<mark>{html.escape(m.group(0))}</mark>"]
            last = m.end()
    out.append(html.escape(context[last:]))
    return "".join(out)


def claim_html(question: str, claim: str, context: str) -> str:
    """A claim to label against its context: the question, the claim, then the context with the claim's numbers
    and names marked (so its evidence can be found)."""
    question, claim, context = args.text("question", question), args.text("claim", claim), args.text("context", context)
    return (
        f'<p><b>Question:</b> {html.escape(question)}</p><p><b>Claim:</b> <span class="lk-lab-claim">'
        f"{html.escape(claim)}</span></p><p><b>Context the reader saw</b> (the claim's numbers and names are "
        f"marked):</p><pre>{_marked(context, claim)}</pre>"
    )


def answer_html(question: str, answer: str, reference: str) -> str:
    """An answer to label right / partly / wrong / declined: the question, the answer and the reference."""
    question, answer = args.text("question", question), args.text("answer", answer, allow_empty=True)
    reference = args.text("reference", reference)
    return (
        f'<p><b>Question:</b> {html.escape(question)}</p><p><b>The model\'s answer:</b> <span class="lk-lab-answer">'
        f"{html.escape(answer) or '<i>(empty)</i>'}</span></p><p><b>Reference</b> (answer and gold evidence):</p>"
        f"<pre>{html.escape(reference)}</pre>"
    )


def passage_html(question: str, passage: str) -> str:
    """A passage to label for relevance: the question, then the passage as the retriever returned it."""
    question, passage = args.text("question", question), args.text("passage", passage)
    return (
        f'<p><b>Question:</b> <span class="lk-lab-question">{html.escape(question)}</span></p>'
        f"<p><b>The retriever's first passage:</b></p><pre>{html.escape(passage)}</pre>"
    )


def question_html(question: str, note: str = "") -> str:
    """A question to rate for realism, with a one-line reminder of the scale."""
    question = args.text("question", question)
    return (
        f'<p><b>Question:</b> <span class="lk-lab-question">{html.escape(question)}</span></p>'
        f"<p>{html.escape(note)}</p>"
    )


class Labeller(anywidget.AnyWidget):
    """Label the items of ``label_set`` with ``render(item_id) -> HTML``, into ``store``; ``target`` is the
    number of labels the chapter asks for (progress shows "12 of 30")."""

    _esm = _ESM
    _css = _CSS
    view = traitlets.Unicode("").tag(sync=True)
    progress = traitlets.Unicode("").tag(sync=True)
    message = traitlets.Unicode("").tag(sync=True)
    buttons = traitlets.List([]).tag(sync=True)
    current = traitlets.Unicode("").tag(sync=True)
    share = traitlets.Unicode("").tag(sync=True)
    shared = traitlets.Bool(False).tag(sync=True)

    def __init__(self, label_set: LabelSet, render: Callable[[str], str], store: LabelStore, target: int = 30,
                 drop: LabelDrop | None = None, drop_error: str = ""):  # fmt: skip
        super().__init__()
        if drop is not None and (not isinstance(drop, LabelDrop) or drop.label_set is not label_set):
            raise ValueError("drop must be a LabelDrop of the same label_set (class_folder.LabelDrop), or None")
        if not isinstance(store, LabelStore) or store.label_set is not label_set:
            raise ValueError("store must be a LabelStore of the same label_set: LabelStore(label_set)")
        if not callable(render):
            raise ValueError("render must be a function item id -> HTML, e.g. lambda i: claim_html(...)")
        self.label_set, self.render, self.store = label_set, render, store
        self.target = args.whole_number("target", target, maximum=len(label_set.items))
        self._done: list[str] = []  # items labelled in this session, for undo
        self.buttons = [[k, v] for k, v in label_set.keys.items()]
        labelled = store.labels()
        first = next((i for i, item in enumerate(label_set.items) if item not in labelled), 0)
        self.drop = drop
        self.shared = drop is not None and drop.opted_in
        self.share = _share_text(drop, self.shared, drop_error)
        self._show(first)
        self.on_msg(lambda _w, content, _b: self._on_message(content))

    def _on_message(self, content: dict) -> None:
        if "share" in content:
            self.set_sharing(bool(content["share"]))
        else:
            self.press(str(content.get("key", "")))

    def set_sharing(self, on: bool) -> None:
        """Opt in (``True``: the labels given so far are sent, then every new one) or out (``False``: the file
        shared so far is removed; your own store keeps everything). Nothing happens without a class folder."""
        if self.drop is None:
            self._show(self.position, "no class folder (LABKIT_CLASS_DIR): your labels stay on this account")
            return
        try:
            if on:
                sent = self.drop.opt_in(self.store.labels())
                note = f"shared with the instructor: {sent} label(s) sent, and every new one"
            else:
                self.drop.withdraw()
                note = "not shared any more: the file shared so far was removed (your own store keeps every label)"
        except (OSError, ValueError) as err:
            note = f"could not change sharing: {err}"
        self.shared = self.drop.opted_in
        self.share = _share_text(self.drop, self.shared, "")
        self._show(self.position, note)

    @classmethod
    def at(cls, label_set: LabelSet, render: Callable[[str], str], path, target: int = 30) -> Labeller:
        """A labeller whose labels go to the label file at ``path`` (a chapter passes its
        ``labelling.store_path(set id)``: the user cache, never the repository) and, when ``LABKIT_CLASS_DIR``
        names a class folder and the learner opts in, to the class folder too."""
        drop, error = None, ""
        try:
            folder = open_class()
            drop = LabelDrop(folder, label_set) if folder is not None else None
        except (OSError, ValueError) as err:
            error = f"the class folder cannot be used ({err}): your labels stay on this account"
        return cls(label_set, render, LabelStore(label_set, path), target=target, drop=drop, drop_error=error)

    def _repr_mimebundle_(self, **kwargs):
        """The live widget, plus what an opened notebook shows before the cell runs: a line saying to run it and
        the first item, never a widget's Python repr."""
        found = super()._repr_mimebundle_(**kwargs) or {}
        data, meta = found if isinstance(found, tuple) else (found, None)  # anywidget returns (data, metadata)
        data = dict(data or {})
        hint = "Run this cell (Shift+Enter) to label; until then, the first item:"
        data["text/plain"] = f"Labeller: run this cell (Shift+Enter) to label {self.label_set.id}"
        data["text/html"] = f'<div class="lk-preview"><p><b>{hint}</b></p>{self.view}</div>'
        return (data, meta) if meta is not None else data

    def _show(self, position: int, message: str = "") -> None:
        self.position = position % len(self.label_set.items)
        item = self.label_set.items[self.position]
        labels = self.store.labels()
        n = len(labels)
        mine = labels.get(item)
        self.current = item
        more = f" (+{n - self.target} more)" if n > self.target else ""
        where = f"item {self.position + 1} of {len(self.label_set.items)}"
        self.progress = f"{min(n, self.target)} of {self.target} labelled{more} · {where} · your label: {mine or '—'}"
        self.message = message
        self.view = self.render(item)

    def press(self, key: str) -> None:
        """What a key does: a label key labels the item shown and moves on; ``z`` undoes this session's last
        label; ``n`` moves on without labelling; ``b`` goes back one item. Other keys say which keys work."""
        ls = self.label_set
        if key in ls.keys:
            item = ls.items[self.position]
            self.store.add(item, ls.keys[key])
            self._done.append(item)
            self._show(self._next_unlabelled(), f"saved: {item} = {ls.keys[key]}" + self._to_class(item, ls.keys[key]))
        elif key == RESERVED_KEYS[0]:
            if not self._done:
                self._show(self.position, "nothing to undo in this session")
                return
            item = self._done.pop()
            self.store.undo(item)
            self._show(ls.items.index(item), f"undone: {item} is unlabelled again" + self._to_class(item, None))
        elif key == RESERVED_KEYS[1]:
            self._show(self.position + 1, "skipped")
        elif key == RESERVED_KEYS[2]:
            self._show(self.position - 1)
        else:
            keys = ", ".join(f"{k} = {v}" for k, v in ls.keys.items())
            self._show(self.position, f"keys: {keys}; z = undo, n = next, b = back")

    def _to_class(self, item: str, label: str | None) -> str:
        """Send a label (or an undo) to the class folder when shared; what to add to the message."""
        if not self.shared or self.drop is None:
            return ""
        try:
            sent = self.drop.add(item, label) if label is not None else self.drop.undo(item)
        except (OSError, ValueError) as err:
            return f" (saved in your store; not shared: {err})"
        return " (shared with the instructor)" if sent else ""

    def _next_unlabelled(self) -> int:
        labelled = self.store.labels()
        n = len(self.label_set.items)
        for step in range(1, n + 1):
            j = (self.position + step) % n
            if self.label_set.items[j] not in labelled:
                return j
        return (self.position + 1) % n


def _share_text(drop: LabelDrop | None, shared: bool, error: str) -> str:
    """What the widget says about sharing ("" without a class folder: nothing is shown)."""
    if error:
        return error
    if drop is None:
        return ""
    if shared:
        return f"your labels are shared with the instructor (as learner {drop.learner}; untick to stop)"
    return "share my labels with the instructor (not shared: your labels stay on this account)"
