"""Reading whole treebanks fast: parallel processes and a parse cache.

:func:`load_columns` reads treebank files (still parsed by ``conllu``, through
:func:`treebanks.reader._read_rows`) into :class:`~treebanks.columns.TreebankColumns`
(compact arrays; see :mod:`treebanks.columns`).

* **in parallel**: the files that must be parsed go to worker processes (at most
  ``workers``); a big plain ``.conllu`` file is cut at blank lines into pieces
  parsed side by side (one file is often most of a treebank: EWT's train is 80%).
  A worker sends back its columns as one ``marshal`` blob (strings + array bytes);
* **cached**: with a ``cache_dir``, each file's blob is stored under the SHA-256
  of its bytes (and this module's format version), so a second run, with any
  other settings, reads it back instead of parsing. A cache file is written
  atomically (temporary file + rename) and starts with the SHA-256 of its
  payload, checked before the payload is decoded: a truncated or corrupted entry
  is ignored and rewritten, never trusted. Entries are never deleted; the
  directory can be removed at any time.

The default directory (:func:`default_cache_dir`) is ``$XDG_CACHE_HOME/agree/treebanks``,
else ``~/.cache/agree/treebanks``; ``agree extract --no-cache`` bypasses it.
"""
from __future__ import annotations

import hashlib
import logging
import mmap
import os
import tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Sequence

import numpy as np

from treebanks.columns import _STRINGS, ColumnSentence, FileColumns, TreebankColumns
from treebanks.errors import TreebankError
from treebanks.progress import progress
from treebanks.reader import SUFFIXES, _read_rows

log = logging.getLogger(__name__)

__all__ = ["ColumnSentence", "TreebankColumns", "default_cache_dir", "file_sha256", "load_columns",
           "load_treebanks"]


#: bump when the columns or the reader's merge rule change: old entries are then ignored
FORMAT = 6
_MAGIC = b"agree-treebank-cache\n"
#: a plain file is cut into pieces of at least this many bytes for parallel parsing
MIN_PIECE = 1 << 20


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "agree" / "treebanks"


def file_sha256(path: Path) -> str:
    # the ground floor imports nothing of ours, so not formats.digests.sha256_of
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _parse(job: tuple[str, tuple[int, int, int] | None]) -> bytes:
    """Parse one file or piece (in a worker) -> :meth:`FileColumns.encode` blob.
    Settings never enter: the same blob serves every ``extract`` option."""
    path, piece = job
    rows, sizes, shifts, lines, sent_ids = [], [], [], [], []
    try:
        for sent_id, line, words, shift in _read_rows(Path(path), piece):
            rows.extend(words)  # the words' columns are made at the end (C loops, not one per word)
            sizes.append(len(words))
            shifts.append(shift)
            lines.append(line)
            sent_ids.append(sent_id)
    except TreebankError:
        _depths(rows, sizes, shifts, lines, path)  # a head cycle before the error is met first
        raise
    heads, depths = _depths(rows, sizes, shifts, lines, path)
    cols = list(zip(*rows)) or [()] * 7
    tables = [list(dict.fromkeys(cols[k])) for k in (0, 1, 2, 3, 5)]  # distinct strings, first seen first
    ids = [np.fromiter(map({v: i for i, v in enumerate(t)}.__getitem__, cols[k]), dtype=np.int64, count=len(rows))
           for t, k in zip(tables, (0, 1, 2, 3, 5))]
    arrays = dict(zip(_STRINGS, ids), starts=np.concatenate([[0], np.cumsum(sizes)]), lines=lines, head=heads,
                  depth=depths, space=np.fromiter(cols[6], dtype=np.int8, count=len(rows)))
    return FileColumns(path, tuple(tables), sent_ids, arrays).count_analyses().encode()


