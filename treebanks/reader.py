"""Streaming CoNLL-U reader: UD treebank files -> :class:`Sentence` records.

Built on ``conllu.parse_incr`` (one sentence in memory at a time), for
``.conllu``, ``.conllu.gz`` and ``.conllu.bz2`` files, several files in a row, or a
directory holding such files.

What a sentence becomes
-----------------------
* **Words only.** Empty nodes (``8.1``, enhanced-graph helpers) are dropped;
  basic heads never point at them.
* **Multiword tokens become one node** carrying the surface form the language
  model sees (``della``, ``don't``, ``del``), because test sentences must be
  written as people write them. The merged node is built from one
  *representative* part, chosen by a rule that uses only the tree and the
  feature counts (no language-specific lists):

  1. candidates are the parts whose head lies outside the token's span (in a
     tree at least one part's does);
  2. among them, the one nearest the root (fewest arcs to it) wins, because it
     is the part that connects the whole word to the rest of the sentence;
  3. ties: the part with the most morphological features (``la`` beats ``di``
     in ``della``, ``does`` beats ``n't`` in ``doesn't``), since agreement
     features live on the inflected part;
  4. remaining ties: the last part.

  The merged node takes the representative's UPOS, FEATS, DEPREL and head; its
  lemma is the parts' lemmas joined by ``+`` (``di+il``), so that the paradigm
  table keeps ``della``/``delle`` apart from ``la``/``le``. Arcs into any part
  point to the merged node.
* **Spacing**: each word (a merged token: its range line) records whether a space
  follows it in the text (``SpaceAfter=No`` in MISC says not), so that the
  sentence can be written back as the treebank's ``# text``.
* **Features** in canonical order (see :mod:`treebanks.features`).
* Indices are 0-based over the merged nodes; the root's head is ``-1``.

Errors (``TreebankError``) name the file and line: a line with other than 10
tab-separated columns, an ID or HEAD that is not an integer, word IDs out of
sequence, a head outside the sentence, a malformed FEATS value, a cycle inside a
multiword token. A missing file, a non-UTF-8 file and a file with no sentence
each get one message of their own.
"""
from __future__ import annotations

import bz2
import gzip
import io
import logging
import operator
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator, NamedTuple

import conllu
from conllu.exceptions import ParseException

from treebanks.conllu_lines import COLUMNS, FIELD_PARSERS, LineTracker
from treebanks.progress import track
from treebanks.errors import TreebankError
from treebanks.features import canonical_feats

log = logging.getLogger(__name__)

SUFFIXES = (".conllu", ".conllu.gz", ".conllu.bz2")


class Token(NamedTuple):
    """One word (or merged multiword token) of a sentence. A named tuple, not a
    dataclass: a cached treebank (:mod:`treebanks.cache`) rebuilds a quarter of a
    million of them, and a tuple is built several times faster."""
    index: int     #: 0-based position in the sentence
    form: str      #: surface form
    lemma: str     #: lemma (``a+b`` for a merged multiword token)
    upos: str      #: universal POS tag
    feats: str     #: canonical FEATS, ``_`` when none
    head: int      #: 0-based index of the head, -1 for the root
    deprel: str    #: dependency relation to the head
    space_after: bool = True  #: a space follows it in the text (MISC has no ``SpaceAfter=No``)


@dataclass(frozen=True, slots=True)
class Sentence:
    """One sentence: its words and where it came from."""
    sent_id: str                 #: the ``# sent_id`` comment, else its 1-based number in the file
    tokens: tuple[Token, ...]    #: words in order
    source: str                  #: file path
    line: int                    #: 1-based line of its first row (comment or word)
    #: arcs from each word to the root, when known (:mod:`treebanks.cache` stores them)
    depths: tuple[int, ...] | None = None

    @property
    def forms(self) -> tuple[str, ...]:
        return tuple(t.form for t in self.tokens)

    @property
    def where(self) -> str:
        """``FILE:LINE`` of the sentence, for messages."""
        return f"{self.source}:{self.line}"

    @property
    def spaces(self) -> tuple[bool, ...]:
        """Per word, whether a space follows it in the sentence's text."""
        return tuple(t.space_after for t in self.tokens)


def read_treebanks(paths: Iterable[str | os.PathLike]) -> Iterator[Sentence]:
    """Stream the sentences of one or more CoNLL-U files (or directories of them).

    Raises TreebankError for a missing, empty, non-UTF-8 or malformed file. A progress
    bar on stderr while logging shows info lines (``agree`` without ``--quiet``)."""
    files = expand_paths(paths)
    yield from track(log, (s for path in files for s in _read_file(path)), desc="reading", unit=" sent")


