"""The shuffle and 8:1:1 split of a corpus too large to shuffle in memory.

:func:`lm.corpus.prepare.prepare_corpus` shuffles up to :data:`IN_MEMORY_SENTENCES`
sentences read with ``random.Random(seed).shuffle`` over their numbers and byte offsets
(16 bytes a sentence: 256 MB at the limit). That order is kept for every corpus of that
size, so that the corpora made before this module existed keep their bytes. Past it, the
memory stays under a fixed ceiling whatever the size of the corpus:

1. One pass over the sentence file. Sentence number i gets a key, the i-th 64-bit draw of
   ``random.Random(seed)``: a function of the seed and the sentence's number only, and the
   sentence file is the same bytes for any worker count, a resumed run and Ray, so the keys
   are too. The unknown-word filter drops sentences here. Each kept sentence becomes a
   record, its key in 16 hex digits and then the sentence; the records are gathered up to
   :data:`RUN_BYTES`, sorted and written to a run file.
2. The runs are merged by key (``heapq.merge`` over the files, at most :data:`FAN_IN` open
   at once: more runs are first merged into longer ones), which gives the kept sentences in
   the order of independent uniform keys: a uniformly random permutation.
3. The first tenth of that order goes to valid.txt, the next tenth to test.txt, the rest
   to train.txt, as the in-memory shuffle cuts its permutation.

Records compare as bytes: the fixed-width key first, then (for the rare equal keys) the
sentence, so the order is total and the same on every run. The runs live in a directory
inside the output directory (a temporary one under ``agree corpus``), removed on success
and on failure. The training counts are the counts of all sentences less those of the
held-out splits and of the dropped sentences, so 80% of the words are not counted again.

Memory: at most RUN_BYTES of records (plus about :data:`_OVERHEAD` bytes of Python objects
a record) while a run fills; FAN_IN read buffers of :data:`_BUFFER` bytes while merging;
batches of :data:`_READ` bytes read and :data:`_BATCH` records written. The word counts
(one entry a distinct word) are held as on the in-memory path.
"""
from __future__ import annotations

import binascii
import heapq
import random
import shutil
from collections import Counter
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Iterator

#: sentences read up to which the shuffle is done in memory (the order of every corpus made
#: before the external shuffle existed); past it, the external shuffle below
IN_MEMORY_SENTENCES = 1 << 24
#: record bytes gathered before they are sorted and written as one run
RUN_BYTES = 64 << 20
#: runs merged at once (the open files); more runs are merged in rounds
FAN_IN = 128
_BUFFER = 1 << 16  # read buffer of a run being merged
_READ = 1 << 20  # bytes of the sentence file read at once (a batch of lines)
_BATCH = 4096  # records written at once to a split (their words split and counted together)
_KEY = 16  # hex digits of a key
_OVERHEAD = 41  # bytes a record costs beyond its own: the bytes object's header and the list's pointer
SPILL = ".shuffle.tmp"


@dataclass
class Runs:
    """The sorted runs of the kept sentences: paths, kept (how many)."""
    paths: list
    kept: int


@contextmanager
def spill_dir(out_dir: Path) -> Iterator[Path]:
    """The directory of the runs, inside ``out_dir``; removed when the block ends, however it ends."""
    where = Path(out_dir) / SPILL
    shutil.rmtree(where, ignore_errors=True)
    where.mkdir()
    try:
        yield where
    finally:
        shutil.rmtree(where, ignore_errors=True)


def spill_runs(tmp: Path, known: set, max_unk: float, seed: int, where: Path, counts: Counter) -> Runs:
    """Pass 2 of an external shuffle: filter the sentences of ``tmp`` (at most ``max_unk``
    of their words outside ``known``), key them and write them as sorted runs in ``where``.
    The words of the dropped sentences are taken off ``counts`` (the counts of all of them)."""
    rng = random.Random(seed)
    known_bytes = {w.encode("utf-8") for w in known} if max_unk < 1.0 else None
    runs = Runs([], 0)
    records: list[bytes] = []
    size = 0
    with open(tmp, "rb") as fh:
        while lines := fh.readlines(_READ):
            # one draw per sentence read, dropped ones too: a key depends on the seed and the number only
            keys = binascii.hexlify(rng.randbytes(8 * len(lines)))
            dropped: Counter = Counter()  # a batch's, taken off at once: no second count of every word
            for j, line in enumerate(lines):
                if known_bytes is not None:
                    words = line.split()
                    if len(words) - sum(map(known_bytes.__contains__, words)) > max_unk * len(words):
                        dropped.update(words)
                        continue
                record = keys[_KEY * j:_KEY * (j + 1)] + line
                records.append(record)
                size += len(record) + _OVERHEAD
                if size >= RUN_BYTES:
                    _write_run(records, where, runs)
                    records, size = [], 0
            subtract_counts(counts, dropped)
    if records:
        _write_run(records, where, runs)
    return runs


