"""How many of a UD treebank's tokens a tokenizer reproduces from the treebank's own text.

The language model sees the words that :mod:`lm.corpus.tokenize` cuts from running
text; the test items see the treebank's tokens. The two must agree, or an item's
target is not a vocabulary word. Here each sentence's ``# text`` line is tokenised
and compared with the treebank's tokens by character span over the text with
whitespace removed: a gold token counts as reproduced when the tokenizer produced a
token with exactly its span.

Gold tokens are the **surface tokens**, as :mod:`treebanks.reader` gives them to
the rest of ``agree``: a multiword token (``3-4 della`` over ``di la``) counts as
its own form, its words not at all. ``words=True`` gives the English convention of
the paper's corpora instead: a multiword token whose words spell it exactly
(``don't`` = ``do`` + ``n't``) counts as those words.

A sentence whose tokens do not spell its text (whitespace aside: a treebank that
restores elided letters, writes a syntactic word with no surface form, or whose
text line differs from its tokens) cannot be reproduced by any tokenizer; its
tokens count as misses and the sentence is counted in :attr:`Agreement.unspelled`.
"""
from __future__ import annotations

import bz2
import gzip
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator, Sequence

from treebanks.reader import expand_paths

_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class GoldSentence:
    """One treebank sentence: its text and its tokens."""
    text: str                   #: the ``# text`` line (else the tokens joined by SpaceAfter)
    tokens: tuple[str, ...]     #: surface tokens (or words: ``words=True``)
    doc: str                    #: document id (``# newdoc id``), for sentence splitting
    source: str                 #: ``FILE:LINE`` of its first row


@dataclass(frozen=True)
class Agreement:
    """Tokens of a set of sentences reproduced by a tokenizer."""
    reproduced: int     #: gold tokens whose span the tokenizer produced
    gold: int           #: gold tokens
    predicted: int      #: tokens the tokenizer produced
    sentences: int      #: sentences compared
    unspelled: int      #: sentences whose gold tokens do not spell their text
    spaced: int         #: gold tokens with a space inside (``he deus``): no word of a
                        #: space-separated corpus can be one

    @property
    def recall(self) -> float:
        """Share of gold tokens reproduced (the figure of merit)."""
        return self.reproduced / max(self.gold, 1)

    @property
    def precision(self) -> float:
        return self.reproduced / max(self.predicted, 1)


def gold_sentences(paths: Iterable[str | Path] | str | Path, *, words: bool = False) -> Iterator[GoldSentence]:
    """The sentences of CoNLL-U files (``.conllu``, ``.gz``, ``.bz2``, or directories of
    them, as :func:`treebanks.reader.expand_paths` finds them), with their text."""
    for path in expand_paths(paths):
        yield from _file_sentences(path, words)


def _open(path: Path):
    opener = gzip.open if path.name.endswith(".gz") else bz2.open if path.name.endswith(".bz2") else open
    return opener(path, "rt", encoding="utf-8-sig")


def _file_sentences(path: Path, words: bool) -> Iterator[GoldSentence]:
    """A line scanner, not conllu: only the text, the IDs, the forms and SpaceAfter
    are needed, and scanning is several times faster than a full parse."""
    doc, text, rows, start = "", None, [], 0
    with _open(path) as fh:
        for lineno, line in enumerate(fh, start=1):
            line = line.rstrip("\n")
            if not line.strip():
                if rows:
                    yield _sentence(rows, text, doc, f"{path}:{start}", words)
                text, rows, start = None, [], 0
                continue
            start = start or lineno
            if line.startswith("#"):
                key, _, value = line[1:].partition("=")
                key = key.strip()
                if key in ("newdoc id", "newdoc"):
                    doc = value.strip()
                elif key == "text":
                    text = value.strip()
            else:
                rows.append(line.split("\t"))
    if rows:
        yield _sentence(rows, text, doc, f"{path}:{start}", words)


def _sentence(rows: list[list[str]], text: str | None, doc: str, source: str, words: bool) -> GoldSentence:
    """Surface tokens of one sentence: a multiword token's form stands for its words
    (the rule of :func:`treebanks.reader._merge`), empty nodes are dropped."""
    tokens, spaces, skip_to, i = [], [], 0, 0
    while i < len(rows):
        cols = rows[i]
        tid, form = cols[0], cols[1]
        space = len(cols) < 10 or "SpaceAfter=No" not in cols[9].split("|")
        if "-" in tid:
            first, last = (int(x) for x in tid.split("-"))
            parts = [r[1] for r in rows[i + 1:i + 2 + last - first] if r[0].isdigit()]
            if not (words and "".join(parts) == form):
                tokens.append(form)
                spaces.append(space)
                skip_to = last
        elif "." not in tid and int(tid) > skip_to:
            tokens.append(form)
            spaces.append(space)
        i += 1
    if text is None:
        text = "".join(t + (" " if s else "") for t, s in zip(tokens, spaces)).strip()
    return GoldSentence(text, tuple(tokens), doc, source)


def spans(tokens: Iterable[str]) -> tuple[set[tuple[int, int]], str]:
    """Character spans of the tokens over their concatenation with whitespace removed,
    and that concatenation."""
    out, pos, chars = set(), 0, []
    for t in tokens:
        t = _SPACE.sub("", t)
        chars.append(t)
        out.add((pos, pos + len(t)))
        pos += len(t)
    return out, "".join(chars)


def compare(gold: Sequence[str], predicted: Sequence[str], text: str) -> tuple[int, bool]:
    """(gold tokens reproduced, whether the gold tokens spell the text)."""
    g, g_chars = spans(gold)
    if g_chars != _SPACE.sub("", text):
        return 0, False
    p, _ = spans(predicted)
    return len(g & p), True


def score(sentences: Sequence[GoldSentence], predicted: Sequence[Sequence[str]]) -> Agreement:
    """How many of the sentences' gold tokens the predicted tokens (one list per
    sentence, in order) reproduce."""
    hit = n_gold = n_pred = unspelled = spaced = 0
    for s, pred in zip(sentences, predicted, strict=True):
        h, spelled = compare(s.tokens, pred, s.text)
        hit += h
        n_gold += len(s.tokens)
        n_pred += len(pred)
        unspelled += not spelled
        spaced += sum(1 for t in s.tokens if _SPACE.search(t))
    return Agreement(hit, n_gold, n_pred, len(sentences), unspelled, spaced)


def agreement(sentences: Iterable[GoldSentence], tokenize: Callable[[str], list[str]]) -> Agreement:
    """How many of the sentences' gold tokens ``tokenize`` reproduces from their text."""
    sentences = list(sentences)
    return score(sentences, [tokenize(s.text) for s in sentences])
