"""A class of 30 on this machine: the classroom hub (classroom/) measured, printed, never asserted.

    sudo .venv/bin/python bench/classroom_bench.py [--learners 30] [--runners 10] [--chapter 03_metrics_by_hand]

Needs root and ``make classroom-install``. It makes 30 learner accounts and an instructor (class id ``lkb…``),
starts the hub on loopback with the idle culler on, and measures:

1. the time until all 30 servers are ready, started at once through the hub's API (each start makes the learner's
   working copy first);
2. memory per idle learner: the proportional set size (PSS, shared pages split between their users) of each
   learner's processes, from /proc/<pid>/smaps_rollup; and the hub, its proxy and the culler;
3. Run All of chapter 03 by 10 learners at once, through the proxy, each learner's server and a kernel of their
   own (the cells sent in order over the kernel's websocket, as JupyterLab's Run All does): p50 / p95 seconds;
   then memory per learner with that kernel;
4. the culler: with a 240 s idle timeout (checked every 10 s), how long until every server is stopped.

Every account, home and class folder it made is removed at the end, also when it fails.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "classroom"))

import classroom as cr  # noqa: E402


def pss_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def pids_of_uid(uid: int) -> list[int]:
    return cr.processes_of(uid)


def mib(kib: float) -> str:
    return f"{kib / 1024:.0f} MiB"


class Admin:
    """The instructor at the hub's API, with a token made after a form login."""

    def __init__(self, url: str, user: str, password: str):
        import http.cookiejar

        class NoRedirect(urllib.request.HTTPRedirectHandler):
            def redirect_request(self, *args, **kwargs):
                return None  # the login's redirect would start the instructor's own server

        self.url = url
        jar = http.cookiejar.CookieJar()
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar), NoRedirect())

        def xsrf() -> str:
            return next(c.value for c in jar if c.name == "_xsrf")

        opener.open(f"{url}/hub/login", timeout=30).read()
        body = urllib.parse.urlencode({"username": user, "password": password, "_xsrf": xsrf()}).encode()
        try:
            opener.open(f"{url}/hub/login", body, timeout=30).read()
        except urllib.error.HTTPError as err:  # 302: logged in
            if err.code != 302:
                raise
        req = urllib.request.Request(f"{url}/hub/api/users/{user}/tokens", json.dumps({"note": "bench"}).encode(),
                                     headers={"X-XSRFToken": xsrf(), "Content-Type": "application/json"})  # fmt: skip
        self.token = json.loads(opener.open(req, timeout=30).read())["token"]

    def api(self, method: str, path: str, body=None):
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Authorization": f"token {self.token}"}
        req = urllib.request.Request(f"{self.url}/hub/api{path}", data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                text = r.read()
                return r.status, json.loads(text) if text else None
        except urllib.error.HTTPError as err:
            return err.code, err.read().decode(errors="replace")


async def run_all(url: str, user: str, token: str, cells: list[str]) -> float:
    """Start a kernel in ``user``'s server, send every code cell in order, wait for each reply; seconds taken."""
    from tornado.httpclient import AsyncHTTPClient, HTTPRequest
    from tornado.websocket import websocket_connect

    headers = {"Authorization": f"token {token}"}
    client = AsyncHTTPClient()
    base = f"{url}/user/{user}"
    t0 = time.monotonic()
    r = await client.fetch(HTTPRequest(f"{base}/api/kernels", method="POST", body="{}", headers=headers,
                                       request_timeout=120))  # fmt: skip
    kernel = json.loads(r.body)["id"]
    ws_url = base.replace("http", "ws", 1) + f"/api/kernels/{kernel}/channels"
    ws = await websocket_connect(HTTPRequest(ws_url, headers=headers, request_timeout=120), max_message_size=1 << 28)
    session = uuid.uuid4().hex
    try:
        for code in cells:
            msg_id = uuid.uuid4().hex
            await ws.write_message(json.dumps({
                "header": {"msg_id": msg_id, "username": user, "session": session, "msg_type": "execute_request",
                           "version": "5.3", "date": ""},
                "parent_header": {}, "metadata": {}, "channel": "shell", "buffers": [],
                "content": {"code": code, "silent": False, "store_history": True, "user_expressions": {},
                            "allow_stdin": False, "stop_on_error": True},
            }))  # fmt: skip
            while True:
                raw = await asyncio.wait_for(ws.read_message(), timeout=600)
                if raw is None:
                    raise RuntimeError(f"{user}: the kernel's websocket closed")
                if isinstance(raw, bytes):
                    continue
                m = json.loads(raw)
                if m.get("parent_header", {}).get("msg_id") == msg_id and m["msg_type"] == "execute_reply":
                    if m["content"]["status"] != "ok":
                        raise RuntimeError(f"{user}: a cell failed: {m['content'].get('ename')}")
                    break
    finally:
        ws.close()
    return time.monotonic() - t0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--learners", type=int, default=30)
    p.add_argument("--runners", type=int, default=10, help="learners running the chapter at once")
    p.add_argument("--chapter", default="03_metrics_by_hand")
    p.add_argument("--mem-limit", default="2G")
    p.add_argument("--cull-timeout", type=int, default=240, help="long enough for the measures before it (s)")
    a = p.parse_args(argv)
    if os.geteuid() != 0:
        print("classroom bench: needs root (it makes system accounts): sudo .venv/bin/python bench/classroom_bench.py")
        return 0
    if not (cr.HUB_VENV / "bin" / "jupyterhub").exists() or not (cr.DEFAULT_PREFIX / "venv").exists():
        print("classroom bench: run `make classroom-install` first")
        return 0
    import nbformat

    class_id = "lkb" + secrets.token_hex(3)
    tmp = Path(f"/tmp/{class_id}")
    cr.private_dir(tmp)
    learners = [f"{class_id}-{i:02d}" for i in range(1, a.learners + 1)]
    teacher = f"{class_id}-t"
    roster_path = tmp / "roster.csv"
    roster_path.write_text("username,role\n" + f"{teacher},instructor\n" + "".join(f"{u},learner\n" for u in learners))
    roster = cr.read_roster(roster_path, class_id)
    class_dir = Path("/srv/labkit-class") / class_id
    state = tmp / "state"
    port = cr.free_port()
    url = f"http://127.0.0.1:{port}"
    cells = [c.source for c in nbformat.read(ROOT / "notebooks" / f"{a.chapter}.ipynb", as_version=4).cells
             if c.cell_type == "code"]  # fmt: skip
    print(f"classroom bench: {a.learners} learners, {os.cpu_count()} cores, "
          f"{os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30:.0f} GiB; class {class_id}")  # fmt: skip
    try:
        t = time.monotonic()
        cr.create_users(roster, class_dir)
        print(f"  accounts: {a.learners + 1} made in {time.monotonic() - t:.1f} s")
        t = time.monotonic()
        started = subprocess.run(
            [str(cr.HUB_VENV / "bin" / "python"), str(ROOT / "classroom" / "classroom.py"), "start",
             "--class", str(roster_path), "--class-id", class_id, "--class-dir", str(class_dir), "--port", str(port),
             "--state", str(state), "--mem-limit", a.mem_limit, "--cull-timeout", str(a.cull_timeout),
             "--cull-every", "10"], capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        if started.returncode:
            print(started.stdout + started.stderr)
            return 1
        print(f"  hub start (hub + proxy + culler answering): {time.monotonic() - t:.1f} s")
        password = (state / "instructor-passwords").read_text().split("\t")[1].strip()
        admin = Admin(url, teacher, password)

        # 1. all servers at once
        t = time.monotonic()
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(len(learners)) as pool:  # every request at once, as a class arriving together
            list(pool.map(lambda u: admin.api("POST", f"/users/{u}/server"), learners))
        ready_at = {}
        while len(ready_at) < len(learners) and time.monotonic() - t < 900:
            _, users = admin.api("GET", "/users")
            for user in users:
                if user["name"] in learners and user["name"] not in ready_at and user["servers"].get("", {}).get(
                        "ready"):  # fmt: skip
                    ready_at[user["name"]] = time.monotonic() - t
            time.sleep(0.5)
        times = sorted(ready_at.values())
        print(
            f"  {len(times)} of {len(learners)} servers ready, started at once: first {times[0]:.1f} s, "
            f"median {statistics.median(times):.1f} s, all {times[-1]:.1f} s (each made its working copy first)"
        )

        # 2. memory, idle
        time.sleep(5)
        idle = {u: sum(pss_kib(pid) for pid in pids_of_uid(cr.account(u).pw_uid)) for u in learners}
        hub_pids = [int((state / f).read_text()) for f in ("hub.pid", "proxy.pid") if (state / f).exists()]
        culler = subprocess.run(["pgrep", "-f", f"jupyterhub_idle_culler --timeout={a.cull_timeout}"],
                                capture_output=True, text=True).stdout.split()  # fmt: skip
        fixed = sum(pss_kib(pid) for pid in hub_pids + [int(x) for x in culler])
        v = sorted(idle.values())
        print(f"  memory per idle learner (PSS: server only): median {mib(statistics.median(v))}, max {mib(v[-1])}; "
              f"all {a.learners}: {mib(sum(v))}; hub + proxy + culler: {mib(fixed)}")  # fmt: skip

        # 3. Run All of the chapter by `runners` learners at once, through the proxy and their own servers
        # the instructor's token reaches every learner's server (the admin role has access:servers); the kernels
        # run in the learners' own servers, as their accounts
        tokens = {u: admin.token for u in learners[: a.runners]}

        async def together():
            return await asyncio.gather(*(run_all(url, u, tokens[u], cells) for u in tokens))

        t = time.monotonic()
        secs = sorted(asyncio.run(together()))
        wall = time.monotonic() - t
        p95 = secs[min(len(secs) - 1, round(0.95 * (len(secs) - 1)))]
        print(f"  Run All of {a.chapter} ({len(cells)} code cells) by {len(secs)} learners at once: "
              f"p50 {statistics.median(secs):.1f} s, p95 {p95:.1f} s, all done in {wall:.1f} s")  # fmt: skip
        busy = {u: sum(pss_kib(pid) for pid in pids_of_uid(cr.account(u).pw_uid)) for u in tokens}
        v = sorted(busy.values())
        print(f"  memory per learner with {a.chapter}'s kernel (server + kernel): median {mib(statistics.median(v))}, "
              f"max {mib(v[-1])}")  # fmt: skip
        total = sum(idle.values()) - sum(idle[u] for u in tokens) + sum(v) + fixed
        print(f"  the class now: {mib(total)} in all ({a.runners} with a kernel, {a.learners - a.runners} idle)")

        # 4. the culler
        t = time.monotonic()
        while time.monotonic() - t < 6 * a.cull_timeout:
            _, users = admin.api("GET", "/users")
            running = [u for u in users if u["name"] in learners and u["servers"]]
            if not running:
                break
            time.sleep(2)
        print(f"  culler (idle timeout {a.cull_timeout} s, looking every 10 s): {len(learners) - len(running)} of "
              f"{len(learners)} servers stopped {time.monotonic() - t:.0f} s after the last activity")  # fmt: skip
    except BaseException:
        log = (state / "hub.log").read_text(errors="replace").splitlines() if (state / "hub.log").exists() else []
        print("\n".join(x for x in log if " 40" in x or "scope" in x.lower() or "rror" in x)[-4000:])
        raise
    finally:
        t = time.monotonic()
        subprocess.run([sys.executable, str(ROOT / "classroom" / "classroom.py"), "stop", "--state", str(state)],
                       capture_output=True, timeout=300)  # fmt: skip
        cr.remove_users(roster, class_dir, purge_class_dir=True, kill=True)
        subprocess.run(["rm", "-rf", str(tmp)], check=False)
        print(f"  clean-up: hub stopped, {a.learners + 1} accounts and homes removed in {time.monotonic() - t:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
