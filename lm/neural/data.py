"""Token streams for the neural trainer: vocabulary, encoding, BPTT batches.

The paper's (and word_language_model's) data layout: every sentence of a split,
in file order, followed by ``<eos>``, concatenated into one stream of ids; words
outside the model's vocabulary become ``<unk>``. The stream is cut into
``rows`` equal contiguous parts, one per batch row (B rows per process, times
the number of processes), so that a row read window after window is continuous
text and the LSTM state can be carried from one window to the next.

Vocabularies (ids = line numbers of the model directory's ``vocab.txt``):
- word: the corpus vocabulary (``<eos>``, ``<unk>``, most frequent first),
  optionally cut to its ``vocab_size`` most frequent words;
- sentencepiece: a model trained on the corpus's training split with
  :func:`lm.corpus.subword.train_sentencepiece`, sentences encoded word by word with
  :class:`lm.corpus.subword.SubwordVocab` (the scorer's convention).
"""
from __future__ import annotations

from array import array
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import torch

from formats.vocab import EOS, UNK, read_vocab
from lm.corpus.prepare import Corpus
from lm.errors import FieldError, LMError, literal
from lm.corpus import subword
from lm.corpus.subword import SubwordVocab

VOCAB_FILE = "vocab.txt"
SPM_FILE = "spm.model"


@dataclass(frozen=True)
class Vocabulary:
    """tokens: id -> token (vocab.txt); tokenizer: "word" | "sentencepiece";
    spm_path: the sentencepiece model (None for words)."""
    tokens: tuple
    tokenizer: str
    spm_path: Path | None = None

    @property
    def unk_id(self) -> int:
        return self.tokens.index(UNK)

    @property
    def eos_id(self) -> int:
        return self.tokens.index(EOS)


def build_vocabulary(corpus: Corpus, out_dir: Path, *, tokenizer: str = "word",
                     vocab_size: int | None = None, sp_vocab_size: int = 8000,
                     seed: int = 1111) -> Vocabulary:
    """Make the model's vocabulary, writing ``vocab.txt`` (and ``spm.model``) into ``out_dir``.

    vocab_size: word models, words kept besides <eos> and <unk> (None: all of
    the corpus vocabulary); sp_vocab_size: sentencepiece pieces, <eos> and
    <unk> included. sentencepiece training is single-threaded and reads the
    training split in file order (already shuffled with the corpus seed), so
    the same corpus gives the same model; ``seed`` is recorded for completeness.
    """
    out_dir = Path(out_dir)
    if tokenizer == "word":
        words = read_vocab(corpus.vocab)
        if vocab_size is not None:
            if vocab_size < 1:
                raise FieldError(f"{{vocab_size}} must be at least 1 (got {vocab_size})")
            words = words[:vocab_size + 2]
        (out_dir / VOCAB_FILE).write_text("".join(w + "\n" for w in words), encoding="utf-8")
        return Vocabulary(tuple(words), "word")
    if tokenizer != "sentencepiece":
        raise LMError(f"unknown tokenizer {tokenizer!r} (known: word, sentencepiece)")
    import sentencepiece  # lazy: word-level models never need it
    sentencepiece.set_random_generator_seed(seed)
    spm_path = out_dir / SPM_FILE
    with open(corpus.train, encoding="utf-8") as fh:
        subword.train_sentencepiece((line.rstrip("\n") for line in fh if line.strip()),
                                    spm_path, vocab_size=sp_vocab_size)
    pieces = subword.piece_vocabulary(subword.load_processor(spm_path))
    (out_dir / VOCAB_FILE).write_text("".join(p + "\n" for p in pieces), encoding="utf-8")
    return Vocabulary(tuple(pieces), "sentencepiece", spm_path)


def load_vocabulary(model_dir: Path, tokenizer: str) -> Vocabulary:
    """The vocabulary already written into ``model_dir`` (on resume)."""
    model_dir = Path(model_dir)
    tokens = tuple(read_vocab(model_dir / VOCAB_FILE, strict=False))
    spm_path = model_dir / SPM_FILE if tokenizer == "sentencepiece" else None
    return Vocabulary(tokens, tokenizer, spm_path)


