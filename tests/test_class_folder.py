"""The class folder (labkit.data.class_folder, class_read): laid out like nbgrader's exchange, opt-in, pseudonymous,
appends as safe as the learner's own store, and a reader that skips and says whatever it cannot trust.

The test with real system accounts is tests/test_class_accounts.py."""

import json
import os
import signal
import stat
import subprocess
import sys
import time
import warnings

import pytest

from labkit.commands import cli
from labkit.data import class_folder, class_read
from labkit.data import labels as lb
from labkit.exercises import check
from labkit.ui import widgets

SET = lb.LabelSet("t-claims", ("supported", "unsupported", "contradicted"), tuple(f"c{i}" for i in range(20)))
ROOT_USER = os.getuid() == 0


@pytest.fixture
def folder(tmp_path):
    return class_folder.init_class(tmp_path / "class", [SET.id], title="test class")


def _mode(path):
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_init_makes_the_exchange_layout_and_a_second_run_keeps_the_salt(tmp_path, folder):
    assert _mode(folder.path) == class_folder.ROOT_MODE == 0o2751 and _mode(folder.path / "labels") == 0o2751
    assert (
        _mode(folder.drop("labels", SET.id)) == class_folder.DROP_MODE == 0o3753
        and _mode(folder.drop("progress")) == 0o3753
    )
    assert _mode(folder.path / "class.json") == 0o644 and "salt" not in repr(folder)
    again = class_folder.init_class(folder.path, [SET.id, "t-more"])
    assert again.salt == folder.salt and again.title == "test class" and again.drop("labels", "t-more").is_dir()
    assert class_read.check_class(again) == [] or all("primary group" in p for p in class_read.check_class(again))
    with pytest.raises(ValueError, match="never a path"):
        class_folder.init_class(tmp_path / "x", ["../evil"])
    with pytest.raises(ValueError, match="names must be one of"):
        class_folder.init_class(tmp_path / "x", [SET.id], names="real names")
    with pytest.raises(FileNotFoundError, match="not a class folder"):
        class_folder.open_class(tmp_path)


def test_no_class_folder_is_none_and_an_empty_setting_is_an_error(monkeypatch):
    monkeypatch.delenv(class_folder.ENV, raising=False)
    assert class_folder.class_dir() is None and class_folder.open_class() is None
    monkeypatch.setenv(class_folder.ENV, " ")
    with pytest.raises(ValueError, match="set but empty"):
        class_folder.class_dir()


def test_the_learner_id_is_a_pseudonym_unless_the_instructor_asks_for_names(tmp_path, folder):
    me = class_folder.account_name(os.getuid())
    pseudonym = folder.me()
    assert pseudonym.startswith("l-") and len(pseudonym) == 12 and me not in pseudonym
    assert folder.learner_of(os.getuid()) == pseudonym  # stable
    other = class_folder.init_class(tmp_path / "other", [SET.id])
    assert other.me() != pseudonym  # another class, another salt
    named = class_folder.init_class(tmp_path / "named", [SET.id], names="accounts")
    assert named.me() == me


def test_sharing_is_opt_in_owner_only_and_withdrawing_removes_the_file(folder):
    drop = class_folder.LabelDrop(folder, SET)
    assert not drop.opted_in and drop.add("c1", "supported") is False and not drop.path.exists()
    old = os.umask(0)  # a careless umask must not open the file to others
    try:
        assert drop.opt_in({"c3": "unsupported", "c1": "supported"}) == 2
    finally:
        os.umask(old)
    assert drop.opted_in and _mode(drop.path) == class_folder.FILE_MODE == 0o640
    assert drop.path.stat().st_gid == folder.drop("labels", SET.id).stat().st_gid  # the instructors' group
    assert drop.add("c2", "contradicted") and drop.undo("c3")
    lines = [json.loads(x) for x in drop.path.read_text().splitlines()]
    assert [(r["item"], r["label"]) for r in lines] == [("c1", "supported"), ("c3", "unsupported"),
                                                         ("c2", "contradicted"), ("c3", None)]  # fmt: skip
    assert {r["learner"] for r in lines} == {folder.me()} and all("T" in r["time"] for r in lines)
    got = class_read.read_class(SET, folder)
    assert got.ratings == {folder.me(): {"c1": "supported", "c2": "contradicted"}} and got.skipped == []
    assert [r["item"] for r in got.rows] == ["c1", "c2"]
    with pytest.raises(ValueError, match="not in label set"):
        drop.add("zz", "supported")
    with pytest.raises(ValueError, match="label must be one of"):
        drop.add("c1", "maybe")
    assert drop.withdraw() and not drop.path.exists() and not drop.withdraw()
    empty = class_folder.LabelDrop(folder, SET)
    assert empty.opt_in({}) == 0 and empty.opted_in and empty.path.read_text() == ""