def _write_run(records: list[bytes], where: Path, runs: Runs) -> None:
    records.sort()
    path = where / f"run-{len(runs.paths):06d}"
    with open(path, "wb") as fh:
        fh.writelines(records)  # no joined copy of the whole run
    runs.paths.append(path)
    runs.kept += len(records)


def write_splits(runs: Runs, out_dir: Path, where: Path, all_counts: Counter, stats: dict) -> tuple[Counter, dict]:
    """Pass 3: merge the runs and write valid, test and train (a tenth, a tenth, the rest);
    (training word counts, tokens per split). ``all_counts`` (the kept sentences', as
    :func:`spill_runs` leaves them) becomes the training counts."""
    paths = _fewer_runs(list(runs.paths), where)
    n_heldout = max(1, runs.kept // 10)
    n_tokens = {}
    with ExitStack() as stack:
        files = [stack.enter_context(open(p, "rb", buffering=_BUFFER)) for p in paths]
        merged = heapq.merge(*files)
        for split, n in (("valid", n_heldout), ("test", n_heldout), ("train", None)):
            n_tokens[split] = _write_split(islice(merged, n), out_dir / f"{split}.txt",
                                           all_counts if split != "train" else None)
    n_tokens["train"] = sum(all_counts.values())
    for split, n in (("train", runs.kept - 2 * n_heldout), ("valid", n_heldout), ("test", n_heldout)):
        stats[f"sentences_{split}"] = n
    stats["shuffle_runs"] = len(runs.paths)
    return all_counts, {split: n_tokens[split] for split in ("train", "valid", "test")}


def _write_split(records: Iterator[bytes], path: Path, counts: Counter | None) -> int:
    """Write the sentences of ``records`` (keys cut off); with ``counts``, their words are
    taken off it (a batch at a time: no count of a whole split is held) and counted;
    the number of words (0 without ``counts``)."""
    n = 0
    with open(path, "wb") as dst:
        while batch := list(islice(records, _BATCH)):
            data = b"".join([r[_KEY:] for r in batch])
            del batch  # one batch alive at a time, not the last one beside the next
            dst.write(data)
            if counts is not None:
                n += _take_off(data, counts)
            del data
    return n


def _take_off(data: bytes, counts: Counter) -> int:
    """Take the words of ``data`` off ``counts``; how many there were."""
    words = data.split()
    subtract_counts(counts, Counter(words))
    return len(words)


def _fewer_runs(paths: list[Path], where: Path) -> list[Path]:
    """Merge runs FAN_IN at a time until at most FAN_IN are left (each round's inputs removed)."""
    round_ = 0
    while len(paths) > FAN_IN:
        merged = []
        for g in range(0, len(paths), FAN_IN):
            group, out = paths[g:g + FAN_IN], where / f"merge-{round_}-{g // FAN_IN:06d}"
            with ExitStack() as stack, open(out, "wb") as dst:
                files = [stack.enter_context(open(p, "rb", buffering=_BUFFER)) for p in group]
                dst.writelines(heapq.merge(*files))
            for p in group:
                p.unlink()
            merged.append(out)
        paths, round_ = merged, round_ + 1
    return paths


def subtract_counts(counts: Counter, byte_counts: Counter) -> None:
    """Take ``byte_counts`` (undecoded words) off ``counts``, dropping the words that reach 0."""
    for word, c in byte_counts.items():
        word = word.decode("utf-8")
        if (left := counts[word] - c) > 0:
            counts[word] = left
        else:
            del counts[word]
