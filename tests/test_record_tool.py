"""tools/record.py: shards partition a plan, sharded recorders share one cassette cleanly, bad --shard is refused."""

import importlib.util
import json
import multiprocessing as mp
import sys
import time
from pathlib import Path

import pytest

from labkit.generation import llm
from labkit.generation.llm import cassette

ROOT = Path(__file__).resolve().parent.parent


def _load_record():
    spec = importlib.util.spec_from_file_location("record_tool", ROOT / "tools" / "record.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["record_tool"] = mod  # dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod


class Echo:
    """Stands in for the local model: answers each prompt with its reversal (taking ``delay`` seconds)."""

    delay = 0.0

    def __init__(self, model, reuse_prefix=False):
        self.model = model

    def complete(self, prompt, schema=None, max_tokens=None):
        time.sleep(self.delay)
        return cassette.Completion(prompt[::-1], 3, 3, 0.0, 0, {"server": "echo"})


@pytest.fixture
def tool(tmp_path, monkeypatch):
    rec = _load_record()
    monkeypatch.setattr(cassette, "data_dir", lambda: tmp_path)
    import labkit.generation.llm.local as local

    monkeypatch.setattr(local, "Local", Echo)
    prompts = [f"prompt number {i} " + "é" * 3000 for i in range(12)]  # long lines: > one 8 KiB buffer each
    monkeypatch.setattr(rec, "PLANS", {"t-plan": lambda: (rec.Request("m", p) for p in prompts)})
    return rec, prompts, tmp_path / "llm" / "m.jsonl"


def test_shards_partition_a_plan_and_resume(tool):
    rec, prompts, path = tool
    assert rec.main(["t-plan", "--shard", "2/3"]) == 0
    got = [json.loads(line)["prompt"] for line in path.read_text(encoding="utf-8").splitlines()]
    assert got == prompts[1::3]
    for k in ("1/3", "3/3", "1/1"):  # the last run finds everything recorded and adds nothing
        rec.main(["t-plan", "--shard", k])
    rows = cassette.read_cassette(path)
    assert sorted(r["prompt"] for r in rows.values()) == sorted(prompts)
    assert all(r["response"] == r["prompt"][::-1] for r in rows.values())


def _append(path, start, barrier):
    rec = llm.Recorder(Echo("m"), path)  # each reads the cassette once, at start, as record.py does
    barrier.wait()
    for i in range(start, start + 40):
        rec.complete(f"{i} " + "ü" * 5000)


def test_two_processes_append_to_one_cassette_without_tearing_lines(tmp_path):
    path = tmp_path / "m.jsonl"
    ctx = mp.get_context("fork")
    barrier = ctx.Barrier(2)
    procs = [ctx.Process(target=_append, args=(path, s, barrier)) for s in (0, 1000)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(30)
        assert p.exitcode == 0
    rows = cassette.read_cassette(path)  # raises, naming the line, if any line were torn
    assert len(rows) == 80


@pytest.mark.parametrize("bad", ["0/2", "3/2", "2", "a/b", "1/0"])
def test_bad_shard_is_refused_by_name(tool, bad, capsys):
    rec, _, _ = tool
    with pytest.raises(SystemExit) as e:
        rec.main(["t-plan", "--shard", bad])
    assert e.value.code == 2
    assert "--shard must be K/N" in capsys.readouterr().err


def _run_tool(argv, data, delay):
    rec = _load_record()
    cassette.data_dir = lambda: data
    import labkit.generation.llm.local as local

    Echo.delay = delay
    local.Local = Echo
    prompts = [f"prompt number {i}" for i in range(30)]
    rec.PLANS = {"t-plan": lambda: (rec.Request("m", p) for p in prompts)}
    rec.main(argv)


def test_a_forward_and_a_reverse_recorder_meet_in_the_middle(tmp_path):
    ctx = mp.get_context("fork")
    procs = [
        ctx.Process(target=_run_tool, args=(argv, tmp_path, 0.02)) for argv in (["t-plan"], ["t-plan", "--reverse"])
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    lines = (tmp_path / "llm" / "m.jsonl").read_text(encoding="utf-8").splitlines()
    rows = cassette.read_cassette(tmp_path / "llm" / "m.jsonl")
    assert len(rows) == 30  # every prompt, and each line whole
    assert len(lines) == 30  # the request both had in flight when they met is written once: the check is locked
