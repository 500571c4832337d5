"""The package stays light to import and keeps its layers, the notebooks stay in sync with their sources, and
the source's toys are written once."""

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LABKIT = ROOT / "labkit"


def test_import_labkit_is_light():
    code = (
        "import sys, labkit, labkit.metrics, labkit.data, labkit.check;"
        "heavy = [m for m in ('pandas', 'matplotlib', 'ipywidgets', 'bm25s', 'onnxruntime') if m in sys.modules];"
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "", f"import labkit pulled in heavy modules: {out}"


# ---------------------------------------------------------------- layers: the import graph, read from the source

UI = {"widgets", "plots", "explorer"}
"""Draw and interact; they may import measures, retrieval, text and data, and nothing imports them."""
MEASURES = {"metrics", "stats", "calibration", "fusion", "text", "chunking"}
"""Pure computations on rankings, grades and text. (calibration imports faithfulness for its verdict labels;
faithfulness imports llm only inside the judge functions, which the import test below keeps true.)"""
NOT_FOR_MEASURES = {"retrieval", "embeddings", "grid", "handbook", "positions", "llm", "reader", "synth",
                    "synth_data", "faithfulness_data", "check", "exercises"} | UI  # fmt: skip
NOT_FOR_UI = {"llm", "reader"}
"""A widget shows what a chapter computed; it never calls a language model."""
UI_LIBRARIES = {"ipywidgets", "matplotlib"}
MAX_LINES = 400
OVER_THE_LIMIT = {  # module: (ceiling, why it may be longer for now); lower a ceiling, never raise it
    "data": (510, "loaders, validation, TREC files and the command line; TREC I/O can move out next"),
}


def _modules() -> dict[str, Path]:
    """Every module of labkit, subpackages included, by dotted name below labkit ("" is labkit itself)."""
    out = {}
    for path in sorted(LABKIT.rglob("*.py")):
        parts = path.relative_to(LABKIT).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


MODULES = _modules()


def _resolve(name: str) -> str:
    """``"metrics.graded.ndcg_at_k"`` -> the longest prefix that is a module (``"metrics.graded"``)."""
    parts = name.split(".") if name else []
    while parts and ".".join(parts) not in MODULES:
        parts.pop()
    return ".".join(parts)


def _imports(module: str) -> tuple[set[str], set[str]]:
    """(labkit modules, other top-level packages) that ``module`` imports anywhere: at the top, in functions."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    ours, theirs = set(), set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "labkit" or alias.name.startswith("labkit."):
                    ours.add(_resolve(alias.name.removeprefix("labkit").lstrip(".")))
                else:
                    theirs.add(alias.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".") if package else []
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, *([node.module] if node.module else [])])
            elif node.module == "labkit" or (node.module or "").startswith("labkit."):
                target = node.module.removeprefix("labkit").lstrip(".")
            else:
                theirs.add(node.module.split(".")[0])
                continue
            for alias in node.names:
                ours.add(_resolve(f"{target}.{alias.name}".lstrip(".")))
    ours.discard(module)
    return ours, theirs


def _family(module: str) -> str:
    return module.split(".")[0]


GRAPH = {module: _imports(module) for module in MODULES}


def test_the_import_graph_is_read_from_the_source():
    # a canary, so that a parser that reads nothing cannot pass the layer tests below
    assert {"metrics", "metrics.graded", "llm", "llm.http", "widgets"} <= set(MODULES)
    assert {"metrics", "plots", "fusion", "retrieval", "explorer"} <= GRAPH["widgets.rankings"][0]
    assert {"widgets.rankings", "widgets.answers"} <= GRAPH["widgets"][0]  # absolute imports inside the package
    assert "metrics._checks" in GRAPH["metrics.graded"][0]  # relative import inside the package
    assert "ipywidgets" in GRAPH["widgets.rankings"][1]


def test_nothing_imports_the_ui():
    for module, (ours, theirs) in GRAPH.items():
        if _family(module) in UI:
            continue
        assert not {_family(m) for m in ours} & UI, f"labkit.{module} imports a UI module: {sorted(ours)}"
        # labkit.setup() styles matplotlib for the notebooks, importing it inside the function
        allowed = {"matplotlib"} if module == "" else set()
        assert not (theirs & UI_LIBRARIES) - allowed, f"labkit.{module} imports {sorted(theirs & UI_LIBRARIES)}"


def test_measures_never_import_retrieval_generation_or_ui():
    for module, (ours, _) in GRAPH.items():
        if _family(module) in MEASURES:
            bad = {_family(m) for m in ours} & NOT_FOR_MEASURES
            assert not bad, f"labkit.{module} is a measure module and imports {sorted(bad)}"


def test_ui_never_calls_a_model():
    for module, (ours, _) in GRAPH.items():
        if _family(module) in UI:
            bad = {_family(m) for m in ours} & NOT_FOR_UI
            assert not bad, f"labkit.{module} is a UI module and imports {sorted(bad)}"


def test_importing_the_measures_loads_no_retrieval_model_or_ui():
    code = (
        "import sys\n"
        f"for m in {sorted(MEASURES)}: __import__('labkit.' + m)\n"
        "loaded = {n.split('.')[1] for n in sys.modules if n.startswith('labkit.')}\n"
        "print(','.join(sorted(loaded)))"
    )
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert not set(loaded.split(",")) & NOT_FOR_MEASURES, loaded


def test_modules_stay_short():
    too_long = {}
    for module, path in MODULES.items():
        lines = len(path.read_text(encoding="utf-8").splitlines())
        ceiling, _ = OVER_THE_LIMIT.get(module, (MAX_LINES, ""))
        if lines > ceiling:
            too_long[module or "__init__"] = f"{lines} lines (limit {ceiling})"
    assert not too_long, f"split these modules by idea: {too_long}"


def test_nothing_is_defined_after_a_main_guard():
    # a function defined below `if __name__ == "__main__":` does not exist yet when the command line runs
    for module, path in MODULES.items():
        body = ast.parse(path.read_text(encoding="utf-8")).body
        guards = [i for i, node in enumerate(body) if isinstance(node, ast.If) and "__main__" in ast.unparse(node.test)]
        assert all(i == len(body) - 1 for i in guards), f"labkit.{module}: code after its __main__ guard"


# ---------------------------------------------------------------- the source's toys are typed once, in labkit.toys


def _key(value):
    """A hashable form of a literal, where a list and a tuple of the same items are the same toy."""
    if isinstance(value, list | tuple):
        return ("seq", tuple(_key(v) for v in value))
    if isinstance(value, dict):
        return ("map", tuple(sorted((_key(k), _key(v)) for k, v in value.items())))
    if isinstance(value, set | frozenset):
        return ("set", frozenset(_key(v) for v in value))
    return value


def _toys() -> dict:
    """Each toy container (two items or more) and each long text of labkit.toys, by its hashable form."""
    from labkit import toys

    out = {}
    for name, value in vars(toys).items():
        if not name.isupper():
            continue
        if isinstance(value, list | tuple | dict | set) and len(value) >= 2:
            out[_key(value)] = name
        texts = [value] if isinstance(value, str) else list(value.values()) if isinstance(value, dict) else []
        out.update({t: name for t in texts if isinstance(t, str) and len(t) >= 30})
    return out


def _copies(path: Path, toys: dict) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.List | ast.Tuple | ast.Dict | ast.Set | ast.Constant):
            try:
                key = _key(ast.literal_eval(node))
                hit = toys.get(key)
            except (ValueError, TypeError, SyntaxError):  # not a literal, or unhashable
                continue
            if hit:
                found.append(f"line {node.lineno}: {hit}")
    return found


@pytest.mark.parametrize("folder", ["labkit", "notebooks/src", "tools", "tests", "bench"])
def test_no_toy_is_typed_twice(folder):
    toys = _toys()
    assert len(toys) >= 10
    copies = {}
    for path in sorted((ROOT / folder).rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel == "labkit/toys.py":
            continue
        found = _copies(path, toys)
        if found:
            copies[rel] = found
    assert not copies, f"import these from labkit.toys instead of re-typing them: {copies}"


def test_notebooks_match_their_sources_and_navigation():
    out = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "build_notebooks.py"), "--check"], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stdout + out.stderr


def _build_notebooks_tool():
    import importlib.util

    spec = importlib.util.spec_from_file_location("build_notebooks", ROOT / "tools" / "build_notebooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_readme_chapter_table_is_generated_and_checked(tmp_path, monkeypatch):
    tool = _build_notebooks_tool()
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert tool.readme_table() in readme  # what --check compares; the notebook test above runs it
    coming = tool.Chapter("10_next_chapter", "Next", "-", "what a later chapter does", "coming")
    monkeypatch.setattr(tool, "CHAPTERS", [*tool.CHAPTERS, coming])
    no_link = "| 10 | next_chapter | what a later chapter does | coming |"  # no source file: the name is not a link
    assert tool.readme_table().endswith(no_link)
    monkeypatch.setattr(tool, "CHAPTERS", tool.CHAPTERS[:-1])
    stale = tmp_path / "README.md"
    stale.write_text(readme.replace("| 03 |", "| 3 |"), encoding="utf-8")
    monkeypatch.setattr(tool, "README", stale)
    assert any(p.startswith("README.md: the chapter table is stale") for p in tool.check())
    assert tool.write_readme() and stale.read_text(encoding="utf-8") == readme
    with pytest.raises(ValueError, match="marker lines"):
        tool.readme_with_table("# a README without markers")


def test_sources_are_read_by_jupytext_keeping_tags_only(tmp_path):
    tool = _build_notebooks_tool()
    src = tmp_path / "99_x.py"
    src.write_text(
        "# %% [markdown]\n# # 99 · A title\n#\n# Text.\n\n"
        '# %% tags=["solution"]\nanswer = 1\n\n\n'
        "# %%\nprint(answer)\n",
        encoding="utf-8",
    )
    cells = tool.parse_source(src)
    assert [(c.cell_type, c.source, dict(c.metadata)) for c in cells] == [
        ("markdown", "# 99 · A title\n\nText.", {}),
        ("code", "answer = 1", {"tags": ["solution"]}),  # no jupytext bookkeeping (lines_to_next_cell)
        ("code", "print(answer)", {}),
    ]
    src.write_text('# %% tag=["solution"]\nanswer = 1\n', encoding="utf-8")  # a typo in the header
    with pytest.raises(ValueError, match=r"99_x.py: cell 0 .*\['tag'\]"):
        tool.parse_source(src)


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
    for path in [LABKIT / "explorer.py", *sorted((LABKIT / "widgets").glob("*.py"))]:
        assert not re.search(r"\bw\.Output\(|\bOutput\(\)", path.read_text()), path.name


def test_figure_png_is_the_figure_as_png():
    import struct

    from labkit import plots
    from labkit.toys import RUNNING_GRADES

    png = plots.figure_png(plots.plot_gain_discount(RUNNING_GRADES, 5), dpi=100)
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    width, height = struct.unpack(">II", png[16:24])  # the IHDR chunk
    assert 600 <= width <= 720 and 250 <= height <= 330, (width, height)  # a 7 x 3 inch figure, tight bbox
