"""The classroom hub: a real JupyterHub on one machine, one system account and working copy per learner.

    python3 classroom/classroom.py install                     # .venv-hub/, node_modules/, /opt/labkit-class/
    python3 classroom/classroom.py users --class roster.csv    # one account per roster line (--remove: gone again)
    python3 classroom/classroom.py start --class roster.csv    # the hub on http://127.0.0.1:8000, in the background
    python3 classroom/classroom.py stop                        # the hub, its proxy and every learner's server
    python3 classroom/classroom.py check --ip 10.0.0.5         # what `start` would refuse, without starting

``make classroom CLASS=roster.csv`` runs install, users and start; ``make classroom-users`` and
``make classroom-stop`` the other two. Everything here needs root (the hub switches to each learner's account).

What lives where:

- ``.venv-hub/`` (this clone, ignored by git): JupyterHub, the first-use authenticator and the idle culler, pinned
  in ``requirements-hub.txt``; run by root only.
- ``node_modules/`` (ignored): configurable-http-proxy, pinned in ``package.json`` with ``package-lock.json``,
  run with the system's Node.js.
- ``/opt/labkit-class/`` (``--prefix``): the workbook's environment, shared read-only: ``src/`` a copy of this
  clone's labkit/, data/, notebooks/ and tools/, ``venv/`` built from Debian's ``/usr/bin/python3`` (a venv from
  the pyenv Python under ``/root`` cannot be run by learners) with ``requirements.txt`` and
  ``classroom/requirements-learner.txt``. Root owns every file; learners read and execute.
- ``.classroom/`` (``--state``, ignored, 0700): the hub's database, cookie secret, proxy token, the first-use
  password file, the instructor's first password, settings, pid and log; each file 0600.
- ``/srv/labkit-class/<class id>`` (``--class-dir``): the class folder (``LABKIT_CLASS_DIR`` in every learner's
  server), made by the instructor's account with ``python -m labkit class init`` (see :func:`make_class_dir`).

The roster is a CSV file with a header ``username,role`` (role ``learner`` or ``instructor``; more columns are
ignored). Usernames become system accounts: pseudonyms (``learner07``) keep real names out of the class folder.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import ipaddress
import json
import os
import pwd
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HUB_VENV = ROOT / ".venv-hub"
HUB_REQUIREMENTS = ROOT / "requirements-hub.txt"
LEARNER_REQUIREMENTS = ROOT / "classroom" / "requirements-learner.txt"
PROXY = ROOT / "node_modules" / ".bin" / "configurable-http-proxy"
CONFIG = ROOT / "classroom" / "jupyterhub_config.py"
DEFAULT_STATE = ROOT / ".classroom"
DEFAULT_PREFIX = Path("/opt/labkit-class")
DEFAULT_CLASS_ID = "labkit"
DEFAULT_CLASS_DIR_PARENT = Path("/srv/labkit-class")
SYSTEM_PYTHON = Path("/usr/bin/python3")
SRC_PARTS = ("labkit", "data", "notebooks", "tools", "pyproject.toml", "requirements.txt", "README.md")
MARK = "labkit-class="  # the GECOS field of every account this tool made: "labkit-class=<class id>" (no colon)
NAME = re.compile(r"^[a-z][a-z0-9_-]{1,31}$")
RESERVED = {"root", "admin", "daemon", "bin", "sys", "nobody", "www-data", "jovyan", "hub", "proxy", "user"}
DEFAULT_MEM_LIMIT = "2G"
DEFAULT_CULL_TIMEOUT = 3600
INSECURE_BANNER = """
!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!
!!  INSECURE: the hub listens on {ip} WITHOUT TLS (--insecure-lab-network).
!!  Every password, cookie and notebook crosses the lab network in clear text: anyone on that network can read
!!  them and act as any learner, or as the instructor. Use --ssl-cert and --ssl-key instead whenever you can.
!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!
"""


class ClassroomError(Exception):
    """A refusal with the reason and the fix; printed without a traceback."""


# ---------------------------------------------------------------- the roster


@dataclass(frozen=True)
class Roster:
    learners: tuple[str, ...]
    instructors: tuple[str, ...]
    class_id: str = DEFAULT_CLASS_ID
    names: dict = field(default_factory=dict, compare=False)  # username -> display name, if the roster has one

    @property
    def everyone(self) -> tuple[str, ...]:
        return self.instructors + self.learners

    @property
    def learner_group(self) -> str:
        return f"{self.class_id}-learners"

    @property
    def instructor_group(self) -> str:
        return f"{self.class_id}-instructors"


def read_roster(path: Path, class_id: str = DEFAULT_CLASS_ID) -> Roster:
    """The roster CSV (``username,role``): at least one instructor and one learner, each name once, each a valid
    account name that is not a system one. Raises :class:`ClassroomError` naming the line and the fix."""
    if not NAME.match(class_id) or len(class_id) > 20:
        raise ClassroomError(f"class id {class_id!r}: use 2-20 lower-case letters, digits, '-' or '_'")
    path = Path(path)
    if not path.is_file():
        raise ClassroomError(f"no roster at {path}: write a CSV with a header 'username,role' (see "
                             "classroom/roster.example.csv)")  # fmt: skip
    learners, instructors, names, seen = [], [], {}, set()
    with path.open(newline="", encoding="utf-8") as f:
        rows = [r for r in f if r.strip() and not r.lstrip().startswith("#")]
    reader = csv.DictReader(rows)
    if not reader.fieldnames or {"username", "role"} - {h.strip().lower() for h in reader.fieldnames}:
        raise ClassroomError(f"{path}: the first line must be a header with 'username' and 'role' columns")
    for n, row in enumerate(reader, start=2):
        row = {(k or "").strip().lower(): (v or "").strip() for k, v in row.items()}
        user, role = row["username"], row["role"].lower()
        where = f"{path}, row {n}"
        if not NAME.match(user):
            raise ClassroomError(f"{where}: username {user!r} must be 2-32 characters: a lower-case letter, then "
                                 "lower-case letters, digits, '-' or '_'")  # fmt: skip
        if user in RESERVED:
            raise ClassroomError(f"{where}: {user!r} is a reserved name; choose another")
        if user in seen:
            raise ClassroomError(f"{where}: {user!r} is listed twice")
        if role not in ("learner", "instructor"):
            raise ClassroomError(f"{where}: role {role!r} must be 'learner' or 'instructor'")
        seen.add(user)
        (instructors if role == "instructor" else learners).append(user)
        if row.get("name"):
            names[user] = row["name"]
    if not instructors:
        raise ClassroomError(f"{path}: no instructor: add a row '<name>,instructor' (the hub's only admin)")
    if not learners:
        raise ClassroomError(f"{path}: no learner: the allow-list would be the instructor alone")
    return Roster(tuple(learners), tuple(instructors), class_id, names)


# ---------------------------------------------------------------- the address rule


def is_loopback(ip: str) -> bool:
    if ip in ("localhost", "localhost.localdomain"):
        return True
    try:
        return ipaddress.ip_address(ip).is_loopback
    except ValueError:
        return False


def address_rule(ip: str, ssl_cert: str | None, ssl_key: str | None, insecure: bool) -> str:
    """What the hub may do on ``ip``: ``"loopback"``, ``"tls"`` or ``"insecure"``; raises :class:`ClassroomError`
    for a lab-network address with neither certificate paths nor the insecure flag, or with half a pair."""
    if bool(ssl_cert) != bool(ssl_key):
        raise ClassroomError("give both --ssl-cert and --ssl-key, or neither")
    for p in (ssl_cert, ssl_key):
        if p and not Path(p).is_file():
            raise ClassroomError(f"no file at {p} (--ssl-cert / --ssl-key name a PEM certificate and its key)")
    if ssl_cert:
        return "tls"
    if is_loopback(ip):
        return "loopback"
    if insecure:
        return "insecure"
    raise ClassroomError(
        f"refusing to listen on {ip} without TLS: learners' passwords and cookies would cross the lab network in "
        "clear text. Give --ssl-cert CERT.pem --ssl-key KEY.pem, or --insecure-lab-network if you accept that "
        "(it is printed loudly), or keep the default 127.0.0.1 (and put a TLS front end before it)."
    )


# ---------------------------------------------------------------- helpers


def need_root(what: str) -> None:
    if os.geteuid() != 0:
        raise ClassroomError(f"{what} needs root (it creates system accounts / switches to them): run it with sudo")


def run(argv: list, **kw) -> subprocess.CompletedProcess:
    kw.setdefault("check", True)
    return subprocess.run([str(a) for a in argv], **kw)


def write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` created 0600 (never readable by anyone but root, not even for a moment)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.chmod(path, 0o600)


def private_dir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    os.chmod(path, 0o700)
    return path


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def digest(*paths: Path) -> str:
    h = hashlib.sha256()
    for p in paths:
        h.update(p.read_bytes() if p.exists() else b"-")
    return h.hexdigest()[:16]


# ---------------------------------------------------------------- install


def install_hub(python: Path = SYSTEM_PYTHON) -> None:
    """``.venv-hub/`` from requirements-hub.txt, reinstalled only when that file changed."""
    stamp = HUB_VENV / ".installed"
    want = digest(HUB_REQUIREMENTS)
    if stamp.exists() and stamp.read_text() == want:
        return
    interpreter = python if python.exists() else Path(sys.executable)
    if not (HUB_VENV / "bin" / "python").exists():
        run([interpreter, "-m", "venv", HUB_VENV])
    run([HUB_VENV / "bin" / "python", "-m", "pip", "install", "--quiet", "-r", HUB_REQUIREMENTS])
    stamp.write_text(want)


def install_proxy() -> None:
    """configurable-http-proxy from package-lock.json (``npm ci``), with the system's Node.js."""
    node = shutil.which("node")
    if node is None:
        raise ClassroomError("no Node.js: `apt-get install nodejs npm` (Debian's), then run this again")
    stamp = ROOT / "node_modules" / ".labkit-installed"
    want = digest(ROOT / "package-lock.json")
    if PROXY.exists() and stamp.exists() and stamp.read_text() == want:
        return
    run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=ROOT)
    stamp.write_text(want)


