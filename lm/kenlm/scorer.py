"""5-gram modified Kneser-Ney models: built by KenLM's ``lmplz``, queried with ``kenlm``.

Units: KenLM returns **log10** probabilities; this module converts them to
natural logarithms at the :class:`KenLMScorer` edge (``* ln 10``), like every
other backend.

Vocabulary: words outside the corpus vocabulary (``vocab.txt``) are replaced by
:data:`UNK` before training and before querying, so the 5-gram model has the
same vocabulary as the neural models trained on the same corpus and its
perplexity is comparable (positions whose target is unknown are excluded, as
for the LSTM). ``<unk>`` itself is reserved by lmplz (it throws when it meets
it in the text), hence a separate placeholder token.

Sentence boundaries: prefixes are scored from KenLM's begin-of-sentence state
(``<s>``), the n-gram counterpart of the neural models' ``<eos>``.
"""
from __future__ import annotations

import json
import logging
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Sequence

import numpy as np

from lm.base import Scorer
from lm.backends import Backend, NoOptions
from lm.errors import FieldError, LMError
from lm.training.trainers import Trainer, TrainRun, register_trainer
from formats.digests import sha256_of
from formats.vocab import VOCAB_CHECKSUM, read_vocab

log = logging.getLogger(__name__)

UNK = "<UNK>"
LN10 = math.log(10.0)
MODEL_FILE = "model.binary"
#: the n-gram order of the paper's 5-gram
DEFAULT_ORDER = 5
#: the orders build_binary's probing models take: at least bigrams, at most KenLM's
#: compiled maximum (KENLM_MAX_ORDER, 6 in the kenlm source release agree builds)
MIN_ORDER, MAX_ORDER = 2, 6
INSTALL_HINT = ("build it into this environment with `agree setup kenlm` (needs cmake, a C++ compiler, "
                "Boost, zlib, bzip2 and lzma headers), or put lmplz and build_binary on PATH "
                "or in $AGREE_KENLM_BIN")


def find_tool(name: str) -> str:
    """Path of a KenLM program: $AGREE_KENLM_BIN, beside this Python, then PATH."""
    candidates = []
    if os.environ.get("AGREE_KENLM_BIN"):
        candidates.append(Path(os.environ["AGREE_KENLM_BIN"]) / name)
    candidates.append(Path(sys.executable).parent / name)
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK):
            return str(c)
    found = shutil.which(name)
    if found:
        return found
    raise LMError(f"KenLM's `{name}` was not found: {INSTALL_HINT}")


#: symbols lmplz reserves (it aborts when the text contains them) or that stand
#: for unknown words in our vocabularies; they are mapped to UNK.
_RESERVED = {"<unk>", "<s>", "</s>", "<eos>"}


def _load_vocab(path: Path) -> set[str]:
    return {w for w in read_vocab(path, strict=False) if w.strip()} - _RESERVED


def _map_line(line: str, vocab: set[str]) -> str:
    return " ".join(w if w in vocab else UNK for w in line.split())