def _depths(rows, sizes, shifts, lines, path) -> tuple[np.ndarray, np.ndarray]:
    """0-based heads (-1: root) and each word's arcs to the root, for a whole file
    at once (one step up per round, for every word still climbing); TreebankError
    on the first word, in file order, whose head chain never reaches a root."""
    starts = np.concatenate([[0], np.cumsum(sizes, dtype=np.int64)])
    base = np.repeat(starts[:-1], sizes)
    heads = np.fromiter((w[4] for w in rows), dtype=np.int64, count=len(rows)) - np.repeat(
        np.asarray(shifts, dtype=np.int64), sizes)
    up = np.where(heads >= 0, base + heads, -1)
    depth = np.zeros(len(rows), dtype=np.int64)
    climbing = np.flatnonzero(up >= 0)
    at = up[climbing]
    for _ in range(max(sizes, default=0)):
        if not len(climbing):
            return heads, depth
        depth[climbing] += 1
        at = up[at]
        keep = at >= 0
        climbing, at = climbing[keep], at[keep]
    if not len(climbing):
        return heads, depth
    k = int(climbing.min())
    s = int(np.searchsorted(starts, k, side="right")) - 1
    raise TreebankError(f"{path}:{lines[s]}: the heads do not form a tree (word {k - starts[s] + 1} is in a cycle)")


def _join(parts: list[FileColumns], source: str) -> FileColumns:
    """The pieces of one file as one: string tables merged, sentences without a
    ``# sent_id`` numbered in the whole file, as :func:`_read_file` numbers them."""
    if not sum(len(p) for p in parts):
        raise TreebankError(f"{source}: empty treebank (no sentences)")
    tables, arrays = [], {}
    for k, name in enumerate(_STRINGS):
        merged: dict[str, int] = {}
        maps = [np.array([merged.setdefault(v, len(merged)) for v in p.tables[k]], dtype=np.int64)
                for p in parts]
        tables.append(list(merged))
        arrays[name] = np.concatenate([m[p.arrays[name]] for m, p in zip(maps, parts)])
    offsets = np.cumsum([0] + [int(p.arrays["starts"][-1]) for p in parts])
    arrays["starts"] = np.concatenate([p.arrays["starts"][:-1] + o for p, o in zip(parts, offsets)]
                                      + [offsets[-1:]])
    for name in ("lines", "head", "depth", "space"):
        arrays[name] = np.concatenate([p.arrays[name] for p in parts])
    sent_ids = [sid or str(k) for k, sid in enumerate((s for p in parts for s in p.sent_ids), start=1)]
    return FileColumns(source, tuple(tables), sent_ids, arrays).count_analyses()


def _entry(cache_dir: Path, digest: str) -> Path:
    return cache_dir / f"{digest}.v{FORMAT}"


def _load_entry(path: Path) -> bytes | None:
    """The payload of a cache entry, or None when absent, truncated or corrupted."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    head = len(_MAGIC)
    if not data.startswith(_MAGIC) or len(data) < head + 32:
        return None
    payload = data[head + 32:]
    if hashlib.sha256(payload).digest() != data[head:head + 32]:
        return None
    return payload


def _store_entry(path: Path, payload: bytes) -> None:
    """Write atomically; a cache that cannot be written is only slower, never an error."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(_MAGIC + hashlib.sha256(payload).digest() + payload)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError as e:
        log.warning(f"warning: cannot write the treebank cache {path.parent} ({e.strerror or e})")