def copy_src(prefix: Path) -> Path:
    """A fresh read-only copy of this clone's workbook (labkit/, data/, notebooks/, tools/...) in prefix/src."""
    src, new = prefix / "src", prefix / "src.new"
    if new.exists():
        shutil.rmtree(new)
    new.mkdir(parents=True)
    skip = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", ".ipynb_checkpoints")
    for part in SRC_PARTS:
        p = ROOT / part
        if p.is_dir():
            shutil.copytree(p, new / part, ignore=skip, symlinks=False)
        elif p.exists():
            shutil.copy2(p, new / part)
    (new / "VERSION").write_text(digest(*(f for f in sorted((ROOT / "notebooks").glob("*.ipynb")))) + "\n")
    if src.exists():
        old = prefix / "src.old"
        if old.exists():
            shutil.rmtree(old)
        src.rename(old)
        new.rename(src)
        shutil.rmtree(old)
    else:
        new.rename(src)
    return src


def world_readable(top: Path) -> None:
    """Root owns it, everyone reads and executes, no one else writes (a+rX, go-w), the parents traversable."""
    for dirpath, dirnames, filenames in os.walk(top):
        for name in [*dirnames, *filenames]:
            p = Path(dirpath) / name
            if p.is_symlink():
                continue
            mode = p.stat().st_mode & 0o7777
            mode = (mode | 0o444 | (0o111 if p.is_dir() or mode & 0o100 else 0)) & ~0o022
            os.chmod(p, mode)
    os.chmod(top, 0o755)
    for parent in top.parents:
        if parent.stat().st_mode & 0o005 != 0o005:
            raise ClassroomError(f"{parent} is not readable by other accounts (mode "
                                 f"{parent.stat().st_mode & 0o777:o}): choose another --prefix")  # fmt: skip


