"""Benchmark: how long each explorer takes to answer a control move, in the kernel (compute + render).

Every explorer whose chapter manifest (``labkit/chapters/chNN.py``) gives it a ``bench`` is built here by the
manifest's input builder, the function its notebook calls (05's builds its nine chunkings as it goes, as the chapter
has by then: the slowest part of this script; 02's and 07's replay the recorded model outputs). Each is set to the
bench's start (untimed), then one control is moved through the bench's path and each update is timed
(``Explorer._update``: the pure function, its HTML and SVG pictures, the widgets' new values), and within it the
pure function and the render apart (a revisit is served from the explorer's cache). Prints the median and the
slowest move per explorer. Then, per explorer, the work of computing ahead every state one move reaches: what the
kernel does between a learner's moves, so that the page can draw those states itself (labkit.ui.widgets.ahead).
The latency targets are for the whole key-to-screen path in the browser (p50 <= 50 ms, max <= 100 ms); the
browser tests print that figure. Not a test: timings are printed, never asserted.

    .venv/bin/python bench/explorer_bench.py
"""

from __future__ import annotations

import statistics
import time

import labkit
from labkit.chapters import CHAPTERS
from labkit.ui import widgets


def instrument(explorer) -> dict[str, list[float]]:
    """Time the explorer's two steps on every update from now on: ``compute`` (the pure function, with the
    explorer's caches) and ``render`` (its value to HTML, pictures included)."""
    times: dict[str, list[float]] = {"compute": [], "render": []}
    for name in times:
        step = getattr(explorer, name)

        def timed(*a, _step=step, _name=name, **kw):
            start = time.perf_counter()
            out = _step(*a, **kw)
            times[_name].append(time.perf_counter() - start)
            return out

        setattr(explorer, name, timed)
    return times


def timed_moves(explorer, control: str, values, repeat: int = 3) -> tuple[list[float], list[float]]:
    """Seconds per move of ``explorer.controls[control]`` through ``values``: the first visit of each value
    (cold: nothing cached yet for it, as a learner's first move) and ``repeat`` revisits (warm)."""
    box = explorer.controls[control]
    cold, warm, seen = [], [], {box.value}
    for _ in range(1 + repeat):
        for v in values:
            start = time.perf_counter()
            box.value = v
            (warm if v in seen else cold).append(time.perf_counter() - start)
            seen.add(v)
        box.value = values[0]
    assert not explorer.message.value, f"{type(explorer).__name__}: {explorer.message.value}"
    return cold, warm


def ms(times: list[float], how) -> str:
    return f"{1000 * how(times):8.1f}" if times else f"{'-':>8}"


def cases() -> dict[str, tuple]:
    """``"<chapter> <widget> (<control>)"`` -> (explorer, control, values), for every explorer whose manifest gives
    a bench, in chapter order: built by its input builder, then set to the bench's start."""
    labkit.setup()
    out = {}
    for c in CHAPTERS:
        for e in c.explorers:
            if e.bench is None:
                continue
            explorer = getattr(widgets, e.widget)(**e.build_inputs())
            for control, value in e.bench.start:
                explorer.controls[control].value = value
            assert not explorer.message.value, f"{c.number} {e.widget}: {explorer.message.value}"
            out[f"{c.number} {e.widget} ({e.bench.control})"] = (explorer, e.bench.control, list(e.bench.values))
    return out


def main() -> None:
    start = time.perf_counter()
    built = cases()
    print(f"{len(built)} explorers built by their manifests' input builders in {time.perf_counter() - start:.0f} s")
    print("kernel side of one control move, ms (the browser targets for the whole path: p50 <= 50, max <= 100)")
    print(f"{'explorer (control)':30} {'first visits':>22} {'revisits':>22} {'pure function':>17} {'render':>17}")
    print(f"{'':30} {'n':>4} {'p50':>8} {'max':>8} {'n':>4} {'p50':>8} {'max':>8}" + f" {'p50':>8} {'max':>8}" * 2)
    for name, (explorer, control, values) in built.items():
        steps = instrument(explorer)
        cold, warm = timed_moves(explorer, control, values)
        split = " ".join(f"{ms(steps[s], statistics.median)} {ms(steps[s], max)}" for s in ("compute", "render"))
        print(f"{name:30} {len(cold):4d} {ms(cold, statistics.median)} {ms(cold, max)} "
              f"{len(warm):4d} {ms(warm, statistics.median)} {ms(warm, max)} {split}")  # fmt: skip
    print()
    print("computed ahead after a move (Explorer.warm, in the kernel's idle turns; each state is then drawn by the")
    print("page itself): how many states one move reaches, the time for all, and the longest one, which is the")
    print("most a key press for a state the page does not hold yet can wait behind")
    print(f"{'explorer':30} {'states':>7} {'all, ms':>9} {'longest, ms':>12}")
    for name, (explorer, _, _) in built.items():
        explorer._shown.clear()  # as if nothing had been computed around the current state yet
        each = []
        for state in explorer.neighbours():
            start = time.perf_counter()
            explorer.warm([state])
            each.append(time.perf_counter() - start)
        print(f"{name.split(' (')[0]:30} {len(each):7d} {ms(each, sum)} {ms(each, max):>12}")


if __name__ == "__main__":
    main()
