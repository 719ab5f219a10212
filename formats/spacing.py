"""The text as written: a sentence's words plus where the spaces are.

An item keeps its sentence as words (``tokens``: what the target and cue indices
count, what word-level models read) and, beside them, one flag per word: whether a
space follows it in the text as written (``space_after``). The two together give
back the text exactly as the source wrote it, with runs of whitespace read as one
space and no space at either end: ``The keys are here.`` is the words
``The keys are here .`` with no space after ``here``.

Subword models read that text (:mod:`lm.pieces`); :func:`word_spans` says which
characters belong to which word, so that their pieces can be attributed to words.

Where a source has no spacing (the paper's tokenized sets, an ``items.tsv`` written
before the ``text`` column), :mod:`formats.detok` derives it by a documented rule.
"""
from __future__ import annotations

from typing import Sequence

from formats.errors import AgreeError


def render(words: Sequence[str], space_after: Sequence[bool]) -> str:
    """The text: each word followed by a space where its flag says so (never at the end)."""
    n = len(words)
    if len(space_after) != n:
        raise AgreeError(f"{n} words but {len(space_after)} spacing flags")
    if not n:
        return ""
    # one list and one join: a release renders millions of sentences (a generator was half its time)
    return "".join([w + " " if s else w for w, s in zip(words[:-1], space_after[:-1])]) + words[-1]


def word_spans(words: Sequence[str], space_after: Sequence[bool]) -> list[tuple[int, int]]:
    """(start, end) character offsets of each word in :func:`render`'s text."""
    spans, pos, n = [], 0, len(words)
    for i, (w, s) in enumerate(zip(words, space_after)):
        spans.append((pos, pos + len(w)))
        pos += len(w) + (1 if s and i < n - 1 else 0)
    return spans


def spacing_of(text: str, words: Sequence[str]) -> tuple[bool, ...] | None:
    """The flags that make ``words`` into ``text`` (whitespace runs read as one space,
    ends stripped), or None when the words do not spell the text in order."""
    text = text.strip()
    flags, pos = [], 0
    for i, w in enumerate(words):
        if not w or not text.startswith(w, pos):
            return None
        pos += len(w)
        end = pos
        while pos < len(text) and text[pos].isspace():
            pos += 1
        flags.append(pos > end)
        if i == len(words) - 1 and pos != len(text):
            return None
    if pos != len(text):
        return None
    if flags:
        flags[-1] = False
    return tuple(flags)

