"""The one interface every language-model backend implements, and the one loader.

Units: every score that leaves a backend is a **natural logarithm** of a
probability. Backends that compute in another base (KenLM: log10) convert at
this edge.

Sentence boundaries: a prefix is the list of words of one sentence before the
target, *without* boundary symbols. A backend scores it from a fresh state that
has seen the sentence boundary it was trained with (``<eos>`` for the neural
models, ``<s>`` for KenLM), unless the scorer was built with
``carry_state=True`` (the released code's habit, for comparison only).

A model directory holds ``config.json`` whose ``kind`` names the backend;
:func:`load_model` looks the kind up in a registry that each backend module
fills with :func:`register`, so adding a backend never touches the callers.
"""
from __future__ import annotations

import importlib
import json
import os
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from lm.errors import LMError

CONFIG_FILE = "config.json"

#: kind -> module that registers it (imported lazily so that scoring a KenLM
#: model does not import torch, and vice versa).
_BACKEND_MODULES = {
    "lstm": "lm.neural",
    "transformer": "lm.neural",
    "kn5": "lm.kenlm_backend",
    "unigram": "lm.unigram",
}
_LOADERS: dict[str, Callable[..., "Scorer"]] = {}


class Scorer(ABC):
    """Log-probabilities of candidate next words after sentence prefixes."""

    #: backend kind, e.g. ``"lstm"``
    kind: str = ""
    #: human-readable name (the model directory's name by default)
    name: str = ""

    @abstractmethod
    def logprob(self, prefixes: Sequence[Sequence[str]],
                targets: Sequence[Sequence[str]]) -> np.ndarray:
        """Natural-log P(target word | prefix) for every candidate.

        ``prefixes[i]`` is a list of words; ``targets[i]`` a list of k candidate
        words (the same k for every i). Returns a float64 array of shape (n, k).
        A word the model cannot represent is scored as its unknown-word symbol;
        callers check :meth:`in_vocab` to report or exclude such items.
        """

    @abstractmethod
    def in_vocab(self, word: str) -> bool:
        """Whether ``word`` is represented by the model (not mapped to <unk>)."""

    def close(self) -> None:  # pragma: no cover - default no-op
        pass


def register(kind: str, loader: Callable[..., Scorer]) -> None:
    """Register ``loader(model_dir, config, **options) -> Scorer`` for a kind."""
    _LOADERS[kind] = loader


def read_config(model_dir: str | os.PathLike) -> dict:
    model_dir = Path(model_dir)
    path = model_dir / CONFIG_FILE
    if not model_dir.is_dir():
        raise LMError(f"{model_dir}: no such model directory")
    if not path.exists():
        raise LMError(f"{model_dir}: not a model directory (no {CONFIG_FILE}); "
                      "make one with `agree train-lm`")
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise LMError(f"{path}: unreadable model config ({e})") from None
    if not isinstance(config, dict) or "kind" not in config:
        raise LMError(f"{path}: model config has no 'kind'")
    return config


def load_model(model_dir: str | os.PathLike, **options) -> Scorer:
    """Load any model directory made by ``agree train-lm`` as a :class:`Scorer`.

    ``options`` go to the backend (e.g. ``device="cuda"``, ``carry_state=True``,
    ``batch_size=256``); a backend ignores options it does not know.
    """
    config = read_config(model_dir)
    kind = config["kind"]
    if kind not in _LOADERS and kind in _BACKEND_MODULES:
        importlib.import_module(_BACKEND_MODULES[kind])
    if kind not in _LOADERS:
        known = ", ".join(sorted(_BACKEND_MODULES))
        raise LMError(f"{model_dir}: unknown model kind {kind!r} (known: {known})")
    scorer = _LOADERS[kind](Path(model_dir), config, **options)
    if not scorer.name:
        scorer.name = Path(model_dir).name
    return scorer
