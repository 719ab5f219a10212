"""How much ``agree nonce`` will make, said (or refused) before it starts.

``--n`` variants of every original item are held in memory and written to
items.tsv: ``--n 99999999999999999999`` would run until killed. :func:`check_nonce_size`
refuses a size whose rows cannot fit the memory or the disk (with the estimate),
and warns when one will take long.
"""
from __future__ import annotations

import logging
import os
from pathlib import Path

from formats.resources import disk_shortfall, human_count, memory_shortfall
from nonce.errors import NonceError

log = logging.getLogger(__name__)

#: sentences a second (README, benchmarks/bench_nonce.py: 825 to 1,128 on 2 cores)
SENTENCES_PER_S = 1000
#: an item in memory takes about this many times its items.tsv row
MEMORY_PER_ROW_BYTE = 6
#: runs expected to take longer than this get a warning first
WARN_AFTER_S = 600


def check_nonce_size(originals: int, n: int, items_file: str | os.PathLike, out: str | os.PathLike) -> None:
    """Refuse ``n`` variants of ``originals`` items when their rows cannot fit the
    memory or the disk at ``out``; warn when they will take more than ten minutes.
    ``items_file``: the source items.tsv, whose rows give the size of one."""
    rows = originals * n
    if rows == 0:
        return
    row_bytes = _mean_row_bytes(Path(items_file), originals)
    what = f"{human_count(originals)} items x {human_count(n)} variants = {human_count(rows)} sentences"
    short = memory_shortfall(rows * row_bytes * MEMORY_PER_ROW_BYTE) or disk_shortfall(rows * row_bytes, out)
    if short is not None:
        raise NonceError(f"{human_count(n)} variants per item are too many: {what} need {short}; "
                         "ask for fewer")
    seconds = rows / SENTENCES_PER_S
    if seconds > WARN_AFTER_S:
        log.info(f"Warning: {what} will take about {seconds / 60:,.0f} minutes "
                 f"(at about {SENTENCES_PER_S:,} sentences/s)")


def _mean_row_bytes(path: Path, rows: int) -> float:
    try:
        return max(path.stat().st_size / max(rows, 1), 1.0)
    except OSError:
        return 500.0