def install_learner_env(prefix: Path = DEFAULT_PREFIX, python: Path = SYSTEM_PYTHON) -> Path:
    """The workbook's environment for learners: prefix/src (copied each time) and prefix/venv (rebuilt when the
    requirements changed), built from an interpreter every account can run."""
    if not python.exists():
        raise ClassroomError(f"no {python}: `apt-get install python3 python3-venv` (Debian's Python: the venv's "
                             "interpreter must be readable by the learners' accounts)")  # fmt: skip
    prefix.mkdir(parents=True, exist_ok=True)
    os.chmod(prefix, 0o755)
    src = copy_src(prefix)
    venv = prefix / "venv"
    stamp = venv / ".installed"
    want = digest(ROOT / "requirements.txt", ROOT / "pyproject.toml", LEARNER_REQUIREMENTS, HUB_REQUIREMENTS)
    if not (stamp.exists() and stamp.read_text() == want):
        if not (venv / "bin" / "python").exists():
            run([python, "-m", "venv", venv])
        run([venv / "bin" / "python", "-m", "pip", "install", "--quiet", "-r", src / "requirements.txt",
             "-r", LEARNER_REQUIREMENTS], cwd=src)  # fmt: skip
        stamp.write_text(want)
    else:  # the same requirements: only labkit's metadata, for the fresh copy of src
        run([venv / "bin" / "python", "-m", "pip", "install", "--quiet", "--no-deps", "-e", src], cwd=src)
    shutil.rmtree(src / "build", ignore_errors=True)
    world_readable(prefix)
    return prefix


