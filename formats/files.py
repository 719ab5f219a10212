"""The ``--out`` policy of every command, in one place.

(:func:`atomic_output_dir` is the policy for a command's whole output directory;
``lm.training.train`` uses :func:`claim_output` for ``OUT`` and ``OUT.partial``; :func:`rooted`
says where a relative path is read or written.)

The rules, so that nothing a user did not ask agree to replace is ever lost:

1. The result is built in a temporary sibling ``.OUT.tmp-PID-*`` and renamed to
   ``OUT`` only when complete (never half-written).
2. An existing ``OUT`` is replaced only when it is empty or its ``manifest.json``
   says it is an output of the same ``agree`` command; anything else needs
   ``--force``.
3. ``OUT`` may not be, contain or lie inside an input (symlinks resolved);
   ``--force`` does not change that.
4. ``.OUT.lock`` (pid, host, start time; created with O_EXCL) is held while a run
   writes ``OUT`` (and train-lm's ``OUT.partial``): a second writer stops.
5. Leftovers of a killed run (``.OUT.tmp-PID-*``, ``.OUT.old-PID``, a stale lock)
   are recognised by their pid being gone and removed, with one stderr line.
"""
from __future__ import annotations

import json
import logging
import os
import re
import shutil
import socket
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterable, Iterator

from formats.errors import AgreeError
from treebanks.errors import literal

MANIFEST = "manifest.json"
_LEFTOVER = re.compile(r"\.(?P<name>.+)\.(?:tmp|old)-(?P<pid>\d+)(?:-.*)?$")
_YOUNG_LOCK_S = 10.0   # an unreadable lock younger than this is being written, not stale
log = logging.getLogger(__name__)


def resolve_out(out: str | os.PathLike) -> Path:
    """``out`` as an absolute path with symlinks, ``.`` and ``..`` resolved
    (``--out .`` is the current directory, replaced under the same rules)."""
    resolved = Path(os.path.realpath(Path(out).expanduser()))
    if resolved.parent == resolved:
        raise AgreeError(f"{literal(out)}: cannot write to the root directory; choose another {{out}}",
                         fields=True)
    return resolved


def shown(out: str | os.PathLike) -> str:
    """How messages name ``out``: as typed, except ``.``/``..`` which say where they are."""
    return str(out) if Path(out).name not in ("", ".", "..") else str(resolve_out(out))


def is_output_of(directory: Path, command: str | None) -> bool:
    """Whether ``directory`` holds a manifest.json written by ``agree COMMAND``
    (any agree command when ``command`` is None)."""
    try:
        with open(Path(directory) / MANIFEST, encoding="utf-8") as fh:
            manifest = json.load(fh)
    except (OSError, ValueError):
        return False
    if not isinstance(manifest, dict) or not isinstance(manifest.get("command"), str):
        return False
    return command is None or manifest["command"] == command


def check_out(out: str | os.PathLike, command: str | None, inputs: Iterable = (),
              force: bool = False) -> Path:
    """Raise :class:`AgreeError` unless ``out`` may be written by ``agree COMMAND``
    (rules 2 and 3 above); returns the resolved path."""
    target = resolve_out(out)
    name = shown(out)
    for given in inputs:
        if given is None:
            continue
        source = Path(os.path.realpath(Path(given).expanduser()))
        if source == target:
            relation = "is"
        elif target in source.parents:
            relation = "contains"
        elif source in target.parents:
            relation = "lies inside"
        else:
            continue
        raise AgreeError(f"{literal(name)}: {{out}} {relation} the input {literal(given)}; choose another "
                         "{out} (agree never writes into its inputs)", fields=True)
    ancestor = target.parent
    while not ancestor.exists():
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise AgreeError(f"{literal(name)}: {literal(ancestor)} is a file, not a directory; "
                         "choose another {out}", fields=True)
    check_replaceable(target, command, force, name)
    return target


