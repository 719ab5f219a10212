"""A language-model corpus directory: tokenised train/valid/test splits and a vocabulary.

:func:`prepare_corpus` turns MediaWiki dumps (``.xml``, ``.xml.bz2``, multistream
too) and plain tokenised text files (one sentence per line, tokens separated by
spaces) into::

    train.txt valid.txt test.txt   one sentence per line, original words
    vocab.txt                      <eos>, <unk>, then the vocab_size most frequent
                                   training words (frequency descending, ties
                                   alphabetical)
    counts.tsv                     word<TAB>count over train.txt, every word, with
                                   a header line; same order as vocab.txt

The steps (Gulordava et al. 2018, section 3): extract and tokenise every
sentence; count words over all of them; drop each sentence in which more than
``max_unk`` of the tokens fall outside the ``vocab_size`` most frequent words
(the literal token ``<unk>``, as in WikiText, always counts as unknown); shuffle
the remaining sentences with ``random.Random(seed)``; split them 8:1:1. The
vocabulary written to ``vocab.txt`` is recounted on the training split only, so
that valid and test perplexities are honest.

Dump articles are cleaned by :mod:`lm.corpus.wikidump`, split into sentences and
tokenised by :mod:`lm.corpus.tokenize`; sentences without a single letter (``( 1912 )``)
are skipped. Plain text lines are taken as already tokenised, one sentence per
line; empty lines and WikiText's heading lines (`` = = History = = ``) are
skipped. Inputs are told apart by content (``<?xml``/``<mediawiki``, or ``.xml``
in the name), compressed or not.

Memory stays flat on large dumps: sentences go to a temporary file in the output
directory. Up to :data:`lm.corpus.shuffle.IN_MEMORY_SENTENCES` sentences, only their byte
offsets and numbers (16 bytes each) are held for the shuffle; past it the shuffle is an
external sort of seeded keys (:mod:`lm.corpus.shuffle`) whose memory does not grow with
the corpus. Held in memory whatever the size: the word counts (one entry a distinct word).
"""
from __future__ import annotations

import hashlib
import json
import logging
import mmap
import os
import random
import shutil
from array import array
from collections import Counter
from operator import itemgetter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator, Sequence

from formats.run import RunContext
from formats.vocab import EOS, UNK, read_vocab  # noqa: F401  (EOS, UNK handed on)
from lm.corpus import shuffle
from lm.corpus.checks import check_trainable_splits, split_tokens
from lm.corpus.gather import gather
from lm.corpus.ranges import local_runner
from lm.errors import LMError

log = logging.getLogger(__name__)

SPLITS = ("train", "valid", "test")
_FILES = ("train.txt", "valid.txt", "test.txt", "vocab.txt")
_TMP = ".sentences.tmp"


@dataclass(frozen=True)
class Corpus:
    """A prepared corpus directory.

    directory: the directory; lang: ISO 639-1 code of its language;
    train, valid, test, vocab, counts: paths of its files;
    sha256: checksum of train.txt, valid.txt, test.txt and vocab.txt, hashed in
        that order as one byte stream (what a model's config.json records);
    n_tokens: words per split (``{"train": ..., "valid": ..., "test": ...}``),
        without ``<eos>``;
    stats: how the corpus was made (pages, sentences read and dropped, ...), as
        far as known (empty for a directory without a manifest).
    """
    directory: Path
    lang: str
    train: Path
    valid: Path
    test: Path
    vocab: Path
    counts: Path
    sha256: str
    n_tokens: dict
    stats: dict = field(default_factory=dict, compare=False)


