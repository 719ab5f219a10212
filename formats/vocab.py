"""LM vocabularies: ``vocab.txt``, one word per line, line i = word id i.

The one reader of the format (:func:`read_vocab`, a list in id order), and the
checksum a model's ``config.json`` keeps of the vocabulary it was trained with."""
from __future__ import annotations

import os
from pathlib import Path

from formats.errors import AgreeError
from formats.digests import sha256_of

VOCAB_FILE = "vocab.txt"
VOCAB_CHECKSUM = "vocab_sha256"
EOS, UNK = "<eos>", "<unk>"


def vocab_path(path: str | os.PathLike) -> Path:
    """``vocab.txt`` itself, or the one inside a corpus or model directory."""
    path = Path(path)
    return path / VOCAB_FILE if path.is_dir() else path


def read_vocab(path: str | os.PathLike, *, strict: bool = True) -> list[str]:
    """The entries of a vocabulary in id order (index = line number).

    ``path`` is a ``vocab.txt`` or a directory holding one. ``strict`` checks the
    rules of the vocabularies ``agree corpus`` writes: ``<eos>`` and ``<unk>`` on
    lines 1 and 2, one word a line, no word twice. Without it, any line is an entry
    (subword pieces, released vocabularies)."""
    path = vocab_path(path)
    try:
        words = path.read_text(encoding="utf-8").split("\n")
    except (FileNotFoundError, IsADirectoryError):
        raise AgreeError(f"{path}: no such vocabulary file") from None
    except UnicodeDecodeError as e:
        raise AgreeError(f"{path}: not valid UTF-8 ({e.reason} at byte {e.start})") from None
    except OSError as e:
        raise AgreeError(f"{path}: cannot read vocabulary ({e.strerror or e})") from None
    if words and words[-1] == "":
        words.pop()
    if strict:
        _check_strict(path, words)
    return words


def _check_strict(path: Path, words: list[str]) -> None:
    if words[:2] != [EOS, UNK]:
        raise AgreeError(f"{path}: a vocabulary starts with {EOS} and {UNK} on lines 1 and 2")
    seen: set[str] = set()
    for i, w in enumerate(words, 1):
        if not w or w.split() != [w]:
            raise AgreeError(f"{path}:{i}: not a single word: {w!r}")
        if w in seen:
            raise AgreeError(f"{path}:{i}: {w!r} occurs twice")
        seen.add(w)


def vocab_words(path: str | os.PathLike) -> frozenset[str]:
    """The words of a vocabulary as a set, for filtering test items: each line's
    first tab-separated field (``word<TAB>count`` lines are accepted), without
    ``<eos>``, ``<unk>`` and other ``<...>`` symbols."""
    words = frozenset(w for line in read_vocab(path, strict=False)
                      if (w := line.rstrip("\r").split("\t")[0].strip())
                      and not (w.startswith("<") and w.endswith(">")))
    if not words:
        raise AgreeError(f"{vocab_path(path)}: the vocabulary has no usable words (empty, or only <eos>/<unk>)")
    return words


def check_vocab(model_dir: Path, config: dict, vocab_file: str = "vocab.txt") -> None:
    """A model's vocab.txt must be the one it was trained with: config.json stores its
    sha256 (a shuffled vocabulary of the right size would silently score the wrong
    words). Configs written before the checksum existed are accepted as they are."""
    expected = config.get(VOCAB_CHECKSUM)
    path = Path(model_dir) / vocab_file
    if expected is None or not path.is_file():
        return
    if sha256_of(path) != expected:
        raise AgreeError(f"{path}: not the vocabulary this model was trained with (its sha256 differs "
                      f"from {VOCAB_CHECKSUM} in config.json); restore the original vocab.txt")