def check_replaceable(target: Path, command: str | None, force: bool, name: str | None = None) -> None:
    """Rule 2: an existing ``target`` must be a directory that is empty, an output of
    the same command, or given up with ``--force``."""
    name = name or str(target)
    if not os.path.lexists(target):
        return
    if not target.is_dir():
        raise AgreeError(f"{literal(name)}: exists and is not a directory; choose another {{out}}",
                         fields=True)
    if force or is_output_of(target, command):
        return
    held = sorted(os.listdir(target))
    if held:
        listed = ", ".join(held[:5]) + (f", ... ({len(held)} entries)" if len(held) > 5 else "")
        what = f"`agree {command}`" if command else "agree"
        raise AgreeError(f"{literal(name)}: exists and is not an output of {what} (holds {literal(listed)}); "
                         "use {force} to replace it", fields=True)


def lock_path(target: Path) -> Path:
    return target.with_name(f".{target.name}.lock")


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` exists here (a pid we may not signal exists too)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _lock_owner(lock: Path) -> dict | None:
    """The lock's content, or None when it is unreadable (a writer crashed mid-write)."""
    try:
        owner = json.loads(lock.read_text(encoding="utf-8"))
        return owner if isinstance(owner, dict) and isinstance(owner.get("pid"), int) else None
    except (OSError, ValueError):
        return None


def _owner_gone(lock: Path, owner: dict | None) -> bool:
    if owner is None:
        try:
            return time.time() - lock.stat().st_mtime > _YOUNG_LOCK_S
        except FileNotFoundError:
            return True
    if owner.get("host") != socket.gethostname():
        return False                     # another machine's run: we cannot tell, keep it
    return not pid_alive(owner["pid"])


@contextmanager
def output_lock(target: Path) -> Iterator[Path]:
    """Hold ``.OUT.lock`` beside ``target`` (rule 4), removing a stale one (rule 5)."""
    lock = lock_path(target)
    mine = {"pid": os.getpid(), "host": socket.gethostname(),
            "started": time.strftime("%Y-%m-%d %H:%M:%S %Z")}
    for _ in range(3):
        try:
            fd = _create(lock)
        except FileExistsError:
            owner = _lock_owner(lock)
            if not _owner_gone(lock, owner):
                who = (f"pid {owner['pid']} on {owner.get('host')}, started {owner.get('started')}"
                       if owner else "a run starting now")
                raise AgreeError(f"{target}: another agree run is writing it ({who}); wait for it to "
                              f"finish, or delete {lock} if that run is gone") from None
            lock.unlink(missing_ok=True)
            log.info(f"removed the stale lock {lock} (its run, pid "
                     f"{owner['pid'] if owner else '?'}, is gone)")
            continue
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(mine, fh)
        except BaseException as e:   # a full disk (at the write or the close), or a signal
            lock.unlink(missing_ok=True)
            if isinstance(e, OSError):
                raise named(e, target.parent) from None
            raise
        break
    else:
        raise AgreeError(f"{lock}: could not take the lock; delete it if no agree run is writing {target}")
    try:
        yield lock
    finally:
        if (_lock_owner(lock) or {}).get("pid") == os.getpid():
            lock.unlink(missing_ok=True)


def _create(lock: Path) -> int:
    try:
        return os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except FileExistsError:
        raise
    except OSError as e:   # read-only, no permission ...: name the directory the user chose
        raise type(e)(e.errno, e.strerror, str(lock.parent)) from None


def remove_leftovers(target: Path) -> list[Path]:
    """Rule 5: remove ``.OUT.tmp-PID-*`` / ``.OUT.old-PID`` whose process is gone."""
    removed = []
    try:
        siblings = list(target.parent.iterdir())
    except OSError:
        return removed
    for path in siblings:
        m = _LEFTOVER.match(path.name)
        if not m or m["name"] != target.name or pid_alive(int(m["pid"])):
            continue
        shutil.rmtree(path, ignore_errors=True) if path.is_dir() else path.unlink(missing_ok=True)
        log.info(f"removed {path}, left by an interrupted run (pid {m['pid']}, gone)")
        removed.append(path)
    return removed


@contextmanager
def claim_output(out: str | os.PathLike, command: str | None, inputs: Iterable = (),
                 force: bool = False) -> Iterator[Path]:
    """Check ``out`` (rules 2, 3), hold its lock (4), clean leftovers (5); yields the
    resolved target. The parent directory is created if missing."""
    target = check_out(out, command, list(inputs), force)
    target.parent.mkdir(parents=True, exist_ok=True)
    with output_lock(target):
        remove_leftovers(target)
        try:
            yield target
        except OSError as e:
            raise named(e, target) from None


def named(e: OSError, path: Path) -> OSError:
    """``e`` naming ``path`` when it names no file (a full disk surfaces at a buffered
    write or close, whose OSError carries no file name)."""
    if e.filename is not None or not e.errno:
        return e
    return type(e)(e.errno, e.strerror or os.strerror(e.errno), str(path))


def make_tmp_dir(target: Path) -> Path:
    """A fresh ``.OUT.tmp-PID-*`` beside ``target`` with the permissions of a plain mkdir."""
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-{os.getpid()}-", dir=target.parent))
    try:
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o777 & ~mask)   # mkdtemp makes it 0700; outputs are for sharing
    except BaseException:              # Ctrl-C here too: leave nothing behind
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return tmp


def commit_dir(src: Path, target: Path, command: str | None, force: bool = False) -> None:
    """Rename the finished ``src`` to ``target`` (rule 1), re-checking rule 2 first
    (something may have appeared at ``target`` while the run worked)."""
    check_replaceable(target, command, force)
    replace_dir(src, target)


def replace_dir(src: Path, dst: Path, overwrite: bool = True) -> None:
    """Move directory ``src`` to ``dst``; an existing ``dst`` is swapped out first
    (to ``.DST.old-PID``), then removed, so ``dst`` is never missing or half-written.
    Callers decide whether ``dst`` may be replaced (:func:`check_replaceable`)."""
    src, dst = Path(src), Path(dst)
    if os.path.lexists(dst):
        if not overwrite:
            shutil.rmtree(src, ignore_errors=True)
            raise FileExistsError(f"{dst} exists")
        old = dst.with_name(f".{dst.name}.old-{os.getpid()}")
        os.replace(dst, old)
        os.replace(src, dst)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(src, dst)


@contextmanager
def atomic_output_dir(out: str | os.PathLike, command: str | None = None, inputs: Iterable = (),
                      force: bool = False) -> Iterator[Path]:
    """Yield a fresh temporary directory beside ``out``; on success it replaces ``out``.

    The one ``--out`` policy (see :mod:`formats.files`): ``out`` is checked before any
    work (an existing directory is replaced only when it is empty or an output of
    ``agree COMMAND``, or with ``force``; it may not be, contain or lie inside one
    of ``inputs``), locked while the command runs, and leftovers of killed runs
    beside it are removed. On any exception (or KeyboardInterrupt) the temporary
    directory is removed and ``out`` is left exactly as it was.
    """
    with claim_output(out, command, inputs, force) as target:
        tmp = None
        try:
            tmp = make_tmp_dir(target)
            yield tmp
        except BaseException as e:
            if tmp is not None:
                shutil.rmtree(tmp, ignore_errors=True)
            if isinstance(e, OSError) and tmp is not None:
                raise _in_target(e, tmp, target) from None
            raise
        try:
            commit_dir(tmp, target, command, force)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise


def _in_target(e: OSError, tmp: Path, target: Path) -> OSError:
    """``e`` naming the file as it would have been in ``target``, not in the temporary
    directory that is gone by the time the message is read (a full disk at model.pt)."""
    try:
        inside = Path(e.filename).relative_to(tmp) if e.filename is not None else None
    except (TypeError, ValueError):
        inside = None
    if inside is None:
        return e
    return type(e)(e.errno, e.strerror or str(e), str(target / inside))


def rooted(root: str | os.PathLike | None, path: str | os.PathLike | None) -> str | os.PathLike | None:
    """``path`` read from ``root`` (a relative path is taken inside it; ``root`` None:
    the working directory, and ``path`` is returned as it is). A library verb given
    ``root`` reads ``rooted(root, p)`` and records ``p`` as given, so that a pipeline
    built inside one directory (agree demo) records paths relative to it without
    changing the working directory."""
    if path is None or root is None:
        return path
    return Path(root, path)


def as_given(path: str | os.PathLike, root: str | os.PathLike | None) -> str | os.PathLike:
    """The inverse of :func:`rooted`: a path found under ``root`` as the path relative
    to it that the caller named (unchanged when ``root`` is None or it lies elsewhere)."""
    if root is None:
        return path
    try:
        return Path(path).relative_to(root)
    except ValueError:
        return path


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` to ``path`` (UTF-8) through a temporary file and a rename."""
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file and a rename."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes it 0600; match a plain open()
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
