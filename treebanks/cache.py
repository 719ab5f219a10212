"""Reading whole treebanks fast: compact columns, parallel processes, a parse cache.

:func:`load_columns` reads treebank files (still parsed by ``conllu``, through
:func:`treebanks.reader._read_file`) into a :class:`TreebankColumns`: each
word's form, lemma, UPOS, FEATS, head, deprel (after the multiword merge) and
depth as NumPy integer arrays, each distinct string stored once per file. The
miner (:meth:`agreement.mining.ConstructionMiner.add_columns`) works on whole
arrays, and only the few sentences that give items are ever built as records
(:class:`ColumnSentence`): no per-word Python object is made on a cached run.

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

import bisect
import hashlib
import marshal
import os
import sys
import tempfile
from itertools import repeat
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Sequence

import numpy as np

from treebanks.errors import TreebankError
from treebanks.paradigms import Analysis
from treebanks.reader import SUFFIXES, Sentence, Token, _read_rows

#: bump when the columns or the reader's merge rule change: old entries are then ignored
FORMAT = 5
_MAGIC = b"agree-treebank-cache\n"
#: a plain file is cut into pieces of at least this many bytes for parallel parsing
MIN_PIECE = 1 << 20
_STRINGS = ("form", "lemma", "upos", "feats", "deprel")  # string columns, ids into per-file tables
#: per analysis (distinct form, lemma, upos, feats ids): the ids and its tokens
_ANALYSES = ("an_form", "an_lemma", "an_upos", "an_feats", "an_count")
_ARRAYS = ("starts", "lines") + _STRINGS + ("head", "depth") + _ANALYSES


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "agree" / "treebanks"


def file_sha256(path: Path) -> str:
    # the ground floor imports nothing of ours, so not lm.files.sha256_of
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _pack(values) -> tuple[str, bytes]:
    a = np.asarray(values, dtype=np.int64)
    lo, hi = (int(a.min()), int(a.max())) if a.size else (0, 0)
    dtype = next(t for t in (np.int8, np.int16, np.int32, np.int64)
                 if np.iinfo(t).min <= lo and hi <= np.iinfo(t).max)
    return np.dtype(dtype).str, a.astype(dtype).tobytes()


class FileColumns:
    """One file's words as arrays: ``starts`` (first word of each sentence, and the
    total), ``lines`` (each sentence's first line), ids into ``tables`` for the five
    string columns, ``head`` (0-based in the sentence, -1 for the root), ``depth``
    (arcs to the root); ``sent_ids`` (``""``: not yet numbered, see :func:`_join`)."""

    def __init__(self, source: str, tables: tuple, sent_ids: list, arrays: dict):
        self.source, self.tables, self.sent_ids, self.arrays = source, tables, sent_ids, arrays

    @classmethod
    def decode(cls, payload: bytes, source: str) -> "FileColumns":
        tables, sent_ids, packed = marshal.loads(payload)
        arrays = {name: np.frombuffer(data, dtype=dtype) for name, (dtype, data) in zip(_ARRAYS, packed)}
        return cls(source, tables, sent_ids, arrays)

    def encode(self) -> bytes:
        return marshal.dumps((self.tables, self.sent_ids, tuple(_pack(self.arrays[n]) for n in _ARRAYS)))

    def __len__(self) -> int:
        return len(self.sent_ids)

    def count_analyses(self) -> "FileColumns":
        """Fill the ``an_*`` arrays from the words (when parsed: a cached run reads them)."""
        cols = [self.arrays[n] for n in _STRINGS[:4]]
        rows, counts = _unique_rows(cols, [len(t) for t in self.tables[:4]])
        self.arrays.update(zip(_ANALYSES, (*rows, counts)))
        return self


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
    cols = list(zip(*rows)) or [()] * 6
    tables = [list(dict.fromkeys(cols[k])) for k in (0, 1, 2, 3, 5)]  # distinct strings, first seen first
    ids = [np.fromiter(map({v: i for i, v in enumerate(t)}.__getitem__, cols[k]), dtype=np.int64, count=len(rows))
           for t, k in zip(tables, (0, 1, 2, 3, 5))]
    arrays = dict(zip(_STRINGS, ids), starts=np.concatenate([[0], np.cumsum(sizes)]), lines=lines, head=heads,
                  depth=depths)
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
    for name in ("lines", "head", "depth"):
        arrays[name] = np.concatenate([p.arrays[name] for p in parts])
    sent_ids = [sid or str(k) for k, sid in enumerate((s for p in parts for s in p.sent_ids), start=1)]
    return FileColumns(source, tuple(tables), sent_ids, arrays).count_analyses()


class ColumnSentence:
    """A :class:`~treebanks.reader.Sentence` kept as columns (``cols``: forms,
    lemmas, upos, feats, heads, deprels); its ``tokens`` are built on first use."""
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


class TreebankColumns:
    """Every word of a treebank's files, in order, for whole-array work:
    ``upos`` and ``feats`` as ids into ``upos_names`` / ``feats_names`` (shared by
    all files), ``heads`` (0-based in the sentence, -1: root), ``depths``,
    ``starts`` (first word of each sentence, then the total)."""

    def __init__(self, files: list[FileColumns], feats: tuple[np.ndarray, list[str]] | None = None):
        self.files = files
        self._maps: dict[str, list[np.ndarray]] = {}  # column -> per file: its ids -> shared ids
        self.upos_names, self.upos = self._shared("upos")
        self.feats_names, self.feats = feats if feats is not None else self._shared("feats")
        self._own_feats = feats is None
        self.heads = np.concatenate([f.arrays["head"] for f in files]).astype(np.int64)
        self.depths = np.concatenate([f.arrays["depth"] for f in files]).astype(np.int64)
        self._word0 = np.cumsum([0] + [int(f.arrays["starts"][-1]) for f in files])  # first word per file
        self._sent0 = np.cumsum([0] + [len(f) for f in files]).tolist()  # first sentence per file
        self.starts = np.concatenate([f.arrays["starts"][:-1] + w for f, w in zip(files, self._word0)]
                                     + [self._word0[-1:]]).astype(np.int64)
        self._built: dict[int, ColumnSentence] = {}

    def _shared(self, name: str, words: bool = True) -> tuple[list[str], np.ndarray | None]:
        """One string table for all files, and (``words``) the column's shared ids."""
        k = _STRINGS.index(name)
        index: dict[str, int] = {}
        maps = self._maps[name] = [np.array([index.setdefault(v, len(index)) for v in f.tables[k]],
                                            dtype=np.int64) for f in self.files]
        if not words:
            return list(index), None
        return list(index), np.concatenate([m[f.arrays[name]] for m, f in zip(maps, self.files)])

    def with_feats(self, feats: np.ndarray, names: list[str]) -> "TreebankColumns":
        """The same treebank with other FEATS ids (``--infer-verb-number``)."""
        return TreebankColumns(self.files, (names, feats))

    def __len__(self) -> int:
        return self._sent0[-1]

    def sentence(self, k: int) -> ColumnSentence:
        """Sentence ``k`` (0-based over all files), built once."""
        s = self._built.get(k)
        if s is None:
            fi = bisect.bisect_right(self._sent0, k) - 1
            f, j = self.files[fi], k - self._sent0[fi]
            a, b = (int(x) for x in f.arrays["starts"][j:j + 2])
            ga, gb = a + int(self._word0[fi]), b + int(self._word0[fi])
            t = f.tables
            cols = (tuple(map(t[0].__getitem__, f.arrays["form"][a:b].tolist())),
                    tuple(map(t[1].__getitem__, f.arrays["lemma"][a:b].tolist())),
                    tuple(map(self.upos_names.__getitem__, self.upos[ga:gb].tolist())),
                    tuple(map(self.feats_names.__getitem__, self.feats[ga:gb].tolist())),
                    tuple(self.heads[ga:gb].tolist()),
                    tuple(map(t[4].__getitem__, f.arrays["deprel"][a:b].tolist())))
            s = self._built[k] = ColumnSentence(f.sent_ids[j], cols, f.source, int(f.arrays["lines"][j]),
                                                tuple(self.depths[ga:gb].tolist()))
        return s

    def analyses(self) -> dict[Analysis, int]:
        """Tokens per (form, lemma, upos, feats) analysis: the paradigm table's counts.
        Each file's distinct analyses come counted from its parse; they are mapped to
        shared string ids and summed over the files (recounted from the words when
        FEATS were changed)."""
        names = [self._shared(n, words=False)[0] for n in ("form", "lemma")] + [self.upos_names, self.feats_names]
        cols, counts = [[], [], [], []], []
        for fi, f in enumerate(self.files):
            if self._own_feats:
                rows, n = [f.arrays[c] for c in _ANALYSES[:4]], f.arrays["an_count"]
                shared = ("form", "lemma", "upos", "feats")
            else:
                lo, hi = int(self._word0[fi]), int(self._word0[fi + 1])
                rows, n = _unique_rows((f.arrays["form"], f.arrays["lemma"], self.upos[lo:hi], self.feats[lo:hi]),
                                       [len(f.tables[0]), len(f.tables[1]), len(names[2]), len(names[3])])
                shared = ("form", "lemma")
            for k, r in enumerate(rows):
                cols[k].append(self._maps[shared[k]][fi][r] if k < len(shared) else r)
            counts.append(n)
        rows, n = _unique_rows([np.concatenate(c) for c in cols], [len(t) for t in names],
                               np.concatenate(counts))
        new = tuple.__new__  # Analysis(*row) runs Python code per row; tuple.__new__ does not
        keys = map(new, repeat(Analysis), zip(*(map(t.__getitem__, r.tolist()) for t, r in zip(names, rows))))
        return dict(zip(keys, n.tolist()))


def _unique_rows(cols, sizes, weights=None) -> tuple[list[np.ndarray], np.ndarray]:
    """The distinct rows of parallel id columns (ids below ``sizes``) and how often
    each occurs (the sum of its ``weights``): one sort of a combined int64 key
    (mixed radix), or of the rows themselves when that would overflow."""
    if float(np.prod([max(s, 1) for s in sizes], dtype=np.float64)) < 2.0 ** 62:
        key = np.zeros(len(cols[0]), dtype=np.int64)
        for c, s in zip(cols, sizes):
            key = key * max(s, 1) + c
        uniq, inverse = np.unique(key, return_inverse=True)
        rows = []
        for s in reversed(sizes):
            uniq, r = np.divmod(uniq, max(s, 1))
            rows.append(r)
        rows.reverse()
    else:
        uniq, inverse = np.unique(np.stack([np.asarray(c, dtype=np.int64) for c in cols], axis=1), axis=0,
                                  return_inverse=True)
        rows = list(uniq.T)
    inverse = inverse.reshape(-1)
    counts = np.bincount(inverse, weights=weights, minlength=len(rows[0]))
    return rows, counts.astype(np.int64)


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


def _pieces(path: Path, size: int, target: int) -> list[tuple[int, int, int] | None]:
    """Byte ranges (start, end, lines before) of a plain file cut at blank lines into
    pieces of about ``target`` bytes; ``[None]`` (the whole file) when it is small,
    compressed, or has carriage returns (line counts would need universal newlines)."""
    if size < 2 * target or not path.name.endswith(SUFFIXES[0]):
        return [None]
    data = path.read_bytes()
    if b"\r" in data:
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
    return [(a, b, data.count(b"\n", 0, a)) for a, b in zip(cuts, cuts[1:])]


def _parse_files(files: Sequence[Path], workers: int | None, quiet: bool) -> list[FileColumns]:
    """Parse ``files`` (in worker processes when there is more than one job)."""
    n = workers if workers else (os.cpu_count() or 1)
    sizes = [f.stat().st_size for f in files]
    target = max(MIN_PIECE, sum(sizes) // (2 * n)) if n > 1 else max(sizes) + 1
    jobs = [(k, (str(f), piece)) for k, (f, size) in enumerate(zip(files, sizes))
            for piece in _pieces(f, size, target)]
    bar = None
    if not quiet:
        from tqdm import tqdm
        bar = tqdm(total=len(jobs), unit=" part", desc="parsing", file=sys.stderr, mininterval=0.5)
    parts: list[list[FileColumns]] = [[] for _ in files]
    try:
        if min(n, len(jobs)) > 1:
            with ProcessPoolExecutor(max_workers=min(n, len(jobs))) as pool:
                for (k, job), blob in zip(jobs, pool.map(_parse, [job for _, job in jobs])):
                    parts[k].append(FileColumns.decode(blob, str(files[k])))
                    bar is not None and bar.update()
        else:
            for k, job in jobs:
                parts[k].append(FileColumns.decode(_parse(job), str(files[k])))
                bar is not None and bar.update()
    finally:
        if bar is not None:
            bar.close()
    return [p[0] if len(p) == 1 else _join(p, str(f)) for p, f in zip(parts, files)]


def load_columns(files: Sequence[Path], *, cache_dir: str | os.PathLike | None = None,
                 workers: int | None = None, quiet: bool = True) -> tuple[TreebankColumns, dict]:
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
        for k, parsed in zip(todo, _parse_files([files[k] for k in todo], workers, quiet)):
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
