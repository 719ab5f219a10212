"""What a corpus directory's split files must be before a model trains on them.

``train.txt``, ``valid.txt`` and ``test.txt`` are tokenised UTF-8 text, one sentence
a line; a model trained on an empty, binary or undecodable split would still be
written (a unigram model counts ``counts.tsv``, not the text) and scored without a
word. :func:`split_tokens` reads a split once, counting its words, and refuses
what is not text; :func:`check_trainable_splits` refuses an empty training or
validation split (a perplexity over nothing is NaN).
"""
from __future__ import annotations

from pathlib import Path

from lm.errors import LMError


def split_tokens(path: Path) -> int:
    """Words in split file ``path``; :class:`LMError` naming the line that is not UTF-8
    text (undecodable, or binary with NUL bytes)."""
    n = 0
    with open(path, "rb") as fh:
        for lineno, line in enumerate(fh, 1):
            if b"\x00" in line:
                raise LMError(f"{path}:{lineno}: binary data (NUL bytes), not tokenised text; "
                              "a corpus directory holds the text files `agree corpus` writes")
            try:
                line.decode("utf-8")
            except UnicodeDecodeError as e:
                raise LMError(f"{path}:{lineno}: not valid UTF-8 ({e.reason} at byte {e.start} "
                              "of the line)") from None
            n += len(line.split())
    return n


def check_trainable_splits(directory: Path, n_tokens: dict) -> None:
    """A model needs words to train on and words to measure its perplexity on."""
    for split, role in (("train", "training"), ("valid", "validation")):
        if not n_tokens.get(split):
            raise LMError(f"{directory / (split + '.txt')}: the {role} split has no words; "
                          "make the corpus again with `agree corpus`")