def test_a_learner_writes_only_under_their_own_id(tmp_path, folder):
    with pytest.raises(ValueError, match="only under their own id"):
        class_folder.LabelDrop(folder, SET, learner="sim-01")
    with pytest.raises(ValueError, match="only under their own id"):
        class_folder.LabelDrop(folder, SET, learner="../x")
    simulated = class_folder.init_class(tmp_path / "sim", [SET.id], simulated=True)
    with pytest.raises(ValueError, match="never a path"):
        class_folder.LabelDrop(simulated, SET, learner="../x")
    assert class_folder.LabelDrop(simulated, SET, learner="sim-01").path.name == "sim-01.jsonl"
    missing = class_folder.LabelDrop(folder, lb.LabelSet("t-other", ("a", "c"), ("i",)))
    with pytest.raises(FileNotFoundError, match="no drop folder labels/t-other"):
        missing.opt_in({"i": "a"})


def test_the_writer_refuses_a_symlink_and_a_file_another_account_owns(tmp_path, folder):
    drop = class_folder.LabelDrop(folder, SET)
    target = tmp_path / "elsewhere.jsonl"
    target.write_text("")
    drop.path.symlink_to(target)
    with pytest.raises(PermissionError, match="symlink"):
        drop.opt_in({"c1": "supported"})
    assert target.read_text() == "" and not drop.opted_in
    drop.path.unlink()
    if not ROOT_USER:
        pytest.skip("giving a file to another account needs root (the rest of this test ran)")
    drop.path.write_text("")
    os.chown(drop.path, 65534, -1)
    os.chmod(drop.path, 0o666)
    with pytest.raises(PermissionError, match="belongs to another account"):
        drop._write({"set": SET.id, "item": "c1", "label": "supported"})
    assert drop.path.read_text() == ""


def _line(**kw):
    row = {"set": SET.id, "item": "c0", "label": "supported", "learner": "sim-01", "time": "2025-03-04T10:00:00+00:00"}
    return json.dumps({**row, **kw})


GOOD = _line()


@pytest.mark.parametrize(
    "content, where, why",
    [
        (f"{GOOD}\n" + _line(item="c1")[:30], "sim-01.jsonl, line 2", "incomplete"),
        (f"{GOOD}\nnot json\n", "sim-01.jsonl, line 2", "not JSON"),
        (f'{GOOD}\n{{"set": "{SET.id}"}}\n', "sim-01.jsonl, line 2", "a foreign line"),
        (f"{GOOD}\n{_line(set='t-other')}\n", "sim-01.jsonl, line 2", "label set 't-other'"),
        (f"{GOOD}\n{_line(learner='sim-02')}\n", "sim-01.jsonl, line 2", "a line of learner 'sim-02'"),
        (f"{GOOD}\n{_line(learner='../x')}\n", "sim-01.jsonl, line 2", "'../x' is not an id"),
        (f"{GOOD}\n{_line(item='zz')}\n", "sim-01.jsonl, line 2", "unknown item 'zz'"),
        (f"{GOOD}\n{_line(label='maybe')}\n", "sim-01.jsonl, line 2", "'maybe' is not one of the set's labels"),
        (f"{GOOD}\n{_line(time=5)}\n", "sim-01.jsonl, line 2", "time must be text"),
    ],
)
def test_a_bad_line_is_skipped_with_its_file_line_and_why(tmp_path, content, where, why):
    sim = class_folder.init_class(tmp_path / "sim", [SET.id], simulated=True)
    path = sim.drop("labels", SET.id) / "sim-01.jsonl"
    path.write_text(content)
    os.chmod(path, 0o640)
    got = class_read.read_class(SET, sim)
    assert got.ratings == {"sim-01": {"c0": "supported"}}  # the good line is read
    assert [(s.where, why in s.why) for s in got.skipped] == [(f"labels/{SET.id}/{where}", True)], got.skipped
    assert str(got.skipped[0]).startswith("skipped labels/")


