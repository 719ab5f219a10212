"""Reading the inputs of a corpus: MediaWiki dumps and tokenised text files, sentence
by sentence (:func:`lm.corpus.prepare.prepare_corpus` writes what they yield).

Dump articles are cleaned by :mod:`lm.corpus.wikidump`, split into sentences and tokenised
by :mod:`lm.corpus.tokenize`; sentences without a single letter are skipped. Text lines are
taken as already tokenised; empty lines and WikiText heading lines are skipped.
"""
from __future__ import annotations

import logging
import multiprocessing
import re
from itertools import islice
from pathlib import Path
from typing import Iterator, Sequence

from treebanks.progress import progress
from formats.sniff import own_format
from lm.errors import LMError
from lm.corpus.tokenize import get_tokenizer
from lm.corpus.wikidump import is_dump, iter_pages, open_binary, page_paragraphs

log = logging.getLogger(__name__)

_WIKITEXT_HEADING = re.compile(r"^\s*(?:= )+.*(?: =)+\s*$")


def input_sentences(inputs: Sequence[Path], lang: str, stats: dict, *,
                     clitics: str, workers: int) -> Iterator[list[str]]:
    """Every sentence of every input, with one progress bar (compressed bytes
    read, pages, tokens) over all of them, shown while info lines are."""
    sizes = [p.stat().st_size for p in inputs]
    with progress(log, total=sum(sizes), unit="B", unit_scale=True, desc="corpus") as bar:
        done = 0
        for path, size in zip(inputs, sizes):
            reader = _dump_sentences if is_dump(path) else _text_sentences
            for tokens, pos in reader(path, lang, stats, clitics, workers):
                stats["sentences_read"] += 1
                stats["tokens_read"] += len(tokens)
                yield tokens
                if pos is not None and done + pos > bar.n:
                    bar.set_postfix(pages=stats["pages"], tokens=stats["tokens_read"], refresh=False)
                    bar.update(done + pos - bar.n)
            done += size
            bar.update(done - bar.n)
        bar.set_postfix(pages=stats["pages"], tokens=stats["tokens_read"])


_SNIFF_LINES = 50
_CONLLU_ID = re.compile(r"\d+(?:[-.]\d+)?$")


def _looks_conllu(line: str) -> bool:
    """A CoNLL-U token line (10 tab-separated fields, an ID first) or sentence comment."""
    if line.startswith(("# sent_id =", "# sent_id=", "# text =")):
        return True
    fields = line.rstrip("\r\n").split("\t")
    return len(fields) == 10 and bool(_CONLLU_ID.match(fields[0]))


def _text_sentences(path: Path, lang, stats, clitics, workers):
    """Lines of a plain tokenised text file (compressed or not) as sentences."""
    stream, raw = open_binary(path)
    lineno = 0
    head: list[str] = []
    try:
        for lineno, line in enumerate(stream, 1):
            try:
                text = line.decode("utf-8")
            except UnicodeDecodeError as e:
                raise LMError(f"{path}:{lineno}: not valid UTF-8 ({e.reason} at byte {e.start} "
                              "of the line)") from None
            if "\x00" in text:
                raise LMError(f"{path}:{lineno}: binary data (NUL bytes), not tokenised text")
            if lineno <= _SNIFF_LINES and _looks_conllu(text):
                raise LMError(f"{path}:{lineno}: this looks like a CoNLL-U treebank, not a dump or "
                              f"tokenised text; for treebanks use agree extract")
            if lineno <= _OWN_LINES:
                head.append(text)
                if lineno == _OWN_LINES:
                    _refuse_own_format(path, head)
            words = text.lstrip("\ufeff").split()
            if words and not _WIKITEXT_HEADING.match(text):
                yield words, (raw.tell() if lineno % 1000 == 0 else None)
    except (EOFError, OSError) as e:
        raise LMError(f"{path}: truncated or corrupt compressed file after line {lineno} "
                      f"({e or 'unexpected end of data'})") from None
    finally:
        raw.close()
    if len(head) < _OWN_LINES:
        _refuse_own_format(path, head)


#: lines read to recognise one of agree's own files given as text (formats.sniff)
_OWN_LINES = 3


def _refuse_own_format(path: Path, head: list[str]) -> None:
    """A test set, manifest, vocabulary ... given where text is expected: say what it is."""
    if (what := own_format(head)) is not None:
        raise LMError(f"{path}: this is {what}, not a dump or tokenised text (one sentence per "
                      "line); a corpus is made from Wikipedia dumps or plain text")


def _dump_sentences(path: Path, lang, stats, clitics, workers):
    """Tokenised sentences of the articles of a MediaWiki dump, in page order
    (also with ``workers`` > 1: pages are parsed in order-preserving batches)."""
    pos = [0]

    def on_page(offset: int) -> None:
        pos[0] = offset
        stats["pages"] += 1

    pages = ((p, lang, clitics) for p in iter_pages(path, on_page=on_page))
    pool = None
    if workers > 1:
        pool = multiprocessing.get_context("spawn").Pool(workers)
    try:
        # Batches bound the memory a fast reader could fill ahead of slow parsers.
        while batch := list(islice(pages, 16 * max(workers, 1))):
            results = pool.map(_page_sentences, batch, chunksize=4) if pool else \
                map(_page_sentences, batch)
            for sents in results:
                stats["articles"] += 1
                for s in sents:
                    yield s, pos[0]
    finally:
        if pool is not None:
            pool.terminate()


def _page_sentences(job) -> list[list[str]]:
    """One article -> its sentences (lists of tokens) with at least one letter.
    Top-level so that worker processes can run it."""
    page, lang, clitics = job
    tok = get_tokenizer(lang, clitics)
    out = []
    for para in page_paragraphs(page):
        for sent in tok.sentences(para):
            if any(c.isalpha() for w in sent for c in w):
                out.append(sent)
    return out