def prepare_corpus(inputs: Sequence[Path], out_dir: Path, lang: str, *, vocab_size: int = 50000,
                   seed: int = 1111, max_unk: float = 0.05, clitics: str = "split", workers: int = 1,
                   runner: Callable | None = None, max_tokens: int | None = None,
                   work: Path | None = None, any_dump_lang: bool = False) -> Corpus:
    """Build a corpus directory in ``out_dir`` (created if needed; the files are
    written straight into it, so callers pass a temporary directory and rename).

    inputs: MediaWiki dumps or plain tokenised text files (detected by content);
    lang: the language of every input (decides the tokenizer; a dump's own
        header is not consulted); vocab_size: words in vocab.txt besides
        ``<eos>`` and ``<unk>``, also the vocabulary of the unknown-word filter;
    max_unk: largest share of unknown words a kept sentence may have;
    clitics: English only, ``"split"`` (``do n't``) or ``"keep"`` (``don't``);
    workers: processes that parse dump ranges (1: none), when no ``runner`` is given;
    runner: runs the ranges (:mod:`lm.corpus.ranges`; e.g. on Ray);
    max_tokens: stop at the first whole page (line) at which the inputs reach that
        many tokens, in input order;
    work: the directory that keeps finished ranges for a resume (default: one inside
        ``out_dir``, removed at the end); any_dump_lang: read a dump whose header
        names another language than ``lang`` (else an error).
    Raises :class:`LMError` on unreadable input or when too few sentences remain.
    """
    inputs = _check_inputs(inputs, vocab_size, max_unk)
    if max_tokens is not None and max_tokens < 1:
        raise LMError(f"max_tokens must be at least 1, not {max_tokens}")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    tmp = out_dir / _TMP
    own_work = work is None
    work = Path(work) if work is not None else out_dir / ".ranges"
    stats = {"pages": 0, "articles": 0, "sentences_read": 0, "tokens_read": 0}
    try:
        offsets, counts = gather(inputs, tmp, lang, stats, clitics=clitics, work=work, max_tokens=max_tokens,
                                 runner=runner or local_runner(workers), any_dump_lang=any_dump_lang,
                                 offsets_up_to=shuffle.IN_MEMORY_SENTENCES)
        if own_work:
            shutil.rmtree(work)
        known = set(_most_frequent(counts, vocab_size))
        # every word known (a vocabulary as large as the corpus's): the filter keeps all
        unk = 1.0 if len(known) == len(counts) else max_unk
        if offsets is None:  # past the in-memory shuffle's size
            train_counts, n_tokens = _external(tmp, known, unk, out_dir, seed, stats, counts, inputs, max_unk)
        else:
            offsets.append(tmp.stat().st_size)  # the end of the last sentence
            kept = _filter_unknown(tmp, offsets, known, unk)
            stats["sentences_dropped_unk"] = len(offsets) - 1 - len(kept)
            del known
            _check_kept(len(kept), stats, inputs, max_unk)
            # nothing dropped: the training words are all words less the held-out ones
            train_counts, n_tokens = _split(tmp, offsets, kept, out_dir, seed, stats,
                                            counts if len(kept) == len(offsets) - 1 else None)
        del counts
    except BaseException:
        tmp.unlink(missing_ok=True)
        if own_work:
            shutil.rmtree(work, ignore_errors=True)
        raise
    tmp.unlink(missing_ok=True)
    _write_vocab(out_dir, train_counts, n_tokens, vocab_size, stats)
    return _corpus(out_dir, lang, n_tokens, stats)


def corpus_to_dir(run: RunContext, inputs: Sequence[str | os.PathLike], lang: str, *,
                  vocab_size: int = 50000, max_unk: float = 0.05, clitics: str = "split",
                  workers: int = 1, runner: Callable | None = None, max_tokens: int | None = None,
                  any_dump_lang: bool = False) -> Corpus:
    """What ``agree corpus`` writes: :func:`prepare_corpus` into ``run.out`` (atomically,
    as the run context's ``force`` allows) with its manifest.json, shuffled with ``run.seed``; paths are
    read from ``run.root`` and recorded as given. The finished ranges of a dump are kept
    in ``.OUT.resume`` beside ``run.out`` until the run succeeds, so that the same command
    run again after an interruption resumes. The corpus returned names the temporary
    directory it was built in; load ``run.out`` to read it."""
    params = {"lang": lang, "vocab_size": vocab_size, "max_unk": max_unk, "clitics": clitics, "seed": run.seed,
              **({"max_tokens": max_tokens} if max_tokens is not None else {})}
    target = Path(run.path(run.out))
    work = target.parent / f".{target.name}.resume"
    try:
        with run.output_dir(inputs) as tmp:
            result = prepare_corpus([run.path(p) for p in inputs], tmp, lang, vocab_size=vocab_size,
                                    seed=run.seed, max_unk=max_unk, clitics=clitics, workers=workers,
                                    runner=runner, max_tokens=max_tokens, work=work,
                                    any_dump_lang=any_dump_lang)
            run.write_manifest(tmp, inputs, params, n_tokens=result.n_tokens, stats=result.stats,
                               sha256=result.sha256)
    except BaseException:
        kept = len(list(work.glob("*.txt"))) if work.is_dir() else 0
        if kept:
            log.info(f"kept {kept} finished ranges in {work}: the same command resumes from them")
        elif work.is_dir() and (work / "job.json").is_file():
            shutil.rmtree(work, ignore_errors=True)
        raise
    shutil.rmtree(work, ignore_errors=True)
    return result


