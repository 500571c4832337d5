"""The recorder that tests/test_recorder_kill.py kills: tools/record.py's ``record`` on a scripted plan.

    python tests/recorder_child.py <data folder> <number of prompts>

The model is a scripted fake in this process (never the real model): each prompt's response is a fixed
function of the prompt, from a few bytes to ~24 KB, and every call is logged to ``<data>/calls.log``. The disk
is made slow: the cassette lines' ``os.write`` writes at most 512 bytes a call and pauses, so a line takes several
writes and a kill can land in the middle of one. Markers on stdout tell the test where the child is:
``READY`` once it is about to record, ``MID-WRITE`` after the first piece of a line (the rest still to come).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from labkit.generation.llm import cassette  # noqa: E402
from labkit.generation.llm import lines as cassette_lines  # noqa: E402

PIECE = 512


def prompts(n: int) -> list[str]:
    return [f"prompt {i:03d}: " + "context words " * (i % 7) for i in range(n)]


def response(prompt: str) -> str:
    """The scripted answer: deterministic, of very different lengths, with text JSON must escape."""
    h = hashlib.sha256(prompt.encode()).hexdigest()
    size = int(h[:4], 16) % 24_000 + 5
    return (f'answer to "{prompt[:11]}" é\n' + h * (size // 64 + 1))[:size]


class Scripted:
    """Stands in for llama.cpp: the same answer for the same prompt, each call logged."""

    def __init__(self, model: str, reuse_prefix: bool = False):
        self.model = model
        self.log = Path(os.environ["LABKIT_DATA"]) / "calls.log"

    def complete(self, prompt, schema=None, max_tokens=None):
        with open(self.log, "a", encoding="utf-8") as f:
            f.write(prompt[:10] + "\n")
        time.sleep(0.002)
        text = response(prompt)
        return cassette.Completion(text, len(prompt) // 4, len(text) // 4, 0.002, 0, {"runtime": "scripted"})


class SlowDisk:
    """``os`` as the cassette module sees it, with a ``write`` that writes one piece at a time."""

    def __getattr__(self, name):
        return getattr(os, name)

    @staticmethod
    def write(fd, data):
        data = bytes(data)
        n = os.write(fd, data[:PIECE])
        if n < len(data) and data[:1] == b"{":  # the first piece of a line, more to come
            print("MID-WRITE", flush=True)
            time.sleep(0.05)
        else:
            time.sleep(0.001)
        return n


def main() -> int:
    data, n = Path(sys.argv[1]), int(sys.argv[2])
    os.environ["LABKIT_DATA"] = str(data)
    spec = importlib.util.spec_from_file_location("record_tool", ROOT / "tools" / "record.py")
    rec = importlib.util.module_from_spec(spec)
    sys.modules["record_tool"] = rec
    spec.loader.exec_module(rec)
    rec.PLANS = {"kill-plan": lambda: (rec.Request("scripted", p) for p in prompts(n))}
    cassette_lines.os = SlowDisk()
    print("READY", flush=True)
    rec.record("kill-plan", None, client=Scripted)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