def ensure_acl_tools() -> bool:
    """setfacl (Debian's acl package), for the class folder's default ACL; installed when missing."""
    if shutil.which("setfacl"):
        return True
    if shutil.which("apt-get"):
        subprocess.run(["apt-get", "install", "-y", "-qq", "acl"], stdout=subprocess.DEVNULL, check=False)
    return bool(shutil.which("setfacl"))


def install(prefix: Path = DEFAULT_PREFIX) -> None:
    need_root("install")
    t0 = time.monotonic()
    install_hub()
    install_proxy()
    install_learner_env(prefix)
    ensure_acl_tools()
    print(f"classroom: installed in {time.monotonic() - t0:.0f} s: {HUB_VENV}, {PROXY}, {prefix}")


# ---------------------------------------------------------------- accounts


def account(name: str):
    try:
        return pwd.getpwnam(name)
    except KeyError:
        return None


def ours(name: str, class_id: str) -> bool:
    """Was this account made by this tool for this class? (its GECOS field says so)"""
    a = account(name)
    return a is not None and a.pw_gecos == f"{MARK}{class_id}"


def group_exists(name: str) -> bool:
    return run(["getent", "group", name], check=False, capture_output=True).returncode == 0


def processes_of(uid: int) -> list[int]:
    pids = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if d.stat().st_uid == uid:
                    pids.append(int(d.name))
            except FileNotFoundError:
                pass
    return pids


def class_dir_for(roster: Roster, class_dir: Path | None) -> Path:
    return Path(class_dir) if class_dir else DEFAULT_CLASS_DIR_PARENT / roster.class_id


def as_account(user: str, argv: list, **kw) -> subprocess.CompletedProcess:
    """Run ``argv`` as ``user`` (runuser: no password, no login shell), umask 077, from ``/``."""
    home = account(user).pw_dir
    env = {"HOME": home, "USER": user, "PATH": "/usr/bin:/bin", "LANG": os.environ.get("LANG", "C.UTF-8")}
    kw.setdefault("check", False)
    kw.setdefault("capture_output", True)
    kw.setdefault("text", True)
    runuser = shutil.which("runuser") or "/usr/sbin/runuser"
    return run([runuser, "-u", user, "--", "/bin/sh", "-c", 'umask 077 && exec "$0" "$@"', *argv], env=env,
               cwd="/", **kw)  # fmt: skip


def make_class_dir(path: Path, roster: Roster, prefix: Path = DEFAULT_PREFIX) -> str:
    """The class folder, made by the (first) instructor's account with ``python -m labkit class init DIR --group
    <class>-instructors`` (:mod:`labkit.data.class_folder`: a drop folder per label set that learners write into
    but cannot list, each learner's file theirs alone, the instructors' group reads all). Returns how it was made.

    A workbook without ``class init`` gets a single drop folder instead: root's, mode 1733 (learners create files
    but list nothing and delete nothing of another's), the instructors' group reads it and, through a default
    ACL, every file in it whatever the writer's umask."""
    path = Path(path)
    if not path.parent.exists():
        path.parent.mkdir(parents=True)
        os.chmod(path.parent, 0o755)
    path.mkdir(exist_ok=True)
    group, owner = roster.instructor_group, roster.instructors[0]
    python = prefix / "venv" / "bin" / "python"
    if not python.exists():
        raise ClassroomError(f"no {python}: run `classroom.py install` (make classroom-install) first")
    shutil.chown(path, user=owner, group=group)
    made = as_account(owner, [python, "-m", "labkit", "class", "init", path, "--group", group,
                              "--title", roster.class_id])  # fmt: skip
    if made.returncode == 0:
        return "labkit class init"
    if "invalid choice: 'class'" not in made.stderr:
        raise ClassroomError(f"`labkit class init {path}` as {owner} failed:\n{made.stdout}{made.stderr}")
    os.chown(path, 0, 0)
    os.chmod(path, 0o1733)
    if ensure_acl_tools():
        run(["setfacl", "-b", path])
        run(["setfacl", "-m", f"g:{group}:r-x", path])
        run(["setfacl", "-d", "-m", f"u::rw-,g::---,g:{group}:r--,m::r--,o::---", path])
        return "drop folder with a default ACL"
    shutil.chown(path, group=group)
    os.chmod(path, 0o3753)
    return "setgid drop folder"


