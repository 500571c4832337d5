"""The chapter manifests (labkit/chapters/) are the one list of chapters: every name in them exists, everything
that needs a list of chapters reads them, and a new chapter is its source, its manifest and its modules."""

import re
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest

from labkit.chapters import CHAPTERS, Bench, Chapter, Explorer, Judge, chapter, discover
from labkit.exercises import BY_CHAPTER, EXERCISES

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "tests" / "browser"))


def test_every_chapter_has_its_source_and_notebook_and_nothing_else_is_a_chapter():
    assert [c.number for c in CHAPTERS][:3] == ["00", "01", "02"] and chapter("04b").slug == "reranking"
    sources = sorted(p.stem for p in (ROOT / "notebooks" / "src").glob("*.py"))
    notebooks = sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb"))
    assert sources == notebooks == [c.stem for c in CHAPTERS]


def test_exercises_follow_the_manifests():
    assert set(BY_CHAPTER) <= {c.number for c in CHAPTERS}
    for number, exercises in BY_CHAPTER.items():
        prefix = str(int(number[:2])) + number[2:]
        assert all(e.split(".")[0] == prefix for e in exercises), (number, exercises)
    assert sum(len(e) for e in BY_CHAPTER.values()) == len(EXERCISES)


def test_every_name_a_manifest_gives_exists():
    import record

    from labkit.ui import widgets

    label_sets = set(re.findall(r'LabelSet\("([\w-]+)"', (ROOT / "labkit/studies/labelling.py").read_text("utf-8")))
    plans = [p for c in CHAPTERS for p in c.plans]
    assert sorted(plans) == sorted(record.PLANS), "every recording plan belongs to exactly one chapter's manifest"
    for c in CHAPTERS:
        assert all(p.startswith(f"{c.number}-") for p in c.plans), (c.number, c.plans)
        missing = [e for e in c.explorer_names if not hasattr(widgets, e)]
        assert not missing, f"chapter {c.number} names explorers labkit.ui.widgets lacks: {missing}"
        assert set(c.label_sets) <= label_sets, (c.number, c.label_sets)
        for module in c.probe:
            assert (ROOT / "labkit" / (module.replace(".", "/") + ".py")).is_file(), module
    assert sorted(s for c in CHAPTERS for s in c.label_sets) == sorted(label_sets)


def test_every_explorer_has_its_input_builder_and_the_tests_and_bench_keep_no_list_of_their_own():
    """Each explorer (but the labelling widget) names the function that builds what its notebook passes it, and
    its notebook calls that function; the browser drivers and the bench read the manifests, so neither holds a
    builder or a chapter list of its own."""
    for c in CHAPTERS:
        source = (ROOT / c.source).read_text("utf-8")
        for e in c.explorers:
            if e.widget == "Labeller":
                assert e.inputs is None and e.bench is None, (c.number, e)
                continue
            assert e.inputs is not None, f"chapter {c.number}: {e.widget} has no input builder"
            assert e.inputs.__module__ == f"labkit.chapters.ch{c.number}", (c.number, e.widget, e.inputs.__module__)
            assert f"{e.inputs.__name__}(" in source, f"{c.source} does not call {e.inputs.__name__}"
    assert any(e.bench for c in CHAPTERS for e in c.explorers), "no explorer is benched"
    driver = (ROOT / "tests/browser/labdriver.py").read_text("utf-8")
    assert not re.search(r"^def ch\d\d", driver, re.M), "labdriver.py rebuilds a chapter's inputs by hand"
    assert not list((ROOT / "tests/browser").glob("ch*driver.py")), "a chapter driver outside the manifests"
    bench = (ROOT / "bench/explorer_bench.py").read_text("utf-8")
    assert "CHAPTERS" in bench and not re.search(r"widgets\.[A-Z]\w+\(", bench), "the bench builds an explorer by hand"


def test_an_explorer_entry_is_checked_by_name():
    assert Chapter(number="12", slug="x", title="t", summary="s", does="d", explorers=("Labeller",)).explorers == (
        Explorer("Labeller"),
    )
    with pytest.raises(ValueError, match="listed twice"):
        Chapter(number="12", slug="x", title="t", summary="s", does="d", explorers=("Labeller", "Labeller"))
    with pytest.raises(TypeError, match="inputs must be a function"):
        Explorer("FusionExplorer", inputs={"runs": {}})
    with pytest.raises(ValueError, match="at least two values"):
        Bench("k", (5,))
    with pytest.raises(TypeError, match="keyword arguments"):
        Explorer("FusionExplorer", inputs=lambda: [1, 2]).build_inputs()
    with pytest.raises(ValueError, match="no explorer 'Nope'"):
        chapter("01").explorer("Nope")
    with pytest.raises(ValueError, match="give all of queries, chunks, qrels, runs or none"):
        chapter("01").explorer("FusionExplorer").inputs(queries=[])


def test_chapter_06_builds_its_judges_from_its_manifest():
    from labkit.generation import llm
    from labkit.judges import faithfulness

    ch06 = chapter("06")
    judges = faithfulness.judges_from(ch06.judges, llm.Replay)
    assert list(judges) == [j.name for j in ch06.judges]
    assert ch06.candidates == ["1.5B", "1.5B + quote guard", "0.5B", "lexical"]
    assert judges["lexical"] is faithfulness.lexical_judge
    source = (ROOT / ch06.source).read_text("utf-8")
    assert "judges_from(CH06.judges" in source and "candidates = CH06.candidates" in source
    assert "list(judges)[:" not in source  # no judge picked by its position
    with pytest.raises(ValueError, match="kind"):
        Judge("x", "oracle")
    with pytest.raises(ValueError, match="model="):
        Judge("x", "model")
    with pytest.raises(ValueError, match="two judges"):
        faithfulness.judges_from([Judge("a", "lexical"), Judge("a", "lexical")], llm.Replay)


