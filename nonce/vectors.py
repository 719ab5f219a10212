"""Word vectors for the semantic perturbation: a word2vec text file or a model's input embeddings.

Two sources, one record (:class:`WordVectors`):

- a word2vec **text** file (``.txt``, ``.vec``, optionally ``.gz``/``.bz2``): an
  optional header line ``<count> <dim>``, then ``word v1 ... vdim`` per line
  (GloVe files, which have no header, read the same way);
- a neural **model directory** from ``agree train-lm`` (``model.pt`` holding
  ``{"state_dict": ..., "config": ...}`` and ``vocab.txt``): the input embedding
  matrix, row i = word on line i of ``vocab.txt`` (for a sentencepiece model,
  only the pieces that are whole words, ``\u2581word``). It is read with
  ``torch.load(weights_only=True)`` and never through the scorer, so ``nonce``
  stays independent of the language-model code.
"""
from __future__ import annotations

import bz2
import gzip
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from formats.errors import AgreeError
from formats.manifest import changed_outputs
from formats.vocab import check_vocab
from nonce.errors import NonceError

WORD_START = "\u2581"  # sentencepiece's word-start mark

#: state_dict keys that hold an input embedding matrix, most specific first
_EMBEDDING_KEYS = (re.compile(r"(^|\.)(tok|token|word)_?emb[a-z_]*\.weight$"),
                   re.compile(r"(^|\.)emb[a-z_]*\.weight$"),
                   re.compile(r"(^|\.)(encoder|wte)\.weight$"),
                   re.compile(r"emb[a-z_]*\.weight$"))


@dataclass(frozen=True, eq=False)
class WordVectors:
    """Vectors of words.

    words:  the words, row order of ``matrix``
    matrix: float32 array (len(words), dim)
    source: where they came from (file or model directory, and the tensor name)
    """
    words: tuple[str, ...]
    matrix: np.ndarray
    source: str = ""
    index: dict = field(init=False, repr=False, compare=False)
    unit: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        if self.matrix.ndim != 2 or self.matrix.shape[0] != len(self.words):
            raise NonceError(f"{self.source}: {len(self.words)} words but a matrix of shape "
                             f"{self.matrix.shape}")
        finite = np.isfinite(self.matrix).all(axis=1)
        if not finite.all():   # a NaN cosine would pick arbitrary neighbours without a word
            first = int(np.argmin(finite))
            raise NonceError(f"{self.source}: the vector of {self.words[first]!r} (row {first + 1}) holds "
                             f"NaN or infinite values ({int((~finite).sum())} such vectors)")
        index: dict[str, int] = {}
        for i, w in enumerate(self.words):
            index.setdefault(w, i)  # a repeated word keeps its first (most frequent) row
        norms = np.linalg.norm(self.matrix, axis=1, keepdims=True)
        object.__setattr__(self, "index", index)
        # rows scaled to length 1 so that a dot product is a cosine; zero rows stay zero
        object.__setattr__(self, "unit", self.matrix / np.where(norms == 0, 1, norms))

    @property
    def dim(self) -> int:
        return int(self.matrix.shape[1])

    def __len__(self) -> int:
        return len(self.words)

    def __contains__(self, word: str) -> bool:
        return word in self.index

    def cosine(self, a: str, b: str) -> float:
        return float(self.unit[self.index[a]] @ self.unit[self.index[b]])


def _open_text(path: Path):
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8")
    if path.suffix == ".bz2":
        return bz2.open(path, "rt", encoding="utf-8")
    return open(path, encoding="utf-8")


def load_word2vec_text(path: str | os.PathLike) -> WordVectors:
    """Read a word2vec text file (header optional)."""
    path = Path(path)
    words: list[str] = []
    rows: list[np.ndarray] = []
    dim = None
    try:
        with _open_text(path) as fh:
            for lineno, line in enumerate(fh, start=1):
                parts = line.rstrip("\n").rstrip(" ").split(" ")
                if lineno == 1 and len(parts) == 2 and all(p.isdigit() for p in parts):
                    dim = int(parts[1])
                    continue
                if parts == [""]:
                    continue
                if dim is None:
                    dim = len(parts) - 1
                if len(parts) != dim + 1 or dim < 1:
                    raise NonceError(f"{path}:{lineno}: expected a word and {dim} numbers, "
                                     f"found {len(parts)} fields")
                try:
                    rows.append(np.asarray(parts[1:], dtype=np.float32))
                except ValueError:
                    raise NonceError(f"{path}:{lineno}: not a number in the vector of {parts[0]!r}") from None
                if not np.isfinite(rows[-1]).all():
                    raise NonceError(f"{path}:{lineno}: the vector of {parts[0]!r} holds NaN or "
                                     "infinite values")
                words.append(parts[0])
    except UnicodeDecodeError:
        raise NonceError(f"{path}: not a word2vec text file (binary word2vec files are not "
                         "supported; convert to the text format)") from None
    if not words:
        raise NonceError(f"{path}: no word vectors in the file")
    return WordVectors(tuple(words), np.stack(rows), source=str(path))


