"""What the model calls of a session cost: calls, tokens, seconds, retries, and a hosted model's price.

Every client adds one entry per call to :data:`LEDGER`. A replayed call adds the tokens and seconds that the
*recording* took, so the table says what a live run of the chapter would cost on the recording machine.
Each chapter prints :func:`usage_table` once, at its end.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

__all__ = ["LEDGER", "HOSTED_PRICES", "usage_table", "reset_usage"]

HOSTED_PRICES = {
    # model: (USD per 1M prompt tokens, USD per 1M completion tokens, source)
    "gpt-4o-mini": (0.15, 0.60, "OpenAI API pricing at its launch, July 2024"),
    "gpt-4o": (2.50, 10.00, "OpenAI API pricing of gpt-4o-2024-08-06, August 2024"),
}
"""Reference prices for the cost column. Token counts come from our model's tokenizer, so the cost of the
same text on a hosted model is an estimate (tokenizers differ by roughly ±20%)."""


@dataclass
class _Row:
    calls: int = 0
    replayed: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    retries: int = 0
    unknown: int = 0  # calls whose tokens were not reported


class Ledger:
    def __init__(self) -> None:
        self.rows: dict[str, _Row] = defaultdict(_Row)

    def add(self, model: str, how: str, done) -> None:
        row = self.rows[model]
        row.calls += 1
        row.replayed += how == "replayed"
        if done.prompt_tokens is None or done.completion_tokens is None:
            row.unknown += 1
        else:
            row.prompt_tokens += done.prompt_tokens
            row.completion_tokens += done.completion_tokens
        row.seconds += done.seconds or 0.0
        row.retries += done.retries

    def reset(self) -> None:
        self.rows.clear()


LEDGER = Ledger()


def reset_usage() -> None:
    """Forget every call counted so far (a chapter calls it in its first cells)."""
    LEDGER.reset()


def usage_table(price_model: str = "gpt-4o-mini"):
    """One row per model: calls (and how many were replayed), tokens, seconds, retries, hosted cost in USD."""
    import pandas as pd

    if price_model not in HOSTED_PRICES:
        raise ValueError(f"price_model must be one of {sorted(HOSTED_PRICES)}, got {price_model!r}")
    p_in, p_out, _ = HOSTED_PRICES[price_model]
    rows = []
    for model, r in sorted(LEDGER.rows.items()):
        rows.append(
            {
                "model": model,
                "calls": r.calls,
                "replayed": r.replayed,
                "prompt tokens": r.prompt_tokens,
                "completion tokens": r.completion_tokens,
                "seconds (as recorded)": round(r.seconds, 1),
                "retries": r.retries,
                f"USD at {price_model} prices": round((r.prompt_tokens * p_in + r.completion_tokens * p_out) / 1e6, 4),
            }
        )
    cols = ["model", "calls", "replayed", "prompt tokens", "completion tokens", "seconds (as recorded)", "retries"]
    return pd.DataFrame(rows, columns=[*cols, f"USD at {price_model} prices"]).set_index("model")
