"""Reading whole treebanks fast: parallel processes and a parse cache.

:func:`load_treebanks` returns the same :class:`~treebanks.reader.Sentence`
records as :func:`~treebanks.reader.read_treebanks` (still parsed by ``conllu``),
but

* **in parallel**: the files that must be parsed go to worker processes (one per
  file, at most ``workers``); a worker sends back only the columns mining needs
  (form, lemma, UPOS, FEATS, head, deprel per word, after the multiword merge) as
  a ``marshal`` blob, several times cheaper to move between processes than
  pickled records;
* **cached**: with a ``cache_dir``, each file's columns are stored under the
  SHA-256 of its bytes (and this module's format version), so a second run, with
  any other settings, reads them back instead of parsing. A cache file is
  written atomically (temporary file + rename) and starts with the SHA-256 of
  its payload, checked before the payload is decoded: a truncated or corrupted
  entry is ignored and rewritten, never trusted. Entries are never deleted; the
  directory can be removed at any time.

The default directory (:func:`default_cache_dir`) is ``$XDG_CACHE_HOME/agree/treebanks``,
else ``~/.cache/agree/treebanks``; ``agree extract --no-cache`` bypasses it.
"""
from __future__ import annotations

import hashlib
import marshal
import os
import sys
import tempfile
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Sequence

from treebanks.errors import TreebankError
from treebanks.reader import Sentence, Token, _read_file

#: bump when the columns or the reader's merge rule change: old entries are then ignored
FORMAT = 3
_MAGIC = b"agree-treebank-cache\n"


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "agree" / "treebanks"


def file_sha256(path: Path) -> str:
    # the ground floor imports nothing of ours, so not formats.files.sha256_of
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _columns(path: str) -> bytes:
    """Parse one file (in a worker) -> marshal blob: per sentence (sent_id, line,
    rows, depths), and the file's analysis counts ``{(form, lemma, upos, feats): n}``
    (what the paradigm table needs, so a cached run need not count tokens again).
    Settings never enter: the same blob serves every ``extract`` option."""
    from agreement.mining import tree_depths  # the miner's own rule (and its cycle error)

    sents, counts = [], Counter()
    for s in _read_file(Path(path)):
        cols = tuple(zip(*s.tokens))[1:]  # form, lemma, upos, feats, head, deprel columns
        counts.update(zip(*cols[:4]))
        sents.append((s.sent_id, s.line, cols, tree_depths(s)))
    return marshal.dumps((sents, dict(counts)))


class ColumnSentence:
    """A :class:`~treebanks.reader.Sentence` kept as columns (``cols``: forms,
    lemmas, upos, feats, heads, deprels); its ``tokens`` are built on first use
    only. The miner reads the columns; only the few sentences that give items
    ever build their tokens, which is most of what makes a cached run fast."""
    __slots__ = ("sent_id", "source", "line", "depths", "cols", "_tokens")

    def __init__(self, sent_id: str, cols: tuple, source: str, line: int, depths: tuple):
        self.sent_id, self.cols, self.source, self.line, self.depths = sent_id, cols, source, line, depths
        self._tokens = None

    @property
    def tokens(self) -> tuple[Token, ...]:
        if self._tokens is None:
            self._tokens = tuple(map(Token, range(len(self.cols[0])), *self.cols))
        return self._tokens

    forms = property(lambda self: self.cols[0])
    where = property(lambda self: f"{self.source}:{self.line}")

    def sentence(self) -> Sentence:
        return Sentence(self.sent_id, self.tokens, self.source, self.line, self.depths)

    def __eq__(self, other) -> bool:
        if isinstance(other, ColumnSentence):
            other = other.sentence()
        return self.sentence() == other

    __hash__ = None

    def __repr__(self) -> str:
        return f"ColumnSentence({self.sent_id!r}, {self.where})"


def _sentences(blob: bytes, source: str) -> tuple[list[ColumnSentence], dict]:
    sents, counts = marshal.loads(blob)
    return [ColumnSentence(sent_id, cols, source, line, depths) for sent_id, line, cols, depths in sents], counts


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
        print(f"warning: cannot write the treebank cache {path.parent} ({e.strerror or e})", file=sys.stderr)


def load_treebanks(files: Sequence[Path], *, cache_dir: str | os.PathLike | None = None,
                   workers: int | None = None, counts: Counter | None = None) -> tuple[list[ColumnSentence], dict]:
    """All sentences of ``files`` in order (as :class:`ColumnSentence`), and
    ``{"cached": k, "parsed": m}`` files;
    with ``counts``, adds every (form, lemma, upos, feats) analysis's token count to it.

    ``workers``: processes for the files to parse (None: one per file, at most the
    CPU count; 1: parse here). TreebankError as :func:`read_treebanks` raises it."""
    cache = Path(cache_dir) if cache_dir is not None else None
    blobs: dict[int, bytes] = {}
    digests: dict[int, str] = {}
    todo = []
    for k, f in enumerate(files):
        if not f.is_file():
            raise TreebankError(f"{f}: no such file")
        if cache is not None:
            digests[k] = file_sha256(f)
            payload = _load_entry(_entry(cache, digests[k]))
            if payload is not None:
                blobs[k] = payload
                continue
        todo.append(k)
    n = min(len(todo), workers if workers else (os.cpu_count() or 1))
    if n > 1:
        with ProcessPoolExecutor(max_workers=n) as pool:
            for k, blob in zip(todo, pool.map(_columns, [str(files[k]) for k in todo])):
                blobs[k] = blob
    else:
        for k in todo:
            blobs[k] = _columns(str(files[k]))
    if cache is not None:
        for k in todo:
            _store_entry(_entry(cache, digests[k]), blobs[k])
    sentences = []
    for k, f in enumerate(files):
        sents, file_counts = _sentences(blobs[k], str(f))
        sentences.extend(sents)
        if counts is not None:
            counts.update(file_counts)
    return sentences, {"cached": len(files) - len(todo), "parsed": len(todo)}
