"""A class folder: each learner's labels (and self-check results) dropped where only the instructor reads them.

Taught in 11_class_labels (for instructors); the learner side is the labelling widget of 02, 06, 07 and 10 and
``check.share_progress()``. One setting names the folder: ``LABKIT_CLASS_DIR``. Unset, nothing here runs and every
chapter works as before.

The layout follows nbgrader's exchange (a drop directory that learners can write into but not list)::

    CLASS_DIR/                 owner: the instructor, group: the instructors' group, mode 2751
      class.json               the class's title, its salt for learner ids, names or pseudonyms (mode 644)
      labels/<set id>/         one drop directory per label set: mode 3753 (setgid, sticky, rwxr-x-wx)
        <learner id>.jsonl     one learner's labels, written by that learner only: mode 640
      progress/                the same, for the exercises' self-checks
        <learner id>.jsonl

A learner creates and appends to their own file and nothing else: the drop directory lets anyone create a
file but list none (``-wx`` for others) and, being sticky, delete or rename only their own; the file is
``rw-r-----``, its group the directory's (setgid: the instructors' group, which a learner need not be in), so no
other learner can read or change it. The learner id is a pseudonym, ``l-`` and ten hex digits of
``sha256(salt:account)``: stable for an account, unguessable without the class's salt (the instructor can map it
back to an account, nobody sees a name). ``names="accounts"`` in :func:`init_class` uses account names instead,
when the instructor asks for them.

Every line is appended by :func:`labkit.data.labels.append_line`, the learner's own store's writer (locked, whole,
synced, a torn last line cut off first), through an opener that refuses a symlink and a file another account
owns. A line: ``{"set": "06-claims", "item": "fl-0101", "label": "supported", "learner": "l-3f9a2c41d0",
"time": "2025-03-04T10:15:00+00:00"}``; ``"label": null`` is an undo. Sharing is opt-in: a learner's file exists
only after they opt in (:meth:`Drop.opt_in`), and withdrawing removes it. Reading is
:mod:`labkit.data.class_read`.

A *simulated* class (``simulated=True``) is written by the instructor's own account under ids ``sim-01``...: the
instructor's notebook stores its outputs from one, and says so.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import stat
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from labkit.core import args
from labkit.core.files import path_arg
from labkit.data.labels import LabelSet, append_lines

__all__ = ["ENV", "ClassFolder", "Drop", "LabelDrop", "ProgressDrop", "class_dir", "open_class", "init_class",
           "is_id", "account_name", "ROOT_MODE", "DROP_MODE", "FILE_MODE"]  # fmt: skip

ENV = "LABKIT_CLASS_DIR"
CONFIG = "class.json"
LABELS = "labels"
PROGRESS = "progress"
ROOT_MODE = 0o2751
"""The class folder and ``labels/``: the instructor writes, the group lists, a learner only passes through."""
DROP_MODE = 0o3753
"""A drop directory: setgid (files join the instructors' group), sticky (only a file's owner removes it), the
group lists and reads, others create files but cannot list them."""
FILE_MODE = 0o640
"""A learner's file: the learner writes, the instructors' group reads, nobody else."""
NAMES = ("pseudonyms", "accounts")
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


def is_id(text: object) -> bool:
    """Is ``text`` a learner or label-set id: letters, digits, ``-``, ``_``, ``.``, starting with a letter or digit
    (so never ``..``, never a ``/``: an id names a file inside the class folder, never a path out of it)."""
    return isinstance(text, str) and _ID.fullmatch(text) is not None


def _check_id(name: str, value: object) -> str:
    if not is_id(value):
        raise ValueError(
            f"{name} must be letters, digits, '-', '_' or '.', starting with a letter or digit (it names a file in "
            f"the class folder, never a path), got {value!r}"
        )
    return value  # type: ignore[return-value]


def account_name(uid: int) -> str:
    """The account name of ``uid`` (``uid1003`` when the system has no name for it)."""
    import pwd

    uid = args.whole_number("uid", uid, minimum=0, hint="give an account's number, e.g. os.getuid()")
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid{uid}"


def class_dir() -> Path | None:
    """The class folder ``LABKIT_CLASS_DIR`` names, or None when it is unset (no class: nothing is shared)."""
    env = os.environ.get(ENV)
    if env is None:
        return None
    if not env.strip():
        raise ValueError(f"{ENV} is set but empty: unset it (no class folder), or set it to the class folder")
    return Path(env).expanduser()


@dataclass(frozen=True)
class ClassFolder:
    """A class folder as :func:`open_class` read it: ``path``, ``title``, ``names`` (pseudonyms or account names),
    ``simulated``, ``owner`` (the uid that wrote ``class.json``: the instructor) and the ``salt`` of learner ids."""

    path: Path
    title: str
    salt: str = field(repr=False)
    names: str = "pseudonyms"
    simulated: bool = False
    owner: int = 0

    def learner_of(self, uid: int) -> str:
        """The learner id of account ``uid`` in this class: a pseudonym, or the account name when asked for."""
        name = account_name(uid)
        if self.names == "accounts":
            return name
        return "l-" + hashlib.sha256(f"{self.salt}:{name}".encode()).hexdigest()[:10]

    def me(self) -> str:
        """This account's learner id."""
        return self.learner_of(os.getuid())

    def drop(self, kind: str, set_id: str | None = None) -> Path:
        """The drop directory of a label set (``kind="labels"``) or of the self-checks (``"progress"``)."""
        if kind == LABELS:
            return self.path / LABELS / _check_id("set_id", set_id)
        if kind == PROGRESS:
            return self.path / PROGRESS
        raise ValueError(f"kind must be {LABELS!r} or {PROGRESS!r}, got {kind!r}")


