"""The classroom hub (classroom/, `make classroom`): a real JupyterHub for a class, and the way onto an existing hub.

Two kinds of test:

- unmarked, run by ``make unit`` anywhere: the roster's rules, the address rule (a lab-network address needs TLS
  or the loud insecure flag), the hub's configuration as JupyterHub would load it (the allow-list is the roster,
  the instructors the only admins, secrets in the state folder), the pins, and the way onto an existing hub (the
  published tree's nbgitpuller link and its environment's import check) and deploy/'s files;
- marked ``classroom``: a real JupyterHub on loopback with an instructor and three learners as system accounts,
  headless Chromium logging in as each learner, labelling ten items of 06 in their own working copy and sharing
  them to the class folder, then every isolation check as those accounts. They need root and the installed hub
  (``make test-classroom`` installs it and sets ``LABKIT_CLASSROOM_TESTS=1``); elsewhere they are skipped, with
  the reason. Accounts, homes, the class folder and the hub are removed afterwards, also when a test fails.
"""

from __future__ import annotations

import csv
import json
import os
import secrets
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "classroom"))
sys.path.insert(0, str(ROOT / "tests" / "browser"))

import classroom as cr  # noqa: E402  (classroom/classroom.py)


def write_roster(path: Path, rows: list[tuple[str, str]]) -> Path:
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["username", "role"])
        w.writerows(rows)
    return path


# ---------------------------------------------------------------- the roster


def test_the_roster_gives_learners_and_instructors(tmp_path):
    r = cr.read_roster(write_roster(tmp_path / "r.csv", [("teach", "instructor"), ("ana", "learner"),
                                                         ("bo", "Learner")]))  # fmt: skip
    assert r.instructors == ("teach",) and r.learners == ("ana", "bo")
    assert r.learner_group == "labkit-learners" and r.instructor_group == "labkit-instructors"
    example = cr.read_roster(ROOT / "classroom" / "roster.example.csv")
    assert example.instructors and len(example.learners) == 3


@pytest.mark.parametrize(
    ("rows", "said"),
    [
        ([("ana", "learner")], "no instructor"),
        ([("teach", "instructor")], "no learner"),  # FirstUse would otherwise have an allow-list of one
        ([("teach", "instructor"), ("ana", "learner"), ("ana", "learner")], "listed twice"),
        ([("teach", "instructor"), ("../x", "learner")], "must be 2-32 characters"),
        ([("teach", "instructor"), ("Ana", "learner")], "must be 2-32 characters"),
        ([("teach", "instructor"), ("root", "learner")], "reserved"),
        ([("teach", "instructor"), ("ana", "admin")], "role 'admin'"),
    ],
)
def test_a_bad_roster_is_refused_with_the_row_and_the_fix(tmp_path, rows, said):
    with pytest.raises(cr.ClassroomError, match=said):
        cr.read_roster(write_roster(tmp_path / "r.csv", rows))


def test_a_roster_without_its_header_or_file_is_refused(tmp_path):
    (tmp_path / "r.csv").write_text("ana,learner\n")
    with pytest.raises(cr.ClassroomError, match="header"):
        cr.read_roster(tmp_path / "r.csv")
    with pytest.raises(cr.ClassroomError, match="no roster"):
        cr.read_roster(tmp_path / "none.csv")


# ---------------------------------------------------------------- the address rule


@pytest.mark.parametrize("ip", ["127.0.0.1", "127.0.0.2", "::1", "localhost"])
def test_loopback_needs_nothing(ip):
    assert cr.address_rule(ip, None, None, False) == "loopback"


@pytest.mark.parametrize("ip", ["0.0.0.0", "10.1.2.3", "192.168.0.7", "::", "lab-server.example"])
def test_a_lab_network_address_needs_tls_or_the_insecure_flag(ip, tmp_path):
    with pytest.raises(cr.ClassroomError, match="without TLS"):
        cr.address_rule(ip, None, None, False)
    assert cr.address_rule(ip, None, None, True) == "insecure"
    cert, key = tmp_path / "c.pem", tmp_path / "k.pem"
    cert.write_text("x")
    key.write_text("x")
    assert cr.address_rule(ip, str(cert), str(key), False) == "tls"
    with pytest.raises(cr.ClassroomError, match="both"):
        cr.address_rule(ip, str(cert), None, False)
    with pytest.raises(cr.ClassroomError, match="no file"):
        cr.address_rule(ip, str(cert), str(tmp_path / "missing.pem"), False)


def test_the_command_refuses_a_lab_address_and_prints_the_insecure_flag_loudly():
    """``classroom.py check`` applies the same rule as ``start`` without starting anything (no address is bound)."""
    tool = [sys.executable, str(ROOT / "classroom" / "classroom.py"), "check"]
    refused = subprocess.run([*tool, "--ip", "10.20.30.40"], capture_output=True, text=True)
    assert refused.returncode == 2 and "refusing to listen on 10.20.30.40 without TLS" in refused.stderr
    loud = subprocess.run([*tool, "--ip", "10.20.30.40", "--insecure-lab-network"], capture_output=True, text=True)
    assert loud.returncode == 0 and "INSECURE" in loud.stderr and "clear text" in loud.stderr
    assert subprocess.run([*tool], capture_output=True, text=True).stdout.strip().endswith("(loopback)")