def test_a_bad_file_is_skipped_and_nothing_is_read_from_outside_the_class_folder(tmp_path):
    sim = class_folder.init_class(tmp_path / "sim", [SET.id], simulated=True)
    drop = sim.drop("labels", SET.id)
    outside = tmp_path / "outside.jsonl"
    outside.write_text(_line(learner="sim-09", label="contradicted") + "\n")
    (drop / "sim-09.jsonl").symlink_to(outside)
    (drop / "notes.txt").write_text(GOOD + "\n")
    (drop / "..hidden.jsonl").write_text(GOOD + "\n")
    (drop / "sim-03.jsonl").mkdir()
    loose = drop / "sim-04.jsonl"
    loose.write_text(_line(learner="sim-04") + "\n")
    os.chmod(loose, 0o666)
    got = class_read.read_class(SET, sim)
    assert got.ratings == {}
    why = {s.where.rsplit("/", 1)[1]: s.why for s in got.skipped}
    assert set(why) == {"sim-09.jsonl", "notes.txt", "..hidden.jsonl", "sim-03.jsonl", "sim-04.jsonl"}
    assert "nothing is read from outside" in why["sim-09.jsonl"] and "not a learner's file" in why["notes.txt"]
    assert "not a learner's file" in why["..hidden.jsonl"] and "not a regular file" in why["sim-03.jsonl"]
    assert "writable by other accounts" in why["sim-04.jsonl"]
    # a drop folder that is itself a symlink is not listed
    (tmp_path / "sim" / "labels" / "t-linked").symlink_to(tmp_path)
    linked = class_read.read_class(lb.LabelSet("t-linked", ("a", "c"), ("i",)), sim)
    assert linked.ratings == {} and "not a folder" in linked.skipped[0].why


@pytest.mark.skipif(not ROOT_USER, reason="a file owned by another account needs root to make")
def test_a_file_another_account_wrote_under_a_learners_id_is_skipped(tmp_path, folder):
    drop = class_folder.LabelDrop(folder, SET)
    drop.opt_in({"c0": "supported"})
    os.chown(drop.path, 65534, -1)  # now it is "nobody"'s file under root's pseudonym
    got = class_read.read_class(SET, folder)
    assert got.ratings == {} and "written by another account (uid 65534)" in got.skipped[0].why
    sim = class_folder.init_class(tmp_path / "sim", [SET.id], simulated=True)
    path = sim.drop("labels", SET.id) / "sim-01.jsonl"
    path.write_text(GOOD + "\n")
    os.chown(path, 65534, -1)
    assert "not by the account that simulated" in class_read.read_class(SET, sim).skipped[0].why


KILLED = """
import sys
from labkit.data import class_folder
from labkit.data.labels import LabelSet
s = LabelSet("t-claims", ("supported", "unsupported", "contradicted"), tuple(f"c{i}" for i in range(20)))
drop = class_folder.LabelDrop(class_folder.open_class(sys.argv[1]), s, learner=sys.argv[2])
drop.opt_in({})
print("ready", flush=True)
for n in range(int(sys.argv[3])):
    drop.add(f"c{n % 20}", s.labels[n % 3])
"""


