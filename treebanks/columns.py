"""A treebank as compact columns: what :mod:`treebanks.cache` stores and the
miner (:meth:`agreement.extraction.construction_miner.ConstructionMiner.add_columns`) reads.

Each word's form, lemma, UPOS, FEATS, head, deprel (after the multiword merge),
depth and space-after flag are NumPy integer arrays, each distinct string stored once per file
(:class:`FileColumns`, one file, as parsed or cached); :class:`TreebankColumns`
joins the files for whole-array work, and builds a sentence as a record
(:class:`ColumnSentence`) only when asked: on a cached run no per-word Python
object is made, which is most of what makes it fast.
"""
from __future__ import annotations

import bisect
import marshal
from itertools import repeat

import numpy as np

from treebanks.paradigms import Analysis
from treebanks.reader import Sentence, Token

_STRINGS = ("form", "lemma", "upos", "feats", "deprel")  # string columns, ids into per-file tables
#: per analysis (distinct form, lemma, upos, feats ids): the ids and its tokens
_ANALYSES = ("an_form", "an_lemma", "an_upos", "an_feats", "an_count")
_ARRAYS = ("starts", "lines") + _STRINGS + ("head", "depth") + _ANALYSES + ("space",)


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
    (arcs to the root); ``sent_ids`` (``""``: not yet numbered, see
    :func:`treebanks.cache._join`); ``an_*``: the distinct analyses and their counts."""

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


class ColumnSentence:
    """A :class:`~treebanks.reader.Sentence` kept as columns (``cols``: forms,
    lemmas, upos, feats, heads, deprels, space-after flags); its ``tokens`` are built
    on first use."""
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
    spaces = property(lambda self: self.cols[6])
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

    def __init__(self, files: list[FileColumns], feats: tuple[list[str], np.ndarray] | None = None):
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

    def deprels(self) -> tuple[list[str], np.ndarray]:
        """The DEPREL column: one name table for all files and each word's id in it
        (built on first use; the construction miner does not read it)."""
        if "_deprels" not in self.__dict__:
            self._deprels = self._shared("deprel")
        return self._deprels

    def file_analyses(self) -> list[dict[Analysis, int]]:
        """:meth:`analyses` of each file on its own (paradigm tables per file)."""
        return [TreebankColumns([f]).analyses() for f in self.files]

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
                    tuple(map(t[4].__getitem__, f.arrays["deprel"][a:b].tolist())),
                    tuple(map(bool, f.arrays["space"][a:b].tolist())))
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