# ---------------------------------------------------------------- the hub's configuration, loaded as JupyterHub would


def load_config(tmp_path: Path, **settings) -> SimpleNamespace:
    """Run classroom/jupyterhub_config.py on ``settings`` with traitlets' Config as ``c`` (JupyterHub's loader
    does the same), in a state folder of the caller's own."""
    from traitlets.config import Config

    state = tmp_path / "state"
    state.mkdir(mode=0o700, exist_ok=True)
    (state / "proxy_token").write_text("t" * 64)
    roster = write_roster(tmp_path / "r.csv", [("teach", "instructor"), ("ana", "learner"), ("bo", "learner")])
    s = {**cr.HubSettings(roster=str(roster), class_id="labkit", state=str(state), class_dir="/srv/x").__dict__,
         **settings}  # fmt: skip
    (state / "settings.json").write_text(json.dumps(s))
    c = Config()
    env = dict(os.environ, LABKIT_HUB_SETTINGS=str(state / "settings.json"))
    path = ROOT / "classroom" / "jupyterhub_config.py"
    old = os.environ.copy()
    os.environ.update(env)
    try:
        exec(compile(path.read_text(), str(path), "exec"), {"c": c, "__file__": str(path)})
    finally:
        os.environ.clear()
        os.environ.update(old)
    return SimpleNamespace(c=c, state=state)


def test_the_hub_config_allows_the_roster_only_and_the_instructor_is_the_only_admin(tmp_path):
    got = load_config(tmp_path)
    c, state = got.c, got.state
    assert c.Authenticator.allowed_users == {"teach", "ana", "bo"}
    assert c.Authenticator.allow_all is False
    assert c.Authenticator.admin_users == {"teach"}
    assert c.FirstUseAuthenticator.create_users is False
    assert c.JupyterHub.bind_url == "http://127.0.0.1:8000"
    assert c.JupyterHub.hub_ip == "127.0.0.1"
    assert c.JupyterHub.db_url == f"sqlite:///{state / 'jupyterhub.sqlite'}"
    assert Path(c.JupyterHub.cookie_secret_file).parent == state
    assert Path(c.FirstUseAuthenticator.dbm_path).parent == state
    assert c.ConfigurableHTTPProxy.auth_token == "t" * 64
    assert c.ConfigurableHTTPProxy.command == [str(ROOT / "node_modules" / ".bin" / "configurable-http-proxy")]
    env = c.Spawner.environment
    assert env["LABKIT_CLASS_DIR"] == "/srv/x" and env["PATH"].startswith("/opt/labkit-class/venv/bin:")
    assert "PATH" not in c.Spawner.env_keep, "the hub's PATH (root's) must not reach the learners"
    assert c.Spawner.cmd == ["/opt/labkit-class/venv/bin/jupyterhub-singleuser"]
    assert c.Spawner.mem_limit == "2G"
    culler = c.JupyterHub.services[0]
    assert culler["name"] == "idle-culler" and "--timeout=3600" in culler["command"]
    assert c.JupyterHub.load_roles[0]["scopes"] == ["list:users", "read:users:activity", "read:servers",
                                                    "delete:servers"]  # fmt: skip


def test_the_hub_config_refuses_a_lab_address_without_tls_and_an_open_state_folder(tmp_path):
    with pytest.raises(cr.ClassroomError, match="without TLS"):
        load_config(tmp_path, ip="10.0.0.9")
    got = load_config(tmp_path, ip="10.0.0.9", insecure_lab_network=True)
    assert got.c.JupyterHub.bind_url == "http://10.0.0.9:8000"
    os.chmod(tmp_path / "state", 0o755)
    with pytest.raises(SystemExit, match="root's alone"):
        load_config(tmp_path)


# ---------------------------------------------------------------- pins and ignores


def pins(path: Path) -> dict[str, str]:
    out = {}
    for line in path.read_text().splitlines():
        line = line.split("#")[0].strip()
        if line and not line.startswith("-"):
            name, _, version = line.partition("==")
            assert version, f"{path.name}: {line!r} is not pinned with =="
            out[name.lower().replace("_", "-")] = version
    return out


def test_the_hub_and_the_proxy_are_pinned_and_agree_with_the_learners_environment():
    hub = pins(ROOT / "requirements-hub.txt")
    learner = pins(ROOT / "classroom" / "requirements-learner.txt")
    assert hub["jupyterhub"] == learner["jupyterhub"], "the single-user server must match the hub's version"
    assert {"jupyterhub-firstuseauthenticator", "jupyterhub-idle-culler"} <= set(hub)
    package = json.loads((ROOT / "package.json").read_text())
    lock = json.loads((ROOT / "package-lock.json").read_text())
    want = package["dependencies"]["configurable-http-proxy"]
    assert want[0].isdigit(), "pin the proxy to one version"
    assert lock["packages"]["node_modules/configurable-http-proxy"]["version"] == want