def create_users(roster: Roster, class_dir: Path | None = None, prefix: Path = DEFAULT_PREFIX) -> list[str]:
    """One system account per roster line (home 0700, umask 077, shell bash, password locked: they log in only
    through the hub), the groups ``<class>-learners`` and ``<class>-instructors``, and the class folder. An account
    that exists and was not made by this tool for this class is refused, never adopted."""
    need_root("classroom-users")
    clash = [u for u in roster.everyone if account(u) and not ours(u, roster.class_id)]
    if clash:
        raise ClassroomError(f"these accounts exist and were not made for class {roster.class_id!r}: "
                             f"{', '.join(clash)}; rename them in the roster")  # fmt: skip
    for g in (roster.learner_group, roster.instructor_group):
        if not group_exists(g):
            run(["groupadd", g])
    made = []
    for user in roster.everyone:
        group = roster.instructor_group if user in roster.instructors else roster.learner_group
        if account(user) is None:
            run(["useradd", "--create-home", "--shell", "/bin/bash", "--comment", f"{MARK}{roster.class_id}",
                 "--groups", group, "-K", "HOME_MODE=0700", "-K", "UMASK=077", user])  # fmt: skip
            made.append(user)
        else:
            run(["usermod", "--append", "--groups", group, user])
        home = Path(account(user).pw_dir)
        os.chmod(home, 0o700)
    make_class_dir(class_dir_for(roster, class_dir), roster, prefix)
    return made


def remove_users(roster: Roster, class_dir: Path | None = None, purge_class_dir: bool = False,
                 kill: bool = False) -> list[str]:  # fmt: skip
    """Remove the roster's accounts made by this tool (``userdel -r``: home and mail too), then the class's groups
    when empty; the class folder only with ``purge_class_dir`` (it holds the class's labels). An account still
    running processes is refused unless ``kill`` (stop the hub first: ``classroom.py stop``)."""
    need_root("classroom-users --remove")
    removed = []
    for user in roster.everyone:
        if not ours(user, roster.class_id):
            continue
        a = account(user)
        pids = processes_of(a.pw_uid)
        if pids and not kill:
            raise ClassroomError(f"{user} still runs processes {pids[:8]}: stop the hub first (classroom.py stop)")
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + 10
        while processes_of(a.pw_uid) and time.monotonic() < deadline:
            time.sleep(0.1)
        run(["userdel", "--remove", user], stderr=subprocess.DEVNULL)
        removed.append(user)
    for g in (roster.learner_group, roster.instructor_group):
        if group_exists(g):
            members = run(["getent", "group", g], capture_output=True, text=True).stdout.strip().split(":")[-1]
            if not members:
                run(["groupdel", g], check=False)
    if purge_class_dir:
        shutil.rmtree(class_dir_for(roster, class_dir), ignore_errors=True)
    return removed


# ---------------------------------------------------------------- the hub


@dataclass
class HubSettings:
    roster: str
    class_id: str
    ip: str = "127.0.0.1"
    port: int = 8000
    hub_api_port: int = 8081
    proxy_api_port: int = 8001
    ssl_cert: str | None = None
    ssl_key: str | None = None
    insecure_lab_network: bool = False
    mem_limit: str = DEFAULT_MEM_LIMIT
    cull_timeout: int = DEFAULT_CULL_TIMEOUT
    cull_every: int = 0
    class_dir: str = ""
    prefix: str = str(DEFAULT_PREFIX)
    state: str = str(DEFAULT_STATE)
    start_timeout: int = 180
    mode: str = "loopback"

    @property
    def url(self) -> str:
        host = f"[{self.ip}]" if ":" in self.ip else self.ip
        return f"{'https' if self.ssl_cert else 'http'}://{host}:{self.port}"


