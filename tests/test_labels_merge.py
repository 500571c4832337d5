"""python -m labkit labels merge: a class's label files, refused when they are not one label set."""

import json
import subprocess
import sys

import pytest

from labkit.commands.cli import merge
from labkit.data import labels as lb
from labkit.studies import labelling


def _write(path, set_id, labels):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps({"set": set_id, "item": i, "label": v}) + "\n" for i, v in labels.items()))
    return path


def test_merge_a_class_of_three_on_a_chapter_set(tmp_path, capsys):
    ls, _, reference = labelling.claims_set()
    items = list(ls.items[:6])
    ana = {i: reference[i] for i in items}
    bo = {**ana, items[0]: "contradicted" if ana[items[0]] != "contradicted" else "supported"}
    cy = {i: reference[i] for i in items[:5]}
    files = [_write(tmp_path / name / "06-claims.jsonl", "06-claims", lab) for name, lab in
             (("ana", ana), ("bo", bo), ("cy", cy))]  # fmt: skip
    out = merge(files, tmp_path / "majority.jsonl")
    printed = capsys.readouterr().out
    assert out["raters"] == ["ana", "bo", "cy"]
    assert len(out["items"]) == 5 and out["partial"] == 1
    assert "Fleiss' kappa" in printed and items[0] in printed
    majority = lb.read_labels(tmp_path / "majority.jsonl", ls)
    assert majority == ana  # bo's one disagreement is outvoted; the item only two rated agrees


def test_the_command_line_refuses_files_of_different_sets(tmp_path):
    a = _write(tmp_path / "a.jsonl", "x-set", {"i1": "yes"})
    b = _write(tmp_path / "b.jsonl", "y-set", {"i1": "yes"})
    run = subprocess.run([sys.executable, "-m", "labkit", "labels", "merge", str(a), str(b)],
                         capture_output=True, text=True)  # fmt: skip
    assert run.returncode == 2 and "different label sets" in run.stderr


def test_an_unknown_item_in_a_chapter_set_names_its_file_and_line(tmp_path):
    a = _write(tmp_path / "a.jsonl", "06-claims", {"not-a-claim": "supported"})
    b = _write(tmp_path / "b.jsonl", "06-claims", {"not-a-claim": "supported"})
    with pytest.raises(ValueError, match=r"a.jsonl, line 1: unknown item id"):
        merge([a, b])


@pytest.mark.parametrize("files, match", [([], "at least 2 raters"), (["nope1", "nope2"], "not a file")])
def test_bad_arguments(tmp_path, files, match):
    with pytest.raises(ValueError, match=match):
        merge([tmp_path / f for f in files])


def test_one_rater_is_not_a_class(tmp_path):
    a = _write(tmp_path / "ana" / "x-set.jsonl", "x-set", {"x": "supported"})
    with pytest.raises(ValueError, match="at least 2 raters, got 1"):
        merge([a])


def _export(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_two_classes_exports_merge_with_a_learners_own_file_one_rater_per_learner(tmp_path, capsys):
    ls, _, reference = labelling.claims_set()
    items = list(ls.items[:12])
    line = {"set": "06-claims", "time": "2025-03-04T10:00:00+00:00"}
    a = _export(
        tmp_path / "a.jsonl",
        [
            {**line, "item": i, "label": reference[i], "learner": f"l-a{n}", "class": "A"}
            for n in range(2)
            for i in items
        ]  # fmt: skip
        + [{**line, "set": "07-answers", "item": "x", "label": "right", "learner": "l-a0", "class": "A"}],
    )
    b = _export(tmp_path / "b.jsonl", [{**line, "item": i, "label": reference[i], "learner": "l-b0", "class": "B"}
                                       for i in items])  # fmt: skip
    own = _write(tmp_path / "cy" / "06-claims.jsonl", "06-claims", {i: reference[i] for i in items[:6]})
    with pytest.raises(ValueError, match="mixes label sets"):
        merge([a, b])
    out = merge([a, b, own], tmp_path / "majority.jsonl", set_id="06-claims")
    assert sorted(out["raters"]) == ["cy", "l-a0", "l-a1", "l-b0"] and len(out["items"]) == 6
    printed = capsys.readouterr().out
    assert "Krippendorff's alpha (nominal) on every item with 2 ratings or more" in printed
    assert lb.read_labels(tmp_path / "majority.jsonl", ls) == {i: reference[i] for i in items}