def test_the_hubs_secrets_and_environments_are_ignored_by_git():
    paths = [".venv-hub/bin/python", "node_modules/x", ".classroom/cookie_secret", ".classroom/jupyterhub.sqlite"]
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("no git checkout")
    out = subprocess.run(["git", "check-ignore", *paths], cwd=ROOT, capture_output=True, text=True).stdout.split()
    assert out == paths


# ---------------------------------------------------------------- a real hub (root)

CLASSROOM_TESTS = os.environ.get("LABKIT_CLASSROOM_TESTS") == "1"
KEYS = {"a": "susssucsss", "b": "uusucsssus", "c": "ccsussuuss"}  # ten labels each, different per learner
PROBE = (
    "import os, pathlib, resource\n"
    "d = pathlib.Path(os.environ['LABKIT_CLASS_DIR'])\n"
    "print('CLASS_DIR', d)\n"
    "print('UMASK', oct(os.umask(0o077)))\n"
    "print('MEM_LIMIT', os.environ.get('MEM_LIMIT'))\n"
    "print('CGROUP', [x for x in open('/proc/self/cgroup').read().split() if ':memory:' in x])\n"
    "p = pathlib.Path.home() / 'workbook' / 'saved-by-me.txt'\n"
    "p.write_text('mine')\n"
    "print('SAVED', oct(p.stat().st_mode & 0o777))\n"
)


def classroom_skip_reason() -> str | None:
    if not CLASSROOM_TESTS:
        return ("the classroom tests create system accounts and start a hub: `make test-classroom` runs them "
                "(as root; it sets LABKIT_CLASSROOM_TESTS=1)")  # fmt: skip
    if os.geteuid() != 0:
        return "the classroom tests need root (they create system accounts and switch to them)"
    for p in (
        cr.HUB_VENV / "bin" / "jupyterhub",
        cr.PROXY,
        cr.DEFAULT_PREFIX / "venv" / "bin" / "jupyterhub-singleuser",
    ):
        if not p.exists():
            return f"the classroom is not installed ({p} missing): `make classroom-install`"
    return None


def as_user(user: str, *argv: str) -> subprocess.CompletedProcess:
    return cr.as_account(user, list(argv))


class HubClient:
    """A browser-less session at the hub: form login (the ``_xsrf`` cookie posted back), then API calls."""

    def __init__(self, url: str):
        import http.cookiejar

        self.url = url
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar), NoRedirect())

    def xsrf(self) -> str:
        return next((c.value for c in self.jar if c.name == "_xsrf"), "")

    def request(self, method: str, path: str, data: bytes | None = None, headers: dict | None = None):
        url = path if path.startswith("http") else self.url + path
        req = urllib.request.Request(
            url, data=data, method=method, headers={"X-XSRFToken": self.xsrf(), **(headers or {})}
        )
        try:
            with self.opener.open(req, timeout=60) as r:
                return r.status, r.read().decode(errors="replace"), dict(r.headers)
        except urllib.error.HTTPError as err:
            return err.code, err.read().decode(errors="replace"), dict(err.headers)

    def login(self, user: str, password: str) -> int:
        self.request("GET", "/hub/login")
        body = urllib.parse.urlencode({"username": user, "password": password, "_xsrf": self.xsrf()}).encode()
        status, _, headers = self.request("POST", "/hub/login?next=", body,
                                          {"Content-Type": "application/x-www-form-urlencoded"})  # fmt: skip
        return status

    def api(self, method: str, path: str, body: object | None = None):
        data = json.dumps(body).encode() if body is not None else None
        status, text, _ = self.request(method, "/hub/api" + path, data, {"Content-Type": "application/json"})
        try:
            return status, json.loads(text) if text else None
        except ValueError:
            return status, text


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def stale_test_accounts() -> list[str]:
    """Accounts left by an earlier run of these tests that was killed before its clean-up (class ids ``lkt…``)."""
    import pwd

    return [a.pw_name for a in pwd.getpwall() if a.pw_gecos.startswith(f"{cr.MARK}lkt")]


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    """A hub on loopback: instructor ``<id>-t`` and learners ``<id>-a``, ``-b``, ``-c``. Removed afterwards."""
    reason = classroom_skip_reason()
    if reason:
        pytest.skip(reason)
    import pwd

    for name in stale_test_accounts():
        class_id = pwd.getpwnam(name).pw_gecos.removeprefix(cr.MARK)
        cr.remove_users(cr.Roster((name,), (name,), class_id), kill=True, purge_class_dir=True)
    class_id = "lkt" + secrets.token_hex(3)
    tmp = tmp_path_factory.mktemp("classroom")
    os.chmod(tmp, 0o700)
    names = {k: f"{class_id}-{k}" for k in ("t", "a", "b", "c")}
    roster_path = write_roster(tmp / "roster.csv", [(names["t"], "instructor")] +
                               [(names[k], "learner") for k in "abc"])  # fmt: skip
    roster = cr.read_roster(roster_path, class_id)
    class_dir = Path("/srv/labkit-class") / class_id
    state = tmp / "state"
    port = cr.free_port()
    timings = {}
    t0 = time.monotonic()
    try:
        cr.create_users(roster, class_dir)
        timings["accounts"] = time.monotonic() - t0
        for k in "abc":  # the browser test's JupyterLab settings (render every cell, no autosave), in each home
            home = Path(pwd.getpwnam(names[k]).pw_dir)
            from labdriver import LAB_SETTINGS

            for rel, value in LAB_SETTINGS.items():
                f = home / ".jupyter" / "lab" / "user-settings" / rel
                f.parent.mkdir(parents=True, exist_ok=True)
                f.write_text(json.dumps(value))
            subprocess.run(["chown", "-R", f"{names[k]}:", str(home / ".jupyter")], check=True)
        t1 = time.monotonic()
        started = subprocess.run(
            [str(cr.HUB_VENV / "bin" / "python"), str(ROOT / "classroom" / "classroom.py"), "start",
             "--class", str(roster_path), "--class-id", class_id, "--class-dir", str(class_dir), "--port", str(port),
             "--state", str(state), "--mem-limit", "1536M", "--cull-timeout", "900"],
            capture_output=True, text=True, timeout=180,
        )  # fmt: skip
        timings["hub start"] = time.monotonic() - t1
        assert started.returncode == 0, started.stdout + started.stderr
        print(started.stdout)
        password = dict(line.split("\t") for line in (state / "instructor-passwords").read_text().split("\n") if line)
        yield SimpleNamespace(url=f"http://127.0.0.1:{port}", names=names, roster=roster, class_dir=class_dir,
                              state=state, instructor_password=password[names["t"]], timings=timings,
                              passwords={k: f"pw-{secrets.token_hex(6)}" for k in "abc"})  # fmt: skip
    finally:
        t2 = time.monotonic()
        subprocess.run([sys.executable, str(ROOT / "classroom" / "classroom.py"), "stop", "--state", str(state)],
                       capture_output=True, timeout=120)  # fmt: skip
        cr.remove_users(roster, class_dir, purge_class_dir=True, kill=True)
        timings["clean-up"] = time.monotonic() - t2
        left = [n for n in names.values() if cr.account(n)] + [str(p) for p in [class_dir] if p.exists()]
        left += [f"/home/{n}" for n in names.values() if Path(f"/home/{n}").exists()]
        print("classroom timings: " + ", ".join(f"{k} {v:.1f} s" for k, v in timings.items()))
        assert not left, f"left behind: {left}"