def find_embedding_key(state: dict, vocab_size: int) -> str | None:
    """The name of the input embedding matrix in a state_dict: 2-D, one row per
    vocabulary word, named like an embedding (``encoder.weight`` in the classic
    PyTorch word LM, ``embedding.weight``, ``tok_emb.weight`` ...)."""
    fits = [k for k, v in state.items()
            if getattr(v, "ndim", 0) == 2 and v.shape[0] == vocab_size and "pos" not in k.lower()]
    for pattern in _EMBEDDING_KEYS:
        named = sorted(k for k in fits if pattern.search(k))
        if named:
            return named[0]
    # otherwise the one vocabulary-sized matrix that is not an output layer
    inputs = [k for k in fits if not re.search(r"decoder|head|out|proj|softmax", k)]
    return inputs[0] if len(inputs) == 1 else None


def load_model_embeddings(model_dir: str | os.PathLike) -> WordVectors:
    """The input embeddings of a neural model directory (``model.pt`` + ``vocab.txt``)."""
    model_dir = Path(model_dir)
    weights, vocab_file = model_dir / "model.pt", model_dir / "vocab.txt"
    if not weights.exists():
        raise NonceError(f"{model_dir}: no model.pt (word vectors come from a neural model "
                         "directory or a word2vec text file)")
    if not vocab_file.exists():
        raise NonceError(f"{model_dir}: no vocab.txt beside model.pt")
    words = vocab_file.read_text(encoding="utf-8").split("\n")
    if words and words[-1] == "":
        words.pop()
    _check_model_dir(model_dir)
    import torch  # only here: reading vectors from a word2vec file needs no torch

    try:
        checkpoint = torch.load(weights, map_location="cpu", weights_only=True)
    except Exception as e:  # torch raises many kinds for a damaged or foreign file
        raise NonceError(f"{weights}: cannot read the checkpoint ({e.__class__.__name__}: {e})") from None
    state = checkpoint.get("state_dict", checkpoint) if isinstance(checkpoint, dict) else None
    if not isinstance(state, dict):
        raise NonceError(f"{weights}: not a state_dict checkpoint")
    key = find_embedding_key(state, len(words))
    if key is None:
        shapes = ", ".join(f"{k} {tuple(v.shape)}" for k, v in state.items() if getattr(v, "ndim", 0) == 2)
        raise NonceError(f"{weights}: no input embedding with {len(words)} rows (one per vocab.txt "
                         f"line); 2-D tensors: {shapes or 'none'}")
    matrix = state[key].detach().to(torch.float32).cpu().numpy()
    if (model_dir / "spm.model").exists():
        # a sentencepiece model: only a piece that is a whole word ("\u2581word") is a
        # word's vector; words of several pieces have none
        rows = [i for i, w in enumerate(words) if w.startswith(WORD_START) and len(w) > 1]
        words, matrix = [words[i][1:] for i in rows], matrix[rows]
    return WordVectors(tuple(words), matrix, source=f"{weights}:{key}")


def _check_model_dir(model_dir: Path) -> None:
    """The vocab.txt beside the weights is the one they were trained with (config.json's
    checksum), and no file changed since the model was written (its manifest): a
    shuffled vocabulary would give every word another word's vector."""
    config_file = model_dir / "config.json"
    try:
        config = json.loads(config_file.read_text(encoding="utf-8")) if config_file.is_file() else {}
    except (ValueError, UnicodeDecodeError) as e:
        raise NonceError(f"{config_file}: unreadable model config ({e})") from None
    try:
        check_vocab(model_dir, config if isinstance(config, dict) else {})
    except AgreeError as e:
        raise NonceError(str(e)) from None
    changed = changed_outputs(model_dir)
    if changed:
        raise NonceError(f"{model_dir}: {', '.join(changed)} changed since the model was written (the "
                         "sha256 differs from the one in manifest.json); restore the original files")


def load_vectors(path: str | os.PathLike) -> WordVectors:
    """Word vectors from a model directory or a word2vec text file."""
    path = Path(path)
    if path.is_dir() and not (path / "model.pt").exists() and (path / "config.json").exists():
        from lm.hf.load import hf_word_vectors  # a Hugging Face directory (transformers: lazy)
        words, matrix = hf_word_vectors(path)
        return WordVectors(tuple(words), matrix, source=f"{path}:input embeddings")
    if path.is_dir():
        return load_model_embeddings(path)
    if not path.exists():
        raise NonceError(f"{path}: no such vectors file or model directory")
    return load_word2vec_text(path)