def settings_from(a: argparse.Namespace) -> HubSettings:
    roster = read_roster(a.roster, a.class_id)
    mode = address_rule(a.ip, a.ssl_cert, a.ssl_key, a.insecure_lab_network)
    s = HubSettings(
        roster=str(Path(a.roster).resolve()),
        class_id=roster.class_id,
        ip=a.ip,
        port=a.port,
        hub_api_port=a.hub_api_port or free_port(),
        proxy_api_port=a.proxy_api_port or free_port(),
        ssl_cert=str(Path(a.ssl_cert).resolve()) if a.ssl_cert else None,
        ssl_key=str(Path(a.ssl_key).resolve()) if a.ssl_key else None,
        insecure_lab_network=a.insecure_lab_network,
        mem_limit=a.mem_limit,
        cull_timeout=a.cull_timeout,
        cull_every=a.cull_every or max(10, min(300, a.cull_timeout // 4)),
        class_dir=str(class_dir_for(roster, a.class_dir)),
        prefix=str(Path(a.prefix).resolve()),
        state=str(Path(a.state).resolve()),
        start_timeout=a.start_timeout,
        mode=mode,
    )
    return s


def secrets_in(state: Path) -> None:
    """The proxy's token and the hub's cookie secret: generated once, 0600, in the root-only state folder."""
    private_dir(state)
    for name in ("proxy_token", "cookie_secret"):
        p = state / name
        if not p.exists() or not p.read_text().strip():
            write_private(p, secrets.token_hex(32) + "\n")
        os.chmod(p, 0o600)


def instructor_password(state: Path, roster: Roster) -> dict[str, str]:
    """Set each instructor's first password before the hub opens (so no learner can claim the admin account by
    logging in first): generated, stored hashed in the first-use password file, the plain text kept only in
    ``<state>/instructor-passwords`` (0600) for the instructor to read once and change at /hub/auth/change-password.
    Returns the new ones."""
    import dbm

    import bcrypt  # the hub's venv has it: `start` runs there (main() re-executes itself with it)

    new = {}
    with dbm.open(str(state / "passwords"), "c", 0o600) as db:
        for user in roster.instructors:
            if db.get(user.encode()) is None:
                pw = secrets.token_urlsafe(12)
                db[user.encode()] = bcrypt.hashpw(pw.encode(), bcrypt.gensalt())
                new[user] = pw
    if new:
        lines = [f"{u}\t{p}" for u, p in new.items()]
        old = (state / "instructor-passwords").read_text() if (state / "instructor-passwords").exists() else ""
        write_private(state / "instructor-passwords", old + "\n".join(lines) + "\n")
    for p in state.glob("passwords*"):
        os.chmod(p, 0o600)
    return new


def hub_alive(s: HubSettings, timeout: float = 3) -> bool:
    import ssl

    ctx = ssl._create_unverified_context() if s.ssl_cert else None  # our own certificate, maybe self-signed
    host = {"0.0.0.0": "127.0.0.1", "": "127.0.0.1", "::": "[::1]"}.get(s.ip, f"[{s.ip}]" if ":" in s.ip else s.ip)
    url = f"{'https' if s.ssl_cert else 'http'}://{host}:{s.port}/hub/api"
    try:
        with urllib.request.urlopen(url, timeout=timeout, context=ctx) as r:
            return r.status == 200
    except (urllib.error.URLError, OSError):
        return False


def read_pid(state: Path) -> int | None:
    try:
        pid = int((state / "hub.pid").read_text().strip())
    except (OSError, ValueError):
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    return pid


def start(s: HubSettings, background: bool = True, wait: float = 120) -> int | None:
    """Start JupyterHub with classroom/jupyterhub_config.py on the settings ``s`` (written to <state>/settings.json).
    In the background: returns the hub's pid once ``/hub/api`` answers, the log in <state>/hub.log."""
    need_root("the classroom hub")
    roster = read_roster(Path(s.roster), s.class_id)
    for what, p in (("the hub's venv (classroom.py install)", HUB_VENV / "bin" / "jupyterhub"),
                    ("configurable-http-proxy (classroom.py install)", PROXY),
                    ("the learners' environment (classroom.py install)",
                     Path(s.prefix) / "venv" / "bin" / "jupyterhub-singleuser")):  # fmt: skip
        if not p.exists():
            raise ClassroomError(f"missing {what}: {p}")
    missing = [u for u in roster.everyone if not ours(u, roster.class_id)]
    if missing:
        raise ClassroomError(f"no account for {', '.join(missing)}: run `classroom.py users --class {s.roster}` "
                             "(make classroom-users) first")  # fmt: skip
    state = private_dir(Path(s.state))
    if read_pid(state):
        raise ClassroomError(f"a hub from {state} runs already (pid {read_pid(state)}): classroom.py stop first")
    if s.mode == "insecure":
        print(INSECURE_BANNER.format(ip=s.ip), file=sys.stderr, flush=True)
    secrets_in(state)
    new = instructor_password(state, roster)
    write_private(state / "settings.json", json.dumps(s.__dict__, indent=1) + "\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CONFIGPROXY", "JUPYTERHUB_"))}
    env.update(LABKIT_HUB_SETTINGS=str(state / "settings.json"), PATH=f"{HUB_VENV / 'bin'}:{env.get('PATH', '')}")
    argv = [str(HUB_VENV / "bin" / "jupyterhub"), "-f", str(CONFIG)]
    old_umask = os.umask(0o077)  # the hub's own files (database, pid files, log) are root's alone
    try:
        if not background:
            os.chdir(state)
            os.execve(argv[0], argv, env)
        log = open(state / "hub.log", "ab")  # noqa: SIM115 - handed to the child
        proc = subprocess.Popen(argv, cwd=state, env=env, stdin=subprocess.DEVNULL, stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True)  # fmt: skip
    finally:
        os.umask(old_umask)
    write_private(state / "hub.pid", f"{proc.pid}\n")
    t0 = time.monotonic()
    while not hub_alive(s):
        if proc.poll() is not None or time.monotonic() - t0 > wait:
            tail = "\n".join((state / "hub.log").read_text(errors="replace").splitlines()[-30:])
            if proc.poll() is None:
                stop(state)
            raise ClassroomError(f"the hub did not start within {wait:.0f} s (exit {proc.poll()}):\n{tail}")
        time.sleep(0.2)
    print(f"classroom: the hub answers at {s.url} (started in {time.monotonic() - t0:.1f} s; pid {proc.pid}; "
          f"log {state / 'hub.log'})")  # fmt: skip
    some = ", ".join(roster.learners[:5]) + (", ..." if len(roster.learners) > 5 else "")
    print(f"  learners: {len(roster.learners)} ({some}): each sets a password on first login")
    print(f"  instructor (the only admin): {', '.join(roster.instructors)}", end="")
    print(f"; first password in {state / 'instructor-passwords'} (root only)" if new else "")
    print(f"  class folder: {s.class_dir}; memory limit per learner {s.mem_limit}; idle servers stopped after "
          f"{s.cull_timeout} s")  # fmt: skip
    return proc.pid


