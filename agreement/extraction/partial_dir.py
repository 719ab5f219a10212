"""``OUT.partial``, the work directory of ``agree extract-all`` (:mod:`agreement.extraction.batch`):
made with agree's marker in it (a directory without the marker is never touched), an
earlier ``OUT``'s finished languages hard-linked into it, kept after an interruption
for the same command to resume from, and left holding only what ``OUT`` is to hold."""
from __future__ import annotations

import contextlib
import logging
import os
import shutil
from pathlib import Path
from typing import Iterable, Sequence

from agreement.errors import AgreeError
from formats.files import is_output_of, make_tmp_dir

log = logging.getLogger(__name__)

#: written into OUT.partial when agree makes it, so only agree's own work directory is used
PARTIAL_MARKER = ".agree-partial"


def leave_work_dir(work: Path, command: str) -> None:
    """After a fault or an interruption: OUT.partial removed when it holds agree's
    marker alone (nothing to resume, so nothing is left behind); else kept, saying so,
    for the same command to resume from its finished languages."""
    with contextlib.suppress(OSError):
        entries = list(work.iterdir())
        if [p.name for p in entries] == [PARTIAL_MARKER]:
            shutil.rmtree(work)
            return
        finished = sum(is_output_of(p, command) for p in entries if p.is_dir())
        if finished:
            log.warning(f"Warning: {work} keeps the {finished} language(s) finished; the same command again "
                        f"keeps them and mines the rest")


def open_work_dir(target: Path, codes: Sequence[str], command: str) -> Path:
    """OUT.partial, ready: an interrupted run's kept as it is; the finished languages of
    an earlier OUT linked in (hard links: their files are never rewritten in place)."""
    work = target.with_name(target.name + ".partial")
    if work.exists() and not (work / PARTIAL_MARKER).is_file():
        raise AgreeError(f"{work} exists and was not made by `agree {command}`; move it away or choose "
                         f"another {{out}}", fields=True)
    if work.exists():
        log.info(f"resuming the interrupted run in {work}: the languages it finished are kept")
    work.mkdir(exist_ok=True)
    (work / PARTIAL_MARKER).write_text(f"agree {command} work directory\n", encoding="utf-8")
    carried = 0
    for code in codes:
        src, dst = target / code, work / code
        if not dst.exists() and is_output_of(src, command):
            tmp = make_tmp_dir(dst)
            shutil.rmtree(tmp)
            shutil.copytree(src, tmp, copy_function=_link_or_copy)
            os.replace(tmp, dst)
            carried += 1
    if carried:
        log.debug(f"{carried} languages of {target} linked into {work}")
    return work


def _link_or_copy(src: str, dst: str) -> None:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def finish_work_dir(work: Path, codes: Iterable[str], command: str) -> None:
    """Leave in OUT.partial only what OUT is to hold: language directories of earlier
    runs that are not in this one are removed (they are agree's own), and the marker."""
    keep = set(codes)
    for entry in work.iterdir():
        if entry.is_dir() and entry.name not in keep and is_output_of(entry, command):
            shutil.rmtree(entry)
    (work / PARTIAL_MARKER).unlink(missing_ok=True)
