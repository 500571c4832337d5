"""The learners' servers: JupyterHub's LocalProcessSpawner, each server in its learner's own account, plus

- **umask 077** for the server and everything it starts (kernels, terminals): a notebook a learner saves is theirs
  alone (JupyterHub leaves the hub's umask, 022, so other accounts could read new files);
- **the working copy**: before each start, ``tools/workbook.py --out ~/workbook`` runs *as the learner*; it makes the
  copy on the first start and afterwards only adds chapters the copy lacks (a changed chapter is written beside the
  learner's as ``<chapter>.updated.ipynb``): a learner's file is never overwritten. Skipped when the copy was made
  from the same version of the workbook;
- **a memory limit per learner, enforced** where the hub can make a memory cgroup under its own (cgroup v1's
  ``memory.limit_in_bytes``, or v2's ``memory.max``): the server is put in ``<hub's cgroup>/labkit-class/<user>``
  before it drops root, so its kernels and terminals are counted with it and the kernel's OOM killer stops the
  learner's biggest process when the learner goes over. Where no cgroup can be made, the limit is only stated
  (``MEM_LIMIT`` in the server's environment, as LocalProcessSpawner does) and the hub's log says so.
"""

from __future__ import annotations

import asyncio
import os
import pwd
import shutil
from pathlib import Path

from jupyterhub.spawner import LocalProcessSpawner
from traitlets import Unicode

CGROUP_FS = Path("/sys/fs/cgroup")


def own_memory_cgroup() -> tuple[str, Path] | None:
    """(``"v1"`` or ``"v2"``, the folder of this process's memory cgroup) if it can hold child cgroups, else None."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if "memory" in controllers.split(","):
            folder = CGROUP_FS / "memory" / path.lstrip("/")
            if (folder / "memory.limit_in_bytes").exists() and os.access(folder, os.W_OK):
                return "v1", folder
    for line in lines:
        if line.startswith("0::") and (CGROUP_FS / "cgroup.controllers").exists():
            folder = CGROUP_FS / line[3:].lstrip("/")
            if "memory" in (folder / "cgroup.controllers").read_text().split() and os.access(folder, os.W_OK):
                return "v2", folder
    return None


class ClassroomSpawner(LocalProcessSpawner):
    python = Unicode(help="the learners' environment's python (a venv every account can run)").tag(config=True)
    workbook_tool = Unicode(help="tools/workbook.py in the shared read-only copy of the workbook").tag(config=True)
    workbook_version = Unicode(help="a file whose content names the workbook's version (src/VERSION)").tag(config=True)
    copy_name = Unicode("workbook", help="the working copy's folder in the learner's home").tag(config=True)
    cgroup_name = Unicode("labkit-class", help="the cgroup folder for learners under the hub's own").tag(config=True)
    cgroup_record = Unicode("", help="a file to write that folder's path to (classroom.py stop removes it)").tag(
        config=True
    )

    _memory_cgroup = None  # ("v1"|"v2", folder) once decided, for the whole hub

    @classmethod
    def memory_cgroup(cls, name: str, record: str = "") -> tuple[str, Path] | None:
        if cls._memory_cgroup is None:
            found = own_memory_cgroup()
            if found:
                kind, folder = found
                top = folder / name
                try:
                    top.mkdir(exist_ok=True)
                    if kind == "v2":  # let the child cgroups have a memory controller
                        (folder / "cgroup.subtree_control").write_text("+memory")
                        (top / "cgroup.subtree_control").write_text("+memory")
                    found = (kind, top)
                    if record:
                        Path(record).write_text(f"{top}\n")
                except OSError:
                    found = None
            cls._memory_cgroup = found or ("none", Path())
        return None if cls._memory_cgroup[0] == "none" else cls._memory_cgroup

    def learner_cgroup(self) -> Path | None:
        """This learner's memory cgroup, made with the limit, or None (the limit then only stated)."""
        found = self.memory_cgroup(self.cgroup_name, self.cgroup_record)
        if not found or not self.mem_limit:
            return None
        kind, top = found
        folder = top / self.user.name
        try:
            folder.mkdir(exist_ok=True)
            (folder / ("memory.limit_in_bytes" if kind == "v1" else "memory.max")).write_text(str(int(self.mem_limit)))
            if kind == "v1":  # no swap past the limit either, where the kernel accounts swap
                memsw = folder / "memory.memsw.limit_in_bytes"
                if memsw.exists():
                    try:
                        memsw.write_text(str(int(self.mem_limit)))
                    except OSError:
                        pass
        except OSError as err:
            self.log.warning("memory limit for %s only stated, not enforced: %s", self.user.name, err)
            return None
        return folder

    def make_preexec_fn(self, name):
        setuid = super().make_preexec_fn(name)
        cgroup = self.learner_cgroup()
        procs = str(cgroup / "cgroup.procs") if cgroup else None

        def preexec():
            os.umask(0o077)
            if procs:  # still root here: join the learner's cgroup, then drop to the learner
                with open(procs, "w") as f:
                    f.write(str(os.getpid()))
            setuid()

        return preexec

    async def make_working_copy(self) -> None:
        home = Path(pwd.getpwnam(self.user.name).pw_dir)
        copy = home / self.copy_name
        made_from = copy / ".made-from-version"
        version = Path(self.workbook_version).read_text().strip() if self.workbook_version else ""
        try:
            if version and made_from.read_text().strip() == version:
                return
        except OSError:
            pass
        runuser = shutil.which("runuser") or "/usr/sbin/runuser"
        script = 'umask 077 && "$0" "$@" && echo "$V" > "$C/.made-from-version"'
        argv = [runuser, "-u", self.user.name, "--", "/bin/sh", "-c", script,
                self.python, self.workbook_tool, "--out", str(copy)]  # fmt: skip
        env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "LANG": os.environ.get("LANG", "C.UTF-8"), "V": version,
               "C": str(copy)}  # fmt: skip
        proc = await asyncio.create_subprocess_exec(*argv, env=env, cwd="/", stdout=asyncio.subprocess.PIPE,
                                                    stderr=asyncio.subprocess.STDOUT)  # fmt: skip
        out, _ = await asyncio.wait_for(proc.communicate(), timeout=300)
        if proc.returncode:
            raise RuntimeError(f"the working copy of {self.user.name} could not be made: {out.decode()[-2000:]}")
        self.log.info("working copy of %s: %s", self.user.name, " / ".join(out.decode().split("\n")[:3]))

    async def start(self):
        if self.workbook_tool:
            await self.make_working_copy()
        return await super().start()

    async def stop(self, now=False):
        await super().stop(now=now)
        found = self.memory_cgroup(self.cgroup_name, self.cgroup_record)
        if found:  # empty once the server and its kernels are gone (they may take a moment to exit)
            for _ in range(50):
                try:
                    (found[1] / self.user.name).rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    await asyncio.sleep(0.2)