def test_a_writer_killed_mid_write_loses_no_whole_label_and_the_next_append_repairs_it(tmp_path):
    sim = class_folder.init_class(tmp_path / "sim", [SET.id], simulated=True)
    proc = subprocess.Popen([sys.executable, "-c", KILLED, str(sim.path), "sim-01", "100000"], stdout=subprocess.PIPE)
    assert proc.stdout.readline().strip() == b"ready"
    time.sleep(1.0)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    path = sim.drop("labels", SET.id) / "sim-01.jsonl"
    whole = path.read_bytes().count(b"\n")
    assert whole > 10, "the writer was killed before it wrote anything: this test proved nothing"
    got = class_read.read_class(SET, sim)
    assert len(got.skipped) <= 1 and all("incomplete" in s.why for s in got.skipped)
    with open(path, "ab") as fh:  # make sure the repair path runs: a torn line, as a kill leaves one
        fh.write(b'{"set": "t-claims", "item": "c1", "la')
    with pytest.warns(UserWarning, match="dropped an incomplete last line"):
        class_folder.LabelDrop(sim, SET, learner="sim-01").add("c5", "unsupported")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        again = class_read.read_class(SET, sim)
    assert again.skipped == [] and again.ratings["sim-01"]["c5"] == "unsupported"
    assert path.read_bytes().count(b"\n") == whole + 1


def test_two_kernels_sharing_at_once_lose_nothing_and_tear_nothing(tmp_path):
    sim = class_folder.init_class(tmp_path / "sim", [SET.id], simulated=True)
    procs = [subprocess.Popen([sys.executable, "-c", KILLED, str(sim.path), "sim-01", "300"], stdout=subprocess.PIPE)
             for _ in range(2)]  # fmt: skip
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    lines = (sim.drop("labels", SET.id) / "sim-01.jsonl").read_text().splitlines()
    assert len(lines) == 600 and all(json.loads(x)["learner"] == "sim-01" for x in lines)
    assert class_read.read_class(SET, sim).skipped == []


def test_progress_is_opt_in_and_the_instructor_gets_one_table(tmp_path, folder, monkeypatch, capsys):
    monkeypatch.delenv(class_folder.ENV, raising=False)
    check.share_progress()
    assert "No class folder" in capsys.readouterr().out
    monkeypatch.setenv(class_folder.ENV, str(folder.path))
    check.exercise("3.1", 12345)
    assert "shared" not in capsys.readouterr().out  # not opted in yet
    check.share_progress()
    assert f"shared with the instructor (as learner {folder.me()})" in capsys.readouterr().out
    check.exercise("3.1", 12345)
    check.exercise("3.2", None)  # not answered: nothing to share
    assert "(shared with the instructor)" in capsys.readouterr().out
    rows, skipped = class_read.read_progress(folder, ["3.1", "3.2"])
    assert [(r["exercise"], r["verdict"]) for r in rows] == [("3.1", "not yet")] and skipped == []
    path = folder.drop("progress") / f"{folder.me()}.jsonl"
    with open(path, "a") as fh:
        fh.write(json.dumps({"exercise": "99.9", "verdict": "correct", "learner": folder.me(), "time": "t"}) + "\n")
        fh.write(json.dumps({"exercise": "3.1", "verdict": "great", "learner": folder.me(), "time": "t"}) + "\n")
        fh.write(json.dumps({"exercise": "3.2", "verdict": "correct", "learner": folder.me(), "time": "t"}) + "\n")
    rows, skipped = class_read.read_progress(folder, ["3.1", "3.2"])
    assert ["no exercise '99.9'" in skipped[0].why, "verdict 'great'" in skipped[1].why] == [True, True]
    table = class_read.progress_table(
        rows + [{"learner": "l-zz", "exercise": "3.1", "verdict": "correct"}], ["3.1", "3.2"]
    )
    assert table.loc[folder.me()].tolist() == ["not yet", "correct", 1] and table.loc["l-zz"].tolist() == [
        "correct",
        "",
        1,
    ]
    check.share_progress(False)
    assert "not shared any more" in capsys.readouterr().out and not path.exists()


def test_an_export_is_one_line_per_label_and_reads_back(tmp_path, folder):
    class_folder.LabelDrop(folder, SET).opt_in({"c0": "supported", "c1": "unsupported"})
    out = class_read.write_export(
        class_read.export_rows([class_read.read_class(SET, folder)]), tmp_path / "class.jsonl"
    )
    rows = class_read.read_export(out)
    assert [(r["item"], r["label"], r["learner"], r["class"]) for r in rows] == [
        ("c0", "supported", folder.me(), "test class"), ("c1", "unsupported", folder.me(), "test class")]  # fmt: skip
    assert set(class_read.EXPORT_KEYS) <= set(rows[0])
    out.write_text(out.read_text() + '{"set": "t-claims", "item": "c2"}\n')
    with pytest.raises(ValueError, match=r"class.jsonl, line 3: an export line needs"):
        class_read.read_export(out)