@pytest.fixture(scope="module")
def browser():
    from labdriver import CHROMIUM_ARGS, EXPECT_TIMEOUT_MS, find_chromium
    from playwright.sync_api import expect, sync_playwright

    path = find_chromium()
    if path is None:
        pytest.skip("no Chromium (apt-get install chromium)")
    expect.set_options(timeout=EXPECT_TIMEOUT_MS)
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=path, args=CHROMIUM_ARGS, headless=True)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture(scope="module")
def instructor(hub):
    client = HubClient(hub.url)
    assert client.login(hub.names["t"], hub.instructor_password) == 302
    status, _ = client.api("GET", "/user")
    assert status == 200
    return client


def wait_for(read, want, timeout: float = 30):
    deadline = time.monotonic() + timeout
    while True:
        got = read()
        if want(got) or time.monotonic() > deadline:
            return got
        time.sleep(0.2)


def learner_session(hub, browser, k: str):
    """A browser context logged in as learner ``k`` (the first login sets the password), their server started."""
    from playwright.sync_api import expect

    name = hub.names[k]
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto(f"{hub.url}/hub/login")
    page.fill("#username_input", name)
    page.fill("#password_input", hub.passwords[k])
    page.click("#login_submit")
    page.wait_for_url(f"**/user/{name}/lab**", timeout=180_000)  # spawn, then the working copy's 00 chapter
    expect(page.locator(".jp-LabShell")).to_be_visible()
    return context, page