def encode_split(path: Path, vocab: Vocabulary) -> torch.Tensor:
    """The ids of one split as a 1-D int64 tensor: each sentence, then ``<eos>``."""
    ids = array("q")
    eos = vocab.eos_id
    if vocab.tokenizer == "word":
        index = {w: i for i, w in enumerate(vocab.tokens)}
        unk = vocab.unk_id
        get = index.get
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                words = line.split()
                if words:
                    ids.extend([get(w, unk) for w in words])
                    ids.append(eos)
    else:
        sv = SubwordVocab(vocab.spm_path, vocab.tokens)
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                words = line.split()
                if words:
                    ids.extend(sv.encode_sentence(words))
                    ids.append(eos)
    if not ids:
        return torch.zeros(0, dtype=torch.int64)
    return torch.frombuffer(ids, dtype=torch.int64).clone()


def batchify(stream: torch.Tensor, rows: int) -> torch.Tensor:
    """Cut a 1-D stream into ``rows`` contiguous parts: (rows, L), the remainder dropped."""
    length = stream.numel() // rows
    return stream[:rows * length].view(rows, length)


def eval_layout(stream: torch.Tensor, rows: int, eos_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Validation rows that predict *every* token of the split exactly once.

    The stream gets a leading ``<eos>`` (the boundary before the first sentence),
    so its N tokens are all targets; row r reads positions r*L .. (r+1)*L (one
    token of overlap with the next row, whose first token is thus a target of
    row r), the end is padded. Returns ``data`` (rows, L + 1) and ``scored``
    (rows, L), False at the padding: the targets ``data[:, 1:]`` to count.
    """
    ids = torch.cat([torch.tensor([eos_id], dtype=stream.dtype), stream])
    n = stream.numel()
    length = -(-n // rows)                                         # ceil
    padded = torch.cat([ids, ids.new_full((rows * length + 1 - ids.numel(),), eos_id)])
    starts = torch.arange(rows) * length
    data = padded[starts[:, None] + torch.arange(length + 1)]       # (rows, L + 1)
    scored = (starts[:, None] + torch.arange(1, length + 1)) <= n   # (rows, L)
    return data, scored


def row_block(data: torch.Tensor, rank: int, world: int) -> torch.Tensor:
    """This process's rows of a (world * B, L) batch layout: (B, L)."""
    per = data.shape[0] // world
    return data[rank * per:(rank + 1) * per]


def windows(length: int, bptt: int) -> list[int]:
    """Start columns of the BPTT windows over a row of ``length`` ids (the last may be shorter)."""
    return list(range(0, length - 1, bptt))


def check_trainable(n_train: int, n_valid: int, rows: int, bptt: int,
                    where: Sequence[Path]) -> None:
    """One clear error when a split is too small to train or validate on."""
    train, valid = where
    if n_train == 0:
        raise LMError(f"{train}: empty training split, nothing to train on")
    need = rows * (bptt + 1)
    if n_train < need:
        raise FieldError(f"{literal(train)}: {n_train} tokens (with <eos>) is fewer than one "
                         f"batch ({rows} rows x {bptt + 1} = {need}); use a smaller "
                         f"{{batch_size}} or {{bptt}}, or a larger corpus")
    if n_valid < 2:
        raise LMError(f"{valid}: the validation split is empty")


def training_data(corpus, vocab, options, device: torch.device, info) -> dict:
    """For a training run (``options``: :class:`lm.neural.presets.TrainOptions`, ``info``:
    :class:`lm.training.distributed.DistInfo`): the training rows (B, L) of this process, its validation block (E, Lv+1) with the
    mask of the targets it scores, the window starts and the training token count."""
    train_ids, valid_ids = encode_split(corpus.train, vocab), encode_split(corpus.valid, vocab)
    rows = options.batch_size * info.world
    check_trainable(train_ids.numel(), valid_ids.numel() // info.world, rows, options.bptt,
                    (corpus.train, corpus.valid))
    train = row_block(batchify(train_ids, rows), info.rank, info.world).to(device)   # (B, L)
    eval_rows = max(1, min(options.eval_batch_size, valid_ids.numel() // (2 * info.world)))
    valid, scored = (row_block(t, info.rank, info.world).to(device) for t in
                     eval_layout(valid_ids, eval_rows * info.world, vocab.eos_id))  # (E, Lv+1)
    return {"train": train, "valid": valid, "scored": scored,
            "starts": windows(train.shape[1], options.bptt), "n_train": int(train_ids.numel())}