def open_class(path: str | os.PathLike | None = None) -> ClassFolder | None:
    """The class folder at ``path`` (default: ``LABKIT_CLASS_DIR``; None when that is unset), read from its
    ``class.json``. A folder without one, or whose ``class.json`` is a symlink or not the instructor's JSON, is an
    error that says what to run."""
    if path is None:
        path = class_dir()
    else:
        path = Path(path) if isinstance(path, os.PathLike) else path_arg("path", path)
    if path is None:
        return None
    config = path / CONFIG
    try:
        info = os.lstat(config)
    except FileNotFoundError:
        raise FileNotFoundError(
            f"{path} is not a class folder (no {CONFIG}): the instructor creates one with "
            "`python -m labkit class init FOLDER --group GROUP`"
        ) from None
    if not stat.S_ISREG(info.st_mode):
        raise ValueError(f"{config} is not a regular file (a symlink?): the class folder is not read through it")
    try:
        data = json.loads(config.read_text(encoding="utf-8"))
        names, salt = data["names"], data["salt"]
    except (ValueError, KeyError, TypeError) as err:
        raise ValueError(f"{config} is not a class folder's settings ({err}); re-create it with `class init`") from None
    if names not in NAMES or not (isinstance(salt, str) and len(salt) >= 16):
        raise ValueError(f"{config}: names must be one of {NAMES} and salt a hex string of 16 or more digits")
    return ClassFolder(path, str(data.get("title", "")), salt, names, bool(data.get("simulated")), info.st_uid)


def _group(group: str | int | None) -> int | None:
    if group is None or isinstance(group, int):
        return group
    import grp

    try:
        return grp.getgrnam(args.text("group", group)).gr_gid
    except KeyError:
        raise ValueError(f"group {group!r} does not exist: create it (groupadd) or give an existing group") from None