@pytest.mark.classroom
def test_three_learners_label_06_in_their_own_copies_and_nobody_reaches_another(hub, browser, instructor):
    from labdriver import LabNotebook

    t0 = time.monotonic()
    names = hub.names
    pages, probes = {}, {}
    for k in "abc":
        t = time.monotonic()
        context, page = learner_session(hub, browser, k)
        pages[k] = (context, page)
        hub.timings[f"login+spawn {k}"] = time.monotonic() - t
        home = Path(cr.account(names[k]).pw_dir)
        probe = home / "workbook" / "zz_probe.ipynb"
        probe.write_text(json.dumps({"cells": [{"cell_type": "code", "source": PROBE, "metadata": {},
                                                "outputs": [], "execution_count": None}],
                                     "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                                 "language": "python"}},
                                     "nbformat": 4, "nbformat_minor": 5}))  # fmt: skip
        shutil.chown(probe, names[k], names[k])
        server = SimpleNamespace(url=f"{hub.url}/user/{names[k]}")
        LabNotebook(page, server, "zz_probe").open_and_run_all()
        probes[k] = page.locator(".jp-OutputArea-output").first.inner_text()

        t = time.monotonic()
        nb = LabNotebook(page, server, "06_faithfulness")
        nb.open_and_run_all()
        hub.timings[f"06 run all {k}"] = time.monotonic() - t
        labeller = page.locator(".lk-labeller").first
        share = labeller.locator(".lk-lab-share input[type=checkbox]")
        shared = share.count() > 0 and share.is_visible()
        if shared:
            share.check()
            wait_for(lambda lab=labeller: lab.locator(".lk-lab-share").inner_text(), lambda s: "are shared" in s)
        box = labeller.locator(".lk-lab-keys")
        box.click()
        for n, key in enumerate(KEYS[k], start=1):
            box.press(key)
            shown = wait_for(lambda lab=labeller: lab.locator(".lk-lab-progress").inner_text(),
                             lambda s, n=n: s.startswith(f"{n} of 30"))  # fmt: skip
            assert shown.startswith(f"{n} of 30"), f"{names[k]}: after key {n} the widget shows {shown!r}"
        hub.timings[f"label {k}"] = time.monotonic() - t

    # ---- each learner's server: their account, umask 077, the class folder, the memory limit in a cgroup
    for k in "abc":
        out = probes[k]
        assert f"CLASS_DIR {hub.class_dir}" in out, out
        assert "UMASK 0o77" in out and "SAVED 0o600" in out, out
        assert "MEM_LIMIT 1610612736" in out, out
        assert f"labkit-class/{names[k]}" in out, f"the server is not in its memory cgroup: {out}"
        home = Path(cr.account(names[k]).pw_dir)
        assert home.stat().st_mode & 0o777 == 0o700, f"{home} is {home.stat().st_mode & 0o777:o}"
        own = home / ".cache" / "labkit" / "labels" / "06-claims.jsonl"
        assert own.stat().st_uid == cr.account(names[k]).pw_uid and own.stat().st_mode & 0o077 == 0
        assert len(own.read_text().splitlines()) == 10
        copy = home / "workbook"
        assert (copy / "06_faithfulness.ipynb").stat().st_uid == cr.account(names[k]).pw_uid
        assert "your answer here" in (copy / "03_metrics_by_hand.ipynb").read_text(), "the copy is the student copy"

    # ---- as the accounts themselves: A reads nothing of B's (home, copy, labels, class-folder file)
    a, b = names["a"], names["b"]
    home_b = Path(cr.account(b).pw_dir)
    for path in (home_b, home_b / "workbook" / "06_faithfulness.ipynb",
                 home_b / ".cache" / "labkit" / "labels" / "06-claims.jsonl"):  # fmt: skip
        assert as_user(b, "cat" if path.is_file() else "ls", str(path)).returncode == 0, f"{b} cannot read own {path}"
        assert as_user(a, "cat" if path.is_file() else "ls", str(path)).returncode != 0, f"{a} read {path}"
    assert as_user(a, "sh", "-c", f"echo x > {home_b}/workbook/planted.txt").returncode != 0
    class_files = sorted(p for p in hub.class_dir.rglob("*.jsonl"))
    if shared:
        by_owner = {p.stat().st_uid: p for p in class_files}
        assert len(by_owner) == 3, f"three learners' files expected in the class folder: {class_files}"
        file_b = by_owner[cr.account(b).pw_uid]
        assert file_b.stat().st_mode & 0o007 == 0, f"{file_b} is open to others"
        assert as_user(a, "cat", str(file_b)).returncode != 0, f"{a} read {b}'s shared labels"
        assert as_user(a, "sh", "-c", f"echo x >> {file_b}").returncode != 0, f"{a} appended to {b}'s labels"
        assert as_user(a, "rm", "-f", str(file_b)).returncode != 0 or file_b.exists(), f"{a} removed {b}'s labels"
        assert as_user(a, "ls", str(file_b.parent)).returncode != 0, f"{a} listed the drop folder"
        export = Path(cr.account(names["t"]).pw_dir) / "class.jsonl"
        done = as_user(names["t"], str(cr.DEFAULT_PREFIX / "venv" / "bin" / "python"), "-m", "labkit", "labels",
                       "export", str(hub.class_dir), "--out", str(export))  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        rows = [json.loads(x) for x in export.read_text().splitlines()]
        raters = {r["learner"] for r in rows if r["set"] == "06-claims"}
        assert len(raters) == 3, f"the instructor sees {len(raters)} raters: {done.stdout}"
        assert all(sum(r["learner"] == who for r in rows) == 10 for who in raters)
    else:
        print("this labelling widget has no class-folder sharing: checked the folder setting only")

    # ---- the hub's secrets: 0600 in a 0700 folder, unreadable by a learner
    assert hub.state.stat().st_mode & 0o777 == 0o700
    for f in ("cookie_secret", "proxy_token", "jupyterhub.sqlite", "settings.json", "instructor-passwords"):
        assert (hub.state / f).stat().st_mode & 0o777 == 0o600, f"{f} is {(hub.state / f).stat().st_mode & 0o777:o}"
    for f in hub.state.glob("passwords*"):
        assert f.stat().st_mode & 0o077 == 0, f"{f} is open"
    assert as_user(a, "cat", str(hub.state / "cookie_secret")).returncode != 0

    # ---- on the web: A's cookie at B's server, B's API, the hub's admin API, B's server port
    context_a, page_a = pages["a"]
    xsrf = next((c["value"] for c in context_a.cookies() if c["name"] == "_xsrf"), "")
    h = {"X-XSRFToken": xsrf}
    for path in (f"/user/{b}/api/contents", f"/user/{b}/api/kernels", f"/user/{b}/lab"):
        r = page_a.request.get(hub.url + path, headers=h, max_redirects=0)
        assert r.status in (302, 401, 403), f"{a} at {path}: {r.status}"
        if r.status == 302:
            assert f"/user/{b}" not in (r.headers.get("location") or "").split("?")[0] or "oauth" in r.headers.get(
                "location", ""), r.headers  # fmt: skip
    page_a.goto(f"{hub.url}/user/{b}/lab")
    assert b not in page_a.url.split("?")[0].split("/user/")[-1] or page_a.locator(".jp-LabShell").count() == 0
    for path in (f"/hub/api/users/{b}", "/hub/api/users", f"/hub/api/users/{b}/server"):
        r = page_a.request.get(hub.url + path, headers=h)
        assert r.status in (403, 404), f"{a} at {path}: {r.status}"
    me = page_a.request.get(hub.url + "/hub/api/user", headers=h).json()
    assert me["name"] == a and me["admin"] is False
    proxy_api = json.loads((hub.state / "settings.json").read_text())["proxy_api_port"]
    routes = json.loads(
        urllib.request.urlopen(
            urllib.request.Request(
                f"http://127.0.0.1:{proxy_api}/api/routes",
                headers={"Authorization": f"token {(hub.state / 'proxy_token').read_text().strip()}"},
            ),
            timeout=10,
        ).read()
    )
    target_b = next(r["target"] for path, r in routes.items() if path.rstrip("/") == f"/user/{b}")
    r = page_a.request.get(f"{target_b}/user/{b}/api/contents", headers=h, max_redirects=0)
    assert r.status in (302, 401, 403), f"{a} at {b}'s server port directly: {r.status}"

    # ---- the instructor: the only admin; sees three learners' servers
    status, users = instructor.api("GET", "/users")
    assert status == 200
    admins = sorted(u["name"] for u in users if u["admin"])
    assert admins == [names["t"]], admins
    assert sorted(u["name"] for u in users if u["servers"]) == sorted(names[k] for k in "abc")
    status, services = instructor.api("GET", "/services")
    assert "idle-culler" in services, services

    # ---- a name not on the roster never gets in (FirstUse with an allow-list), nor is it created
    stranger = HubClient(hub.url)
    assert stranger.login(f"{hub.roster.class_id}-zed", "a-long-password") != 302
    assert instructor.api("GET", f"/users/{hub.roster.class_id}-zed")[0] == 404
    # ... nor a learner's name with the wrong password once the learner has set theirs
    assert HubClient(hub.url).login(b, "not-the-password") != 302

    # ---- the memory limit is enforced: a process in C's cgroup that outgrows it is killed, C's server lives on
    c_name = names["c"]
    cgroup = next(Path("/sys/fs/cgroup").rglob(f"labkit-class/{c_name}"), None)
    if cgroup is not None and (cgroup / "memory.limit_in_bytes").exists():
        assert int((cgroup / "memory.limit_in_bytes").read_text()) == 1610612736
        procs = str(cgroup / "cgroup.procs")
        hog = subprocess.run(["runuser", "-u", c_name, "--", "/usr/bin/python3", "-c", "b = bytearray(2500 << 20)"],
                             preexec_fn=lambda: open(procs, "w").write(str(os.getpid())), cwd="/",
                             capture_output=True, timeout=120)  # fmt: skip
        assert hog.returncode in (-9, 137), f"2.5 GB in a 1.5 GB cgroup was not stopped: {hog.returncode}"
        context_c, page_c = pages["c"]
        assert page_c.request.get(f"{hub.url}/user/{c_name}/api/status").status == 200

    # ---- the working copy is never overwritten: A's saved file survives a restart of A's server
    copy_a = Path(cr.account(a).pw_dir) / "workbook"
    (copy_a / ".made-from-version").unlink()  # so workbook.py runs again at the next start
    before = (copy_a / "00_welcome.ipynb").read_bytes()
    (copy_a / "00_welcome.ipynb").write_bytes(before.replace(b'"cells"', b'"cells"', 1) + b"\n")
    mine = (copy_a / "00_welcome.ipynb").read_bytes()
    assert instructor.api("DELETE", f"/users/{a}/server")[0] in (202, 204)
    wait_for(lambda: instructor.api("GET", f"/users/{a}")[1]["servers"], lambda s: not s, 60)
    assert instructor.api("POST", f"/users/{a}/server")[0] in (201, 202)
    wait_for(lambda: instructor.api("GET", f"/users/{a}")[1]["servers"].get("", {}).get("ready"), bool, 120)
    assert (copy_a / "00_welcome.ipynb").read_bytes() == mine, "a restart rewrote the learner's chapter"
    assert (copy_a / "saved-by-me.txt").read_text() == "mine"

    for context, _ in pages.values():
        context.close()
    hub.timings["browser part"] = time.monotonic() - t0