def train_kn5(corpus, out_dir: Path, *, order: int = DEFAULT_ORDER, memory: str = "1G") -> dict:
    """Build a modified Kneser-Ney model of ``order`` on ``corpus.train``.

    Writes ``model.binary`` (KenLM probing binary), ``vocab.txt``, ``config.json``
    and ``train_log.tsv`` into ``out_dir`` and returns the metrics, including the
    validation perplexity over ``corpus.valid`` (natural-log based, ``<unk>``
    targets excluded, sentence ends counted as the LSTM counts ``<eos>``).
    """
    if not MIN_ORDER <= order <= MAX_ORDER:   # refused before lmplz spends minutes on it
        raise FieldError(f"{{order}} must be between {MIN_ORDER} and {MAX_ORDER}, the orders KenLM's "
                         f"build_binary takes (got {order})")
    lmplz, build_binary = find_tool("lmplz"), find_tool("build_binary")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    vocab = _load_vocab(corpus.vocab)
    start = time.time()
    with tempfile.TemporaryDirectory(prefix="agree-kenlm-", dir=out_dir) as tmp:
        tmp = Path(tmp)
        text = tmp / "train.txt"
        n_tokens = 0
        with open(corpus.train, encoding="utf-8") as src, open(text, "w", encoding="utf-8") as dst:
            for line in src:
                mapped = _map_line(line, vocab)
                if mapped:
                    dst.write(mapped + "\n")
                    n_tokens += mapped.count(" ") + 1
        if n_tokens == 0:
            raise LMError(f"{corpus.train}: empty training text")
        arpa = tmp / "model.arpa"
        # -S caps lmplz's memory (default: 80% of RAM); -T keeps its temporary
        # files with ours; --discount_fallback only acts when the counts of counts
        # are too sparse for the closed-form discounts (tiny corpora).
        cmd = [lmplz, "-o", str(order), "-S", memory, "-T", str(tmp), "--discount_fallback",
               "--text", str(text), "--arpa", str(arpa)]
        _run(cmd, "lmplz")
        _run([build_binary, "-S", memory, "-T", str(tmp), "probing", str(arpa),
              str(out_dir / MODEL_FILE)], "build_binary")
    shutil.copyfile(corpus.vocab, out_dir / "vocab.txt")
    scorer = KenLMScorer(out_dir, {"order": order})
    valid_ppl, valid_tokens = scorer.perplexity(corpus.valid)
    seconds = time.time() - start
    config = {"kind": "kn5", "order": order, "smoothing": "modified Kneser-Ney (lmplz)",
              "unk_token": UNK, "lang": corpus.lang, "corpus_sha256": corpus.sha256,
              "train_tokens": n_tokens, "memory": memory,
              VOCAB_CHECKSUM: sha256_of(out_dir / "vocab.txt")}
    (out_dir / "config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    with open(out_dir / "train_log.tsv", "w", encoding="utf-8") as fh:
        fh.write("order\ttrain_tokens\tvalid_tokens\tvalid_ppl\tseconds\n")
        fh.write(f"{order}\t{n_tokens}\t{valid_tokens}\t{valid_ppl:.3f}\t{seconds:.1f}\n")
    return {"valid_ppl": valid_ppl, "valid_tokens": valid_tokens, "train_tokens": n_tokens,
            "seconds": seconds}


def train_model(corpus, out_dir: Path, settings: dict, run: TrainRun) -> dict:
    """The registered trainer (see :mod:`lm.training.trainers`): :func:`train_kn5` with ``settings``
    (the corpus vocabulary already cut to ``vocab_size`` by the caller)."""
    return train_kn5(corpus, out_dir, order=settings["order"])


def _run(cmd: list[str], what: str) -> None:
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        tail = " | ".join(l for l in proc.stderr.strip().splitlines()[-3:])
        raise LMError(f"{what} failed (exit {proc.returncode}): {tail}")
    if log.isEnabledFor(logging.INFO):
        for line in proc.stderr.splitlines():
            if line.startswith(("=== ", "Unigram tokens", "Memory estimate")):
                log.info(f"{what}: {line}")


class KenLMScorer(Scorer):
    """Scores prefixes with KenLM's state API: each prefix is fed once from ``<s>``
    and every candidate target is scored from the resulting state."""

    kind = "kn5"

    def __init__(self, model_dir: Path, config: dict):
        import kenlm  # imported here so that `agree` does not need it to start

        path = Path(model_dir) / MODEL_FILE
        if not path.exists():
            raise LMError(f"{model_dir}: 5-gram model directory without {MODEL_FILE}")
        try:
            self.model = kenlm.Model(str(path))
        except Exception as e:  # kenlm raises OSError/IOError subclasses with C++ text
            raise LMError(f"{path}: not a KenLM model ({str(e).splitlines()[0]})") from None
        self._kenlm = kenlm
        self.vocab = _load_vocab(Path(model_dir) / "vocab.txt")
        self.order = self.model.order

    def in_vocab(self, word: str) -> bool:
        return word in self.vocab

    def _map(self, word: str) -> str:
        return word if word in self.vocab else UNK

    def _state_after(self, prefix: Sequence[str]):
        kenlm, model = self._kenlm, self.model
        state, nxt = kenlm.State(), kenlm.State()
        model.BeginSentenceWrite(state)
        for word in prefix:
            model.BaseScore(state, self._map(word), nxt)
            state, nxt = nxt, state
        return state

    def logprob(self, prefixes, targets) -> np.ndarray:
        n = len(prefixes)
        k = len(targets[0]) if n else 0
        out = np.empty((n, k), dtype=np.float64)
        scratch = self._kenlm.State()
        cache: dict[tuple[str, ...], object] = {}
        for i, (prefix, cands) in enumerate(zip(prefixes, targets)):
            key = tuple(prefix)
            state = cache.get(key)
            if state is None:
                # Nonce variants and both candidates share prefixes: feed each once.
                state = cache[key] = self._state_after(prefix)
            for j, word in enumerate(cands):
                out[i, j] = self.model.BaseScore(state, self._map(word), scratch) * LN10
        return out

    def word_logprobs(self, sentences) -> list[np.ndarray]:
        """Per word, natural-log P(word | <s>, words before): KenLM's ``full_scores``
        with ``bos=True, eos=False`` (no ``</s>`` scored, as lm-evaluation-harness does
        for BLiMP), log10 converted here. Unknown words are scored as UNK."""
        out = []
        for words in sentences:
            mapped = " ".join(self._map(w) for w in words)
            scores = self.model.full_scores(mapped, bos=True, eos=False) if words else ()
            out.append(np.fromiter((lp * LN10 for lp, _, _ in scores), dtype=np.float64,
                                   count=len(words)))
        return out

    def conventions(self) -> dict:
        return {**super().conventions(), "sentence_start": "<s> (KenLM bos=True)",
                "sentence_end": "</s> not scored (eos=False)", "log_base": "log10 * ln 10"}

    def perplexity(self, path: Path) -> tuple[float, int]:
        """exp of the mean negative natural-log probability per token of ``path``
        (one sentence a line, ``</s>`` counted, unknown-word targets excluded)."""
        total, count = 0.0, 0
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                words = [self._map(w) for w in line.split()]
                if not words:
                    continue
                for (log10p, _, _), word in zip(self.model.full_scores(" ".join(words)), words + ["</s>"]):
                    if word != UNK:
                        total += log10p * LN10
                        count += 1
        if count == 0:
            raise LMError(f"{path}: no known tokens to compute a perplexity on")
        return math.exp(-total / count), count


def load_kn5(model_dir: Path, config: dict, options: NoOptions = NoOptions()) -> KenLMScorer:
    """The loader of kind ``kn5`` (:data:`KN5`; :func:`lm.load.load_model`): no options."""
    return KenLMScorer(model_dir, config)


#: the backend: a model directory of kind kn5; a 5-gram has no states to inspect
KN5 = Backend("kn5", NoOptions, load_kn5, what="a KenLM n-gram model")


# vocab_size caps the corpus vocabulary, as for the neural models, so that a 5-gram
# and a small LSTM can be compared on the same words. No presets: a 5-gram's
# settings do not depend on the model size asked for.
register_trainer(Trainer(arch="kn5", train="lm.kenlm.scorer:train_model",
                         defaults={"order": DEFAULT_ORDER, "vocab_size": None}, capped_vocab=True))
