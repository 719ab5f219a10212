"""Pass 1 of :func:`lm.corpus.prepare.prepare_corpus`: every sentence of the inputs, in
input order, into one file, with the byte offset of each and the count of each word.

Dumps go through ranges (:mod:`lm.corpus.ranges`) whose files are appended in dump
order; plain text files are read here. ``max_tokens`` stops at the first whole page
(a text file: line) at which the inputs reach that many tokens, as the paper's corpora
were cut: the first pages of the dump, the same ones for any number of workers.

The work directory keeps the finished ranges of a run that was stopped; a run with the
same inputs and settings takes them up (``job.json`` says which inputs and settings
they were made from; for others the directory is emptied first).
"""
from __future__ import annotations

import json
import logging
import marshal
import shutil
import time
from array import array
from itertools import accumulate
from collections import Counter
from pathlib import Path
from typing import BinaryIO, Callable, Sequence

from formats.files import atomic_write_text
from treebanks.progress import progress
from lm.corpus.inputs import text_sentences
from lm.corpus.ranges import RangeResult, dump_tasks, in_order
from lm.corpus.wikidump import is_dump
from lm.errors import LMError

log = logging.getLogger(__name__)


class _Sink:
    """The sentences file being written, its offsets and word counts, and the budget."""

    def __init__(self, fh: BinaryIO, max_tokens: int | None, stats: dict, offsets_up_to: int | None):
        self.fh, self.max_tokens, self.stats = fh, max_tokens, stats
        # the offsets only an in-memory shuffle reads: dropped past its size (8 bytes a sentence)
        self.offsets: array | None = array("q")
        self.offsets_up_to, self.sentences = offsets_up_to, 0
        self.counts: Counter = Counter()
        self.byte_counts: Counter = Counter()  # dump ranges' words, counted undecoded
        self.tokens = 0

    @property
    def full(self) -> bool:
        return self.max_tokens is not None and self.tokens >= self.max_tokens

    def add_line(self, tokens: list[str]) -> None:
        if self.offsets is not None:
            self.offsets.append(self.fh.tell())
        self._counted(1)
        self.fh.write(" ".join(tokens).encode("utf-8") + b"\n")
        self.counts.update(tokens)
        self.tokens += len(tokens)
        self.stats["sentences_read"] += 1
        self.stats["tokens_read"] += len(tokens)

    def add_range(self, data: bytes, result: RangeResult, counts_file: Path) -> None:
        """A range's sentences and word counts; only its first articles when they reach
        max_tokens (their words counted here)."""
        n_sent, n_tok, n_art = result.sentences, result.tokens, result.articles
        if self.max_tokens is not None and self.tokens + n_tok >= self.max_tokens:
            for n_art, (n_sent, n_tok) in enumerate(result.marks, 1):
                if self.tokens + n_tok >= self.max_tokens:
                    break
        lines = data.split(b"\n")[:n_sent]
        if self.offsets is not None and lines:
            self.offsets.extend(accumulate((len(line) + 1 for line in lines[:-1]), initial=self.fh.tell()))
        self._counted(len(lines))
        kept = b"".join(line + b"\n" for line in lines)
        if n_sent < result.sentences:
            self.byte_counts.update(kept.split())
        else:
            try:
                self.counts.update(marshal.loads(counts_file.read_bytes()))
            except (ValueError, EOFError, TypeError):
                raise LMError(f"{counts_file}: damaged; remove {counts_file.parent} and run again") from None
        self.fh.write(kept)
        self.tokens += n_tok
        for key, n in (("sentences_read", n_sent), ("tokens_read", n_tok), ("articles", n_art),
                       ("pages", result.pages), ("pages_too_large", result.pages_too_large)):
            self.stats[key] = self.stats.get(key, 0) + n

    def _counted(self, n: int) -> None:
        self.sentences += n
        if self.offsets_up_to is not None and self.sentences > self.offsets_up_to:
            self.offsets = None

    def word_counts(self) -> Counter:
        counts = self.counts
        for word, n in self.byte_counts.items():
            counts[word.decode("utf-8")] += n
        return counts


def gather(inputs: Sequence[Path], tmp: Path, lang: str, stats: dict, *, clitics: str, runner: Callable,
           work: Path, max_tokens: int | None = None, any_dump_lang: bool = False,
           offsets_up_to: int | None = None) -> tuple[array | None, Counter]:
    """Pass 1 into ``tmp``: (byte offsets of the sentences, word counts); the offsets are
    None when more than ``offsets_up_to`` sentences were read (None: no limit)."""
    _claim_work(work, inputs, lang, clitics)
    sizes = [p.stat().st_size for p in inputs]
    start = time.monotonic()
    with open(tmp, "wb") as fh, progress(log, total=sum(sizes), unit="B", unit_scale=True, desc="corpus") as bar:
        sink = _Sink(fh, max_tokens, stats, offsets_up_to)
        done, first = 0, 0
        for path, size in zip(inputs, sizes):
            if sink.full:
                break
            if is_dump(path):
                first = _read_dump(path, lang, clitics, runner, work, first, any_dump_lang, sink, bar, start)
            else:
                for tokens in text_sentences(path):
                    sink.add_line(tokens)
                    if sink.full:
                        break
            done += size
            bar.update(done - bar.n)
    if not sink.sentences:
        raise LMError(f"empty corpus: no sentences in {', '.join(str(p) for p in inputs)}")
    return sink.offsets, sink.word_counts()


def _read_dump(path, lang, clitics, runner, work, first, any_dump_lang, sink, bar, start) -> int:
    """One dump's ranges into ``sink``, in order; the number of the next range."""
    tasks = dump_tasks(path, lang, clitics, work, first, any_dump_lang)
    number = first
    results = in_order(tasks, runner, marks=sink.max_tokens is not None)
    try:
        for result in results:
            number = result.number + 1
            sink.add_range((work / f"{result.number:06d}.txt").read_bytes(), result,
                           work / f"{result.number:06d}.counts")
            sink.stats["ranges"] = sink.stats.get("ranges", 0) + 1
            bar.update(result.compressed)
            elapsed = max(time.monotonic() - start, 1e-9)
            left = (bar.total - bar.n) * elapsed / max(bar.n, 1)  # at the rate so far
            bar.set_postfix(pages=sink.stats["pages"], words=sink.tokens,
                            words_per_s=f"{sink.tokens / elapsed:,.0f}",
                            left=f"{int(left // 60)}:{int(left % 60):02d}", refresh=False)
            if sink.full:
                break
    finally:
        results.close()  # stops the workers when max_tokens is reached or on an error
    return number


def _claim_work(work: Path, inputs: Sequence[Path], lang: str, clitics: str) -> None:
    """Make ``work`` the work directory of this job, keeping the finished ranges of an
    earlier run of the same job and dropping those of another."""
    job = {"inputs": [[str(p.resolve()), p.stat().st_size, p.stat().st_mtime_ns] for p in inputs],
           "lang": lang, "clitics": clitics}
    record = work / "job.json"
    if work.is_dir():
        try:
            same = json.loads(record.read_text(encoding="utf-8")) == job
        except (OSError, ValueError):
            same = False
        if same:
            n = len(list(work.glob("*.json"))) - 1
            if n > 0:
                log.info(f"resuming: {n} ranges finished by an earlier run, in {work}")
            return
        if not record.is_file():
            raise LMError(f"{work}: exists and is not a work directory of agree corpus; move it away")
        shutil.rmtree(work)
    work.mkdir(parents=True)
    atomic_write_text(record, json.dumps(job))
