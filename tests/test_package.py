"""The package stays light to import, and the notebooks stay in sync with their sources."""

import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_import_labkit_is_light():
    code = (
        "import sys, labkit, labkit.metrics, labkit.data, labkit.check;"
        "heavy = [m for m in ('pandas', 'matplotlib', 'ipywidgets', 'bm25s', 'onnxruntime') if m in sys.modules];"
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "", f"import labkit pulled in heavy modules: {out}"


def test_core_modules_never_import_widgets_or_plots():
    # __init__.setup() is the notebooks' first call and styles matplotlib on purpose; it imports it lazily.
    for path in (ROOT / "labkit").glob("*.py"):
        if path.stem in ("widgets", "plots", "__init__"):
            continue
        text = path.read_text()
        assert not re.search(
            r"^\s*(import|from)\s+(ipywidgets|matplotlib|labkit\.widgets|labkit\.plots)", text, re.M
        ), path


def test_notebooks_match_their_sources_and_navigation():
    out = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "build_notebooks.py"), "--check"], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stdout + out.stderr


MACHINE_PATH = re.compile(r"(?<![\w:/.~-])/(?:[\w.-]+/){2,}")


def test_notebooks_are_committed_executed_and_clean():
    notebooks = sorted((ROOT / "notebooks").glob("*.ipynb"))
    assert notebooks
    for path in notebooks:
        nb = json.loads(path.read_text())
        last = 0
        for cell in nb["cells"]:
            if cell["cell_type"] != "code" or not "".join(cell["source"]).strip():
                continue
            assert cell["execution_count"] and cell["execution_count"] > last, f"{path.name}: not run in order"
            last = cell["execution_count"]
            for out in cell.get("outputs", []):
                assert out["output_type"] != "error", f"{path.name}: stored error"
                text = "".join(out.get("text", "")) + json.dumps(out.get("data", {}).get("text/plain", ""))
                assert not MACHINE_PATH.search(text), f"{path.name}: machine path {MACHINE_PATH.search(text)[0]}"
                assert "Warning:" not in "".join(out.get("text", "")), f"{path.name}: warning in output"


def test_widgets_draw_charts_as_images_not_output_widgets():
    # Voila stalls on a cell that displays into an ipywidgets.Output while it executes (see plots.figure_png)
    text = (ROOT / "labkit" / "widgets.py").read_text()
    assert not re.search(r"\bw\.Output\(|\bOutput\(\)", text)


def test_figure_png_is_the_figure_as_png():
    import struct

    from labkit import plots

    png = plots.figure_png(plots.plot_gain_discount([0, 2, 0, 3, 1], 5), dpi=100)
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    width, height = struct.unpack(">II", png[16:24])  # the IHDR chunk
    assert 600 <= width <= 720 and 250 <= height <= 330, (width, height)  # a 7 x 3 inch figure, tight bbox
