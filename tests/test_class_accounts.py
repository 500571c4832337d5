"""A class folder with real system accounts: three learners label ten claims of chapter 06 each, through the
labelling store and the class folder, as themselves; none can read, change, remove or list another's file; an
instructor in the instructors' group reads them all; and the instructor's figures equal statsmodels' Fleiss kappa
and the krippendorff package's alpha on the same labels.

Needs root (to create accounts: useradd, removed in a finally even when the test fails) and a Python that the new
accounts can run; skipped, with the reason, otherwise."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

from labkit.data import class_folder, class_read
from labkit.measures import stats
from labkit.studies import labelling

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0 or not (shutil.which("useradd") and shutil.which("runuser")),
    reason="creating system accounts needs root, useradd and runuser (a CI container runs as root; this one does not)",
)

LEARNER = """
import json, sys
from labkit.data import class_folder
from labkit.data.labels import LabelSet, LabelStore
spec, give = json.loads(sys.argv[2]), json.loads(sys.argv[3])
label_set = LabelSet(spec["id"], tuple(spec["labels"]), tuple(spec["items"]), keys=spec["keys"])
store = LabelStore(label_set, sys.argv[4], rater="me")  # the learner's own store
drop = class_folder.LabelDrop(class_folder.open_class(sys.argv[1]), label_set)
drop.opt_in(store.labels())  # the box ticked before the first label
for item, label in give.items():  # what the widget does for each key: own store first, then the class folder
    store.add(item, label)
    drop.add(item, label)
print(json.dumps({"learner": drop.learner, "file": drop.path.name, "own": len(store.labels())}))
"""

PROBE = """
import json, os, sys
from labkit.data import class_folder
from labkit.data.labels import LabelSet
drop_dir, others = sys.argv[1], json.loads(sys.argv[2])
spec = json.loads(sys.argv[3])
label_set = LabelSet(spec["id"], tuple(spec["labels"]), tuple(spec["items"]), keys=spec["keys"])
folder = class_folder.open_class(sys.argv[4])

def attempt(f):
    try:
        f()
    except (PermissionError, ValueError) as err:
        return "refused"
    return "allowed"

out = {}
for learner in others:
    path = os.path.join(drop_dir, learner + ".jsonl")
    out[learner] = {
        "read": attempt(lambda: open(path, "rb").read()),
        "append": attempt(lambda: open(path, "ab").write(b"{}\\n")),
        "truncate": attempt(lambda: open(path, "r+b").truncate(0)),
        "remove": attempt(lambda: os.unlink(path)),
        "rename": attempt(lambda: os.rename(path, path + ".x")),
        "chmod": attempt(lambda: os.chmod(path, 0o666)),
        "write as them": attempt(lambda: class_folder.LabelDrop(folder, label_set, learner=learner)),
    }
