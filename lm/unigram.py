"""The unigram baseline: word frequencies of the training split, context ignored.

Gulordava et al.'s unigram baseline picks the more frequent of the two target
forms; a scorer whose log-probability grows with the training count does exactly
that through the common :class:`lm.base.Scorer` interface.

Model: over the corpus vocabulary V (vocab.txt: ``<eos>``, ``<unk>`` and the
most frequent training words), every training word outside V counts as
``<unk>``, and each sentence contributes one ``<eos>``. Add-one (Laplace)
smoothing, so that a vocabulary word never seen in training (possible only when
a vocab.txt is edited by hand) still has a finite score::

    P(w) = (count(w) + 1) / (N + |V|)       N = training tokens incl. <eos>

Add-one keeps the order of the counts, so the agreement decision is the paper's
"more frequent form wins" (equal counts tie and count as wrong).

Validation perplexity: exp of the mean negative natural-log probability over
the words of valid.txt plus one ``<eos>`` per sentence, excluding targets that
are ``<unk>`` (words outside V or the literal ``<unk>``), as for every model of
``agree train-lm``.

Model directory: ``config.json`` (kind ``unigram``), ``vocab.txt``,
``counts.tsv`` (word<TAB>count over V after the ``<unk>`` mapping, header line,
vocab.txt order), ``train_log.tsv``. The caller writes ``manifest.json``.
"""
from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Sequence

import numpy as np

from lm.base import CONFIG_FILE, Scorer
from lm.backends import Backend, NoOptions
from formats.digests import sha256_of
from formats.vocab import VOCAB_CHECKSUM
from formats.vocab import EOS, read_vocab
from lm.corpus.prepare import Corpus, read_counts, read_sentences
from lm.errors import LMError
from lm.training.trainers import Trainer, TrainRun, register_trainer