def _check_inputs(inputs: Sequence[str | os.PathLike], vocab_size: int, max_unk: float) -> list[Path]:
    inputs = [Path(p) for p in inputs]
    if not inputs:
        raise LMError("no input files given")
    if vocab_size < 1:
        raise LMError(f"vocabulary size must be at least 1, not {vocab_size}")
    if not 0.0 <= max_unk <= 1.0:
        raise LMError(f"max_unk must be between 0 and 1, not {max_unk}")
    for p in inputs:
        if not p.exists():
            raise LMError(f"{p}: no such file")
        if p.is_dir():
            raise LMError(f"{p}: is a directory, not a dump or text file")
    return inputs


def _check_kept(kept: int, stats: dict, inputs: Sequence[Path], max_unk: float) -> None:
    if kept < 3:
        raise LMError(
            f"too few sentences: {kept} of {stats['sentences_read']} in {_names(inputs)} "
            f"have at most {100 * max_unk:g}% unknown words; need at least 3 "
            "(one each for train, valid and test)")


def _external(tmp: Path, known: set, unk: float, out_dir: Path, seed: int, stats: dict, counts: Counter,
              inputs: Sequence[Path], max_unk: float) -> tuple[Counter, dict]:
    """Filter, shuffle and split with :mod:`lm.corpus.shuffle` (sorted runs merged), in a
    memory that does not grow with the corpus; (train word counts, tokens per split)."""
    with shuffle.spill_dir(out_dir) as where:
        runs = shuffle.spill_runs(tmp, known, unk, seed, where, counts)
        stats["sentences_dropped_unk"] = stats["sentences_read"] - runs.kept
        _check_kept(runs.kept, stats, inputs, max_unk)
        return shuffle.write_splits(runs, out_dir, where, counts, stats)


def _filter_unknown(tmp: Path, offsets: array, known: set, max_unk: float) -> array:
    """Pass 2, the paper's filter: the numbers of the sentences with at most ``max_unk``
    of their words outside ``known`` (the vocab_size most frequent words). ``offsets``
    ends with the file's size, so sentence i is bytes ``offsets[i]:offsets[i + 1]``."""
    n = len(offsets) - 1
    if max_unk >= 1.0:
        return array(_NUMBER, range(n))
    known_bytes = {w.encode("utf-8") for w in known}
    kept = array(_NUMBER)
    with open(tmp, "rb") as fh:
        for i, line in enumerate(fh):
            words = line.split()
            unknown = len(words) - sum(map(known_bytes.__contains__, words))
            if unknown <= max_unk * len(words):
                kept.append(i)
    return kept