def init_class(
    path: str | os.PathLike,
    set_ids: tuple[str, ...] | list[str],
    group: str | int | None = None,
    title: str = "",
    names: str = "pseudonyms",
    simulated: bool = False,
) -> ClassFolder:
    """Create (or complete) the class folder at ``path``: ``class.json``, ``labels/<set id>/`` for each of
    ``set_ids`` and ``progress/``, with the modes in the module's doc. ``group`` (a name or gid) is the
    instructors' group: it reads every learner's file, so no learner may be in it; default the caller's own
    group. Running it again keeps the salt (learner ids stay the same) and adds the drop folders missing."""
    if names not in NAMES:
        raise ValueError(f"names must be one of {NAMES} ('accounts' only when the instructor asks), got {names!r}")
    set_ids = [_check_id("set id", s) for s in args.strings("set_ids", set_ids, allow_empty=False, unique=True)]
    path = Path(path)
    gid = _group(group)
    path.mkdir(parents=True, exist_ok=True)
    config = path / CONFIG
    old = json.loads(config.read_text(encoding="utf-8")) if config.is_file() and not config.is_symlink() else {}
    data = {"title": title or old.get("title", ""), "salt": old.get("salt") or secrets.token_hex(16),
            "names": names, "simulated": bool(simulated), "label_sets": sorted(set(old.get("label_sets", [])) |
                                                                              set(set_ids))}  # fmt: skip
    dirs = [(path, ROOT_MODE), (path / LABELS, ROOT_MODE), (path / PROGRESS, DROP_MODE)]
    dirs += [(path / LABELS / s, DROP_MODE) for s in set_ids]
    for folder, mode in dirs:
        folder.mkdir(exist_ok=True)
        if folder.is_symlink():
            raise ValueError(f"{folder} is a symlink: a class folder's folders must be its own")
        if gid is not None:
            os.chown(folder, -1, gid)
        os.chmod(folder, mode)
    tmp = path / f".{CONFIG}.tmp"
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    os.chmod(tmp, 0o644)
    if gid is not None:
        os.chown(tmp, -1, gid)
    os.replace(tmp, config)
    return open_class(path)  # type: ignore[return-value]


def _opener(path: str, flags: int) -> int:
    """Open ``path`` for appending as its owner only: never through a symlink, never a file of another account;
    a new file gets :data:`FILE_MODE` whatever the umask."""
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW, FILE_MODE)
    except PermissionError:
        if not os.path.lexists(path):
            raise PermissionError(
                f"cannot create {path}: its drop folder does not let this account write; ask your instructor"
            ) from None
        raise PermissionError(
            f"{path} exists and belongs to another account: nothing was written; ask your instructor to remove it"
        ) from None
    except OSError as err:
        if os.path.islink(path):
            raise PermissionError(f"{path} is a symlink: labels are written to a file of your own only") from None
        raise err
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise PermissionError(f"{path} is not a regular file: nothing was written")
        if info.st_uid != os.getuid():
            raise PermissionError(
                f"{path} belongs to another account (uid {info.st_uid}): nothing was written; ask your instructor "
                "to remove it"
            )
        if stat.S_IMODE(info.st_mode) != FILE_MODE:
            os.fchmod(fd, FILE_MODE)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _check_folder(folder: object) -> ClassFolder:
    if not isinstance(folder, ClassFolder):
        raise ValueError(f"folder must be a ClassFolder (open_class(path)), got {type(folder).__name__}")
    return folder


class Drop:
    """One learner's file in a drop directory of the class folder: created on opting in, appended to while opted
    in, removed on withdrawing. ``learner`` other than the account's own id is allowed only in a simulated class
    folder written by its instructor; ``clock`` gives each line's time (default: now, UTC)."""

    kind = ""

    def __init__(self, folder: ClassFolder, drop: Path, learner: str | None, clock: Callable[[], str] | None) -> None:
        self.folder = _check_folder(folder)
        if clock is not None:
            args.function("clock", clock, "lambda: '2025-03-04T10:15:00+00:00' (the time of each line)")
        own = folder.me()
        if learner is not None and learner != own:
            if not (folder.simulated and os.getuid() == folder.owner):
                raise ValueError(
                    f"learner {learner!r}: a learner writes only under their own id ({own}); other ids are for a "
                    "simulated class folder, written by its instructor"
                )
            _check_id("learner", learner)
        self.learner = learner or own
        self.path = drop / f"{self.learner}.jsonl"
        self.clock = clock or _now

    @property
    def opted_in(self) -> bool:
        """Has this learner opted in: is their file there (and theirs)?"""
        try:
            info = os.lstat(self.path)
        except OSError:
            return False
        return stat.S_ISREG(info.st_mode) and info.st_uid == os.getuid()

    def _has_drop(self) -> None:
        if not self.path.parent.is_dir() or self.path.parent.is_symlink():
            raise FileNotFoundError(
                f"the class folder has no drop folder {self.path.parent.relative_to(self.folder.path).as_posix()}: "
                "ask your instructor to run `python -m labkit class init` for it"
            )

    def _create(self) -> None:
        """Create this learner's file, empty, owner-only (opting in)."""
        self._has_drop()
        os.close(_opener(str(self.path), os.O_WRONLY | os.O_CREAT | os.O_APPEND))

    def _write(self, *records: dict) -> None:
        """Append one line per record (with this learner's id and the time), all at once."""
        self._has_drop()
        lines = [json.dumps({**r, "learner": self.learner, "time": self.clock()}, ensure_ascii=False) for r in records]
        append_lines(self.path, lines, opener=_opener)

    def withdraw(self) -> bool:
        """Stop sharing: remove this learner's file (True if there was one). Your own store keeps everything."""
        if not self.opted_in:
            return False
        self.path.unlink()
        return True


