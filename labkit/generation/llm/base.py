"""What every client shares: ``client(prompt, schema=None, max_tokens=None, top_logprobs=None) -> text``.

A client (``Replay``, ``Recorder``, ``OpenAIChat``, ``Local``) gives its ``complete`` (the response and what it
cost, a :class:`labkit.generation.llm.cassette.Completion`), its ``mode`` and what the usage table counts a call as
(:meth:`Client.counted_as`); :class:`Client` turns that into the call itself: one entry in
:data:`labkit.generation.llm.usage.LEDGER` per call, the text returned. A call that would run a model (counted
``live`` or ``recorded``) is refused inside :func:`labkit.core.guard.no_model_calls`; a replayed one never is.
"""

from __future__ import annotations

from typing import Any

from labkit.core.guard import check_model_call
from labkit.generation.llm.usage import LEDGER

__all__ = ["Client", "REPLAYED"]

REPLAYED = "replayed"  # a call answered from a recording: reading data, allowed inside no_model_calls


class Client:
    """The shared call of the model clients; a subclass defines ``model``, ``mode`` and ``complete``."""

    model: str
    mode: str = ""
    counted = "live"  # how the usage table counts a call (LEDGER.add's ``how``), unless counted_as says otherwise

    def complete(
        self,
        prompt: str,
        schema: dict | None = None,
        max_tokens: int | None = None,
        top_logprobs: int | None = None,
    ) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define complete(prompt, schema, max_tokens, ...)")

    def counted_as(
        self,
        prompt: str,
        schema: dict | None = None,
        max_tokens: int | None = None,
        top_logprobs: int | None = None,
    ) -> str:
        """``"replayed"``, ``"recorded"`` or ``"live"``: how the usage table counts this request."""
        return self.counted

    def __call__(
        self,
        prompt: str,
        schema: dict | None = None,
        max_tokens: int | None = None,
        top_logprobs: int | None = None,
    ) -> str:
        how = self.counted_as(prompt, schema, max_tokens, top_logprobs)
        if how != REPLAYED:  # a model would run: never inside no_model_calls (an explorer computing ahead)
            check_model_call(self)
        done = self.complete(prompt, schema, max_tokens, top_logprobs)
        LEDGER.add(self.model, how, done)
        return done.text