def stop(state: Path = DEFAULT_STATE, timeout: float = 30) -> bool:
    """SIGTERM to the hub's pid (it stops every learner's server and its proxy), SIGKILL to its group if it hangs;
    then any proxy left by its pid file. True if a hub was running."""
    need_root("classroom-stop")
    state = Path(state)
    pid = read_pid(state)
    if pid:
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.2)
        else:
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    for pidfile in ("proxy.pid",):
        try:
            ppid = int((state / pidfile).read_text().strip())
            os.kill(ppid, signal.SIGTERM)
        except (OSError, ValueError):
            pass
        (state / pidfile).unlink(missing_ok=True)
    (state / "hub.pid").unlink(missing_ok=True)
    try:  # the learners' memory cgroups, empty once their servers are gone
        top = Path((state / "cgroup").read_text().strip())
        if top.parts[:3] == ("/", "sys", "fs") and top.name == "labkit-class":
            for child in top.iterdir():
                if child.is_dir():
                    child.rmdir()
            top.rmdir()
        (state / "cgroup").unlink()
    except OSError:
        pass
    return pid is not None


# ---------------------------------------------------------------- command line


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)

    def roster_args(q, required=True):
        q.add_argument("--class", dest="roster", type=Path, required=required, help="the roster CSV (username,role)")
        q.add_argument("--class-id", default=DEFAULT_CLASS_ID, help="names the groups and the class folder")
        q.add_argument("--class-dir", type=Path, help=f"the class folder (default {DEFAULT_CLASS_DIR_PARENT}/<id>)")

    q = sub.add_parser("install", help="the hub's venv, the proxy and the learners' environment")
    q.add_argument("--prefix", type=Path, default=DEFAULT_PREFIX)

    q = sub.add_parser("users", help="create (or --remove) one system account per roster line")
    roster_args(q)
    q.add_argument("--remove", action="store_true", help="remove the accounts this tool made (homes too)")
    q.add_argument("--purge-class-dir", action="store_true", help="with --remove: the class folder (labels) too")
    q.add_argument("--prefix", type=Path, default=DEFAULT_PREFIX)

    for name in ("start", "check"):
        q = sub.add_parser(name, help="start the hub" if name == "start" else "check the settings, start nothing")
        roster_args(q, required=name == "start")
        q.add_argument("--ip", default="127.0.0.1", help="listen here (default loopback; others need TLS)")
        q.add_argument("--port", type=int, default=8000)
        q.add_argument("--hub-api-port", type=int, default=0, help="the hub's internal API (default: a free port)")
        q.add_argument("--proxy-api-port", type=int, default=0, help="the proxy's API (default: a free port)")
        q.add_argument("--ssl-cert", help="PEM certificate: needed on a lab-network address")
        q.add_argument("--ssl-key", help="its PEM key")
        q.add_argument("--insecure-lab-network", action="store_true",
                       help="listen on a lab-network address without TLS (printed loudly)")  # fmt: skip
        q.add_argument("--mem-limit", default=DEFAULT_MEM_LIMIT, help="memory per learner (server + kernels)")
        q.add_argument("--cull-timeout", type=int, default=DEFAULT_CULL_TIMEOUT, help="stop servers idle this long (s)")
        q.add_argument("--cull-every", type=int, default=0, help="how often the culler looks (s)")
        q.add_argument("--prefix", type=Path, default=DEFAULT_PREFIX)
        q.add_argument("--state", type=Path, default=DEFAULT_STATE)
        q.add_argument("--start-timeout", type=int, default=180, help="seconds a learner's server may take to start")
        q.add_argument("--foreground", action="store_true", help="run the hub in this terminal (Ctrl-C stops it)")

    q = sub.add_parser("stop", help="stop the hub started with start")
    q.add_argument("--state", type=Path, default=DEFAULT_STATE)
    return p