def test_a_bad_manifest_is_refused_by_name(tmp_path):
    with pytest.raises(ValueError, match="number"):
        Chapter(number="4", slug="x", title="t", summary="s", does="d")
    with pytest.raises(ValueError, match="slug"):
        Chapter(number="11", slug="Bad Slug", title="t", summary="s", does="d")
    with pytest.raises(ValueError, match="no chapter"):
        chapter("99")


THROWAWAY = """
from labkit.chapters.manifest import Chapter

CHAPTER = Chapter(
    number="12",
    slug="throwaway_chapter",
    title="A throw-away chapter",
    summary="a chapter made of a source and a manifest",
    does="nothing but prove that a chapter is its source, its manifest and its modules",
    explorers=("metrics_playground",),
)
"""

SOURCE = """# %% [markdown]
# # 12 · A throw-away chapter

# %%
import labkit

labkit.setup()

# %% tags=["solution"]
answer_3_1 = 0.5

# %%
from labkit.exercises import check

check.exercise("3.1", answer_3_1)
"""


def test_a_new_chapter_is_its_source_and_its_manifest(tmp_path, monkeypatch):
    import build_notebooks as build
    import labdriver
    import make_student

    # the manifest, in a package of its own: discovered with the workbook's chapters
    package = tmp_path / "extra_chapters"
    package.mkdir()
    (package / "__init__.py").write_text("")
    for path in (ROOT / "labkit" / "chapters").glob("ch*.py"):
        (package / path.name).write_text(path.read_text("utf-8"))
    (package / "ch12.py").write_text(textwrap.dedent(THROWAWAY))
    monkeypatch.syspath_prepend(str(tmp_path))
    chapters = discover(package, "extra_chapters")
    new = chapters[-1]
    assert new.stem == "12_throwaway_chapter" and [c.stem for c in chapters[:-1]] == [c.stem for c in CHAPTERS]

    # the build: its navigation, 00's chapter list and the README's table come from the manifest alone
    src, out = tmp_path / "src", tmp_path / "notebooks"
    src.mkdir(), out.mkdir()
    (src / f"{new.stem}.py").write_text(SOURCE)
    for c in CHAPTERS:
        (src / f"{c.stem}.py").write_text((ROOT / c.source).read_text("utf-8"))
    monkeypatch.setattr(build, "CHAPTERS", list(chapters))
    monkeypatch.setattr(build, "SRC", src)
    monkeypatch.setattr(build, "OUT", out)
    nb = build.new_notebook(new.stem)
    text = "\n".join(c.source for c in nb.cells)
    assert "10_your_own_documents" in text  # previous: the learners' chapter before it (11 is for instructors)
    assert "11_class_labels" not in text
    assert "A throw-away chapter" in "\n".join(c.source for c in build.new_notebook("10_your_own_documents").cells)
    welcome = "\n".join(c.source for c in build.new_notebook("00_welcome").cells)
    assert "a chapter made of a source and a manifest" in welcome
    readme = build.readme_with_table((ROOT / "README.md").read_text("utf-8"))
    assert "nothing but prove that a chapter is its source" in readme

    # the student copy: its solution emptied, its check left to answer
    nbformat.write(nb, out / f"{new.stem}.ipynb")
    written = make_student.make_student(tmp_path / "student", out)
    student = nbformat.read(written[0], as_version=4)
    assert "answer_3_1 = None" in "\n".join(c.source for c in student.cells)
    assert "answer_3_1 = 0.5" not in "\n".join(c.source for c in student.cells)

    # the browser driver: built from the manifest's explorer names alone
    page = SimpleNamespace(locator=lambda css, **kw: css)
    (driver,) = labdriver.drivers_for(page, new)
    assert driver.stem == new.stem and callable(driver.explorer.html_for)


def test_an_instructors_chapter_is_navigated_listed_and_kept_out_of_the_learners_copies(tmp_path):
    import build_notebooks as build
    import make_student

    ch11 = chapter("11")
    assert ch11.audience == "instructor" and not ch11.for_learners
    assert all(c.for_learners for c in CHAPTERS if c.number != "11")
    with pytest.raises(ValueError, match="audience"):
        Chapter(number="12", slug="x", title="t", summary="s", does="d", audience="everyone")
    # navigated: from the learners' last chapter, never to it; from it, back to the chapter before it
    assert "11_class_labels" not in build.nav_text("10_your_own_documents")
    assert build.nav_text("11_class_labels").startswith("[← 10 · Your own documents](10_your_own_documents.ipynb)")
    # listed in 00's contents as for instructors, and in the README's table
    listing = [row for row in build.chapter_list_text().splitlines() if row.startswith("| 11 |")]
    assert listing and build.FOR_INSTRUCTORS in listing[0]
    assert "notebooks/11_class_labels.ipynb" in build.readme_table()
    # left out of the student copy and the working copy, kept in what make nbval runs
    assert make_student.for_instructors() == {"11_class_labels.ipynb"}
    names = [p.name for p in make_student.learners_notebooks()]
    assert "11_class_labels.ipynb" not in names and "10_your_own_documents.ipynb" in names
