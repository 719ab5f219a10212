"""Sentencepiece subword vocabularies: words -> pieces -> model ids.

One convention, shared by training and scoring so that both see the same ids:

- A sentence is encoded **word by word**: each word is encoded on its own with
  sentencepiece's dummy prefix, so its first piece starts with ``▁`` (U+2581,
  "a word starts here") and the following pieces do not. Because pieces never
  cross whitespace, this equals encoding the whole space-joined sentence, and
  it lets the scorer cache one encoding per word.
- Model ids are the line numbers of the model directory's ``vocab.txt``
  (line 0 ``<eos>``, line 1 ``<unk>``, then the pieces). :func:`train_sentencepiece`
  trains with ``<eos>`` = id 0 and ``<unk>`` = id 1 so that sentencepiece's own ids
  *are* those line numbers and :func:`piece_vocabulary` is ``vocab.txt``; the
  mapping below goes through the piece strings anyway, so a ``vocab.txt`` in
  another order still works.
- A character sentencepiece does not know becomes its unknown piece, which maps
  to ``<unk>``; a word with such a piece is not "in vocabulary".

Trainers: ``train_sentencepiece(lines, path, vocab_size=...)``, write
``piece_vocabulary(processor)`` as ``vocab.txt``, and encode every sentence with
``SubwordVocab(path, vocab).encode_sentence(words) + [vocab.eos_id]``.
"""
from __future__ import annotations

import io
import os
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Sequence

from lm.errors import FieldError, LMError, literal

#: sentencepiece's word-start mark (U+2581 LOWER ONE EIGHTH BLOCK)
WORD_START = "\u2581"
EOS = "<eos>"
UNK = "<unk>"
SPM_FILE = "spm.model"


def _spm():
    import sentencepiece  # imported lazily: word-level models never need it
    return sentencepiece


def train_sentencepiece(lines: Iterable[str], model_path: str | os.PathLike, *,
                        vocab_size: int, model_type: str = "unigram",
                        character_coverage: float = 1.0,
                        max_sentences: int = 2_000_000) -> None:
    """Train a sentencepiece model on ``lines`` (tokenised sentences) into ``model_path``.

    ``<eos>`` gets id 0 and ``<unk>`` id 1 (the corpus convention), no ``<s>``
    or padding pieces. Single-threaded, so the same lines give the same model
    bytes. ``vocab_size`` counts every piece, ``<eos>`` and ``<unk>`` included.
    """
    spm = _spm()
    buf = io.BytesIO()
    try:
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter(lines), model_writer=buf,
            vocab_size=vocab_size, model_type=model_type,
            character_coverage=character_coverage,
            input_sentence_size=max_sentences, shuffle_input_sentence=False,
            eos_id=0, unk_id=1, bos_id=-1, pad_id=-1,
            eos_piece=EOS, unk_piece=UNK, num_threads=1, minloglevel=2)
    except RuntimeError as e:  # e.g. "Vocabulary size too high" on tiny text
        reason = str(e).split("] ", 1)[-1].strip()    # without the C++ source location
        if "ocabulary size" in reason:                 # the option's value: say which option
            raise FieldError(f"{{sp_vocab_size}} {vocab_size} does not fit this text: "
                             f"{literal(reason)}") from None
        raise LMError(f"sentencepiece training failed: {e}") from None
    Path(model_path).write_bytes(buf.getvalue())


def load_processor(model_path: str | os.PathLike):
    """A ``SentencePieceProcessor`` for ``model_path``, or :class:`LMError`."""
    spm = _spm()
    path = Path(model_path)
    if not path.is_file():
        raise LMError(f"{path}: no sentencepiece model (the model directory's "
                      f"config.json says tokenizer 'sentencepiece')")
    try:
        return spm.SentencePieceProcessor(model_file=str(path))
    except (RuntimeError, OSError) as e:
        raise LMError(f"{path}: unreadable sentencepiece model ({e})") from None


def piece_vocabulary(processor) -> list[str]:
    """``vocab.txt`` lines for a processor: ``<eos>``, ``<unk>``, then its pieces in id order."""
    pieces = [processor.id_to_piece(i) for i in range(processor.get_piece_size())
              if not (processor.is_unknown(i) or processor.is_control(i))]
    return [EOS, UNK] + [p for p in pieces if p not in (EOS, UNK)]


class SubwordVocab:
    """Word -> piece ids of one model directory (sentencepiece model + ``vocab.txt``).

    ``vocab`` is the list of ``vocab.txt`` lines (id = index).
    """

    def __init__(self, model_path: str | os.PathLike, vocab: Sequence[str]):
        self.processor = sp = load_processor(model_path)
        index = {piece: i for i, piece in enumerate(vocab)}
        if EOS not in index or UNK not in index:
            raise LMError(f"{model_path}: vocab.txt lacks {EOS} or {UNK}")
        self.eos_id, self.unk_id = index[EOS], index[UNK]
        # sentencepiece id -> model id; pieces absent from vocab.txt count as unknown
        self._to_model: list[int] = []
        self._known: list[bool] = []
        for i in range(sp.get_piece_size()):
            model_id = None if sp.is_unknown(i) else index.get(sp.id_to_piece(i))
            self._to_model.append(self.unk_id if model_id is None else model_id)
            self._known.append(model_id is not None)
        first = sp.encode("a", out_type=str)
        if not first or not first[0].startswith(WORD_START):
            raise LMError(f"{model_path}: sentencepiece model does not mark word starts "
                          f"with {WORD_START!r} (train it with add_dummy_prefix, the default)")
        #: model ids that begin a new word (piece starts with ▁) or end the sentence:
        #: the "the previous word has ended" event used by the scorer
        self.boundary_ids: list[int] = sorted(
            {i for p, i in index.items() if p.startswith(WORD_START)} | {self.eos_id})
        self._encode = lru_cache(maxsize=1 << 18)(self._encode_uncached)

    def _encode_uncached(self, word: str) -> tuple[tuple[int, ...], bool]:
        sp_ids = self.processor.encode(word) if word else []
        ids = tuple(self._to_model[i] for i in sp_ids)
        known = bool(sp_ids) and all(self._known[i] for i in sp_ids)
        return ids, known

    def word_ids(self, word: str) -> tuple[int, ...]:
        """Model ids of ``word``'s pieces, the first one word-initial (``▁...``)."""
        return self._encode(word)[0]

    def word_pieces(self, word: str) -> list[str]:
        """The piece strings of ``word`` (for messages and tests)."""
        return self.processor.encode(word, out_type=str)

    def known(self, word: str) -> bool:
        """Whether every piece of ``word`` is a known piece present in ``vocab.txt``."""
        return self._encode(word)[1]

    def encode_sentence(self, words: Sequence[str]) -> list[int]:
        """Model ids of a tokenised sentence, word by word (no ``<eos>`` added)."""
        out: list[int] = []
        for w in words:
            out.extend(self.word_ids(w))
        return out
