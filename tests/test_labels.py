"""labkit.data.labels: the learner's label store never loses a label and never reads a wrong one."""

import json
import subprocess
import sys
import time
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labkit.data import labels as lb

SET = lb.LabelSet("t-claims", ("supported", "unsupported", "contradicted"), tuple(f"c{i}" for i in range(20)))


def test_add_relabel_undo_keep_the_newest_and_the_history(tmp_path):
    store = lb.LabelStore(SET, tmp_path / "t.jsonl")
    store.add("c1", "supported")
    store.add("c2", "unsupported")
    store.add("c1", "contradicted")
    store.undo("c2")
    assert store.labels() == {"c1": "contradicted"}
    assert [(r["item"], r["label"]) for r in store.history()] == [
        ("c1", "supported"), ("c2", "unsupported"), ("c1", "contradicted"), ("c2", None)
    ]  # fmt: skip
    assert len(store) == 1


def test_the_default_store_lives_in_the_user_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("LABKIT_CACHE", str(tmp_path / "cache"))
    store = lb.LabelStore(SET)
    store.add("c0", "supported")
    assert store.path == tmp_path / "cache" / "labels" / "t-claims.jsonl"
    assert lb.default_path("t-claims") == store.path


def test_a_torn_last_line_is_dropped_with_a_warning_and_repaired_on_the_next_write(tmp_path):
    path = tmp_path / "t.jsonl"
    store = lb.LabelStore(SET, path)
    store.add("c1", "supported")
    with open(path, "ab") as fh:
        fh.write(b'{"set": "t-claims", "item": "c2", "la')  # the kernel died here
    with pytest.warns(UserWarning, match="incomplete"):
        assert store.labels() == {"c1": "supported"}
    with pytest.warns(UserWarning, match="dropped an incomplete last line"):
        store.add("c3", "unsupported")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert store.labels() == {"c1": "supported", "c3": "unsupported"}


@pytest.mark.parametrize(
    "line, match",
    [
        ('{"set": "other", "item": "c1", "label": "supported"}', "another label set"),
        ('{"set": "t-claims", "item": "zz", "label": "supported"}', "unknown item id 'zz'"),
        ('{"set": "t-claims", "item": "c1", "label": "maybe"}', "'maybe' is not one of"),
        ('{"set": "t-claims", "item": "c1"}', "needs"),
        ("not json at all", "not JSON"),
    ],
)
def test_a_bad_line_names_the_file_and_the_line(tmp_path, line, match):
    path = tmp_path / "t.jsonl"
    good = json.dumps({"set": "t-claims", "item": "c0", "label": "supported"})
    path.write_text(f"{good}\n{line}\n{good}\n", encoding="utf-8")
    with pytest.raises(ValueError, match=match) as err:
        lb.read_labels(path, SET)
    assert f"{path}, line 2" in str(err.value)


def test_empty_and_missing_files_hold_no_labels_and_a_bom_or_crlf_is_read(tmp_path):
    (tmp_path / "empty.jsonl").write_text("")
    assert lb.read_labels(tmp_path / "empty.jsonl", SET) == {}
    assert lb.read_labels(tmp_path / "missing.jsonl", SET) == {}
    line = json.dumps({"set": "t-claims", "item": "c4", "label": "unsupported"})
    (tmp_path / "bom.jsonl").write_bytes(b"\xef\xbb\xbf" + line.encode() + b"\r\n")
    assert lb.read_labels(tmp_path / "bom.jsonl", SET) == {"c4": "unsupported"}
    with pytest.raises(ValueError, match="is a folder"):
        lb.read_labels(tmp_path, SET)


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: lb.LabelSet("a b", ("x", "y"), ("i",)), "names a file"),
        (lambda: lb.LabelSet("s", ("supported", "same"), ("i",)), "one key"),
        (lambda: lb.LabelSet("s", ("x", "y"), ("i", "i")), "items"),
        (lambda: lb.LabelSet("s", ("x", "y"), ("i",), keys={"z": "x", "y": "y"}), "taken by undo"),
        (lambda: lb.LabelStore(SET, "/tmp").add("c1", "supported"), "folder"),
        (lambda: lb.LabelStore(SET, "/tmp/t-never.jsonl").add("c99", "supported"), "not in label set"),
        (lambda: lb.LabelStore(SET, "/tmp/t-never.jsonl").add("c1", "perhaps"), "label must be one of"),
    ],
)
def test_bad_input_names_the_argument(make, match):
    with pytest.raises(ValueError, match=match):
        make()


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(SET.items[:5]), st.sampled_from([*SET.labels, None])), max_size=30))
def test_the_newest_line_wins_for_any_sequence_of_labels_and_undos(tmp_path_factory, ops):
    store = lb.LabelStore(SET, tmp_path_factory.mktemp("h") / "t.jsonl")
    expected = {}
    for item, label in ops:
        if label is None:
            store.undo(item)
            expected.pop(item, None)
        else:
            store.add(item, label)
            expected[item] = label
    assert store.labels() == expected


WRITER = """
import sys, time
from pathlib import Path
from labkit.data import labels as lb
while not Path(sys.argv[1] + ".go").exists():  # both writers start together
    time.sleep(0.005)
s = lb.LabelSet("t-claims", ("supported", "unsupported", "contradicted"), tuple(f"c{i}" for i in range(20)))
store = lb.LabelStore(s, sys.argv[1], rater=sys.argv[2])
for n in range(int(sys.argv[3])):
    store.add(f"c{n % 20}", s.labels[n % 3])
"""


def test_two_kernels_labelling_the_same_set_do_not_corrupt_the_file(tmp_path):
    path = tmp_path / "t.jsonl"
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), name, "300"]) for name in ("a", "b")]
    time.sleep(1.5)  # both have imported labkit and are waiting
    (tmp_path / "t.jsonl.go").touch()
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    rows = lb.history(path, SET)
    assert len(rows) == 600
    switches = sum(a["rater"] != b["rater"] for a, b in zip(rows, rows[1:], strict=False))
    assert switches > 10, "the two writers did not run at the same time, so this test proved nothing"
    assert sorted(r["rater"] for r in rows).count("a") == 300
    assert all(line.endswith("}") for line in path.read_text().splitlines())
