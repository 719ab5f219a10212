"""The one interface every language-model backend implements (:class:`Scorer`).

Units: every score that leaves a backend is a **natural logarithm** of a
probability. Backends that compute in another base (KenLM: log10) convert at
this edge.

Sentence boundaries: a prefix is the list of words of one sentence before the
target, *without* boundary symbols. A backend scores it from a fresh state that
has seen the sentence boundary it was trained with (``<eos>`` for the neural
models, ``<s>`` for KenLM), unless the scorer was built with
``carry_state=True`` (the released code's habit, for comparison only).

A model directory holds ``config.json`` (:data:`CONFIG_FILE`) whose ``kind`` names the
backend; :func:`lm.load.load_model` looks the kind up among the backends' records
(:mod:`lm.backends`), so adding a backend never touches the callers.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from lm.errors import LMError

CONFIG_FILE = "config.json"

class Words(tuple):
    """A sentence's words, and where its text as written has spaces.

    A tuple of words, so that word-level backends (LSTM, KenLM, unigram) read it as
    they read any list of words; subword backends read ``space_after`` too (one flag
    per word, :mod:`formats.spacing`; None: single spaces between the words) and
    score the text as written (:mod:`lm.pieces`)."""

    def __new__(cls, words, space_after=None):
        self = super().__new__(cls, words)
        if space_after is not None and len(space_after) != len(self):
            raise LMError(f"{len(self)} words but {len(space_after)} spacing flags")
        self.space_after = None if space_after is None else tuple(bool(s) for s in space_after)
        return self

    def __reduce__(self):  # pickles (Ray workers) keep the spacing
        return (Words, (tuple(self), self.space_after))


def space_after_of(words) -> tuple[bool, ...] | None:
    """The spacing flags a sentence carries (a :class:`Words`), else None."""
    return getattr(words, "space_after", None)


@dataclass(frozen=True)
class TargetQuery:
    """One agreement decision put to a model.

    words       the whole sentence (words), with the correct form at ``index``; a
                causal model reads only ``words[:index]``, a masked model reads all of
                it with the target position masked
    index       0-based position of the target
    candidates  the k candidate forms scored at ``index`` (correct first by convention)
    space_after per word, whether a space follows it in the text as written (None:
                single spaces); read by subword backends only (:mod:`lm.pieces`)
    """
    words: tuple[str, ...]
    index: int
    candidates: tuple[str, ...]
    space_after: tuple[bool, ...] | None = None

    @property
    def prefix(self) -> tuple[str, ...]:
        return tuple(self.words[: self.index])


class Scorer(ABC):
    """One interface for every language-model backend.

    Two questions, both answered in natural-log probabilities:

    * :meth:`score_targets` -- P(candidate form at the target position); the
      paper's target method. Causal backends answer from the prefix only
      (``context = "prefix"``) through :meth:`logprob`; masked backends need the
      whole sentence (``context = "sentence"``) and override ``score_targets``.
    * :meth:`word_logprobs` -- P(word_i | what the backend conditions on) for every
      word of whole sentences; its sum per sentence is :meth:`sentence_logprob`
      (the whole-sentence method of BLiMP / lm-evaluation-harness ``acc``) and its
      negation is per-word surprisal. Convention for every backend: a sentence is
      scored after the model's own beginning-of-sentence symbol, every word
      including the first is scored, and **no** end-of-sentence symbol is added
      (as lm-evaluation-harness does for BLiMP). A backend states what it does
      in :meth:`conventions`.

    Every backend gets working defaults for the methods it does not override
    (built on :meth:`logprob`), so adding a backend never touches the callers.
    """

    #: backend kind, e.g. ``"lstm"``
    kind: str = ""
    #: human-readable name (the model directory's name by default)
    name: str = ""
    #: what :meth:`score_targets` reads: ``"prefix"`` (causal) or ``"sentence"`` (masked)
    context: str = "prefix"

    def logprob(self, prefixes: Sequence[Sequence[str]],
                targets: Sequence[Sequence[str]]) -> np.ndarray:
        """Natural-log P(target word | prefix) for every candidate (causal backends).

        ``prefixes[i]`` is a list of words; ``targets[i]`` a list of k candidate
        words (the same k for every i). Returns a float64 array of shape (n, k).
        A word the model cannot represent is scored as its unknown-word symbol;
        callers check :meth:`in_vocab` to report or exclude such items.
        """
        raise LMError(f"{self.kind or type(self).__name__} models score a target only with "
                      "the whole sentence in view (use score_targets)")

    def score_targets(self, queries: Sequence[TargetQuery]) -> np.ndarray:
        """Natural-log P(candidate | context) for each query; float64 array (n, k)."""
        return self.logprob([q.prefix for q in queries], [q.candidates for q in queries])

    def word_logprobs(self, sentences: Sequence[Sequence[str]]) -> list[np.ndarray]:
        """Per sentence, a float64 array: natural-log P(word_i | BOS, words before i).

        The default asks :meth:`logprob` once per position (correct for any causal
        backend; backends override it with one pass per sentence).
        """
        prefixes, targets, lengths = [], [], []
        for words in sentences:
            words = list(words)
            lengths.append(len(words))
            for i, w in enumerate(words):
                prefixes.append(words[:i])
                targets.append([w])
        flat = np.asarray(self.logprob(prefixes, targets), dtype=np.float64).reshape(-1) \
            if prefixes else np.zeros(0)
        out, start = [], 0
        for n in lengths:
            out.append(flat[start:start + n])
            start += n
        return out

    def sentence_logprob(self, sentences: Sequence[Sequence[str]]) -> np.ndarray:
        """Natural-log P(sentence): the sum (not the mean) of :meth:`word_logprobs`."""
        return np.array([float(np.sum(w)) for w in self.word_logprobs(sentences)],
                        dtype=np.float64)

    def word_pieces(self, word: str) -> list[str]:
        """The pieces the model reads for ``word`` (one piece for word-level models)."""
        return [word]

    def sentence_pieces(self, sentence: Sequence[str]) -> list[list[str]]:
        """Per word of ``sentence`` (words, or :class:`Words` with spacing), the pieces
        the model actually read for it in that sentence (``tokens.tsv``); word-level
        models read each word as itself."""
        return [self.word_pieces(w) for w in sentence]

    @abstractmethod
    def in_vocab(self, word: str) -> bool:
        """Whether ``word`` is represented by the model (not mapped to an unknown symbol)."""

    def conventions(self) -> dict:
        """The scoring conventions in effect, for manifests and ``summary.md``."""
        return {"engine": self.kind, "units": "natural log", "context": self.context,
                "sentence_start": "model's own boundary symbol", "sentence_end": "not scored",
                "ties": "undecidable (never counted correct)"}

    def close(self) -> None:  # pragma: no cover - default no-op
        pass
