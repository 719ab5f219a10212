"""What this machine has (CPUs, memory, free disk), and work sized against it.

Every layer above uses this to refuse a size before the work starts, with the
estimate in the message, instead of running out of memory (a traceback, or the
kernel's OOM killer) or running for hours without a word. Estimates are rough
(within a factor of about two); a size is refused only when even the estimate
cannot fit.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path


def cpu_count() -> int:
    """CPUs this process may run on (its affinity mask; the machine's count elsewhere)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def physical_memory() -> int:
    """Bytes of RAM of this machine (0 when the system does not say)."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):
        return 0


def free_disk(path: str | os.PathLike) -> int:
    """Bytes free for writing at ``path`` (its nearest existing ancestor); 0 when unknown."""
    where = Path(os.path.abspath(path))
    while not where.exists() and where.parent != where:
        where = where.parent
    try:
        return shutil.disk_usage(where).free
    except OSError:
        return 0


def human_bytes(n: float) -> str:
    """``1.5 GB`` (decimal units, as disks and ``free -h --si`` count)."""
    if n >= 1e18:
        return f"{n:.2g} bytes"
    for unit in ("bytes", "kB", "MB", "GB", "TB"):
        if n < 1000 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.3g} {unit}"
        n /= 1000
    return f"{n:.3g} TB"  # pragma: no cover - the loop returns


def human_count(n: float) -> str:
    """``12,345`` up to a billion, then ``1.2e+12``: sizes people can read."""
    return f"{n:,.0f}" if n < 1e9 else f"{n:.2g}"


def memory_shortfall(needed: float, available: int | None = None, where: str = "this machine") -> str | None:
    """None when ``needed`` bytes fit the machine's memory (or ``available`` bytes; an
    unknown amount fits), else the clause that says why not: ``about 2.1 TB of memory;
    this machine has 24 GB``."""
    available = physical_memory() if available is None else available
    if available <= 0 or needed <= available:
        return None
    return f"about {human_bytes(needed)} of memory; {where} has {human_bytes(available)}"


def disk_shortfall(needed: float, path: str | os.PathLike) -> str | None:
    """None when ``needed`` bytes fit the free disk at ``path`` (or it is unknown),
    else the clause that says why not."""
    free = free_disk(path)
    if free <= 0 or needed <= free:
        return None
    return f"about {human_bytes(needed)} on disk; {human_bytes(free)} are free there"