def _pieces(path: Path, size: int, target: int) -> list[tuple[int, int, int] | None]:
    """Byte ranges (start, end, lines before) of a plain file cut at blank lines into
    pieces of about ``target`` bytes; ``[None]`` (the whole file) when it is small,
    compressed, or has carriage returns (line counts would need universal newlines)."""
    if size < 2 * target or not path.name.endswith(SUFFIXES[0]):
        return [None]
    # mapped, not read: a treebank file can be hundreds of MB, and only one piece
    # at a time is ever copied (to count its lines)
    with open(path, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as data:
        if data.find(b"\r") >= 0:
            return [None]
        cuts = [0]
        while True:
            q = data.find(b"\n\n", cuts[-1] + target)
            if q < 0 or len(data) - (q + 2) < target // 2:
                break
            cuts.append(q + 2)  # the next piece starts on the line after a blank one
        if len(cuts) == 1:
            return [None]
        cuts.append(len(data))
        before = [0]
        for a, b in zip(cuts, cuts[1:]):
            before.append(before[-1] + data[a:b].count(b"\n"))
    return [(a, b, n) for a, b, n in zip(cuts, cuts[1:], before)]


def _parse_files(files: Sequence[Path], workers: int | None) -> list[FileColumns]:
    """Parse ``files`` (in worker processes when there is more than one job)."""
    n = workers if workers else (os.cpu_count() or 1)
    sizes = [f.stat().st_size for f in files]
    target = max(MIN_PIECE, sum(sizes) // (2 * n)) if n > 1 else max(sizes) + 1
    jobs = [(k, (str(f), piece)) for k, (f, size) in enumerate(zip(files, sizes))
            for piece in _pieces(f, size, target)]
    bar = progress(log, total=len(jobs), unit=" part", desc="parsing")   # silenced with the info lines
    parts: list[list[FileColumns]] = [[] for _ in files]
    try:
        if min(n, len(jobs)) > 1:
            with ProcessPoolExecutor(max_workers=min(n, len(jobs))) as pool:
                # biggest first, so that the last job to start is a small one; results
                # (and the first error) are taken in file order
                size = [sizes[k] if piece is None else piece[1] - piece[0] for k, (_f, piece) in jobs]
                futures = {j: pool.submit(_parse, jobs[j][1]) for j in sorted(range(len(jobs)), key=lambda j: -size[j])}
                try:
                    for j, (k, _job) in enumerate(jobs):
                        parts[k].append(FileColumns.decode(futures[j].result(), str(files[k])))
                        bar.update()
                except BaseException:
                    for f in futures.values():  # an error (or ^C): do not start the others
                        f.cancel()
                    raise
        else:
            for k, job in jobs:
                parts[k].append(FileColumns.decode(_parse(job), str(files[k])))
                bar.update()
    finally:
        bar.close()
    return [p[0] if len(p) == 1 else _join(p, str(f)) for p, f in zip(parts, files)]


def load_columns(files: Sequence[Path], *, cache_dir: str | os.PathLike | None = None,
                 workers: int | None = None) -> tuple[TreebankColumns, dict]:
    """All words of ``files`` in order as :class:`TreebankColumns`, and
    ``{"cached": k, "parsed": m}`` files.

    ``workers``: processes parsing (None: as many as CPUs; 1: parse here).
    TreebankError as :func:`~treebanks.reader.read_treebanks` raises it."""
    cache = Path(cache_dir) if cache_dir is not None else None
    columns: dict[int, FileColumns] = {}
    digests: dict[int, str] = {}
    for k, f in enumerate(files):
        if not f.is_file():
            raise TreebankError(f"{f}: no such file")
        if cache is not None:
            digests[k] = file_sha256(f)
            payload = _load_entry(_entry(cache, digests[k]))
            if payload is not None:
                columns[k] = FileColumns.decode(payload, str(f))
    todo = [k for k in range(len(files)) if k not in columns]
    if todo:
        for k, parsed in zip(todo, _parse_files([files[k] for k in todo], workers)):
            columns[k] = parsed
            if cache is not None:
                _store_entry(_entry(cache, digests[k]), parsed.encode())
    return (TreebankColumns([columns[k] for k in range(len(files))]),
            {"cached": len(files) - len(todo), "parsed": len(todo)})


def load_treebanks(files: Sequence[Path], *, cache_dir: str | os.PathLike | None = None,
                   workers: int | None = None) -> tuple[list[ColumnSentence], dict]:
    """:func:`load_columns` as a list of sentences (:class:`ColumnSentence`)."""
    tb, reading = load_columns(files, cache_dir=cache_dir, workers=workers)
    return [tb.sentence(k) for k in range(len(tb))], reading