# ---------------------------------------------------------------- an existing hub: the published tree and its link

import publish  # noqa: E402  (classroom/publish.py)

LEARNER_PYTHON = cr.DEFAULT_PREFIX / "venv" / "bin" / "python"


def test_the_environment_file_is_the_one_generated_from_requirements_txt():
    assert (ROOT / "binder" / "requirements.txt").read_text() == publish.runtime_requirements(), (
        "binder/requirements.txt is out of date: run `python classroom/publish.py --env binder/requirements.txt`"
    )
    assert (ROOT / "binder" / "runtime.txt").read_text().strip() == "python-3.11"
    assert os.access(ROOT / "binder" / "postBuild", os.X_OK)


def test_the_environment_pins_are_the_ones_the_workbook_is_tested_with():
    """The environment's import check, offline: every package of binder/requirements.txt is installed here at its
    pin (this venv was made from requirements.txt), and labkit's chapters import with it."""
    from importlib.metadata import PackageNotFoundError, version

    env = publish.pins(ROOT / "binder" / "requirements.txt")
    tested = publish.pins(ROOT / "requirements.txt")
    for name, line in env.items():
        if name in tested:
            assert tested[name] == line, f"{line} differs from requirements.txt's {tested[name]}"
            try:
                pin = line.split("==")[1].split(";")[0].strip()  # a platform marker may follow the version
                assert version(name) == pin, f"{name} here is {version(name)}, the pin {line}"
            except PackageNotFoundError:
                pytest.fail(f"{name} is pinned in the environment but not installed in the tested venv")
    checked = subprocess.run(
        [sys.executable, "-c", "import labkit, labkit.ui.widgets, labkit.chapters as c; "
         "print(len(c.discover()), labkit.data_dir().is_dir())"],
        capture_output=True, text=True, cwd="/",
    )  # fmt: skip
    assert checked.returncode == 0 and checked.stdout.split()[1] == "True", checked.stderr


