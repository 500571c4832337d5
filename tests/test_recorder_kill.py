"""Recordings survive ``kill -9``.

The recorder (tools/record.py on a plan, tests/recorder_child.py) runs against a scripted fake model in its own
process and is killed with SIGKILL again and again: at random moments, and right in the middle of writing a line
(the child's disk writes a line in 512-byte pieces). After every kill the cassette must parse line by line with
every digest right, hold no key twice and at most one torn line, the last; the next recorder must drop that
torn line with a message before it appends anything; and in the end the plan completes with every prompt
answered exactly once, each line the scripted answer to its prompt.
"""

from __future__ import annotations

import hashlib
import os
import queue
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from labkit.generation import llm
from labkit.generation.llm import cassette
from labkit.generation.llm import lines as cassette_lines

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

import recorder_child as child  # noqa: E402

PROMPTS = 40
KILLS = 24
TIMEOUT = 60  # seconds for any one wait: nothing in this test can hang


def _start(data: Path):
    env = {**os.environ, "LABKIT_DATA": str(data), "PYTHONWARNINGS": "default"}
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "tests" / "recorder_child.py"), str(data), str(PROMPTS)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(x.strip()) for x in proc.stdout], daemon=True).start()
    return proc, lines


def _wait_for(lines: queue.Queue, marker: str) -> bool:
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        try:
            if lines.get(timeout=1) == marker:
                return True
        except queue.Empty:
            continue
    return False


def _check(path: Path) -> tuple[int, bool]:
    """The cassette as the kill left it: (complete lines, whether a torn last line follows them)."""
    raw = path.read_bytes() if path.exists() else b""
    complete, torn = raw[: raw.rfind(b"\n") + 1], raw[raw.rfind(b"\n") + 1 :]
    keys = set()
    lines = complete.split(b"\n")[:-1]
    for n, line in enumerate(lines, start=1):
        row = cassette_lines.parse_line(path.name, n, line)  # JSON, key of its prompt, digest right
        assert row["key"] not in keys, f"{path.name}:{n}: key {row['key']} written twice"
        keys.add(row["key"])
        assert row["response"] == child.response(row["prompt"]), f"{path.name}:{n}: not the scripted answer"
    return len(lines), bool(torn)


def test_the_recorder_survives_sigkill_at_any_moment(tmp_path):
    rng = random.Random(28)
    path = tmp_path / "llm" / "scripted.jsonl"
    t0 = time.monotonic()
    torn_seen, repaired, mid_write_kills, lines_before = 0, 0, 0, 0
    for i in range(KILLS):
        _, torn_before = _check(path)
        proc, lines = _start(tmp_path)
        try:
            assert _wait_for(lines, "READY"), "the recorder did not start"
            if i % 2:  # right after the first piece of a line went to disk
                assert _wait_for(lines, "MID-WRITE"), "the recorder wrote nothing"
                mid_write_kills += 1
            else:  # anywhere: in the model call, between writes, in a write, in the bookkeeping
                time.sleep(rng.uniform(0.0, 0.25))
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait(TIMEOUT)
        err = proc.stderr.read()
        assert proc.returncode == -signal.SIGKILL, f"the recorder ended by itself before kill {i + 1}: {err}"
        n_lines, torn = _check(path)
        assert n_lines >= lines_before, "a kill lost lines that were already complete"
        torn_seen += torn
        if torn_before and "the last line is torn" in err:
            repaired += 1
        if torn_before and n_lines > lines_before:  # it appended, so it must have cut the torn line off first
            assert "the last line is torn" in err and "never replayed" in err, err
        lines_before = n_lines
    assert torn_seen >= mid_write_kills // 2, "killing mid-write should have left torn lines to repair"
    assert repaired >= 1

    _, torn_before = _check(path)
    proc, _ = _start(tmp_path)  # the last run, not killed: it completes the plan
    proc.wait(TIMEOUT)
    err = proc.stderr.read()
    assert proc.returncode == 0, err
    if torn_before:
        assert "the last line is torn" in err, err
        repaired += 1
    n_lines, torn = _check(path)
    assert (n_lines, torn) == (PROMPTS, False), "every prompt answered exactly once, no torn line"
    replay = llm.Replay("scripted", path)
    assert [replay(p) for p in child.prompts(PROMPTS)] == [child.response(p) for p in child.prompts(PROMPTS)]
    calls = (tmp_path / "calls.log").read_text(encoding="utf-8").splitlines()
    print(
        f"\n{KILLS} SIGKILLs ({mid_write_kills} mid-write, {KILLS - mid_write_kills} at random moments), "
        f"{KILLS + 1} starts, {torn_seen} torn lines left by a kill, {repaired} cut off with a message by the next "
        f"recorder; {len(calls)} model calls for {PROMPTS} prompts ({len(calls) - PROMPTS} answers lost to a kill "
        f"and asked again); {time.monotonic() - t0:.1f} s"
    )