out["list the drop folder"] = attempt(lambda: os.listdir(drop_dir))
print(json.dumps(out))
"""

INSTRUCTOR = """
import json, sys
from labkit.data import class_read
from labkit.data.labels import LabelSet
spec = json.loads(sys.argv[2])
label_set = LabelSet(spec["id"], tuple(spec["labels"]), tuple(spec["items"]), keys=spec["keys"])
got = class_read.read_class(label_set, sys.argv[1])
print(json.dumps({"ratings": got.ratings, "skipped": [str(s) for s in got.skipped]}))
"""


def _run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, **kw)


def _as(user: str, python: str, pythonpath: str, code: str, *argv: str) -> dict:
    env = ["env", f"PYTHONPATH={pythonpath}", "PYTHONDONTWRITEBYTECODE=1", "PYTHONNOUSERSITE=1"]
    run = _run(["runuser", "-u", user, "--", *env, python, "-c", code, *argv], cwd="/")
    assert run.returncode == 0, f"as {user}: {run.stderr[-2000:]}"
    return json.loads(run.stdout)


def _python_for(user: str) -> str | None:
    """A Python 3.11+ the account can run: the workbook's venv, else the system's (labkit's class folder needs
    nothing beyond the standard library)."""
    for exe in (str(ROOT / ".venv" / "bin" / "python"), sys.executable, "/usr/bin/python3", "/usr/local/bin/python3"):
        if not Path(exe).exists():
            continue
        check = _run(["runuser", "-u", user, "--", exe, "-c", "import sys; assert sys.version_info >= (3, 11)"])
        if check.returncode == 0:
            return exe
    return None


def test_three_accounts_label_06_into_a_class_folder_and_cannot_reach_each_other():
    tag = "lk" + secrets.token_hex(3)
    learners, instructor, group = [f"{tag}l{i}" for i in range(3)], f"{tag}t", f"{tag}i"
    base = Path(tempfile.mkdtemp(prefix="labkit-accounts-"))
    made_users: list[str] = []
    made_group = False
    try:
        os.chmod(base, 0o755)
        assert _run(["groupadd", group]).returncode == 0
        made_group = True
        for name, extra in [*((n, []) for n in learners), (instructor, ["-G", group])]:
            run = _run(["useradd", "--no-create-home", "--home-dir", "/nonexistent", "--shell", "/bin/sh", "-U",
                        *extra, name])  # fmt: skip
            assert run.returncode == 0, run.stderr
            made_users.append(name)
        python = _python_for(learners[0])
        if python is None:
            pytest.skip("no Python 3.11+ that the new accounts can run (the venv's interpreter is not readable)")
        if _run(["runuser", "-u", learners[0], "--", "test", "-r", str(ROOT / "labkit" / "__init__.py")]).returncode:
            shutil.copytree(ROOT / "labkit", base / "src" / "labkit", ignore=shutil.ignore_patterns("__pycache__"))
            subprocess.run(["chmod", "-R", "a+rX", str(base / "src")], check=True)
            pythonpath = str(base / "src")
        else:
            pythonpath = str(ROOT)

        folder = class_folder.init_class(base / "class", ["06-claims"], group=group, title="accounts test")
        label_set, _, reference = labelling.claims_set()
        spec = json.dumps({"id": label_set.id, "labels": label_set.labels, "items": label_set.items,
                           "keys": label_set.keys})  # fmt: skip
        items = label_set.items[:10]
        others = {"supported": "unsupported", "unsupported": "contradicted", "contradicted": "supported"}
        given = {}
        for n, user in enumerate(learners):  # learner n flips the reference on the first n*2 of the ten items
            given[user] = {i: (others[reference[i]] if k < 2 * n else reference[i]) for k, i in enumerate(items)}
            home = base / f"home-{user}"
            home.mkdir()
            shutil.chown(home, user, user)
            done = _as(user, python, pythonpath, LEARNER, str(folder.path), spec, json.dumps(given[user]),
                       str(home / "06-claims.jsonl"))  # fmt: skip
            assert done["own"] == 10 and done["learner"] == folder.learner_of(int(_run(["id", "-u", user]).stdout))
            given[done["learner"]] = given.pop(user)
        drop = folder.drop("labels", "06-claims")
        files = sorted(drop.iterdir())
        assert len(files) == 3
        for path in files:
            info = path.stat()
            assert (
                oct(info.st_mode & 0o7777) == oct(class_folder.FILE_MODE) and info.st_gid == folder.path.stat().st_gid
            )
            assert (
                class_folder.account_name(info.st_uid) in learners
                and class_folder.account_name(info.st_uid) not in path.name
            )

        ids = [p.stem for p in files]
        for user in learners:
            mine = folder.learner_of(int(_run(["id", "-u", user]).stdout))
            probe = _as(user, python, pythonpath, PROBE, str(drop), json.dumps([i for i in ids if i != mine]), spec,
                        str(folder.path))  # fmt: skip
            assert probe.pop("list the drop folder") == "refused"
            for other, tried in probe.items():
                assert set(tried.values()) == {"refused"}, f"{user} on {other}'s file: {tried}"
        assert sorted(p.stem for p in drop.iterdir()) == ids  # nothing removed, renamed or added

        seen = _as(instructor, python, pythonpath, INSTRUCTOR, str(folder.path), spec)
        assert seen["skipped"] == [] and seen["ratings"] == given  # the instructors' group reads every file

        got = class_read.read_class(label_set, folder)
        assert got.skipped == [] and got.ratings == given and len(got.learners) == 3
        fleiss = stats.fleiss_report(got.ratings, labels=label_set.labels)
        alpha = stats.alpha_report(got.ratings, labels=label_set.labels)
        assert fleiss["raters_per_item"] == 3 and fleiss["items"] == 10 and alpha["items"] == 10

        import krippendorff
        from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

        code = {lab: k for k, lab in enumerate(label_set.labels)}
        data = np.array([[code[got.ratings[r][i]] for i in items] for r in got.learners])
        table, _ = aggregate_raters(data.T, n_cat=len(label_set.labels))
        assert fleiss["value"] == pytest.approx(fleiss_kappa(table), abs=1e-12)
        ref = krippendorff.alpha(reliability_data=data.astype(float), level_of_measurement="nominal")
        assert alpha["value"] == pytest.approx(ref, abs=1e-12)
    finally:
        for name in made_users:
            _run(["userdel", name])
        if made_group:
            _run(["groupdel", group])
        shutil.rmtree(base, ignore_errors=True)