@pytest.mark.parametrize(
    ("repo", "target"),
    [
        ("https://github.com/you/rag-workbook-class", "rag-workbook-class"),
        ("https://github.com/you/rag-workbook-class.git", "rag-workbook-class"),  # nbgitpuller would keep .git
        ("https://gitlab.example.edu/course/rag/", "rag"),
    ],
)
def test_the_nbgitpuller_link_names_its_target_and_opens_chapter_00_there(repo, target):
    link = publish.nbgitpuller_link("https://hub.example.edu/", repo, "main")
    assert link.startswith("https://hub.example.edu/hub/user-redirect/git-pull?")
    q = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(link).query))
    assert q == {"repo": repo, "branch": "main", "targetpath": target,
                 "urlpath": f"lab/tree/{target}/00_welcome.ipynb"}  # fmt: skip
    # nbgitpuller's own rule for the folder (handlers.py): targetpath, else the URL's last part
    folder = q.get("targetpath") or repo.rstrip("/").split("/")[-1]
    assert q["urlpath"] == f"lab/tree/{folder}/00_welcome.ipynb"


@pytest.fixture(scope="module")
def published(tmp_path_factory):
    tree = tmp_path_factory.mktemp("published") / "rag-workbook-class"
    return tree, publish.publish(tree)


def test_the_published_tree_is_the_student_copy_with_labkit_and_its_environment(published):
    tree, names = published
    assert "00_welcome.ipynb" in names and {"labkit", "data", "binder"} <= set(names)
    assert "your answer here" in (tree / "03_metrics_by_hand.ipynb").read_text(), "answers must not be published"
    assert (tree / "binder" / "requirements.txt").read_text() == publish.runtime_requirements()
    with pytest.raises(FileExistsError):
        publish.publish(tree)
    # a kernel started beside the chapters imports the tree's labkit and finds the tree's data
    found = subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, ''); import labkit; "
                            "print(labkit.__file__); print(labkit.data_dir())"],
                           capture_output=True, text=True, cwd=tree)  # fmt: skip
    assert found.returncode == 0, found.stderr
    assert found.stdout.split() == [str(tree / "labkit" / "__init__.py"), str(tree / "data")]


