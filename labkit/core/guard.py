"""No model calls in this block: a ``with`` block inside which every call that would run a language model is refused.

Core: the explorers compute the states one move away while the learner looks (:mod:`labkit.ui.widgets.ahead`); a
widget never calls a model, so that work runs inside :func:`no_model_calls`. Each client that runs a model
(:mod:`labkit.generation.llm`: ``Local``, ``OpenAIChat``, a ``Recorder`` about to record) calls
:func:`check_model_call` first, which raises :class:`ModelCallRefused` inside such a block. Replaying a recorded
response reads data and is allowed everywhere.

The block lives in a :class:`contextvars.ContextVar`: it covers the code run inside it (and the tasks it starts),
never another thread's or another task's calls. Every refusal is also kept on the block (:attr:`Block.refused`), so
its caller can tell that a result was computed without the model, even when the code inside caught the error.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

from labkit.core import args

__all__ = ["ModelCallRefused", "Block", "no_model_calls", "check_model_call", "model_calls_allowed"]


class ModelCallRefused(RuntimeError):
    """A call that would run a language model, made inside :func:`no_model_calls`."""


@dataclass
class Block:
    """One :func:`no_model_calls` block: why model calls are refused in it, and the calls it refused."""

    reason: str
    outer: Block | None = None
    refused: list[ModelCallRefused] = field(default_factory=list)


_BLOCK: ContextVar[Block | None] = ContextVar("labkit_no_model_calls", default=None)


@contextmanager
def no_model_calls(reason: str) -> Iterator[Block]:
    """Refuse every model call made inside the block; ``reason`` says why (it is quoted in the error).

    Yields the :class:`Block`, whose ``refused`` lists the calls refused inside it (a nested block's too).
    """
    block = Block(args.text("reason", reason), _BLOCK.get())
    token = _BLOCK.set(block)
    try:
        yield block
    finally:
        _BLOCK.reset(token)


def model_calls_allowed() -> bool:
    """False inside a :func:`no_model_calls` block."""
    return _BLOCK.get() is None


def check_model_call(client: object) -> None:
    """Raise :class:`ModelCallRefused` when called inside a :func:`no_model_calls` block, naming ``client`` (the
    client about to run a model, by its repr) and the block's reason; do nothing elsewhere."""
    block = _BLOCK.get()
    if block is None:
        return
    err = ModelCallRefused(
        f"{client!r} was not called: model calls are refused while {block.reason}. Call the model outside this "
        "no_model_calls block (a widget's state is computed when the learner moves to it, where the call is "
        "allowed), or replay recorded responses (LABKIT_LLM=replay), which is allowed everywhere"
    )
    while block is not None:
        block.refused.append(err)
        block = block.outer
    raise err
