"""SHA-256 of input files, read once: the one owner of the digest cache.

Every run names its inputs by checksum (the manifest; the shard keys that make a resumed
``agree score`` exact), and a model's weights are the big input: 287 MB for the paper's
2 x 650 LSTM, a quarter of a second of hashing on every call for a file that rarely
changes. So a digest is kept

* in this process, by (path, size, mtime, inode): asked twice, read once;
* on disk for files of at least :data:`MIN_CACHED_BYTES`, one small file per digest under
  ``$XDG_CACHE_HOME/agree/sha256`` (else ``~/.cache/agree/sha256``), named after the
  file's path, size, inode, device and its modification *and* change times in
  nanoseconds. Writing a file changes its ctime, which no user call can set back, so an
  entry is found again only for the very bytes it was computed from. As git's index does
  for its "racy" entries, a digest is stored only when the file was last changed
  :data:`SETTLED_SECONDS` before it was read (a write within the clock's tick after the
  hash would otherwise keep the stat and change the bytes).

An entry is written atomically (temporary file + rename); an entry that is not a digest
is ignored, and a cache that cannot be read or written (read-only home, full disk) only
costs the hashing. ``AGREE_DIGEST_CACHE=0`` turns the disk cache off; the directory can
be removed at any time.
"""
from __future__ import annotations

import hashlib
import os
import re
import time
from pathlib import Path

from formats.files import atomic_write_text

#: files smaller than this are hashed every time (a few ms; not worth an entry)
MIN_CACHED_BYTES = 16 << 20
#: a digest is stored only for a file unchanged for at least this long before it was read
SETTLED_SECONDS = 2.0
_HEX = re.compile(r"[0-9a-f]{64}")

#: digests computed in this process, by (path, size, mtime, inode)
_SEEN: dict[tuple, str] = {}


def user_cache() -> Path:
    """agree's directory in the user's cache: ``$XDG_CACHE_HOME/agree``, else ``~/.cache/agree``."""
    return Path(os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "agree")


def cache_dir() -> Path:
    return user_cache() / "sha256"


def sha256_of(path: str | os.PathLike) -> str:
    """The sha256 of a file's bytes (hex), read once while the file is unchanged."""
    st = os.stat(path)
    seen = (os.path.abspath(path), st.st_size, st.st_mtime_ns, st.st_ino)
    if seen not in _SEEN:
        entry = _entry(path, st)
        _SEEN[seen] = _cached(entry) or _computed(path, st, entry)
    return _SEEN[seen]


def _entry(path, st: os.stat_result) -> Path | None:
    if st.st_size < MIN_CACHED_BYTES or os.environ.get("AGREE_DIGEST_CACHE", "1") == "0":
        return None
    key = "\0".join(map(str, (os.path.abspath(path), st.st_size, st.st_ino, st.st_dev, st.st_mtime_ns,
                              st.st_ctime_ns)))
    return cache_dir() / hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()


def _cached(entry: Path | None) -> str | None:
    try:
        text = entry.read_text(encoding="ascii").strip() if entry is not None else ""
    except (OSError, UnicodeDecodeError):
        return None
    return text if _HEX.fullmatch(text) else None


def _computed(path, st: os.stat_result, entry: Path | None) -> str:
    started = time.time_ns()
    with open(path, "rb") as fh:
        digest = hashlib.file_digest(fh, "sha256").hexdigest()
    settled = started - max(st.st_mtime_ns, st.st_ctime_ns) >= SETTLED_SECONDS * 1e9
    if entry is not None and settled and os.stat(path).st_ctime_ns == st.st_ctime_ns:
        _store(entry, digest)
    return digest


def _store(entry: Path, digest: str) -> None:
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(entry, digest + "\n")
    except OSError:
        pass   # the cache only saves time: without it the file is hashed again next time