def test_nbgitpuller_clones_the_published_tree_where_the_link_points(published, tmp_path):
    """nbgitpuller's own puller (the learners' environment has it) on a local repository of the published tree:
    the folder it makes is the link's target, chapter 00 is where the link's urlpath opens, and a second pull
    keeps a learner's change."""
    if not LEARNER_PYTHON.exists() or shutil.which("git") is None:
        pytest.skip(f"needs git and nbgitpuller ({LEARNER_PYTHON}: `make classroom-install`)")
    tree = tmp_path / "rag-workbook-class"
    shutil.copytree(published[0], tree)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "init.defaultBranch=main"]
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "class"]):
        subprocess.run([*git, *cmd], cwd=tree, check=True, capture_output=True)
    repo = f"file://{tree}"
    link = publish.nbgitpuller_link("http://127.0.0.1:8000", repo)
    q = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(link).query))
    home = tmp_path / "home"
    home.mkdir()
    pull = ("import sys; from nbgitpuller.pull import GitPuller; "
            "[print(line, end='') for line in GitPuller(sys.argv[1], sys.argv[2], branch='main').pull()]")  # fmt: skip
    target = home / q["targetpath"]
    env = dict(os.environ, HOME=str(home), GIT_CONFIG_GLOBAL=str(tmp_path / "gitconfig"))
    (tmp_path / "gitconfig").write_text("[user]\n\tname = learner\n\temail = l@example.invalid\n")
    done = subprocess.run([str(LEARNER_PYTHON), "-c", pull, q["repo"], str(target)], capture_output=True, text=True,
                          env=env, cwd=home, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert (home / q["urlpath"].removeprefix("lab/tree/")).is_file()
    (target / "00_welcome.ipynb").write_text((target / "00_welcome.ipynb").read_text() + "\n")  # the learner's edit
    mine = (target / "00_welcome.ipynb").read_text()
    again = subprocess.run([str(LEARNER_PYTHON), "-c", pull, q["repo"], str(target)], capture_output=True, text=True,
                           env=env, cwd=home, timeout=120)  # fmt: skip
    assert again.returncode == 0, again.stdout + again.stderr
    assert (target / "00_welcome.ipynb").read_text() == mine


# ---------------------------------------------------------------- past one machine: deploy/ (not run here)


def test_the_zero_to_jupyterhub_values_keep_the_classrooms_choices():
    import yaml

    values = yaml.safe_load((ROOT / "deploy" / "values.yaml").read_text())
    hub = values["hub"]["config"]
    assert hub["JupyterHub"]["authenticator_class"] == "firstuseauthenticator.FirstUseAuthenticator"
    assert hub["Authenticator"]["allow_all"] is False and hub["FirstUseAuthenticator"]["create_users"] is False
    assert set(hub["Authenticator"]["admin_users"]) < set(hub["Authenticator"]["allowed_users"])
    for name, code in values["hub"]["extraConfig"].items():
        compile(code, f"hub.extraConfig.{name}", "exec")  # the Python the hub will run parses
    single = values["singleuser"]
    assert single["memory"]["limit"] and single["extraEnv"]["LABKIT_CLASS_DIR"] == "/srv/labkit-class"
    mount = single["storage"]["extraVolumeMounts"][0]
    assert mount["subPath"] == "{username}" and mount["mountPath"] == "/srv/labkit-class"
    assert "workbook.py --out /home/jovyan/workbook" in " ".join(
        single["lifecycleHooks"]["postStart"]["exec"]["command"]
    )
    assert values["cull"]["enabled"] is True and values["proxy"]["https"]["enabled"] is True
    claim = yaml.safe_load((ROOT / "deploy" / "class-volume.yaml").read_text())
    assert claim["spec"]["accessModes"] == ["ReadWriteMany"]
    assert claim["metadata"]["name"] == single["storage"]["extraVolumes"][0]["persistentVolumeClaim"]["claimName"]


def test_the_image_recipe_installs_the_environment_file_and_copies_what_exists():
    recipe = (ROOT / "deploy" / "Dockerfile").read_text()
    assert "COPY binder/requirements.txt" in recipe and "jupyterhub-singleuser" in recipe
    for line in recipe.splitlines():
        if line.startswith("COPY "):
            for src in line.split()[1:-1]:
                assert (ROOT / src).exists(), f"deploy/Dockerfile copies {src}, which is not in the repository"


def test_the_values_pass_the_charts_schema_when_a_copy_of_the_chart_is_given():
    """Helm validates the chart's defaults merged with ours against values.schema.yaml; the same here, when
    ``LABKIT_Z2JH_CHART`` names a checkout of the chart's folder (deploy/README.md says which one was used)."""
    chart = os.environ.get("LABKIT_Z2JH_CHART")
    if not chart:
        pytest.skip("set LABKIT_Z2JH_CHART to the jupyterhub chart's folder (with values.schema.yaml) to check")
    import jsonschema
    import yaml

    def merge(a, b):
        out = dict(a)
        for k, v in b.items():
            out[k] = merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
        return out

    schema = yaml.safe_load((Path(chart) / "values.schema.yaml").read_text())
    merged = merge(yaml.safe_load((Path(chart) / "values.yaml").read_text()),
                   yaml.safe_load((ROOT / "deploy" / "values.yaml").read_text()))  # fmt: skip
    errors = [f"{list(e.path)}: {e.message}" for e in jsonschema.Draft7Validator(schema).iter_errors(merged)]
    assert not errors, errors
