"""Local model speed: load time, prompt tokens/s, generated tokens/s, for each model (needs `make llm`).

    .venv/bin/python bench/llm_bench.py [--threads N] [--repeat 3]

Prints figures; asserts nothing. Each measurement starts from an empty prompt cache (as the recordings do).
Also summarises the recorded cassettes: tokens and seconds as they were on the recording machine.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from labkit.generation import llm  # noqa: E402

PROMPT = (
    "You are the internal help bot of Quillbridge Software. Answer using the passage below.\n\n"
    + " ".join(["Full-time employees have 15 working days of paid annual leave per calendar year."] * 40)
    + "\n\nQuestion: How many days of annual leave do full-time employees get? Explain in three sentences.\nAnswer:"
)


def measure(model: str, threads: int | None, repeat: int) -> None:
    from labkit.generation.llm.local import Local

    client = Local(model, n_threads=threads)
    t0 = time.perf_counter()
    client._load()
    load = time.perf_counter() - t0
    n_prompt = client.count_tokens(PROMPT)
    best_prompt, best_gen = 0.0, 0.0
    for _ in range(repeat):
        client._llm.reset()
        t0 = time.perf_counter()
        client._llm.create_completion(PROMPT, max_tokens=1, temperature=0.0)
        t_prompt = time.perf_counter() - t0
        done = client.complete(PROMPT, max_tokens=96)
        t_gen = max(1e-9, done.seconds - t_prompt)
        best_prompt = max(best_prompt, n_prompt / t_prompt)
        best_gen = max(best_gen, (done.completion_tokens or 0) / t_gen)
    print(
        f"{model:36} threads={client.n_threads}  load {load:4.1f} s  prompt {best_prompt:6.1f} tok/s  "
        f"generation {best_gen:5.1f} tok/s  (prompt {n_prompt} tokens, best of {repeat})"
    )


def cassettes() -> None:
    for model in (llm.DEFAULT_MODEL, llm.SMALL_MODEL):
        path = llm.cassette_path(model)
        if not path.is_file():
            continue
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        prov = [r.get("provenance") or {} for r in rows]
        pt = sum(p.get("prompt_tokens") or 0 for p in prov)
        ct = sum(p.get("completion_tokens") or 0 for p in prov)
        sec = sum(p.get("seconds") or 0 for p in prov)
        print(
            f"{path.name:44} {len(rows):5d} responses  {pt:9,d} prompt + {ct:7,d} completion tokens  "
            f"{sec / 3600:5.2f} h"
        )


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cassettes-only", action="store_true")
    a = ap.parse_args()
    print("recorded (seconds as measured while recording, often on a busy machine):")
    cassettes()
    if not a.cassettes_only:
        print("\nmeasured now:")
        for model in (llm.DEFAULT_MODEL, llm.SMALL_MODEL):
            measure(model, a.threads, a.repeat)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