def main(argv: list[str] | None = None) -> int:
    a = parser().parse_args(argv)
    try:
        if a.command == "install":
            install(a.prefix)
        elif a.command == "users":
            roster = read_roster(a.roster, a.class_id)
            if a.remove:
                gone = remove_users(roster, a.class_dir, a.purge_class_dir)
                print(f"classroom: removed {len(gone)} account(s) of class {roster.class_id!r}: {', '.join(gone)}")
                kept = class_dir_for(roster, a.class_dir)
                if kept.exists():
                    print(f"  the class folder {kept} is kept (the class's labels; its owner's account is gone): "
                          "export them, then remove it with --purge-class-dir")  # fmt: skip
            else:
                made = create_users(roster, a.class_dir, a.prefix)
                print(f"classroom: {len(roster.everyone)} account(s) of class {roster.class_id!r} ready "
                      f"({len(made)} new), homes 0700; class folder {class_dir_for(roster, a.class_dir)}")  # fmt: skip
        elif a.command == "check":
            mode = address_rule(a.ip, a.ssl_cert, a.ssl_key, a.insecure_lab_network)
            if mode == "insecure":
                print(INSECURE_BANNER.format(ip=a.ip), file=sys.stderr)
            if a.roster:
                read_roster(a.roster, a.class_id)
            print(f"classroom: {a.ip}:{a.port} allowed ({mode})")
        elif a.command == "start":
            hub_python = HUB_VENV / "bin" / "python"
            if Path(sys.prefix).resolve() != HUB_VENV.resolve() and hub_python.exists():
                os.execv(hub_python, [str(hub_python), __file__, *(sys.argv[1:] if argv is None else argv)])
            start(settings_from(a), background=not a.foreground)
        elif a.command == "stop":
            print("classroom: hub stopped" if stop(a.state) else "classroom: no hub was running")
    except ClassroomError as err:
        print(f"classroom: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