def expand_paths(paths: Iterable[str | os.PathLike]) -> list[Path]:
    """Files to read: each path itself, or the CoNLL-U files of a directory (sorted)."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    files: list[Path] = []
    for p in paths:
        p = Path(p)
        if p.is_dir():
            found = sorted(f for f in p.iterdir() if f.is_file() and f.name.endswith(SUFFIXES))
            if not found:
                raise TreebankError(f"{p}: directory has no {'/'.join(SUFFIXES)} file")
            files.extend(found)
        elif not p.exists():
            raise TreebankError(f"{p}: no such file")
        else:
            files.append(p)
    if not files:
        raise TreebankError("no treebank file given")
    return files


def _open(path: Path, mode: str = "rt"):
    name = path.name
    if name.endswith(".gz"):
        opener = gzip.open
    elif name.endswith(".bz2"):
        opener = bz2.open
    else:
        opener = open
    if mode == "rb":
        return opener(path, "rb")
    # utf-8-sig: a byte-order mark is not part of the first comment
    return opener(path, "rt", encoding="utf-8-sig", newline=None)


def _read_file(path: Path, piece: tuple[int, int, int] | None = None) -> Iterator[Sentence]:
    """The sentences of one file (see :func:`_read_rows`)."""
    source = str(path)
    for sent_id, line, rows, shift in _read_rows(path, piece):
        yield Sentence(sent_id, tuple([Token(i, w[0], w[1], w[2], w[3], w[4] - shift, w[5], w[6])
                                       for i, w in enumerate(rows)]), source, line)


def _read_rows(path: Path, piece: tuple[int, int, int] | None = None) -> Iterator[tuple[str, int, list, int]]:
    """``(sent_id, first line, words, shift)`` per sentence of one file, ``words``
    as (form, lemma, upos, feats, head, deprel) tuples whose head minus ``shift``
    is 0-based (-1: the root), so that the parse cache takes them as they come,
    without a record per word. With ``piece`` = (start byte, end byte, lines
    before start), only those of that part of a plain file, split at a blank line
    so that several processes can parse one big file (:mod:`treebanks.cache`).
    A piece's sentences without ``# sent_id`` get ``""`` (their number in the file
    is known only once the pieces before it are counted), and a piece without
    sentences is no error."""
    try:
        fh = _open(path) if piece is None else _open_piece(path, piece[0], piece[1])
    except OSError as e:
        raise TreebankError(f"{path}: cannot read ({e.strerror or e})") from None
    n = 0
    with fh:
        tracker = LineTracker(fh, path, piece[2] if piece else 0)
        sentences = conllu.parse_incr(tracker, fields=COLUMNS, field_parsers=FIELD_PARSERS)
        while True:
            try:
                tokenlist = next(sentences)
            except StopIteration:
                break
            except ParseException as e:
                raise TreebankError(tracker.locate_parse_error(e)) from None
            except UnicodeDecodeError:
                raise TreebankError(_locate_bad_utf8(path)) from None
            except (OSError, EOFError) as e:  # truncated or corrupt .gz/.bz2
                raise TreebankError(f"{path}: cannot decompress ({e})") from None
            n += 1
            yield _rows(tokenlist, tracker, path, n if piece is None else None)
    if n == 0 and piece is None:
        raise TreebankError(f"{path}: empty treebank (no sentences)")


def _open_piece(path: Path, start: int, end: int) -> io.StringIO:
    with open(path, "rb") as fh:
        fh.seek(start)
        data = fh.read(end - start)
    try:
        # the byte-order mark, as _open drops it, can only open the first piece
        return io.StringIO(data.decode("utf-8-sig" if start == 0 else "utf-8"))
    except UnicodeDecodeError:
        raise TreebankError(_locate_bad_utf8(path)) from None


def _locate_bad_utf8(path: Path) -> str:
    with _open(path, "rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as e:
                return (f"{path}:{lineno}: not UTF-8 text (byte 0x{raw[e.start]:02x} at column "
                        f"{e.start + 1}); CoNLL-U files must be UTF-8")
    return f"{path}: not UTF-8 text; CoNLL-U files must be UTF-8"


_FIELDS = operator.itemgetter("id", "form", "lemma", "upos", "feats_", "head", "deprel", "misc_")
_CANONICAL: dict[str | None, str] = {}  # raw FEATS -> canonical (a plain dict: the hot path)


def _rows(tokenlist, tracker: LineTracker, path: Path, number: int | None) -> tuple[str, int, list, int]:
    def fail(k: int, message: str):
        raise TreebankError(f"{path}:{tracker.word_line(k)}: {message}")

    words = []   # (form, lemma, upos, feats, head (1-based, 0 = root), deprel, space after)
    ranges = []  # (first id, last id, surface form, row, space after)
    canonical = _CANONICAL
    for k, (tid, form, lemma, upos, feats, head, deprel, misc) in enumerate(map(_FIELDS, tokenlist)):
        if type(tid) is int:
            if tid != len(words) + 1:
                fail(k, f"word ID {tid} out of sequence (expected {len(words) + 1})")
            if head is None:
                fail(k, f"word {tid} has no HEAD")
            canon = canonical.get(feats)
            if canon is None:
                try:
                    canon = canonical[feats] = canonical_feats(feats)
                except ValueError as e:
                    fail(k, f"FEATS: {e}")
            words.append((form, lemma, upos, canon, head, deprel, _space_after(misc)))
        elif tid is None:
            fail(k, "empty ID")
        elif tid[1] == "-":
            ranges.append((tid[0], tid[2], form, k, _space_after(misc)))
        # else: an empty node (8.1): dropped
    n = len(words)
    if n == 0:
        raise TreebankError(f"{path}:{tracker.block_start}: sentence has no words")
    heads = [w[4] for w in words]
    if max(heads) > n or min(heads) < 0:
        i = next(i for i, h in enumerate(heads) if not 0 <= h <= n)
        fail(_row_of_word(tokenlist, i + 1), f"HEAD {heads[i]} of word {i + 1} is outside the sentence (1..{n})")
    sent_id = tokenlist.metadata.get("sent_id") or ("" if number is None else str(number))
    if ranges:
        return sent_id, tracker.block_start, _merge(words, ranges, tokenlist, fail), 0
    return sent_id, tracker.block_start, words, 1  # heads 1-based


def _space_after(misc) -> bool:
    """False when MISC says ``SpaceAfter=No`` (one of its ``|``-separated entries)."""
    return not misc or "SpaceAfter=No" not in misc.split("|")


def _row_of_word(tokenlist, wid: int) -> int:
    for k, tok in enumerate(tokenlist):
        if tok["id"] == wid:
            return k
    return 0


def _merge(words, ranges, tokenlist, fail) -> list[tuple]:
    """Merge each multiword token's parts into one node (rule in the module docstring)."""
    n = len(words)
    heads = [0] + [w[4] for w in words]          # 1-based
    depth = [0] * (n + 1)                         # arcs to the root; 0 = not computed
    for i in range(1, n + 1):
        chain = []
        j = i
        while j and not depth[j]:
            chain.append(j)
            j = heads[j]
            if len(chain) > n:
                fail(_row_of_word(tokenlist, i), f"word {i} is in a head cycle")
        d = depth[j] if j else 0
        for j in reversed(chain):
            d += 1
            depth[j] = d

    span_of = {}  # word id -> (first, last, surface)
    reps = {}     # first id -> representative id
    last_end = 0
    for first, last, surface, k, _space in ranges:
        if first <= last_end or last > n:
            fail(k, f"multiword token {first}-{last} overlaps another or lies outside the sentence")
        last_end = last
        out = [i for i in range(first, last + 1) if not first <= heads[i] <= last]
        if not out:
            fail(k, f"multiword token {first}-{last} has no part attached outside it")
        reps[first] = max(out, key=lambda i: (-depth[i], words[i - 1][3].count("="), i))
        for i in range(first, last + 1):
            span_of[i] = (first, last, surface, _space)

    new_index = [-1] * (n + 1)   # old 1-based id -> new 0-based index (0 -> -1: root)
    order = []                    # (representative id, surface or None, lemma, space after)
    i = 1
    while i <= n:
        if i in span_of:
            first, last, surface, space = span_of[i]
            for j in range(first, last + 1):
                new_index[j] = len(order)
            order.append((reps[first], surface, "+".join(words[j - 1][1] for j in range(first, last + 1)), space))
            i = last + 1
        else:
            new_index[i] = len(order)
            order.append((i, None, None, words[i - 1][6]))
            i += 1
    rows = []  # heads 0-based
    for rep, surface, lemma, space in order:
        form, lem, upos, feats, head, deprel, _ = words[rep - 1]
        rows.append((surface if surface is not None else form, lemma if lemma is not None else lem, upos, feats,
                     new_index[head], deprel, space))
    return rows