def _split(tmp: Path, offsets: array, kept: array, out_dir: Path, seed: int, stats: dict,
           all_counts: Counter | None = None) -> tuple[Counter, dict]:
    """Shuffle by sentence, split 8:1:1 and write the splits; (train word counts, tokens per split).
    The sentences are read through a memory map of the file, a batch at a time. With
    ``all_counts`` (the counts of every sentence, all kept), the training counts are
    those less the held-out splits' (``all_counts`` becomes them), not a count of 80%."""
    order = array(_NUMBER, range(len(kept)))
    random.Random(seed).shuffle(order)
    n_heldout = max(1, len(kept) // 10)
    parts = {"valid": order[:n_heldout], "test": order[n_heldout:2 * n_heldout],
             "train": order[2 * n_heldout:]}
    train_counts: Counter = Counter()
    n_tokens = {}
    with open(tmp, "rb") as src, mmap.mmap(src.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        for split in ("valid", "test", "train"):
            n, counts = 0, Counter()
            with open(out_dir / f"{split}.txt", "wb") as dst:
                part = parts[split]
                for b in range(0, len(part), _BATCH):
                    data = b"".join([mm[offsets[j]:offsets[j + 1]]
                                     for j in (kept[i] for i in part[b:b + _BATCH])])
                    dst.write(data)
                    if split != "train" or all_counts is None:
                        words = data.split()
                        n += len(words)
                        counts.update(words)
            n_tokens[split] = n
            if split != "train" and all_counts is not None:
                shuffle.subtract_counts(all_counts, counts)
            elif split == "train":
                train_counts = Counter({w.decode("utf-8"): c for w, c in counts.items()})
    for split in SPLITS:
        stats[f"sentences_{split}"] = len(parts[split])
    if all_counts is not None:
        train_counts = all_counts
        n_tokens["train"] = sum(all_counts.values())
    return train_counts, {split: n_tokens[split] for split in SPLITS}


#: sentence numbers (kept, shuffled): 4 bytes each, up to 4.29 billion sentences; with
#: the 8-byte offsets, 16 bytes per sentence are all the shuffle holds
_NUMBER = "I"
#: sentences read and written at once by _split
_BATCH = 20_000
#: bytes of a split read at once for its checksum
_HASH_BLOCK = 1 << 20


def _write_vocab(out_dir: Path, train_counts: Counter, n_tokens: dict, vocab_size: int, stats: dict) -> None:
    """vocab.txt and counts.tsv, recounted on the training split (honest valid/test perplexities)."""
    ranked = _ranked(train_counts)
    vocab = [EOS, UNK] + [w for w, _ in ranked if w not in (EOS, UNK)][:vocab_size]
    (out_dir / "vocab.txt").write_text("".join(w + "\n" for w in vocab), encoding="utf-8")
    (out_dir / "counts.tsv").write_text(
        "word\tcount\n" + "".join(f"{w}\t{c}\n" for w, c in ranked), encoding="utf-8")
    in_vocab = set(vocab[2:])
    stats["vocab_size"] = len(vocab)
    stats["train_oov_rate"] = round(
        sum(c for w, c in ranked if w not in in_vocab) / max(n_tokens["train"], 1), 6)


def load_corpus(directory: str | os.PathLike) -> Corpus:
    """Open a corpus directory made by :func:`prepare_corpus` (or ``agree corpus``)."""
    directory = Path(directory)
    if not is_corpus_dir(directory):
        missing = [f for f in _FILES if not (directory / f).is_file()]
        what = "no such directory" if not directory.is_dir() else f"not a corpus directory " \
            f"(no {', '.join(missing)})"
        raise LMError(f"{directory}: {what}; make one with `agree corpus`")
    read_vocab(directory / "vocab.txt")  # validates
    n_tokens = {split: split_tokens(directory / f"{split}.txt") for split in SPLITS}
    check_trainable_splits(directory, n_tokens)
    lang, stats = "", {}
    manifest = directory / "manifest.json"
    if manifest.is_file():
        try:
            data = json.loads(manifest.read_text(encoding="utf-8"))
            lang = str(data.get("parameters", {}).get("lang", ""))
            stats = dict(data.get("stats", {}))
        except (ValueError, AttributeError):
            raise LMError(f"{manifest}: unreadable manifest") from None
    return _corpus(directory, lang, n_tokens, stats)


def is_corpus_dir(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a directory holding train/valid/test.txt and vocab.txt."""
    path = Path(path)
    return path.is_dir() and all((path / f).is_file() for f in _FILES)


def read_counts(path: str | os.PathLike) -> dict[str, int]:
    """word -> count from a counts.tsv (``word<TAB>count`` rows; the header line
    ``word<TAB>count`` that :func:`prepare_corpus` writes is optional)."""
    path = Path(path)
    if not path.is_file():
        raise LMError(f"{path}: no such file (the word counts `agree corpus` writes; "
                      f"prepare the corpus with agree corpus)")
    counts = {}
    try:
        with open(path, encoding="utf-8") as fh:
            for i, line in enumerate(fh, 1):
                if i == 1 and line.rstrip("\n") == "word\tcount":
                    continue
                word, sep, n = line.rstrip("\n").partition("\t")
                if not sep or not n.isdigit():
                    raise LMError(f"{path}:{i}: expected word<TAB>count, found {line.rstrip()!r}")
                counts[word] = int(n)
    except UnicodeDecodeError as e:
        raise LMError(f"{path}: not valid UTF-8 ({e.reason} at byte {e.start})") from None
    return counts


def read_sentences(path: str | os.PathLike) -> Iterator[list[str]]:
    """The sentences of a split file, as lists of words."""
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            yield line.split()


def _corpus(directory: Path, lang: str, n_tokens: dict, stats: dict) -> Corpus:
    h = hashlib.sha256()
    for name in _FILES:
        with open(directory / name, "rb") as fh:
            while block := fh.read(_HASH_BLOCK):
                h.update(block)
    return Corpus(directory=directory, lang=lang, train=directory / "train.txt",
                  valid=directory / "valid.txt", test=directory / "test.txt",
                  vocab=directory / "vocab.txt", counts=directory / "counts.tsv",
                  sha256=h.hexdigest(), n_tokens=n_tokens, stats=stats)


def _most_frequent(counts: Counter, n: int) -> list[str]:
    ranked = _ranked(counts)
    return [w for w, _ in ranked if w not in (EOS, UNK)][:n]


def _ranked(counts: Counter) -> list[tuple[str, int]]:
    """(word, count) by count descending, ties alphabetical: sorted by word, then by count
    (a stable sort, also reversed), with no Python call per word."""
    ranked = sorted(counts.items())
    ranked.sort(key=itemgetter(1), reverse=True)
    return ranked


def _names(paths: Sequence[Path]) -> str:
    return ", ".join(str(p) for p in paths)