def test_check_class_says_what_would_let_a_learner_read_another(folder):
    drop = folder.drop("labels", SET.id)
    os.chmod(drop, 0o777)
    class_folder.LabelDrop(folder, SET).opt_in({"c0": "supported"})
    os.chmod(drop / f"{folder.me()}.jsonl", 0o644)
    problems = " | ".join(class_read.check_class(folder))
    assert "any account can list it" in problems and "not sticky" in problems and "readable or writable" in problems


def test_the_labeller_is_unchanged_without_a_class_folder(tmp_path, monkeypatch):
    monkeypatch.delenv(class_folder.ENV, raising=False)
    w = widgets.Labeller.at(SET, lambda i: i, tmp_path / "own.jsonl", target=3)
    assert w.share == "" and w.drop is None and not w.shared
    w.press("s")
    assert w.message == "saved: c0 = supported"
    w.set_sharing(True)
    assert "no class folder" in w.message and not w.shared


def test_the_labeller_shares_once_opted_in_and_says_so(tmp_path, folder, monkeypatch):
    monkeypatch.setenv(class_folder.ENV, str(folder.path))
    w = widgets.Labeller.at(SET, lambda i: i, tmp_path / "own.jsonl", target=3)
    assert w.share.startswith("share my labels with the instructor") and not w.shared
    w.press("s")
    drop = class_folder.LabelDrop(folder, SET)
    assert not drop.path.exists() and "shared" not in w.message
    w._on_message({"share": True})  # the box ticked in the browser
    assert w.shared and w.share.startswith("your labels are shared with the instructor")
    assert "1 label(s) sent" in w.message
    w.press("u")
    assert w.message.endswith("(shared with the instructor)")
    w.press("z")
    assert class_read.read_class(SET, folder).ratings == {folder.me(): {"c0": "supported"}}
    again = widgets.Labeller.at(SET, lambda i: i, tmp_path / "own.jsonl", target=3)
    assert again.shared  # opted in is remembered: the file is there
    w.set_sharing(False)
    assert not w.shared and not drop.path.exists() and "removed" in w.message
    assert lb.read_labels(tmp_path / "own.jsonl", SET) == {"c0": "supported"}  # the learner's own store keeps all
    monkeypatch.setenv(class_folder.ENV, str(tmp_path / "not-a-class"))
    broken = widgets.Labeller.at(SET, lambda i: i, tmp_path / "own.jsonl", target=3)
    assert "cannot be used" in broken.share and broken.drop is None


def test_the_commands_make_a_class_folder_and_export_it(tmp_path, capsys, monkeypatch):
    assert cli.main(["class", "init", str(tmp_path / "c"), "--title", "spring"]) == 0
    assert "class folder" in capsys.readouterr().out
    made = class_folder.open_class(tmp_path / "c")
    assert made.title == "spring" and made.drop("labels", "06-claims").is_dir()
    assert cli.main(["class", "check", str(tmp_path / "c")]) == 0
    monkeypatch.setenv(class_folder.ENV, str(tmp_path / "c"))
    assert cli.main(["labels", "export", "--out", str(tmp_path / "e.jsonl"), "--set", "02-realism"]) == 0
    assert "02-realism: 0 learners" in capsys.readouterr().out and (tmp_path / "e.jsonl").read_text() == ""
    assert cli.main(["labels", "export", "--out", str(tmp_path / "e.jsonl"), "--set", "nope"]) == 2


def test_a_class_folder_that_cannot_be_used_never_breaks_a_check(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(class_folder.ENV, str(tmp_path / "missing"))
    check.exercise("3.1", 12345)
    out = capsys.readouterr().out
    assert out.startswith("Exercise 3.1: not yet") and "shared" not in out
    with pytest.raises(FileNotFoundError, match="not a class folder"):
        check.share_progress()