class LabelDrop(Drop):
    """A learner's labels of ``label_set`` in the class folder (``labels/<set id>/<learner id>.jsonl``)."""

    kind = LABELS

    def __init__(self, folder: ClassFolder, label_set: LabelSet, learner: str | None = None,
                 clock: Callable[[], str] | None = None) -> None:  # fmt: skip
        if not isinstance(label_set, LabelSet):
            raise ValueError(f"label_set must be a LabelSet, got {type(label_set).__name__}")
        self.label_set = label_set
        super().__init__(folder, _check_folder(folder).drop(LABELS, label_set.id), learner, clock)

    def _record(self, item: str, label: str | None) -> dict:
        if item not in self.label_set.items:
            raise ValueError(f"item {item!r} is not in label set {self.label_set.id!r}")
        if label is not None and label not in self.label_set.labels:
            raise ValueError(f"label must be one of {self.label_set.labels}, got {label!r}")
        return {"set": self.label_set.id, "item": item, "label": label}

    def opt_in(self, labels: Mapping[str, str] | None = None) -> int:
        """Opt in: create this learner's file and send ``labels`` (item -> label: the labels given so far), in
        the label set's order, in one append. Returns how many were sent."""
        labels = dict(labels or {})
        sent = [self._record(i, labels[i]) for i in self.label_set.items if i in labels]
        if sent:
            self._write(*sent)
        else:
            self._create()
        return len(sent)

    def add(self, item: str, label: str) -> bool:
        """Send one label when opted in (True), else nothing (False)."""
        if not self.opted_in:
            return False
        self._write(self._record(args.text("item", item), args.text("label", label)))
        return True

    def undo(self, item: str) -> bool:
        """Send an undo (``"label": null``) when opted in."""
        if not self.opted_in:
            return False
        self._write(self._record(args.text("item", item), None))
        return True


class ProgressDrop(Drop):
    """A learner's self-check results in the class folder (``progress/<learner id>.jsonl``): one line per check,
    ``{"exercise": "3.2", "verdict": "correct"}``."""

    kind = PROGRESS
    VERDICTS = ("correct", "not yet")

    def __init__(self, folder: ClassFolder, learner: str | None = None, clock: Callable[[], str] | None = None):
        super().__init__(folder, _check_folder(folder).drop(PROGRESS), learner, clock)

    def opt_in(self) -> None:
        """Opt in: create this learner's progress file (empty)."""
        self._create()

    def record(self, exercise: str, verdict: str) -> bool:
        """Send one self-check's verdict when opted in (True), else nothing (False)."""
        return self.record_many([(exercise, verdict)])

    def record_many(self, checks: list[tuple[str, str]]) -> bool:
        """Send several (exercise, verdict) pairs in one append when opted in (True), else nothing (False)."""
        for _, verdict in checks:
            if verdict not in self.VERDICTS:
                raise ValueError(f"verdict must be one of {self.VERDICTS}, got {verdict!r}")
        if not self.opted_in:
            return False
        self._write(*({"exercise": args.text("exercise", e), "verdict": v} for e, v in checks))
        return True
