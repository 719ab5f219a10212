"""Reading the tokenised text files of a corpus, sentence by sentence (dumps are read
by :mod:`lm.corpus.ranges`). Lines are taken as already tokenised; empty lines and
WikiText heading lines are skipped.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Iterator

from formats.sniff import own_format
from lm.errors import LMError
from lm.corpus.wikidump import open_binary

_WIKITEXT_HEADING = re.compile(r"^\s*(?:= )+.*(?: =)+\s*$")


_SNIFF_LINES = 50
_CONLLU_ID = re.compile(r"\d+(?:[-.]\d+)?$")


def _looks_conllu(line: str) -> bool:
    """A CoNLL-U token line (10 tab-separated fields, an ID first) or sentence comment."""
    if line.startswith(("# sent_id =", "# sent_id=", "# text =")):
        return True
    fields = line.rstrip("\r\n").split("\t")
    return len(fields) == 10 and bool(_CONLLU_ID.match(fields[0]))


def text_sentences(path: Path) -> Iterator[list[str]]:
    """The sentences (lists of words) of a plain tokenised text file (compressed or not)."""
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
                yield words
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