def train_unigram(corpus: Corpus, out_dir: Path) -> dict:
    """Count the training split of ``corpus`` into a unigram model in ``out_dir``.

    Returns ``{"valid_ppl", "valid_tokens", "train_tokens", "vocab_size"}``
    (``valid_tokens``: the scored targets, ``<unk>`` excluded, ``<eos>`` included).
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    vocab = read_vocab(corpus.vocab)
    index = {w: i for i, w in enumerate(vocab)}
    counts = [0] * len(vocab)
    for word, n in read_counts(corpus.counts).items():
        counts[index.get(word, 1)] += n  # 1 = <unk>
    with open(corpus.train, "rb") as fh:
        counts[0] += sum(1 for _ in fh)  # one <eos> per sentence
    total = sum(counts)
    if total == counts[0]:
        raise LMError(f"{corpus.train}: the training split has no words")

    logp = _log_probs(counts)
    nll, scored = 0.0, 0
    for words in read_sentences(corpus.valid):
        for w in words + [EOS]:
            i = index.get(w, 1)
            if i != 1:
                nll -= logp[i]
                scored += 1
    if not scored:   # a perplexity over nothing is NaN: never written into train_log.tsv or a manifest
        raise LMError(f"{corpus.valid}: no known tokens to compute a perplexity on")
    valid_ppl = math.exp(nll / scored)

    shutil.copyfile(corpus.vocab, out_dir / "vocab.txt")
    (out_dir / "counts.tsv").write_text(
        "word\tcount\n" + "".join(f"{w}\t{c}\n" for w, c in zip(vocab, counts)), encoding="utf-8")
    config = {"kind": "unigram", "smoothing": "add-one", "vocab_size": len(vocab),
              "train_tokens": total, "lang": corpus.lang, "corpus_sha256": corpus.sha256,
              VOCAB_CHECKSUM: sha256_of(out_dir / "vocab.txt")}
    (out_dir / CONFIG_FILE).write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    (out_dir / "train_log.tsv").write_text(
        "epoch\ttrain_tokens\tvalid_tokens\tvalid_ppl\n"
        f"1\t{total}\t{scored}\t{valid_ppl:.4f}\n", encoding="utf-8")
    return {"valid_ppl": valid_ppl, "valid_tokens": scored, "train_tokens": total,
            "vocab_size": len(vocab)}


class UnigramScorer(Scorer):
    """Scores every candidate by its smoothed training frequency; prefixes are
    ignored. Units: natural log."""

    kind = "unigram"

    def __init__(self, vocab: Sequence[str], counts: Sequence[int], name: str = ""):
        self.vocab = list(vocab)
        self.index = {w: i for i, w in enumerate(self.vocab)}
        self.counts = list(counts)
        self.logp = _log_probs(self.counts)
        self.name = name

    def logprob(self, prefixes, targets) -> np.ndarray:
        if len(prefixes) != len(targets):
            raise LMError(f"{len(prefixes)} prefixes but {len(targets)} target lists")
        k = len(targets[0]) if len(targets) else 0
        out = np.empty((len(targets), k), dtype=np.float64)
        for i, cands in enumerate(targets):
            if len(cands) != k:
                raise LMError(f"target list {i} has {len(cands)} candidates, expected {k}")
            for j, w in enumerate(cands):
                out[i, j] = self.logp[self.index.get(w, 1)]
        return out

    def word_logprobs(self, sentences) -> list[np.ndarray]:
        """Per word, its smoothed frequency (context, BOS and EOS play no part: a
        sentence's log-probability is the sum of its words' unigram log-probabilities)."""
        logp, index = self.logp, self.index
        return [np.array([logp[index.get(w, 1)] for w in words], dtype=np.float64)
                for words in sentences]

    def conventions(self) -> dict:
        return {**super().conventions(), "context": "none (unigram)",
                "sentence_start": "not used", "sentence_end": "not scored"}

    def in_vocab(self, word: str) -> bool:
        return self.index.get(word, 1) > 1  # <eos> and <unk> are not words

    def count(self, word: str) -> int:
        """Training count of ``word`` (the ``<unk>`` count for words outside V)."""
        return self.counts[self.index.get(word, 1)]


def load_unigram(model_dir: Path, config: dict, options: NoOptions = NoOptions()) -> UnigramScorer:
    """The loader of kind ``unigram`` (:data:`UNIGRAM`; :func:`lm.load.load_model`): no options."""
    model_dir = Path(model_dir)
    vocab = read_vocab(model_dir / "vocab.txt")
    if config.get("vocab_size", len(vocab)) != len(vocab):
        raise LMError(f"{model_dir / CONFIG_FILE}: vocab_size is {config['vocab_size']!r} but vocab.txt has "
                      f"{len(vocab)} entries; restore the original files")
    path = model_dir / "counts.tsv"
    if not path.is_file():
        raise LMError(f"{model_dir}: unigram model without counts.tsv")
    table = read_counts(path)
    missing = [w for w in vocab if w not in table]
    if missing:
        raise LMError(f"{path}: no count for {len(missing)} vocabulary words "
                      f"(first: {missing[0]!r})")
    return UnigramScorer(vocab, [table[w] for w in vocab], name=model_dir.name)


def train_model(corpus: Corpus, out_dir: Path, settings: dict, run: TrainRun) -> dict:
    """The registered trainer (see :mod:`lm.training.trainers`): :func:`train_unigram` (the corpus
    vocabulary already cut to ``settings["vocab_size"]`` words by the caller)."""
    return train_unigram(corpus, out_dir)


def _log_probs(counts: Sequence[int]) -> list[float]:
    """Add-one smoothed natural-log probabilities."""
    denom = math.log(sum(counts) + len(counts))
    return [math.log(c + 1) - denom for c in counts]


#: the backend: a model directory of kind unigram; counts have no states to inspect
UNIGRAM = Backend("unigram", NoOptions, load_unigram, what="a unigram model")
# vocab_size: as for kn5; no presets (counting has no model size)
register_trainer(Trainer(arch="unigram", train="lm.unigram:train_model",
                         defaults={"vocab_size": None}, capped_vocab=True))

__all__ = ["train_unigram", "UnigramScorer", "load_unigram", "UNIGRAM"]