@pytest.mark.parametrize("cut", [1, 100, -1])
def test_replay_drops_a_torn_last_line_with_a_message_and_never_replays_it(tmp_path, monkeypatch, cut):
    monkeypatch.setenv("LABKIT_DATA", str(tmp_path))
    path = tmp_path / "m.jsonl"
    rec = llm.Recorder(child.Scripted("m"), path)
    rec.complete("first")
    rec.complete("second")
    raw = path.read_bytes()
    path.write_bytes(raw[:cut] if cut == -1 else raw[: raw.index(b"\n") + 1 + cut])  # the second line, torn
    with pytest.warns(cassette.CassetteWarning, match=r"m.jsonl:2: the last line is torn .* not replayed"):
        replay = llm.Replay("m", path)
    assert list(replay.rows) == [llm.prompt_key("m", "first")]
    with pytest.raises(llm.MissingRecording):
        replay("second")
    with pytest.warns(cassette.CassetteWarning, match="m.jsonl:2: the last line is torn"):
        rec = llm.Recorder(child.Scripted("m"), path)  # cuts it off before appending anything
    assert path.read_bytes() == raw[: raw.index(b"\n") + 1]
    rec.complete("second")
    assert path.read_bytes() == raw  # asked again, the same line


def test_the_migration_adds_only_the_digest_and_is_idempotent(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("LABKIT_DATA", str(tmp_path))
    path = tmp_path / "m.jsonl"
    rec = llm.Recorder(child.Scripted("m"), path)
    for p in ("a", "b", "c"):
        rec.complete(p)
    new = path.read_bytes()
    old = b"".join(line[: line.rindex(b', "digest"')] + b"}\n" for line in new.splitlines())  # as recorded before
    path.write_bytes(old)
    with pytest.raises(ValueError, match=r"m.jsonl:1: the line has no digest.*--add-digests"):
        llm.Replay("m", path)
    assert cassette.add_digests(path) == (3, 0)
    assert path.read_bytes() == new  # the recorder's lines, byte for byte: only the digest was added
    stat = path.stat()
    assert cassette.add_digests(path) == (0, 3)  # a second run changes nothing, and does not rewrite the file
    assert (path.stat().st_ino, path.stat().st_mtime_ns) == (stat.st_ino, stat.st_mtime_ns)
    edited = new.replace(b"answer to", b"answer of", 1)
    path.write_bytes(edited)
    with pytest.raises(ValueError, match="m.jsonl:1: the line does not match its digest"):
        cassette.add_digests(path)  # never blesses an edited line
    assert path.read_bytes() == edited
    path.write_bytes(old + b'{"key": "x", "mo')
    assert cassette.add_digests(path) == (3, 0)
    assert path.read_bytes() == new and "m.jsonl:4: the last line is torn" in capsys.readouterr().err
    assert hashlib.sha256(new).hexdigest() == hashlib.sha256(path.read_bytes()).hexdigest()
